"""``jax.extend.linear_util``: JAX's wrapped functions, for code that builds jaxprs from them.

numjax's tracing takes plain Python callables, so ``WrappedFun`` is a thin holder: the
function, its extra positional params and the transformations stacked on it, called by
``call_wrapped``.
"""


class StoreException(Exception):
    pass


class Store:
    """A write-once box for what a transformation learns while the function runs."""
    _EMPTY = object()

    def __init__(self):
        self._val = Store._EMPTY

    def store(self, val):
        if self._val is not Store._EMPTY:
            raise StoreException("Store occupied")
        self._val = val

    def reset(self):
        self._val = Store._EMPTY

    @property
    def val(self):
        if self._val is Store._EMPTY:
            raise StoreException("Store empty")
        return self._val

    def __call__(self):
        return self.val

    def __bool__(self):
        return self._val is not Store._EMPTY


class WrappedFun:
    def __init__(self, f, params=(), debug_info=None):
        self.f, self.params, self.debug_info = f, tuple(params), debug_info

    __name__ = property(lambda self: getattr(self.f, "__name__", type(self.f).__name__))

    def call_wrapped(self, *args, **kwargs):
        return self.f(*args, **dict(self.params), **kwargs)

    __call__ = call_wrapped

    def wrap(self, gen, *gen_args):
        """A new WrappedFun computing ``gen(inner, *gen_args, *args)`` (``transformation2``)."""
        inner = self
        return WrappedFun(lambda *args, **kw: gen(inner.call_wrapped, *gen_args, *args, **kw),
                          (), self.debug_info)

    def __repr__(self):
        return f"Wrapped function: {self.f!r}"


def wrap_init(f, params=None, *, debug_info=None):
    return WrappedFun(f, tuple((params or {}).items()), debug_info)


def transformation2(gen, fun, *gen_static_args):
    """``gen(f, *static, *args)`` applied to ``fun`` (JAX's plain-function transformation)."""
    return fun.wrap(gen, *gen_static_args)


def transformation_with_aux2(gen, fun, *gen_static_args, use_eq_store=False):
    store = Store()
    return fun.wrap(lambda f, *args, **kw: gen(f, store, *args, **kw), *gen_static_args), store


def cache(call, *, explain=None):
    memo = {}

    def cached(fun, *args):
        key = (fun.f, fun.params, args)
        try:
            hit = memo.get(key)
        except TypeError:
            return call(fun, *args)
        if hit is None:
            hit = memo[key] = call(fun, *args)
        return hit
    cached.cache_clear = memo.clear
    return cached


def merge_linear_aux(aux1, aux2):
    try:
        out1 = aux1()
    except StoreException:
        return False, aux2()
    return True, out1
