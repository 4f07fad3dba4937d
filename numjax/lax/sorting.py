"""Sorting primitives (sort over several operands, top_k)."""
__all__ = []
