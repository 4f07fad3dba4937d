"""The op table's elementwise and reduction records on the CUDA backend, compared with the
CPU backend (values, dtypes, shapes).  Each case must really run on CUDA (no CPU fallback)."""
import pytest

from op_table import iter_cases
from helpers_cuda import assert_same, cuda_executable, on_cpu

# Records the CUDA backend lowers (elementwise, broadcasts, iotas, reshapes, reductions,
# data movement, dot_general).
COVERED = [
    "lax.exp", "lax.log", "lax.log1p", "lax.expm1", "lax.sin", "lax.cos", "lax.tan", "lax.tanh",
    "lax.logistic", "lax.sqrt", "lax.rsqrt", "lax.abs", "lax.sign", "lax.neg", "lax.floor",
    "lax.ceil", "lax.round", "lax.round_to_even", "lax.not", "lax.integer_pow3",
    "lax.integer_pow-2", "lax.integer_pow0", "lax.square", "lax.add", "lax.sub", "lax.mul",
    "lax.div", "lax.rem", "lax.max", "lax.min", "lax.pow", "lax.eq", "lax.ne", "lax.lt", "lax.le",
    "lax.gt", "lax.ge", "lax.bitwise_and", "lax.bitwise_or", "lax.bitwise_xor", "lax.add_bcast1",
    "lax.select_n", "lax.select_n_int", "lax.convert_to_float32", "lax.convert_to_int32",
    "lax.convert_to_int8", "lax.convert_to_uint8", "lax.convert_to_bool", "lax.broadcast_in_dim",
    "lax.broadcast_in_dim_size1", "lax.broadcast_in_dim_scalar", "lax.broadcast_in_dim_mid",
    "lax.reshape", "lax.reshape_3d", "lax.squeeze", "lax.squeeze_neg",
    "lax.expand_dims", "lax.iota_int32", "lax.iota_float32", "lax.iota_uint8",
    "lax.broadcasted_iota",
    "lax.reduce_sum0", "lax.reduce_max0", "lax.reduce_min0", "lax.reduce_prod0",
    "lax.reduce_sum1", "lax.reduce_max1", "lax.reduce_min1", "lax.reduce_prod1",
    "lax.reduce_sum01", "lax.reduce_max01", "lax.reduce_min01", "lax.reduce_prod01",
    "lax.reduce_and", "lax.reduce_or", "lax.argmax0", "lax.argmin0", "lax.argmax1", "lax.argmin1",
    "lax.argmax_ties", "lax.argmax_uint8",
    # Nodes: data movement (cuda/nodes.py) and dot_general (cuda/blas.py).
    "lax.transpose", "lax.transpose_2d", "lax.concatenate", "lax.concatenate_ax1", "lax.slice",
    "lax.slice_nostride", "lax.slice_empty", "lax.rev", "lax.rev_ax1",
    "lax.dot_general_mm", "lax.dot_general_batch", "lax.dot_general_multi",
    "lax.dot_general_lhs_contract0", "lax.dot_general_vv", "lax.dot_general_outer",
    "lax.dot_general_pet", "lax.dot",
]

# float16 values are not lowered for CUDA yet (they run on the CPU backend).
CASES = [c for c in iter_cases(family="lax", names=COVERED, all_shapes=False)
         if "float16" not in c.dtypes and c.record.jit]


def _tolerance(case):
    # The CPU backend evaluates transcendentals with its own vectorized functions; the CUDA
    # backend with the device's (libdevice) ones: a few ulps apart.
    rtol, atol = case.tolerance("float32")
    return max(rtol, 4e-6), max(atol, 4e-6)


# The simulator computes with numpy scalars, which warn when integer arithmetic wraps (as it
# is meant to, here and on the device).
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("case", CASES, ids=str)
def test_op_matches_cpu(case):
    args = case.make_args()
    exe, got = cuda_executable(case.fn, *args)
    assert getattr(exe, "backend", "cpu") == "cuda", exe.source
    want = on_cpu(case.fn, *args)
    rtol, atol = _tolerance(case)
    assert_same(got, want, rtol, atol)


def test_every_covered_record_exists():
    names = {c.record.name for c in CASES}
    assert names == set(COVERED)
