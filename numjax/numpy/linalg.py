"""numjax.numpy.linalg"""
