"""numjax.scipy.optimize"""
