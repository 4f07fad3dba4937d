"""einsum (pairwise contractions in the order opt_einsum would pick, run as lax.dot_general)
and the other tensor products of jax.numpy."""
import builtins
import itertools
import operator

import numpy as np

from .. import core, lax
from ..core import get_aval
from . import matmul, moveaxis, multiply, reshape, sum as _sum, transpose
from ._util import asarray_leaf, canonicalize_axis, promote_dtypes

__all__ = ["einsum", "einsum_path", "tensordot", "kron", "trace", "cross", "vecdot", "matvec",
           "vecmat"]

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


# ---------------------------------------------------------------- parsing

def _interleaved_to_subscripts(args):
    operands, specs = list(args[0::2]), list(args[1::2])
    out_spec = None
    if len(operands) > len(specs):
        out_spec = operands.pop()
    labels = {}

    def sub(spec):
        s = ""
        for x in spec:
            if x is Ellipsis:
                s += "..."
            else:
                labels.setdefault(x, _LETTERS[len(labels)])
                s += labels[x]
        return s
    subscripts = ",".join(sub(s) for s in specs)
    if out_spec is not None:
        subscripts += "->" + sub(out_spec)
    return subscripts, operands


def _parse(subscripts, shapes):
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        ins, out = subscripts.split("->")
        explicit = True
    else:
        ins, out, explicit = subscripts, None, False
    in_specs = ins.split(",")
    if len(in_specs) != len(shapes):
        raise ValueError(f"einsum: {len(in_specs)} input subscripts for {len(shapes)} operands")
    used = set(c for c in subscripts if c.isalpha())
    free = [c for c in _LETTERS if c not in used]
    ell_nd = 0
    for spec, shape in zip(in_specs, shapes):
        if "..." in spec:
            ell_nd = builtins.max(ell_nd, len(shape) - (len(spec) - 3))
    ell = "".join(free[:ell_nd])
    expanded = []
    for spec, shape in zip(in_specs, shapes):
        if "..." in spec:
            n = len(shape) - (len(spec) - 3)
            spec = spec.replace("...", ell[ell_nd - n:] if n else "")
        if len(spec) != len(shape):
            raise ValueError(f"einsum: operand with shape {shape} does not match subscripts '{spec}'")
        expanded.append(spec)
    if explicit:
        out = out.replace("...", ell)
    else:
        counts = {}
        for spec in expanded:
            for c in spec:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    sizes = {}
    for spec, shape in zip(expanded, shapes):
        for c, d in zip(spec, shape):
            if sizes.get(c, 1) == 1:
                sizes[c] = d
            elif d not in (1, sizes[c]):
                raise ValueError(f"Size of label '{c}' for operand does not match previous terms "
                                 f"({d} vs {sizes[c]}).")
    for c in out:
        if c not in sizes:
            raise ValueError(f"einsum: output subscript '{c}' does not appear in the inputs")
    return expanded, out, sizes


# ---------------------------------------------------------------- contraction order

def _pair_cost(a, b, others, out, sizes):
    keep = set(out).union(*others) if others else set(out)
    involved = set(a) | set(b)
    result = "".join(c for c in dict.fromkeys(a + b) if c in keep)
    flops = 1
    for c in involved:
        flops *= sizes[c]
    return flops, result


def _optimal_path(specs, out, sizes):
    best = [None, float("inf")]

    def rec(specs, path, cost):
        if cost >= best[1]:
            return
        if len(specs) == 1:
            best[0], best[1] = list(path), cost
            return
        for i, j in itertools.combinations(range(len(specs)), 2):
            others = [s for k, s in enumerate(specs) if k not in (i, j)]
            flops, res = _pair_cost(specs[i], specs[j], others, out, sizes)
            rec(others + [res], path + [(i, j)], cost + flops)
    rec(list(specs), [], 0)
    return best[0]


