"""numjax.nn.initializers"""
