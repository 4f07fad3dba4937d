"""``jax._src.util``: small helpers libraries import from JAX's internals."""
import functools

def safe_map(f, *args):
    """``list(map(f, *args))``, with arguments of unequal lengths an error (as JAX's)."""
    args = [list(a) for a in args]
    for i, a in enumerate(args[1:], 1):
        if len(a) != len(args[0]):
            raise ValueError(f"safe_map() argument {i + 1} is "
                             f"{'shorter' if len(a) < len(args[0]) else 'longer'} than argument 1")
    return list(map(f, *args))


def safe_zip(*args):
    """``list(zip(*args))``, with arguments of unequal lengths an error (as JAX's)."""
    args = [list(a) for a in args]
    lengths = tuple(len(a) for a in args)
    for i, n in enumerate(lengths[1:], 1):
        if n != lengths[0]:
            raise ValueError(f"safe_zip() argument {i} has length {n} but argument 0 has length "
                             f"{lengths[0]}. All lengths: {lengths}")
    return list(zip(*args))


def unzip2(pairs):
    firsts, seconds = [], []
    for a, b in pairs:
        firsts.append(a)
        seconds.append(b)
    return tuple(firsts), tuple(seconds)


def unzip3(triples):
    a, b, c = [], [], []
    for x, y, z in triples:
        a.append(x)
        b.append(y)
        c.append(z)
    return tuple(a), tuple(b), tuple(c)


def split_list(args, ns):
    args, out = list(args), []
    for n in ns:
        out.append(args[:n])
        args = args[n:]
    return out + [args]


def partition_list(bs, items):
    falses, trues = [], []
    for b, x in zip(bs, items):
        (trues if b else falses).append(x)
    return falses, trues


def merge_lists(bs, falses, trues):
    f, t = iter(falses), iter(trues)
    return [next(t) if b else next(f) for b in bs]


def subvals(seq, replacements):
    out = list(seq)
    for i, v in replacements:
        out[i] = v
    return tuple(out)


def prod(xs):
    out = 1
    for x in xs:
        out *= x
    return out


def canonicalize_axis(axis, num_dims):
    if not -num_dims <= axis < num_dims:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {num_dims}")
    return axis % num_dims if num_dims else axis


def wraps(wrapped, namestr=None, docstr=None, **kw):
    def wrapper(fun):
        functools.update_wrapper(fun, wrapped, updated=())
        return fun
    return wrapper


def cache(max_size=4096, trace_context_in_key=True):
    return functools.lru_cache(maxsize=max_size)


memoize = functools.lru_cache(maxsize=None)
weakref_lru_cache = cache


def register_cache(cache, name):
    """numjax clears no caches by name."""


class HashableFunction:
    """A closure hashed by its code and the values it closes over."""

    def __init__(self, f, closure):
        self.f, self.closure = f, closure

    def __eq__(self, other):
        return (isinstance(other, HashableFunction) and self.f.__code__ == other.f.__code__
                and self.closure == other.closure)

    def __hash__(self):
        return hash((self.f.__code__, self.closure))

    def __call__(self, *args, **kwargs):
        return self.f(*args, **kwargs)


def tuple_insert(t, idx, val):
    return t[:idx] + (val,) + t[idx:]


def tuple_delete(t, idx):
    return t[:idx] + t[idx + 1:]