def _greedy_path(specs, out, sizes):
    specs, path = list(specs), []
    while len(specs) > 1:
        choice = None
        for i, j in itertools.combinations(range(len(specs)), 2):
            others = [s for k, s in enumerate(specs) if k not in (i, j)]
            flops, res = _pair_cost(specs[i], specs[j], others, out, sizes)
            size = int(np.prod([sizes[c] for c in res])) if res else 1
            removed = size - int(np.prod([sizes[c] for c in specs[i]])) - int(np.prod([sizes[c] for c in specs[j]]))
            key = (removed, flops)
            if choice is None or key < choice[0]:
                choice = (key, (i, j), res, others)
        _, pair, res, others = choice
        path.append(pair)
        specs = others + [res]
    return path


def _contract_path(specs, out, sizes, optimize):
    n = len(specs)
    if n < 2:
        return []
    if isinstance(optimize, (list, tuple)):
        path = [tuple(p) for p in optimize if p != "einsum_path"]
        return path
    if optimize is False or optimize is None:
        return [(0, 1)] * (n - 1)
    if optimize in ("greedy",) or (optimize in (True, "auto", "optimal", "dp", "branch-2", "branch-all")
                                   and n > 6 and optimize != "optimal"):
        return _greedy_path(specs, out, sizes)
    return _optimal_path(specs, out, sizes)


# ---------------------------------------------------------------- execution

def _diagonal_labels(x, spec):
    """Take the diagonal over labels repeated within one operand."""
    while True:
        dup = next((c for c in spec if spec.count(c) > 1), None)
        if dup is None:
            return x, spec
        i = spec.index(dup)
        j = spec.index(dup, i + 1)
        from ._shape_ops import diagonal
        x = diagonal(x, 0, i, j)
        spec = "".join(c for k, c in enumerate(spec) if k not in (i, j)) + dup


def _sum_labels(x, spec, keep):
    axes = tuple(k for k, c in enumerate(spec) if c not in keep)
    if not axes:
        return x, spec
    return lax.reduce_sum(x, axes), "".join(c for c in spec if c in keep)


def _squeeze_broadcast_ones(x, spec, sizes):
    # A size-1 dim matching a larger label is broadcast by numpy; widen it here.
    shape = get_aval(x).shape
    target = tuple(sizes[c] for c in spec)
    if shape != target:
        from . import broadcast_to
        x = broadcast_to(x, target)
    return x


def _contract_pair(a, sa, b, sb, keep, precision, preferred, out_sharding=None):
    a, sa = _sum_labels(a, sa, keep | set(sb))
    b, sb = _sum_labels(b, sb, keep | set(sa))
    shared = [c for c in sa if c in sb]
    batch = [c for c in shared if c in keep]
    contract = [c for c in shared if c not in keep]
    dims = (([sa.index(c) for c in contract], [sb.index(c) for c in contract]),
            ([sa.index(c) for c in batch], [sb.index(c) for c in batch]))
    out = lax.dot_general(a, b, dims, precision=precision, preferred_element_type=preferred,
                          out_sharding=out_sharding)
    spec = "".join(batch) + "".join(c for c in sa if c not in shared) + "".join(c for c in sb if c not in shared)
    return out, spec


