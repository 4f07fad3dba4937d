"""Random-bit primitives: the threefry2x32 block cipher."""
__all__ = []
