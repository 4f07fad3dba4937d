"""numjax.scipy.special"""