def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None, _dot_general=None, out_sharding=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
    if not isinstance(subscripts, str):
        subscripts, operands = _interleaved_to_subscripts((subscripts,) + operands)
    operands = [asarray_leaf(x) for x in operands]
    operands = list(promote_dtypes(*operands))
    shapes = [get_aval(x).shape for x in operands]
    specs, out_spec, sizes = _parse(subscripts, shapes)
    path = _contract_path(specs, out_spec, sizes, optimize)
    terms = []
    for x, spec in zip(operands, specs):
        x = _squeeze_broadcast_ones(x, spec, sizes)
        x, spec = _diagonal_labels(x, spec)
        terms.append((x, spec))
    # Labels used by no other term and not in the output are summed out first.
    for idx, (x, spec) in enumerate(terms):
        others = set("".join(s for k, (_, s) in enumerate(terms) if k != idx)) | set(out_spec)
        terms[idx] = _sum_labels(x, spec, others)
    last = None    # the sharding the last contraction was given
    for n, pair in enumerate(path):
        i, j = sorted(pair)
        (a, sa), (b, sb) = terms[i], terms[j]
        rest = [t for k, t in enumerate(terms) if k not in (i, j)]
        keep = set(out_spec).union(*(set(s) for _, s in rest)) if rest else set(out_spec)
        # The last contraction makes the result: JAX gives it out_sharding.
        last = _in_label_order(out_sharding, out_spec, _pair_spec(sa, sb, keep)) if n == len(path) - 1 else None
        terms = rest + [_contract_pair(a, sa, b, sb, keep, precision, preferred_element_type, last)]
    (x, spec), = terms
    x, spec = _sum_labels(x, spec, set(out_spec))
    if spec != out_spec:
        x = lax.transpose(x, tuple(spec.index(c) for c in out_spec))
    if preferred_element_type is not None and get_aval(x).dtype != np.dtype(preferred_element_type):
        x = lax._convert_element_type(x, preferred_element_type, False)
    if out_sharding is not None and last is None:     # no contraction took it
        from ..sharding import reshard
        x = reshard(x, out_sharding)
    return x


def _pair_spec(sa, sb, keep):
    """The labels of _contract_pair's result, in its order (without computing it)."""
    sa = "".join(c for c in sa if c in keep or c in sb)
    sb = "".join(c for c in sb if c in keep or c in sa)
    shared = [c for c in sa if c in sb]
    batch = [c for c in shared if c in keep]
    return "".join(batch) + "".join(c for c in sa if c not in shared) + "".join(c for c in sb if c not in shared)


def _in_label_order(out_sharding, out_spec, spec):
    """``out_sharding`` (of the result, labels ``out_spec``) for a value labelled ``spec``
    that becomes the result by a transpose; None when more work follows (a sum)."""
    if out_sharding is None or spec == out_spec:
        return out_sharding
    if sorted(spec) != sorted(out_spec):
        return None
    from ..sharding import PartitionSpec
    given = out_sharding if isinstance(out_sharding, PartitionSpec) else out_sharding.spec
    entries = tuple(given) + (None,) * (len(out_spec) - len(given))
    spec_entries = PartitionSpec(*(entries[out_spec.index(c)] for c in spec), unreduced=given.unreduced,
                                 reduced=given.reduced)
    return spec_entries if isinstance(out_sharding, PartitionSpec) else out_sharding.with_spec(spec_entries)


def einsum_path(subscripts, /, *operands, optimize="auto"):
    if not isinstance(subscripts, str):
        subscripts, operands = _interleaved_to_subscripts((subscripts,) + operands)
    shapes = [np.shape(x) if not isinstance(x, core.Tracer) else get_aval(x).shape for x in operands]
    specs, out_spec, sizes = _parse(subscripts, shapes)
    path = _contract_path(specs, out_spec, sizes, optimize if optimize is not False else False)
    lines = [f"  Complete contraction:  {subscripts}", f"  Contraction path: {path}"]
    return path, "\n".join(lines)


# ---------------------------------------------------------------- other products

