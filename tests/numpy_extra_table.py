"""Records for the jax.numpy breadth tests (tests/test_numpy_extra.py and its compat twin).

Each record is a jnp expression (a lambda's source, evaluated with ``jnp`` bound to either
numjax.numpy or jax.numpy) and argument specs. Arguments are generated deterministically
from the record's name, so the committed JAX results (numpy_extra_expected.json, written by
``python tests/numpy_extra_table.py`` under an environment with real JAX) describe exactly
the inputs the default tests build.

Argument specs: ``f32[3,4]`` normal floats, ``pos_f32[..]`` in (0.1, 2), ``unit_f32[..]``
in (-0.9, 0.9), ``i32[..]`` ints in [-5, 5], ``nat_i32[..]`` ints in [0, 5), ``u8[..]``,
``b[..]`` bools, ``c64[..]`` complex, ``nan_f32[..]`` floats with NaNs; any non-string is
passed as it is (Python scalars, tuples).  Flags: ``grad`` (check_grads), ``vmap`` (vmap over
a new leading axis of the first argument vs a loop), ``jit`` (jit vs eager, compiled).
"""
import json
import os
import zlib
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Rec:
    name: str
    fn: str
    args: tuple
    grad: bool = False
    vmap: bool = False
    jit: bool = False
    rtol: float = 2e-5


def R(name, fn, *args, **flags):
    return Rec(name, fn, tuple(args), **flags)


