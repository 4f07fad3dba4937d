"""Scalar expressions for special functions (see scalar.py)."""
from .scalar import RULES  # noqa: F401