def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    a, b = promote_dtypes(asarray_leaf(a), asarray_leaf(b))
    na, nb = get_aval(a).ndim, get_aval(b).ndim
    if type(axes) is int or isinstance(axes, (np.integer,)):
        n = operator.index(axes)
        if n < 0 or n > builtins.min(na, nb):
            raise TypeError(f"Number of tensordot axes (axes {n}) exceeds input ranks ({na} and {nb})")
        ca, cb = list(range(na - n, na)), list(range(n))
    elif isinstance(axes, (list, tuple)) and len(axes) == 2:
        ax_a, ax_b = axes
        ax_a = [ax_a] if np.ndim(ax_a) == 0 else list(ax_a)
        ax_b = [ax_b] if np.ndim(ax_b) == 0 else list(ax_b)
        if len(ax_a) != len(ax_b):
            raise TypeError("tensordot requires axes lists to have equal length, got "
                            f"{ax_a} and {ax_b}.")
        ca = [canonicalize_axis(i, na) for i in ax_a]
        cb = [canonicalize_axis(i, nb) for i in ax_b]
    else:
        raise TypeError("tensordot axes argument must be an int, a pair of ints, or a pair of "
                        f"lists/tuples of ints, got {axes}.")
    return lax.dot_general(a, b, ((ca, cb), ((), ())), precision=precision,
                           preferred_element_type=preferred_element_type)


def kron(a, b):
    a, b = promote_dtypes(asarray_leaf(a), asarray_leaf(b))
    sa, sb = get_aval(a).shape, get_aval(b).shape
    nd = builtins.max(len(sa), len(sb))
    sa, sb = (1,) * (nd - len(sa)) + sa, (1,) * (nd - len(sb)) + sb
    a = reshape(a, tuple(x for s in sa for x in (s, 1)))
    b = reshape(b, tuple(x for s in sb for x in (1, s)))
    return reshape(multiply(a, b), tuple(x * y for x, y in zip(sa, sb)))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    from ._shape_ops import diagonal
    a = asarray_leaf(a)
    return _sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    from . import stack
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = promote_dtypes(asarray_leaf(a), asarray_leaf(b))
    a = moveaxis(a, axisa, -1)
    b = moveaxis(b, axisb, -1)
    na, nb = get_aval(a).shape[-1], get_aval(b).shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    from ._shape_ops import _take_slice

    def comp(x, i):
        return lax.squeeze(_take_slice(x, i, i + 1, get_aval(x).ndim - 1), (get_aval(x).ndim - 1,))
    a0, a1 = comp(a, 0), comp(a, 1)
    b0, b1 = comp(b, 0), comp(b, 1)
    if na == 2 and nb == 2:
        return a0 * b1 - a1 * b0
    a2 = comp(a, 2) if na == 3 else None
    b2 = comp(b, 2) if nb == 3 else None
    if a2 is None:
        c = [a1 * b2, -(a0 * b2), a0 * b1 - a1 * b0]
    elif b2 is None:
        c = [-(a2 * b1), a2 * b0, a0 * b1 - a1 * b0]
    else:
        c = [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0]
    from . import broadcast_arrays
    c = broadcast_arrays(*c)
    return moveaxis(stack(c, -1), -1, axisc)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    from ._elementwise import conj
    x1, x2 = promote_dtypes(asarray_leaf(x1), asarray_leaf(x2))
    n1, n2 = get_aval(x1).ndim, get_aval(x2).ndim
    a1, a2 = canonicalize_axis(axis, n1), canonicalize_axis(axis, n2)
    if get_aval(x1).shape[a1] != get_aval(x2).shape[a2]:
        raise ValueError(f"axes must match; got shapes {get_aval(x1).shape} and {get_aval(x2).shape} "
                         f"with axis={axis}")
    x1, x2 = moveaxis(x1, a1, -1), moveaxis(x2, a2, -1)
    return matmul(conj(x1)[..., None, :], x2[..., :, None], precision=precision,
                  preferred_element_type=preferred_element_type)[..., 0, 0]


def matvec(x1, x2, /):
    x1, x2 = asarray_leaf(x1), asarray_leaf(x2)
    return matmul(x1, x2[..., None])[..., 0]


def vecmat(x1, x2, /):
    from ._elementwise import conj
    x1, x2 = asarray_leaf(x1), asarray_leaf(x2)
    return matmul(conj(x1)[..., None, :], x2)[..., 0, :]
