"""``jax._src.dispatch``: numjax's programs run synchronously and carry no effect tokens,
so there is never anything to wait for."""


def wait_for_tokens():
    """Nothing is pending: every numjax call has finished when it returns."""
