"""Convolutions: conv_general_dilated and the conv/conv_transpose wrappers built on it.

One primitive, ``conv_general_dilated_p``.  Its dimension numbers name, for each operand, which
axis is the batch (N) / out-feature (O) axis, which the feature (C) / in-feature (I) axis, and
which the spatial axes; the primitive then computes, for every output position y,

    out[n, o, y] = sum over k, c of  lhs'[n, c, y * stride + k * rhs_dilation] * rhs[o, c, k]

where lhs' is lhs with ``lhs_dilation - 1`` zeros between its elements, then padded by
``padding`` (negative pads crop).  Feature groups split C and O into G blocks paired block by
block; batch groups split N and O into B blocks the same way.

The eager implementation (``conv_numpy``, shared with the CPU backend's driver) forms the
"im2col" patch matrix of lhs with a strided view and contracts it with rhs in one BLAS matmul
per group; without groups the patch matrix follows the operands' memory order
(``_conv_ungrouped``), so the gradient convolutions' unusual dimension numbers cost no transposes.
"""
import builtins
from collections import namedtuple

import numpy as np

from numjax.array import c_contiguous as _c_contiguous

from .. import dtypes
from .._fp_quiet import quietly
from ..array import Array, to_numpy
from ..blas_threads import call_limited
from ..core import ShapedArray, get_aval
from ..jaxpr import param_printers
from ._base import check_eagerly, make_primitive
from ._precision import Precision

__all__ = ["ConvDimensionNumbers", "ConvGeneralDilatedDimensionNumbers", "conv_general_dilated_p",
           "conv_general_dilated", "conv", "conv_with_general_padding", "conv_transpose",
           "conv_dimension_numbers", "conv_general_permutations", "conv_general_shape_tuple",
           "conv_shape_tuple", "conv_transpose_shape_tuple", "padtype_to_pads"]


class ConvDimensionNumbers(namedtuple("ConvDimensionNumbers", ["lhs_spec", "rhs_spec", "out_spec"])):
    """Axis positions of a convolution's operands and result.

    lhs_spec: (batch axis, feature axis, spatial axes...) of lhs;
    rhs_spec: (out-feature axis, in-feature axis, spatial axes...) of rhs;
    out_spec: (batch axis, feature axis, spatial axes...) of the result.
    """
    __slots__ = ()


ConvGeneralDilatedDimensionNumbers = object   # type alias in JAX: None, strings, or the tuple above


# ---------------------------------------------------------------- dimension numbers