RECORDS = [
    # ---- elementwise
    R("logaddexp", "lambda x, y: jnp.logaddexp(x, y)", "f32[3,4]", "f32[4]", grad=True, vmap=True, jit=True),
    R("logaddexp_int", "lambda x, y: jnp.logaddexp(x, y)", "i32[5]", 2),
    R("logaddexp_inf", "lambda x: jnp.logaddexp(x, -jnp.inf)", "f32[4]", grad=True),
    R("logaddexp2", "lambda x, y: jnp.logaddexp2(x, y)", "f32[5]", "f32[5]", grad=True),
    R("hypot", "lambda x, y: jnp.hypot(x, y)", "f32[6]", "f32[6]", grad=True, vmap=True),
    R("hypot_int", "lambda x: jnp.hypot(x, 3)", "i32[4]"),
    R("arctan2", "lambda x, y: jnp.arctan2(x, y)", "f32[5]", "pos_f32[5]", grad=True),
    R("sinc", "lambda x: jnp.sinc(x)", "f32[7]", grad=True, vmap=True, jit=True),
    R("sinc_zero", "lambda x: jnp.sinc(x * 0.0)", "f32[3]", grad=True),
    R("nan_to_num", "lambda x: jnp.nan_to_num(x / 0.0)", "f32[6]"),
    R("nan_to_num_args", "lambda x: jnp.nan_to_num(jnp.log(x), nan=1.0, posinf=2.0, neginf=-2.0)", "f32[6]"),
    R("heaviside", "lambda x: jnp.heaviside(x, 0.5)", "i32[7]"),
    R("copysign", "lambda x, y: jnp.copysign(x, y)", "f32[5]", "f32[5]"),
    R("signbit", "lambda x: jnp.signbit(x)", "f32[6]"),
    R("signbit_int", "lambda x: jnp.signbit(x)", "i32[6]"),
    R("ldexp", "lambda x, e: jnp.ldexp(x, e)", "f32[5]", "i32[5]"),
    R("frexp", "lambda x: jnp.frexp(x * 100)", "f32[6]"),
    R("modf", "lambda x: jnp.modf(x * 3)", "f32[6]"),
    R("gcd", "lambda x, y: jnp.gcd(x * 6, y * 4)", "i32[6]", "i32[6]", jit=True),
    R("lcm", "lambda x, y: jnp.lcm(x, y)", "i32[6]", "i32[6]"),
    R("deg2rad", "lambda x: jnp.deg2rad(x)", "i32[4]"),
    R("rad2deg", "lambda x: jnp.rad2deg(x)", "f32[4]", grad=True),
    R("degrees", "lambda x: jnp.degrees(x)", "f32[4]"),
    R("fabs", "lambda x: jnp.fabs(x)", "i32[4]"),
    R("fmax", "lambda x, y: jnp.fmax(x, y)", "nan_f32[6]", "f32[6]"),
    R("fmin", "lambda x, y: jnp.fmin(x, y)", "f32[6]", "nan_f32[6]"),
    R("float_power", "lambda x, y: jnp.float_power(x, y)", "pos_f32[4]", "i32[4]"),
    R("exp2", "lambda x: jnp.exp2(x)", "f32[4]"),
    R("i0", "lambda x: jnp.i0(x * 4)", "f32[7]", grad=True, rtol=1e-4),
    R("conj_real", "lambda x: jnp.conj(x)", "f32[3]"),
    R("real_imag", "lambda z: (jnp.real(z), jnp.imag(z), jnp.conjugate(z))", "c64[4]"),
    R("imag_of_real", "lambda x: jnp.imag(x)", "f32[3]"),
    R("angle", "lambda z: jnp.angle(z)", "c64[4]"),
    R("angle_real_deg", "lambda x: jnp.angle(x, deg=True)", "i32[4]"),
    R("isreal", "lambda z: (jnp.isreal(z), jnp.iscomplex(z))", "c64[3]"),
    R("isposinf", "lambda x: (jnp.isposinf(x / 0.0), jnp.isneginf(x / 0.0))", "f32[5]"),
    R("left_shift", "lambda x, y: jnp.left_shift(x, y)", "i32[5]", "nat_i32[5]"),
    R("right_shift", "lambda x, y: jnp.right_shift(x, y)", "i32[5]", "nat_i32[5]"),
    R("right_shift_u8", "lambda x: jnp.right_shift(x, 2)", "u8[5]"),
    R("invert", "lambda x: (jnp.invert(x), jnp.bitwise_not(x))", "i32[4]"),
    R("invert_bool", "lambda x: jnp.invert(x)", "b[4]"),
    R("bitwise_count", "lambda x: jnp.bitwise_count(x)", "i32[6]"),
    R("divmod_int", "lambda x, y: jnp.divmod(x, y)", "i32[6]", "nat_i32[6]"),
    R("divmod_float", "lambda x, y: jnp.divmod(x, y)", "f32[6]", "pos_f32[6]"),
    R("spacing", "lambda x: jnp.spacing(x)", "f32[5]"),
    R("nextafter", "lambda x, y: jnp.nextafter(x, y)", "f32[4]", "f32[4]", jit=True),
    R("cbrt", "lambda x: jnp.cbrt(x)", "f32[4]"),
    R("positive", "lambda x: jnp.positive(x)", "i32[4]"),
    R("unwrap", "lambda x: jnp.unwrap(x * 4)", "f32[8]"),
    # ---- reductions
    R("sum_axes", "lambda x: jnp.sum(x, axis=(0, 2))", "f32[2,3,4]", grad=True, vmap=True, jit=True),
    R("sum_where", "lambda x: jnp.sum(x, axis=1, where=x > 0, keepdims=True)", "f32[3,4]", grad=True, vmap=True),
    R("sum_initial", "lambda x: jnp.sum(x, initial=10)", "i32[3,4]"),
    R("sum_dtype", "lambda x: jnp.sum(x, dtype=jnp.float32)", "i32[5]"),
    R("sum_u8", "lambda x: jnp.sum(x)", "u8[5]"),
    R("prod_where", "lambda x: jnp.prod(x, axis=0, where=x > 0)", "f32[3,4]"),
    R("max_where", "lambda x: jnp.max(x, axis=1, where=x < 1, initial=-3.0)", "f32[3,4]", grad=True),
    R("min_initial", "lambda x: jnp.min(x, axis=0, initial=0)", "i32[3,4]"),
    R("amax_keepdims", "lambda x: jnp.amax(x, axis=(0, 1), keepdims=True)", "f32[2,3,2]"),
    R("all_any_where", "lambda x: (jnp.all(x > 0, axis=0, where=x < 1), jnp.any(x > 0, where=x < 0))", "f32[3,4]"),
    R("mean_where", "lambda x: jnp.mean(x, axis=0, where=x > -0.5)", "f32[4,3]", grad=True, jit=True),
    R("mean_int", "lambda x: jnp.mean(x, axis=1, keepdims=True)", "i32[3,4]"),
    R("var_ddof", "lambda x: jnp.var(x, axis=0, ddof=1)", "f32[5,3]", grad=True),
    R("var_correction", "lambda x: jnp.var(x, correction=1)", "i32[6]"),
    R("std_where", "lambda x: jnp.std(x, axis=1, where=x > -1)", "f32[3,5]", grad=True),
    R("ptp", "lambda x: jnp.ptp(x, axis=1)", "f32[3,4]"),
    R("average", "lambda x, w: jnp.average(x, axis=1, weights=w, returned=True)", "f32[3,4]", "pos_f32[4]", grad=True),
    R("average_plain", "lambda x: jnp.average(x)", "i32[5]"),
    R("nansum", "lambda x: (jnp.nansum(x), jnp.nanprod(x, axis=0))", "nan_f32[3,4]"),
    R("nanmean", "lambda x: (jnp.nanmean(x, axis=1), jnp.nanvar(x, axis=1), jnp.nanstd(x))", "nan_f32[3,4]"),
    R("nanmax", "lambda x: (jnp.nanmax(x, axis=0), jnp.nanmin(x))", "nan_f32[3,4]"),
    R("nanargmax", "lambda x: (jnp.nanargmax(x, axis=1), jnp.nanargmin(x))", "nan_f32[3,4]"),
    R("nancumsum", "lambda x: (jnp.nancumsum(x), jnp.nancumprod(x, axis=0))", "nan_f32[3,4]"),
    R("cumsum_dtype", "lambda x: jnp.cumsum(x, axis=1, dtype=jnp.float32)", "i32[3,4]"),
    R("cumulative_sum", "lambda x: jnp.cumulative_sum(x, axis=1, include_initial=True)", "f32[3,4]", grad=True),
    R("cumulative_prod", "lambda x: jnp.cumulative_prod(x)", "i32[5]"),
    # ---- shape
    R("moveaxis", "lambda x: jnp.moveaxis(x, (0, 1), (-1, 0))", "f32[2,3,4]"),
    R("flip", "lambda x: (jnp.flip(x), jnp.flip(x, (0, 2)), jnp.fliplr(x), jnp.flipud(x))", "f32[2,3,2]"),
    R("roll", "lambda x: (jnp.roll(x, 2), jnp.roll(x, -1, axis=1), jnp.roll(x, (1, 2), axis=(0, 1)))", "f32[3,4]",
      vmap=True),
    R("rot90", "lambda x: (jnp.rot90(x), jnp.rot90(x, 2), jnp.rot90(x, -1, axes=(1, 2)))", "f32[2,3,4]"),
    R("tile", "lambda x: (jnp.tile(x, 2), jnp.tile(x, (2, 1, 2)))", "f32[2,3]", grad=True),
    R("repeat", "lambda x: (jnp.repeat(x, 2), jnp.repeat(x, 3, axis=1), jnp.repeat(x, jnp.array([1, 0, 2]), axis=1))",
      "f32[2,3]", grad=True, vmap=True),
    R("repeat_total", "lambda x: jnp.repeat(x, 2, axis=0, total_repeat_length=5)", "f32[3,2]"),
    R("pad_constant", "lambda x: jnp.pad(x, ((1, 2), (0, 1)), constant_values=((5, 6), (7, 8)))", "f32[2,3]",
      grad=True, jit=True),
    R("pad_modes", "lambda x: [jnp.pad(x, (2, 3), mode=m) for m in "
      "('edge', 'reflect', 'symmetric', 'wrap', 'maximum', 'minimum', 'mean', 'empty')]", "f32[4]"),
    R("pad_reflect_big", "lambda x: (jnp.pad(x, 7, mode='reflect'), jnp.pad(x, 5, mode='symmetric'), "
      "jnp.pad(x, 7, mode='wrap'))", "f32[3]"),
    R("pad_reflect_odd", "lambda x: jnp.pad(x, ((1, 2), (2, 1)), mode='reflect', reflect_type='odd')", "f32[3,4]"),
    R("pad_linear_ramp", "lambda x: jnp.pad(x, (2, 3), mode='linear_ramp', end_values=(1, -1))", "f32[4]"),
    R("pad_stat_length", "lambda x: jnp.pad(x, ((1, 1), (2, 0)), mode='mean', stat_length=2)", "f32[3,4]"),
    R("pad_int_mean", "lambda x: jnp.pad(x, 2, mode='mean')", "i32[5]"),
    R("split", "lambda x: jnp.split(x, 3, axis=1)", "f32[2,6]"),
    R("split_indices", "lambda x: jnp.split(x, [1, 4])", "f32[6]"),
    R("array_split", "lambda x: jnp.array_split(x, 4)", "f32[7]"),
    R("hvdsplit", "lambda x: (jnp.hsplit(x, 2), jnp.vsplit(x, 2), jnp.dsplit(x, [1]))", "f32[2,4,2]"),
    R("atleast", "lambda x: (jnp.atleast_1d(x), jnp.atleast_2d(x), jnp.atleast_3d(x))", "f32[]"),
    R("atleast_3d_2d", "lambda x: jnp.atleast_3d(x)", "f32[2,3]"),
    R("column_stack", "lambda x, y: jnp.column_stack((x, y))", "f32[3]", "f32[3,2]"),
    R("dstack", "lambda x, y: jnp.dstack((x, y))", "f32[2,3]", "f32[2,3]"),
    R("block", "lambda a, b: jnp.block([[a, b], [b, a]])", "f32[2,2]", "f32[2,2]"),
    R("append", "lambda x, y: (jnp.append(x, y), jnp.append(x, x, axis=0))", "f32[2,3]", "f32[4]"),
    R("insert", "lambda x: (jnp.insert(x, 1, 5.0), jnp.insert(x, jnp.array([0, 2]), 7.0, axis=1), "
      "jnp.insert(x, 1, jnp.array([1.0, 2.0, 3.0]), axis=0))", "f32[2,3]"),
    R("delete", "lambda x: (jnp.delete(x, 1), jnp.delete(x, jnp.array([0, 2]), axis=1), jnp.delete(x, slice(0, 1), axis=0))",
      "f32[2,3]"),
    R("resize", "lambda x: jnp.resize(x, (3, 5))", "f32[2,3]"),
    R("trim_zeros", "lambda: jnp.trim_zeros(jnp.array([0, 0, 1, 2, 0, 3, 0]))"),
    R("concat_permute", "lambda x: (jnp.concat([x, x], axis=1), jnp.permute_dims(x, (1, 0)))", "f32[2,3]"),
    R("unstack", "lambda x: jnp.unstack(x, axis=1)", "f32[2,3]"),
    R("expand_squeeze", "lambda x: (jnp.expand_dims(x, (0, 3)), jnp.squeeze(x[None], 0))", "f32[2,3]"),
    R("swapaxes", "lambda x: (jnp.swapaxes(x, 0, 2), jnp.matrix_transpose(x), jnp.rollaxis(x, 2))", "f32[2,3,4]"),
    R("select", "lambda x: jnp.select([x < -0.5, x > 0.5], [x, x * 2], default=-1.0)", "f32[6]", grad=True),
    R("piecewise", "lambda x: jnp.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v * v])", "f32[6]"),
    R("choose", "lambda i: jnp.choose(i, [jnp.arange(5), jnp.arange(5) * 10, jnp.arange(5) * 100], mode='clip')",
      "i32[5]"),
    R("where_one_arg", "lambda x: (jnp.where(x > 0), jnp.where(x > 0, size=8, fill_value=-1))", "f32[3,4]"),
    R("where_scalar_weak", "lambda x: jnp.where(x > 0, x, 0.0)", "f32[5]"),
    R("apply_along_axis", "lambda x: jnp.apply_along_axis(lambda v: v.sum() * v[0], 1, x)", "f32[3,4]"),
    R("apply_over_axes", "lambda x: jnp.apply_over_axes(jnp.sum, x, [0, 2])", "f32[2,3,4]"),
    R("vectorize_sig", "lambda x, y: jnp.vectorize(jnp.dot, signature='(n),(n)->()')(x, y)", "f32[3,4]", "f32[4]"),
    # ---- creation
    R("logspace", "lambda: (jnp.logspace(0, 2, 5), jnp.logspace(1, 3, 4, base=2.0, endpoint=False))"),
    R("geomspace", "lambda: (jnp.geomspace(1, 1000, 4), jnp.geomspace(-1, -16, 5))"),
    R("meshgrid", "lambda x, y: (jnp.meshgrid(x, y), jnp.meshgrid(x, y, indexing='ij', sparse=True))",
      "f32[3]", "f32[2]"),
    R("mgrid", "lambda: (jnp.mgrid[0:3, 0:2], jnp.ogrid[0:3, 1:4:2], jnp.mgrid[0:1:5j])"),
    R("tri", "lambda: (jnp.tri(3), jnp.tri(3, 4, k=1, dtype=jnp.int32))"),
    R("tril_triu", "lambda x: (jnp.tril(x), jnp.triu(x, 1), jnp.tril(x, -1))", "f32[2,3,4]", grad=True),
    R("diag", "lambda v, m: (jnp.diag(v), jnp.diag(v, 1), jnp.diag(v, -2), jnp.diag(m), jnp.diag(m, -1))",
      "f32[3]", "f32[3,4]", grad=True),
    R("diagflat", "lambda x: jnp.diagflat(x, 1)", "f32[2,2]"),
    R("diagonal", "lambda x: (jnp.diagonal(x), jnp.diagonal(x, 1, 0, 2), jnp.diagonal(x, -1, 2, 1))",
      "f32[3,4,5]", grad=True, vmap=True, jit=True),
    R("trace", "lambda x: (jnp.trace(x), jnp.trace(x, 1, dtype=jnp.float32))", "i32[3,4]"),
    R("fill_diagonal", "lambda x: (jnp.fill_diagonal(x, 9.0, inplace=False), "
      "jnp.fill_diagonal(x, jnp.array([1.0, 2.0]), inplace=False))", "f32[7,3]"),
    R("indices", "lambda: (jnp.indices((2, 3)), jnp.indices((2, 3), sparse=True))"),
    R("ix", "lambda: jnp.ix_(jnp.array([0, 1]), jnp.array([2, 4, 5]))"),
    R("tri_indices", "lambda: (jnp.tril_indices(3), jnp.triu_indices(3, 1, 4), jnp.diag_indices(3), "
      "jnp.tril_indices_from(jnp.ones((3, 3))))"),
    R("fromfunction", "lambda: jnp.fromfunction(lambda i, j: i * 10 + j, (3, 4), dtype=jnp.int32)"),
    R("unravel_index", "lambda: jnp.unravel_index(jnp.array([-1, 7, 100, 3]), (3, 4))"),
    R("ravel_multi_index", "lambda: jnp.ravel_multi_index((jnp.array([0, 5]), jnp.array([1, -1])), (3, 4), mode='wrap')"),
    R("vander", "lambda x: (jnp.vander(x), jnp.vander(x, 2, increasing=True))", "f32[4]"),
    R("copy_asarray", "lambda x: (jnp.copy(x), jnp.asarray(x, dtype=jnp.int32), jnp.array([1, 2.5]))", "f32[3]"),
    R("r_c_", "lambda: (jnp.r_[jnp.array([1, 2]), 0, 3:6], jnp.c_[jnp.array([1, 2]), jnp.array([3, 4])])"),
    R("windows", "lambda: (jnp.bartlett(5), jnp.blackman(6), jnp.hamming(5), jnp.hanning(4), jnp.kaiser(5, 3.0))",
      rtol=1e-4),
    # ---- linear algebra
    R("einsum_matmul", "lambda a, b: jnp.einsum('ij,jk->ik', a, b)", "f32[3,4]", "f32[4,2]", grad=True, vmap=True,
      jit=True),
    R("einsum_implicit", "lambda a, b: jnp.einsum('ij,kj', a, b)", "f32[3,4]", "f32[2,4]"),
    R("einsum_trace_diag", "lambda a: (jnp.einsum('ii', a), jnp.einsum('ii->i', a), jnp.einsum('ij->', a))",
      "f32[3,3]", grad=True),
    R("einsum_three", "lambda a, b, c: jnp.einsum('ij,jk,kl->il', a, b, c)", "f32[2,3]", "f32[3,4]", "f32[4,2]",
      grad=True),
    R("einsum_batch", "lambda a, b: jnp.einsum('bij,bjk->bki', a, b)", "f32[2,3,4]", "f32[2,4,3]"),
    R("einsum_ellipsis", "lambda a, b: jnp.einsum('...ij,...j->...i', a, b)", "f32[2,3,4]", "f32[4]"),
    R("einsum_outer_sum", "lambda a, b: jnp.einsum('i,j->ij', a, b) + jnp.einsum('i,i->', a, a)", "f32[3]", "f32[4]"),
    R("einsum_int", "lambda a, b: jnp.einsum('ij,j->i', a, b)", "i32[3,4]", "i32[4]"),
    R("einsum_interleaved", "lambda a, b: jnp.einsum(a, [0, 1], b, [1, 2], [2, 0])", "f32[2,3]", "f32[3,2]"),
    R("tensordot", "lambda a, b: (jnp.tensordot(a, b), jnp.tensordot(a, b, axes=([1], [0])), "
      "jnp.tensordot(a, b, 0).shape)", "f32[2,3,4]", "f32[3,4,2]", grad=True),
    R("outer_inner", "lambda a, b: (jnp.outer(a, b), jnp.inner(a, a), jnp.vdot(a, a))", "f32[3]", "f32[4]"),
    R("vecdot", "lambda a, b: (jnp.vecdot(a, b), jnp.matvec(a, b[0]), jnp.vecmat(b[0], a.T))", "f32[2,3]", "f32[2,3]"),
    R("kron", "lambda a, b: jnp.kron(a, b)", "f32[2,3]", "f32[2,2]", grad=True),
    R("cross", "lambda a, b: (jnp.cross(a, b), jnp.cross(a[:, :2], b[:, :2]), jnp.cross(a, b[:, :2]))",
      "f32[2,3]", "f32[2,3]", grad=True),
    R("matmul_vec", "lambda a, b: (jnp.matmul(a, b), jnp.matmul(b, a[0].T))", "f32[2,3,4]", "f32[4]"),
    # ---- polynomials and signals
    R("polyval", "lambda p, x: jnp.polyval(p, x)", "f32[4]", "f32[5]", grad=True, vmap=True),
    R("polyadd_sub", "lambda a, b: (jnp.polyadd(a, b), jnp.polysub(a, b))", "f32[3]", "f32[5]"),
    R("polymul", "lambda a, b: jnp.polymul(a, b)", "f32[3]", "f32[4]", grad=True),
    R("polydiv", "lambda a, b: jnp.polydiv(a, b)", "f32[5]", "pos_f32[2]", rtol=1e-4),
    R("polyder_int", "lambda p: (jnp.polyder(p), jnp.polyder(p, 2), jnp.polyint(p), jnp.polyint(p, 2, k=jnp.array([1.0, 2.0])))",
      "f32[5]"),
    R("poly", "lambda r: jnp.poly(r)", "f32[3]"),
    R("polyfit", "lambda x, y: jnp.polyfit(x, y, 2)", "f32[8]", "f32[8]", rtol=1e-3),
    R("roots", "lambda: jnp.sort(jnp.real(jnp.roots(jnp.array([0.0, 1.0, -6.0, 11.0, -6.0, 0.0]))))", rtol=1e-4),
    R("interp_period", "lambda x: jnp.interp(x * 4, jnp.array([0.0, 1.0, 2.5]), jnp.array([1.0, -1.0, 2.0]), "
      "period=3.0)", "f32[6]"),
    R("convolve", "lambda a, v: [jnp.convolve(a, v, mode=m) for m in ('full', 'same', 'valid')]", "f32[6]", "f32[3]",
      grad=True, jit=True),
    R("convolve_swapped", "lambda a, v: [jnp.convolve(a, v, mode=m) for m in ('full', 'same', 'valid')]",
      "f32[2]", "f32[5]"),
    R("correlate", "lambda a, v: [jnp.correlate(a, v, mode=m) for m in ('full', 'same', 'valid')]", "f32[6]", "f32[3]"),
    R("correlate_swapped", "lambda a, v: [jnp.correlate(a, v, mode=m) for m in ('full', 'same', 'valid')]",
      "f32[3]", "f32[6]"),
    R("convolve_int", "lambda a, v: jnp.convolve(a, v)", "i32[4]", "i32[3]"),
    R("interp", "lambda x: jnp.interp(x, jnp.array([-1.0, 0.0, 0.5, 2.0]), jnp.array([0.0, 1.0, -1.0, 3.0]))",
      "f32[8]", grad=True, vmap=True),
    R("interp_left_right", "lambda x: jnp.interp(x * 3, jnp.array([-1.0, 1.0]), jnp.array([2.0, 4.0]), left=0.0, right=9.0)",
      "f32[8]"),
    R("trapezoid", "lambda y, x: (jnp.trapezoid(y), jnp.trapezoid(y, dx=0.5, axis=0), jnp.trapezoid(y, x[0]))",
      "f32[3,4]", "pos_f32[3,4]", grad=True),
    R("diff", "lambda x: (jnp.diff(x), jnp.diff(x, n=2, axis=0), jnp.diff(x, prepend=0.0, append=x[:, :1]))",
      "f32[3,4]", grad=True),
    R("diff_bool", "lambda x: jnp.diff(x)", "b[5]"),
    R("ediff1d", "lambda x: (jnp.ediff1d(x), jnp.ediff1d(x, to_end=jnp.array([9, 8]), to_begin=-1))", "f32[5]"),
    R("gradient", "lambda f: (jnp.gradient(f), jnp.gradient(f, 2.0, axis=1))", "f32[3,4]"),
    R("gradient_coords", "lambda f: jnp.gradient(f, jnp.array([0.0, 1.0, 1.5, 3.5, 4.0]))", "f32[5]"),
    R("cov", "lambda x: (jnp.cov(x), jnp.cov(x, rowvar=False), jnp.cov(x[0], x[1]), jnp.cov(x, bias=True))",
      "f32[3,5]", grad=True),
    R("cov_weights", "lambda x, w: jnp.cov(x, fweights=jnp.array([1, 2, 1, 3, 1]), aweights=w)", "f32[2,5]",
      "pos_f32[5]"),
    R("corrcoef", "lambda x: jnp.corrcoef(x)", "f32[3,5]", rtol=1e-4),
    # ---- logic and dtypes
    R("isclose", "lambda x, y: (jnp.isclose(x, x + 1e-6), jnp.isclose(x, y, atol=0.5), jnp.allclose(x, x))",
      "f32[5]", "f32[5]"),
    R("isclose_nan_inf", "lambda: (jnp.isclose(jnp.array([jnp.nan, jnp.inf, 1.0]), jnp.array([jnp.nan, jnp.inf, "
      "jnp.inf]), equal_nan=True), jnp.isclose(jnp.array([jnp.nan, -jnp.inf]), jnp.array([jnp.nan, jnp.inf])))"),
    R("array_equal", "lambda x: (jnp.array_equal(x, x), jnp.array_equal(x, x[:2]), jnp.array_equiv(x[:1], x[:1] + 0 * x))", "f32[3]"),
    R("logical", "lambda x, y: (jnp.logical_and(x, y), jnp.logical_or(x, 0), jnp.logical_xor(x, y), "
      "jnp.logical_not(y))", "i32[5]", "b[5]"),
    R("isnan_etc", "lambda x: (jnp.isnan(x / 0), jnp.isfinite(x / 0), jnp.isinf(x / 0))", "f32[5]"),
    R("obj_predicates", "lambda: (jnp.iscomplexobj(jnp.ones(2)), jnp.isrealobj(1.0), jnp.isscalar(1.0), "
      "jnp.isscalar(jnp.ones(2)), jnp.isscalar(jnp.float32(1)))"),
    R("dtype_helpers", "lambda: (jnp.can_cast(jnp.int32, jnp.float32), jnp.can_cast(jnp.int8, jnp.int32), "
      "jnp.isdtype(jnp.float32, 'real floating'), jnp.isdtype(jnp.int32, ('bool', 'integral')), "
      "jnp.result_type(jnp.int8, jnp.float16), jnp.promote_types(jnp.uint8, jnp.int8), "
      "jnp.issubdtype(jnp.float32, jnp.floating))"),
    R("scalar_types", "lambda: (jnp.int_(3), jnp.float_(2), jnp.double(1.5), jnp.single(2), jnp.uint(7))"),
    R("packbits", "lambda x: (jnp.packbits(x), jnp.unpackbits(jnp.packbits(x, axis=1), axis=1), "
      "jnp.packbits(x, bitorder='little'))", "b[2,10]"),
]

