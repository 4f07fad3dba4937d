"""The fft primitive."""
__all__ = []
