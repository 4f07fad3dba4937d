"""numjax.scipy.linalg"""
