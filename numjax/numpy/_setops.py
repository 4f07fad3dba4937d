"""Part of numjax.numpy (re-exported by numjax/numpy/__init__.py via __all__)."""
__all__ = []