RECORDS_BY_NAME = {r.name: r for r in RECORDS}
assert len(RECORDS_BY_NAME) == len(RECORDS)

_EXPECTED_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "numpy_extra_expected.json")


def _parse_spec(spec):
    kind, _, dims = spec.partition("[")
    shape = tuple(int(d) for d in dims.rstrip("]").split(",") if d)
    return kind, shape


def make_args(rec):
    """Numpy inputs of a record, the same on every run and in every environment."""
    rng = np.random.default_rng(zlib.crc32(rec.name.encode()))
    out = []
    for spec in rec.args:
        if not isinstance(spec, str):
            out.append(spec)
            continue
        kind, shape = _parse_spec(spec)
        if kind == "f32":
            v = rng.normal(size=shape).astype(np.float32)
        elif kind == "pos_f32":
            v = rng.uniform(0.1, 2.0, size=shape).astype(np.float32)
        elif kind == "unit_f32":
            v = rng.uniform(-0.9, 0.9, size=shape).astype(np.float32)
        elif kind == "nan_f32":
            v = rng.normal(size=shape).astype(np.float32)
            v[rng.uniform(size=shape) < 0.3] = np.nan
            if v.ndim == 2:
                v[0] = np.nan   # one all-NaN row
        elif kind == "i32":
            v = rng.integers(-5, 6, size=shape).astype(np.int32)
        elif kind == "nat_i32":
            v = rng.integers(0, 5, size=shape).astype(np.int32)
            v[v == 0] = 1
        elif kind == "u8":
            v = rng.integers(0, 256, size=shape).astype(np.uint8)
        elif kind == "b":
            v = rng.uniform(size=shape) < 0.5
        elif kind == "c64":
            v = (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(np.complex64)
        else:
            raise ValueError(spec)
        out.append(v)
    return out


def evaluate(rec, jnp, args):
    fn = eval(rec.fn, {"jnp": jnp})  # noqa: S307  (the table's own expressions)
    return fn(*args)


def describe(out):
    """A JSON-able summary of a (nested) result: dtype, weak type, shape and values per leaf."""
    if isinstance(out, (tuple, list)):
        return [describe(o) for o in out]
    if isinstance(out, (bool, int, float, np.bool_, np.generic, np.dtype, type)):
        if isinstance(out, (np.dtype, type)):
            return {"python": str(np.dtype(out))}
        return {"python": out.item() if isinstance(out, np.generic) else out}
    v = np.asarray(out)
    if v.dtype.kind == "c":
        values = [v.real.tolist(), v.imag.tolist()]
    else:
        values = v.tolist()
    return {"dtype": str(v.dtype), "weak": bool(getattr(out, "weak_type", False)),
            "shape": list(v.shape), "values": values}


def load_expected():
    with open(_EXPECTED_PATH) as f:
        return json.load(f)


def main():
    import jax
    import jax.numpy as jjnp
    jax.config.update("jax_enable_x64", False)
    expected = {}
    for rec in RECORDS:
        try:
            expected[rec.name] = describe(evaluate(rec, jjnp, [jjnp.asarray(a) if isinstance(a, np.ndarray) else a
                                                               for a in make_args(rec)]))
        except Exception as e:  # noqa: BLE001
            print("JAX failed on", rec.name, type(e).__name__, e)
    with open(_EXPECTED_PATH, "w") as f:
        json.dump(expected, f, indent=0, sort_keys=True)
    print(f"wrote {len(expected)} records to {_EXPECTED_PATH}")


if __name__ == "__main__":
    main()
