"""Special-function primitives (lgamma, digamma, igamma, betainc, ...)."""
__all__ = []