def conv_general_permutations(dimension_numbers):
    """(lhs_spec, rhs_spec, out_spec) as axis positions for three layout strings such as
    ('NHWC', 'HWIO', 'NHWC'); spatial axes are ordered as they appear in the rhs string."""
    if not isinstance(dimension_numbers, (tuple, list)) or len(dimension_numbers) != 3:
        n = len(dimension_numbers) if isinstance(dimension_numbers, (tuple, list)) else dimension_numbers
        raise TypeError(f"convolution dimension_numbers list/tuple must be length 3, got {n}.")
    lhs, rhs, out = dimension_numbers
    if not all(isinstance(s, str) for s in dimension_numbers):
        raise TypeError("convolution dimension_numbers must be three strings such as "
                        f"('NCHW', 'OIHW', 'NCHW'), got {dimension_numbers}.")
    for k, (spec, pair) in enumerate(zip(dimension_numbers, ("NC", "OI", "NC"))):
        if spec.count(pair[0]) != 1 or spec.count(pair[1]) != 1:
            raise TypeError(f"convolution dimension_numbers[{k}] must contain the characters "
                            f"'{pair[0]}' and '{pair[1]}' exactly once, got {spec}.")
        if len(set(spec)) != len(spec):
            raise TypeError(f"convolution dimension_numbers[{k}] cannot have duplicate characters, got {spec}.")
    if not set(lhs) - set("NC") == set(rhs) - set("OI") == set(out) - set("NC"):
        raise TypeError("convolution dimension_numbers elements must each have the same set of "
                        f"spatial characters, got {tuple(dimension_numbers)}.")
    spatial_order = [c for c in rhs if c not in "OI"]

    def positions(spec, pair):
        spatial = sorted((i for i, c in enumerate(spec) if c not in pair),
                         key=lambda i: spatial_order.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)
    return positions(lhs, "NC"), positions(rhs, "OI"), positions(out, "NC")


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """``dimension_numbers`` (None, three layout strings, or a ``ConvDimensionNumbers``) as a
    ``ConvDimensionNumbers`` for operands of these shapes."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"convolution requires lhs and rhs ndim to be equal, got {len(lhs_shape)} "
                        f"and {len(rhs_shape)}.")
    if dimension_numbers is None:
        default = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(default, default, default)
    if isinstance(dimension_numbers, (tuple, list)) and len(dimension_numbers) == 3 and \
            all(isinstance(s, str) for s in dimension_numbers):
        for k, spec in enumerate(dimension_numbers[:2]):
            if len(spec) != len(lhs_shape):
                raise TypeError(f"convolution dimension_numbers[{k}] must have len equal to the ndim "
                                f"of lhs and rhs, got {len(spec)} for lhs and rhs shapes "
                                f"{tuple(lhs_shape)} and {tuple(rhs_shape)}.")
        if len(dimension_numbers[2]) != len(lhs_shape):
            raise TypeError(f"convolution dimension_numbers[2] must have len equal to the ndim of "
                            f"lhs and rhs, got {len(dimension_numbers[2])} for lhs and rhs shapes "
                            f"{tuple(lhs_shape)} and {tuple(rhs_shape)}.")
    return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))


def _check_specs(dn, ndim):
    for name, spec in zip(("lhs_spec", "rhs_spec", "out_spec"), dn):
        if sorted(spec) != list(range(ndim)):
            raise TypeError(f"convolution dimension_numbers.{name} must be a permutation of "
                            f"range({ndim}), got {tuple(spec)}.")


# ---------------------------------------------------------------- shapes and padding

def _dilated(size, dilation):
    return 0 if size == 0 else (size - 1) * dilation + 1


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """Explicit (low, high) pads for 'VALID', 'SAME' or 'SAME_LOWER' padding: SAME gives
    ceil(size / stride) outputs, the odd pad (if any) going high (low for SAME_LOWER)."""
    if isinstance(padding, str):
        kind = padding.upper()
    else:
        kind = getattr(padding, "name", padding)
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise RuntimeError(f"Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', "
                           f"got {padding}.")
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides):
        out = -(-int(n) // int(s))
        total = builtins.max((out - 1) * int(s) + int(w) - int(n), 0)
        small, big = total // 2, total - total // 2
        pads.append((big, small) if kind == "SAME_LOWER" else (small, big))
    return pads


def _conv_out_size(size, lo, hi, window, stride):
    padded = size + lo + hi
    return builtins.max((padded - window) // stride + 1, 0) if padded >= window else 0


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """Result shape of an (N, C, spatial...) x (O, I, spatial...) convolution, no dilation."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"Wrong number of explicit pads for convolution: expected "
                        f"{len(lhs_shape) - 2}, got {len(pads)}.")
    spatial = tuple(_conv_out_size(n, lo, hi, k, s) for n, k, s, (lo, hi)
                    in zip(lhs_shape[2:], rhs_shape[2:], strides, pads))
    return (lhs_shape[0] // batch_group_count, rhs_shape[0]) + spatial


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lhs_t = tuple(lhs_shape[i] for i in dn.lhs_spec)
    rhs_t = tuple(rhs_shape[i] for i in dn.rhs_spec)
    out_t = conv_shape_tuple(lhs_t, rhs_t, window_strides, padding)
    return tuple(out_t[dn.out_spec.index(i)] for i in range(len(out_t)))


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lhs_t = tuple(lhs_shape[i] for i in dn.lhs_spec)
    rhs_t = tuple(rhs_shape[i] for i in dn.rhs_spec)
    if isinstance(padding, str):
        pads = [_transpose_pads(k, s, padding) for k, s in zip(rhs_t[2:], window_strides)]
    else:
        pads = padding
    spatial = tuple(builtins.max(_dilated(n, s) + lo + hi - k + 1, 0) for n, k, s, (lo, hi)
                    in zip(lhs_t[2:], rhs_t[2:], window_strides, pads))
    out_t = (lhs_t[0], rhs_t[0]) + spatial
    return tuple(out_t[dn.out_spec.index(i)] for i in range(len(out_t)))


def _conv_shape(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dn,
                feature_group_count, batch_group_count):
    """The result shape, after JAX's checks (with JAX's exception classes)."""
    ls, rs = lhs.shape, rhs.shape
    n, c = ls[dn.lhs_spec[0]], ls[dn.lhs_spec[1]]
    o, i = rs[dn.rhs_spec[0]], rs[dn.rhs_spec[1]]
    g, b = feature_group_count, batch_group_count
    if g < 1 or b < 1:
        raise ValueError(f"conv_general_dilated feature_group_count and batch_group_count must be "
                         f"positive, got {g} and {b}.")
    if g > 1 and b > 1:
        raise ValueError(f"At most one of batch_group_count and feature_group_count may be > 1, got "
                         f"batch_group_count={b} and feature_group_count={g}")
    if c % g:
        raise ValueError(f"conv_general_dilated feature_group_count must divide lhs feature dimension "
                         f"size, but {g} does not divide {c}.")
    if c // g != i:
        raise ValueError(f"conv_general_dilated lhs feature dimension size divided by "
                         f"feature_group_count must equal the rhs input feature dimension size, but "
                         f"{c} // {g} != {i}.")
    if o % g:
        raise ValueError(f"conv_general_dilated rhs output feature dimension size must be a multiple "
                         f"of feature_group_count, but {o} is not a multiple of {g}.")
    if n % b:
        raise ValueError(f"conv_general_dilated batch_group_count must divide lhs batch dimension "
                         f"size, but {b} does not divide {n}.")
    if o % b:
        raise ValueError(f"conv_general_dilated rhs output feature dimension size must be a multiple "
                         f"of batch_group_count, but {o} is not a multiple of {b}.")
    spatial = []
    for k, (ld_, rd_, s, (lo, hi)) in enumerate(zip(lhs_dilation, rhs_dilation, window_strides, padding)):
        size = _dilated(ls[dn.lhs_spec[2 + k]], ld_)
        window = _dilated(rs[dn.rhs_spec[2 + k]], rd_)
        spatial.append(_conv_out_size(size, lo, hi, window, s))
    canonical = (n // b, o) + tuple(spatial)
    return tuple(canonical[dn.out_spec.index(a)] for a in range(len(canonical)))


def _conv_abstract(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                   feature_group_count, batch_group_count, precision=None, preferred_element_type=None,
                   out_sharding=None):
    shape = _conv_shape(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                        feature_group_count, batch_group_count)
    dt = lhs.dtype if preferred_element_type is None else np.dtype(preferred_element_type)
    return ShapedArray(shape, dt, lhs.weak_type and rhs.weak_type)


# ---------------------------------------------------------------- numpy implementation

def pad_numpy(x, value, config):
    """lax.pad on a numpy array in one allocation: ``config`` holds (low, high, interior)
    per axis, negative low/high crop."""
    inner = [_dilated(n, it + 1) for n, (_, _, it) in zip(x.shape, config)]
    full = [builtins.max(lo, 0) + m + builtins.max(hi, 0) for m, (lo, hi, _) in zip(inner, config)]
    out = np.full(full, value, x.dtype)
    out[tuple(builtins.slice(builtins.max(lo, 0), builtins.max(lo, 0) + m, it + 1)
              for m, (lo, hi, it) in zip(inner, config))] = x
    return out[tuple(builtins.slice(-builtins.min(lo, 0), builtins.max(f + builtins.min(hi, 0), -builtins.min(lo, 0)))
                     for f, (lo, hi, _) in zip(full, config))]


def window_view(x, axes, window, strides, dilation):
    """A read-only strided view of ``x`` with, for each axis in ``axes``, that axis replaced by
    the window positions (``strides`` apart) and a window axis (``dilation`` apart) appended at
    the end: shape (..., out positions..., ..., window sizes...)."""
    shape, st = list(x.shape), list(x.strides)
    extra_shape, extra_strides = [], []
    for a, k, s, d in zip(axes, window, strides, dilation):
        span = _dilated(k, d)
        shape[a] = builtins.max((x.shape[a] - span) // s + 1, 0) if x.shape[a] >= span else 0
        st[a] = x.strides[a] * s
        extra_shape.append(k)
        extra_strides.append(x.strides[a] * d)
    return np.lib.stride_tricks.as_strided(x, tuple(shape) + tuple(extra_shape),
                                           tuple(st) + tuple(extra_strides), writeable=False)


@quietly     # inf * 0 in the matmuls: NaN without numpy's RuntimeWarnings, as XLA
def conv_numpy(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
               feature_group_count, batch_group_count, out_dtype):
    """conv_general_dilated on numpy arrays: im2col patches, then one matmul per group."""
    out_dtype = np.dtype(out_dtype)
    acc = np.dtype(np.int64) if out_dtype == np.bool_ else out_dtype
    if feature_group_count == 1 and batch_group_count == 1:
        res = _conv_ungrouped(lhs.astype(acc, copy=False), rhs.astype(acc, copy=False), window_strides,
                              padding, lhs_dilation, rhs_dilation, dimension_numbers)
        if acc != out_dtype:
            res = res != 0 if out_dtype == np.bool_ else res.astype(out_dtype)
        return res
    return _conv_grouped(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                         feature_group_count, batch_group_count, out_dtype, acc)

def _contiguous_run(shape, strides, itemsize):
    """How many elements a copy walking these axes (innermost last) reads per contiguous run."""
    run = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size == 1:
            continue
        if stride != run * itemsize:
            break
        run *= size
    return run


def _conv_ungrouped(x, w, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers):
    """One im2col matmul laid out after the operands' memory order, not a fixed layout.

    Gradient convolutions arrive with unusual dimension numbers (the weight gradient treats the
    batch axis as the contracted feature axis and the forward pass's output as its kernel), so
    transposing every operand to channels-last costs copies as large as the patch matrix.
    Instead lhs is padded in its own axis order, the patch view keeps that order (each spatial
    axis split into an output-position and a window axis), and the copy into the patch matrix
    (in cache-sized blocks, ``_blocked_matmul``) is written rows-major or columns-major, whichever
    reads longer contiguous runs; the other orientation reaches BLAS as a transposed operand,
    which costs nothing.  The kernel's
    columns follow the same order, so a kernel stored like the patches (the forward output in
    a weight gradient) is a free view."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    nd = len(lhs_spec) - 2
    cfg = [(0, 0, 0)] * x.ndim
    for i in range(nd):
        cfg[lhs_spec[2 + i]] = (padding[i][0], padding[i][1], lhs_dilation[i] - 1)
    if any(lo or hi or it for lo, hi, it in cfg):
        x = pad_numpy(x, 0, cfg)
    spatial_index = {a: i for i, a in enumerate(lhs_spec[2:])}
    kshape = [w.shape[a] for a in rhs_spec[2:]]
    # Patch axes, in lhs's axis order: "b" (batch), "f" (feature), ("y", i) and ("k", i).
    labels, shape, strides = [], [], []
    for a, (size, stride) in enumerate(zip(x.shape, x.strides)):
        if a in spatial_index:
            i = spatial_index[a]
            span = _dilated(kshape[i], rhs_dilation[i])
            labels += [("y", i), ("k", i)]
            shape += [builtins.max((size - span) // window_strides[i] + 1, 0) if size >= span else 0, kshape[i]]
            strides += [stride * window_strides[i], stride * rhs_dilation[i]]
        else:
            labels.append("b" if a == lhs_spec[0] else "f")
            shape.append(size)
            strides.append(stride)
    patches = np.lib.stride_tricks.as_strided(x, tuple(shape), tuple(strides), writeable=False)
    rows = [j for j, lab in enumerate(labels) if lab == "b" or lab[0] == "y"]
    cols = [j for j, lab in enumerate(labels) if lab == "f" or lab[0] == "k"]
    m = int(np.prod([shape[j] for j in rows], dtype=np.int64))
    kc = int(np.prod([shape[j] for j in cols], dtype=np.int64))

    def run(order):
        return _contiguous_run([shape[j] for j in order], [strides[j] for j in order], x.itemsize)
    cols_first = run(cols + rows) > run(rows + cols)
    w_axes = [rhs_spec[1] if labels[j] == "f" else rhs_spec[2 + labels[j][1]] for j in cols]
    o = w.shape[rhs_spec[0]]
    if rhs_spec[0] == 0:      # O outermost (OIHW): the transposed view needs no copy
        wm = np.transpose(w, [rhs_spec[0]] + w_axes).reshape(o, kc).T
    else:
        wm = np.transpose(w, w_axes + [rhs_spec[0]]).reshape(kc, o)
    res = _blocked_matmul(patches.transpose(cols + rows if cols_first else rows + cols), cols_first, m, kc, wm)
    res = res.reshape([shape[j] for j in rows] + [o])
    res_labels = [labels[j] for j in rows] + ["o"]
    out_labels = [None] * x.ndim
    out_labels[out_spec[0]], out_labels[out_spec[1]] = "b", "o"
    for i in range(nd):
        out_labels[out_spec[2 + i]] = ("y", i)
    return np.ascontiguousarray(res.transpose([res_labels.index(lab) for lab in out_labels]))


# Patch-matrix blocks of about this size are copied and multiplied one at a time, so BLAS reads
# each block while it is still in cache: measured 1.2x to 1.5x faster than one whole-matrix copy
# for the benchmark CNN's 32- and 64-channel layers (blocks of 256 KiB to 4 MiB tried).
_PATCH_BLOCK_BYTES = 1 << 20


def _blocked_matmul(patches, cols_first, m, kc, wm):
    """(m, kc) patch matrix @ ``wm`` (kc, o), the matrix copied from the strided ``patches`` view
    block by block along its leading axis: a block of rows gives its own result rows; a block
    of columns (``cols_first``: the copy reads lhs better column by column) gives a partial
    product to add up."""
    lead = patches.shape[0] if patches.ndim else 0
    if m * kc == 0 or lead == 0:
        return np.zeros((m, wm.shape[1]), np.result_type(patches.dtype, wm.dtype))
    per_index = m * kc // lead
    step = builtins.max(1, _PATCH_BLOCK_BYTES // builtins.max(1, per_index * patches.itemsize))
    if cols_first:
        k_step = kc // lead
        res = None
        for s0 in range(0, lead, step):
            s1 = builtins.min(lead, s0 + step)
            block = np.ascontiguousarray(patches[s0:s1]).reshape((s1 - s0) * k_step, m)
            part = np.matmul(block.T, wm[s0 * k_step:s1 * k_step])
            res = part if res is None else np.add(res, part, out=res)
        return res
    m_step = m // lead
    res = np.empty((m, wm.shape[1]), np.result_type(patches.dtype, wm.dtype))
    for s0 in range(0, lead, step):
        s1 = builtins.min(lead, s0 + step)
        block = np.ascontiguousarray(patches[s0:s1]).reshape((s1 - s0) * m_step, kc)
        np.matmul(block, wm, out=res[s0 * m_step:s1 * m_step])
    return res


def _conv_grouped(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                  feature_group_count, batch_group_count, out_dtype, acc):
    """Feature or batch groups: channels-last operands, one matmul per group."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    nd = len(lhs_spec) - 2
    # Channels-last working layouts: x (N, spatial..., C), w (spatial..., I, O).
    x = np.transpose(lhs, (lhs_spec[0],) + tuple(lhs_spec[2:]) + (lhs_spec[1],)).astype(acc, copy=False)
    w = np.transpose(rhs, tuple(rhs_spec[2:]) + (rhs_spec[1], rhs_spec[0])).astype(acc, copy=False)
    cfg = [(0, 0, 0)] + [(lo, hi, d - 1) for (lo, hi), d in zip(padding, lhs_dilation)] + [(0, 0, 0)]
    if any(lo or hi or it for lo, hi, it in cfg):
        x = pad_numpy(x, 0, cfg)
    kshape = w.shape[:nd]
    n, c, o = x.shape[0], x.shape[-1], w.shape[-1]
    out_spatial = tuple(builtins.max((size - _dilated(k, d)) // st + 1, 0) if size >= _dilated(k, d) else 0
                        for size, k, d, st in zip(x.shape[1:-1], kshape, rhs_dilation, window_strides))
    # Patches (N, out spatial..., window..., C): C stays innermost, so the im2col copy below
    # moves contiguous runs of features.
    sx = x.strides
    patches = np.lib.stride_tricks.as_strided(
        x, (n,) + out_spatial + tuple(kshape) + (c,),
        (sx[0],) + tuple(sx[1 + i] * window_strides[i] for i in range(nd))
        + tuple(sx[1 + i] * rhs_dilation[i] for i in range(nd)) + (sx[-1],), writeable=False)
    g, b = feature_group_count, batch_group_count
    groups = g * b
    y, k = int(np.prod(out_spatial, dtype=np.int64)), int(np.prod(kshape, dtype=np.int64))
    if groups == 1:
        p = patches.reshape(1, n * y, k * c)
    else:
        # -> (groups, N/b * Y, K * C/g): the group axis (of N or of C) first.
        p = patches.reshape(b, (n // b) * y, k, g, c // g)
        p = np.moveaxis(p, 3, 1).reshape(groups, (n // b) * y, k * (c // g))
    wk = np.moveaxis(w.reshape(k, c // g, groups, o // groups), 2, 0).reshape(groups, k * (c // g), o // groups)
    res = np.matmul(p, wk)                              # (groups, N/b * Y, O/groups)
    res = np.moveaxis(res.reshape(groups, n // b, y, o // groups), 0, 2).reshape((n // b,) + out_spatial + (o,))
    if acc != out_dtype:
        res = res != 0 if out_dtype == np.bool_ else res.astype(out_dtype)
    src = [0] * (nd + 2)
    src[out_spec[0]], src[out_spec[1]] = 0, nd + 1
    for i in range(nd):
        src[out_spec[2 + i]] = 1 + i
    return np.ascontiguousarray(np.transpose(res, src))


def _conv_impl(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
               feature_group_count, batch_group_count, precision=None, preferred_element_type=None,
               out_sharding=None):
    lv, rv = to_numpy(lhs), to_numpy(rhs)
    dt = lv.dtype if preferred_element_type is None else np.dtype(preferred_element_type)
    out = call_limited(conv_numpy, lv, rv, window_strides, padding, lhs_dilation, rhs_dilation,
                       dimension_numbers, feature_group_count, batch_group_count, dt)
    weak = getattr(lhs, "weak_type", False) and getattr(rhs, "weak_type", False)
    return Array(_c_contiguous(out), weak)


conv_general_dilated_p = make_primitive("conv_general_dilated", _conv_impl, _conv_abstract)
check_eagerly(conv_general_dilated_p)


def _print_conv_params(params):
    # JAX prints the dimension numbers as the named tuple and each precision as Precision.X.
    out = {k: params[k] for k in sorted(params)}
    out["dimension_numbers"] = repr(ConvDimensionNumbers(*(tuple(int(a) for a in spec)
                                                           for spec in params["dimension_numbers"])))
    precision = params.get("precision")
    if precision is not None:
        out["precision"] = "(" + ", ".join(f"Precision.{p.name}" if p is not None else "None"
                                           for p in precision) + ")"
    return out


param_printers[conv_general_dilated_p] = _print_conv_params


# ---------------------------------------------------------------- public API

def _canonical_precision(precision):
    if precision is None:
        return None
    if isinstance(precision, (tuple, list)):
        if len(precision) != 2:
            raise ValueError(f"precision should be None, a Precision, or a pair of them, got {precision}.")
        return tuple(None if p is None else Precision(p) for p in precision)
    p = Precision(precision)
    if p is None:
        raise ValueError(f"precision argument must be one of the Precision enum values, got {precision!r}.")
    return (p, p)


def _int_tuple(name, values, n):
    values = tuple(int(v) for v in values)
    if len(values) != n:
        raise ValueError(f"conv_general_dilated {name} must have {n} entries (one per spatial "
                         f"dimension), got {values}.")
    return values


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                         dimension_numbers=None, feature_group_count=1, batch_group_count=1,
                         precision=None, preferred_element_type=None):
    """General n-dimensional convolution (see the module docstring for its definition)."""
    la, ra = get_aval(lhs), get_aval(rhs)
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    if len(dn.lhs_spec) != la.ndim or len(dn.rhs_spec) != ra.ndim or len(dn.out_spec) != la.ndim:
        raise TypeError(f"convolution dimension_numbers {tuple(dn)} must have one entry per axis of "
                        f"lhs and rhs, shapes {la.shape} and {ra.shape}.")
    _check_specs(dn, la.ndim)
    nd = la.ndim - 2
    if nd < 0:
        raise TypeError(f"convolution requires operands of rank at least 2, got shapes {la.shape} and {ra.shape}.")
    strides = _int_tuple("window_strides", window_strides, nd)
    lhs_dil = _int_tuple("lhs_dilation", lhs_dilation or (1,) * nd, nd)
    rhs_dil = _int_tuple("rhs_dilation", rhs_dilation or (1,) * nd, nd)
    for name, vals in (("window_strides", strides), ("lhs_dilation", lhs_dil), ("rhs_dilation", rhs_dil)):
        if any(v < 1 for v in vals):
            raise ValueError(f"conv_general_dilated {name} must be positive, got {vals}.")
    if isinstance(padding, str):
        in_sizes = [_dilated(la.shape[dn.lhs_spec[2 + k]], lhs_dil[k]) for k in range(nd)]
        windows = [_dilated(ra.shape[dn.rhs_spec[2 + k]], rhs_dil[k]) for k in range(nd)]
        pads = padtype_to_pads(in_sizes, windows, strides, padding)
    else:
        try:
            pads = [tuple(p) for p in padding]
        except TypeError:
            raise TypeError(f"padding must be a string ('SAME', 'VALID', 'SAME_LOWER') or a sequence "
                            f"of (low, high) pairs, got {padding!r}.") from None
        if len(pads) != nd:
            raise TypeError(f"Wrong number of explicit pads for convolution: expected {nd}, got {len(pads)}.")
        if any(len(p) != 2 for p in pads):
            raise TypeError(f"convolution padding must be (low, high) pairs, got {padding!r}.")
    pads = tuple((int(lo), int(hi)) for lo, hi in pads)
    if la.dtype != ra.dtype:
        raise TypeError(f"lax.conv_general_dilated requires arguments to have the same dtypes, got "
                        f"{la.dtype.name}, {ra.dtype.name}.")
    pet = None
    if preferred_element_type is not None:
        pet = dtypes.canonicalize_dtype(preferred_element_type)
        if _narrower(pet, la.dtype):
            raise TypeError("`preferred_element_type` must not be narrower than the original type.")
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=strides, padding=pads, lhs_dilation=lhs_dil, rhs_dilation=rhs_dil,
        dimension_numbers=dn, feature_group_count=int(feature_group_count),
        batch_group_count=int(batch_group_count), precision=_canonical_precision(precision),
        preferred_element_type=pet, out_sharding=None)


def _narrower(new, old):
    new, old = np.dtype(new), np.dtype(old)
    if old == np.bool_ or new == old:
        return False
    if new.kind == old.kind or (new.kind in "fc" and old.kind in "fc"):
        return new.itemsize < old.itemsize
    return new.kind in "iub" and old.kind in "fc"


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """conv_general_dilated in the default (N, C, spatial...) x (O, I, spatial...) layout."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None):
    """The gradient-of-convolution ("deconvolution") operator: lhs dilated by ``strides``,
    convolved with rhs (spatially flipped, O and I swapped when ``transpose_kernel``)."""
    from .shape import rev
    la, ra = get_aval(lhs), get_aval(rhs)
    nd = la.ndim - 2
    if dimension_numbers is None:
        if nd == 1:
            dimension_numbers = ("NHC", "HIO", "NHC")
        elif nd == 2:
            dimension_numbers = ("NHWC", "HWIO", "NHWC")
        elif nd == 3:
            dimension_numbers = ("NHWDC", "HWDIO", "NHWDC")
        else:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    kshape = [ra.shape[i] for i in dn.rhs_spec[2:]]
    rhs_dilation = tuple(rhs_dilation or (1,) * nd)
    windows = [_dilated(k, d) for k, d in zip(kshape, rhs_dilation)]
    if isinstance(padding, str):
        if padding not in ("SAME", "VALID"):
            raise ValueError(f"conv_transpose padding must be 'SAME', 'VALID' or explicit pairs, got {padding!r}.")
        pads = [_transpose_pads(w, s, padding) for w, s in zip(windows, strides)]
    else:
        pads = padding
    if transpose_kernel:
        rhs = rev(rhs, dn.rhs_spec[2:])
        dn = dn._replace(rhs_spec=(dn.rhs_spec[1], dn.rhs_spec[0]) + tuple(dn.rhs_spec[2:]))
    return conv_general_dilated(lhs, rhs, (1,) * nd, pads, lhs_dilation=strides, rhs_dilation=rhs_dilation,
                                dimension_numbers=dn, precision=precision,
                                preferred_element_type=preferred_element_type)


def _transpose_pads(window, stride, padding):
    """(low, high) pads of conv_transpose: the dilated input is padded so that SAME gives
    size * stride outputs and VALID size * stride + max(window - stride, 0)."""
    if padding == "SAME":
        total = window + stride - 2
        lo = window - 1 if stride > window - 1 else (total + 1) // 2
    else:
        total = window + stride - 2 + builtins.max(window - stride, 0)
        lo = window - 1
    return lo, total - lo


# ---------------------------------------------------------------- differentiation rules
from ..interpreters import ad, batching  # noqa: E402


ad.defbilinear(conv_general_dilated_p)


def _fold(x, v, target, groups=1):
    """Axis ``v`` of ``x`` folded into axis ``target`` (both positions in ``x``): the target
    axis, seen as (groups, n / groups), becomes (groups, size of v, n / groups) flattened.
    The result has one axis fewer; the other axes keep their order."""
    from .shape import reshape, transpose
    shape = get_aval(x).shape
    order = [a for a in range(len(shape)) if a != v]
    pos = order.index(target)
    order.insert(pos, v)
    if order != list(range(len(shape))):
        x = transpose(x, order)
    sizes = [shape[a] for a in order]
    vsize, n = sizes[pos], sizes[pos + 1]
    if groups > 1:
        x = reshape(x, sizes[:pos] + [vsize, groups, n // groups] + sizes[pos + 2:])
        perm = list(range(len(sizes) + 1))
        perm[pos], perm[pos + 1] = pos + 1, pos
        x = transpose(x, perm)
    return reshape(x, sizes[:pos] + [vsize * n] + sizes[pos + 2:])


def _unfold(x, axis, vsize, groups=1):
    """The inverse of ``_fold``: axis ``axis`` (groups, vsize, m) becomes two axes, vsize at
    ``axis`` and (groups, m) after it."""
    from .shape import reshape, transpose
    shape = list(get_aval(x).shape)
    n = shape[axis]
    if groups > 1:
        x = reshape(x, shape[:axis] + [groups, vsize, n // (groups * vsize)] + shape[axis + 1:])
        perm = list(range(len(shape) + 2))
        perm[axis], perm[axis + 1] = axis + 1, axis
        x = transpose(x, perm)
    return reshape(x, shape[:axis] + [vsize, n // vsize] + shape[axis + 1:])


def _swap_groups_into_in_features(rhs, rhs_spec, groups):
    """rhs with O = (groups, O / groups) regrouped as O' = O / groups, I' = (groups, I): the
    kernel of the transposed convolution, whose outputs are the forward pass's inputs."""
    from .shape import reshape
    if groups == 1:
        return rhs
    o_ax, i_ax = rhs_spec[0], rhs_spec[1]
    shape = list(get_aval(rhs).shape)
    split = shape[:o_ax] + [groups, shape[o_ax] // groups] + shape[o_ax + 1:]
    x = reshape(rhs, split)
    # In the split array the groups axis is at o_ax; the I axis moved by one if it came after O.
    i_split = i_ax + 1 if i_ax > o_ax else i_ax
    return _fold(x, o_ax, i_split)


def _conv_transpose_lhs(ct, rhs, lhs_aval, window_strides, padding, lhs_dilation, rhs_dilation,
                        dimension_numbers, feature_group_count, batch_group_count, precision,
                        preferred_element_type):
    """ct_lhs = ct dilated by the strides, correlated with the flipped kernel, sampled every
    lhs_dilation positions: each input element collects the outputs whose windows read it."""
    from .elementwise import convert_element_type
    from .shape import rev
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    groups = builtins.max(feature_group_count, batch_group_count)
    kernel = rev(_swap_groups_into_in_features(rhs, rhs_spec, groups), tuple(rhs_spec[2:]))
    ct_shape, k_shape = get_aval(ct).shape, get_aval(rhs).shape
    pads = []
    for k in range(len(lhs_spec) - 2):
        n, kern, y = lhs_aval.shape[lhs_spec[2 + k]], k_shape[rhs_spec[2 + k]], ct_shape[out_spec[2 + k]]
        span = _dilated(kern, rhs_dilation[k])
        lo = span - 1 - padding[k][0]
        hi = (n - 1) * lhs_dilation[k] + span - _dilated(y, window_strides[k]) - lo
        pads.append((lo, hi))
    if get_aval(ct).dtype != get_aval(rhs).dtype:
        ct = convert_element_type(ct, get_aval(rhs).dtype)
    t_dn = ConvDimensionNumbers(out_spec, (rhs_spec[1], rhs_spec[0]) + tuple(rhs_spec[2:]), lhs_spec)
    out = conv_general_dilated_p.bind(
        ct, kernel, window_strides=tuple(lhs_dilation), padding=tuple(pads), lhs_dilation=tuple(window_strides),
        rhs_dilation=tuple(rhs_dilation), dimension_numbers=t_dn, feature_group_count=groups,
        batch_group_count=1, precision=precision,
        preferred_element_type=None if preferred_element_type is None else lhs_aval.dtype, out_sharding=None)
    if batch_group_count > 1:
        # Output features (groups, C) -> batch (groups, N / groups).
        out = _unfold(out, lhs_spec[1], batch_group_count)
        f_ax = lhs_spec[1]
        b_ax = lhs_spec[0] + 1 if lhs_spec[0] > f_ax else lhs_spec[0]
        out = _fold(out, f_ax, b_ax)
    return out


def _conv_transpose_rhs(ct, lhs, rhs_aval, window_strides, padding, lhs_dilation, rhs_dilation,
                        dimension_numbers, feature_group_count, batch_group_count, precision,
                        preferred_element_type):
    """ct_rhs[o, c, k] = sum over n, y of ct[n, o, y] * lhs'[n, c, y * stride + k * rhs_dilation]:
    a convolution of lhs (batch and feature roles swapped) with ct as the kernel, whose
    stride is rhs_dilation and whose kernel dilation is the forward stride."""
    from .elementwise import convert_element_type
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    ct_shape, l_shape = get_aval(ct).shape, get_aval(lhs).shape
    pads = []
    for k in range(len(lhs_spec) - 2):
        n, kern, y = l_shape[lhs_spec[2 + k]], rhs_aval.shape[rhs_spec[2 + k]], ct_shape[out_spec[2 + k]]
        lo = padding[k][0]
        hi = (kern - 1) * rhs_dilation[k] + _dilated(y, window_strides[k]) - _dilated(n, lhs_dilation[k]) - lo
        pads.append((lo, hi))
    if get_aval(ct).dtype != get_aval(lhs).dtype:
        ct = convert_element_type(ct, get_aval(lhs).dtype)
    t_dn = ConvDimensionNumbers((lhs_spec[1], lhs_spec[0]) + tuple(lhs_spec[2:]),
                                (out_spec[1], out_spec[0]) + tuple(out_spec[2:]),
                                (rhs_spec[1], rhs_spec[0]) + tuple(rhs_spec[2:]))
    return conv_general_dilated_p.bind(
        lhs, ct, window_strides=tuple(rhs_dilation), padding=tuple(pads), lhs_dilation=tuple(lhs_dilation),
        rhs_dilation=tuple(window_strides), dimension_numbers=t_dn, feature_group_count=batch_group_count,
        batch_group_count=feature_group_count, precision=precision,
        preferred_element_type=None if preferred_element_type is None else rhs_aval.dtype, out_sharding=None)


def _conv_transpose(ct, lhs, rhs, *, out_sharding=None, **params):
    if type(ct) is ad.Zero:
        return [None, None]
    ct_lhs = _conv_transpose_lhs(ct, rhs, lhs.aval, **params) if ad.is_undefined(lhs) else None
    ct_rhs = _conv_transpose_rhs(ct, lhs, rhs.aval, **params) if ad.is_undefined(rhs) else None
    return [ct_lhs, ct_rhs]


ad.transpose_rules[conv_general_dilated_p] = _conv_transpose


# ---------------------------------------------------------------- batching rule

def _conv_batch_rule(vals, dims, **params):
    """The vmapped axis joins an axis the convolution already maps over: lhs's batch axis,
    rhs's out-feature axis, or (both batched) one more feature or batch group."""
    lhs, rhs = vals
    lhs_dim, rhs_dim = dims
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    g, b = params["feature_group_count"], params["batch_group_count"]

    def at(spec_axis, vdim):      # an unbatched axis's position in the batched array
        return spec_axis + 1 if spec_axis >= vdim else spec_axis

    if lhs_dim is not None and rhs_dim is not None:
        vsize = get_aval(lhs).shape[lhs_dim]
        if b > 1:
            lhs = _fold(lhs, lhs_dim, at(lhs_spec[0], lhs_dim))
            params = dict(params, batch_group_count=vsize * b)
        else:
            lhs = _fold(lhs, lhs_dim, at(lhs_spec[1], lhs_dim))
            params = dict(params, feature_group_count=vsize * g)
        rhs = _fold(rhs, rhs_dim, at(rhs_spec[0], rhs_dim))
        out = conv_general_dilated_p.bind(lhs, rhs, **params)
        return _unfold(out, out_spec[1], vsize), out_spec[1]
    if lhs_dim is not None:
        vsize = get_aval(lhs).shape[lhs_dim]
        lhs = _fold(lhs, lhs_dim, at(lhs_spec[0], lhs_dim), b)
        out = conv_general_dilated_p.bind(lhs, rhs, **params)
        return _unfold(out, out_spec[0], vsize), out_spec[0]
    vsize = get_aval(rhs).shape[rhs_dim]
    rhs = _fold(rhs, rhs_dim, at(rhs_spec[0], rhs_dim), g * b)
    out = conv_general_dilated_p.bind(lhs, rhs, **params)
    return _unfold(out, out_spec[1], vsize, g * b), out_spec[1]


batching.batch_rules[conv_general_dilated_p] = _conv_batch_rule
