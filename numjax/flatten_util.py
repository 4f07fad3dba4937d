"""numjax.flatten_util"""
