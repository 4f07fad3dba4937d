"""CPU lowering rules (see nodes.py for the rule signature)."""
from .nodes import NODE_RULES  # noqa: F401
