"""numjax.scipy.stats"""
