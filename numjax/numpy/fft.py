"""numjax.numpy.fft"""
