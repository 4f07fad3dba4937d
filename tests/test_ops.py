"""Operations against numpy, with JAX's result dtypes and weak types.

Driven by the shared table in ``tests/op_table.py``: every record is run on
every dtype and shape combination it lists and checked for

* values against the numpy/scipy reference (``test_values``),
* the result dtype and weak type JAX 0.10.2 gives (``test_dtype_and_weak_type``,
  expectations committed as data in ``op_table.EXPECTED``),
* ``jax.jit(fn)(*args)`` against the eager result, failing if jit fell back to eager
  execution (``test_jit_vs_eager``, marked ``jit``: one case per primitive family by
  default, since every case is a Numba compile; ``test_jit_vs_eager_table`` runs one
  case per record and dtype kind with ``--runslow``).

Below the table: JAX's promotion lattice (pairwise, committed from JAX),
worked promotion examples, and hypothesis property tests for broadcasting,
reshape, transpose, basic indexing and reductions.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import numjax as jax
import numjax.lax as lax  # noqa: F401  (used by eval'd expressions)
import numjax.numpy as jnp
from helpers import jit_compiled, jit_falls_back
from op_table import EXPECTED, RECORDS, iter_cases, to_numjax

ALL_CASES = iter_cases()
DTYPE_CASES = iter_cases(all_shapes=False)


# Every jit case is a Numba compile (about half a second), so the default run jits one
# case for each primitive family (JIT_SMOKE); `--runslow` adds one case per record, with
# up to two dtype kinds (JIT_CASES).
_SMOKE = [
    "lax.exp", "lax.tanh", "lax.logistic", "lax.rsqrt", "lax.abs", "lax.round", "lax.integer_pow3",
    "lax.add", ("lax.div", ("int32", "int32")), "lax.rem", "lax.pow", "lax.lt", "lax.bitwise_and",
    "lax.select_n", "lax.convert_to_int32", "lax.broadcast_in_dim", "lax.reshape", "lax.transpose",
    "lax.squeeze", "lax.concatenate", "lax.slice", "lax.dynamic_slice_traced",
    "lax.dynamic_update_slice", "lax.iota_int32", "lax.rev", "lax.pad", "lax.reduce_sum01",
    "lax.reduce_max0", "lax.argmax1", "lax.cumsum", "lax.dot_general_batch", "jnp.where",
    "index:x[i]",
]


def _jit_cases():
    smoke = []
    for entry in _SMOKE:
        name, dts = entry if isinstance(entry, tuple) else (entry, None)
        cases = [c for c in iter_cases(names={name}, all_shapes=False) if dts in (None, c.dtypes)]
        assert cases, entry
        smoke.append(cases[0])
    rest = []
    for rec in RECORDS:
        if not rec.jit:
            continue
        cases = iter_cases([rec], all_shapes=False)
        chosen = [cases[0]]
        kinds = {np.dtype(d).kind for d in cases[0].dtypes}
        for c in cases[1:]:
            if not {np.dtype(d).kind for d in c.dtypes} <= kinds:
                chosen.append(c)
                break
        rest.extend(c for c in chosen if c not in smoke)
    return smoke, rest


JIT_SMOKE, JIT_CASES = _jit_cases()


def _np(x):
    return np.asarray(x)


def assert_matches(got, want, case, dtype_name=None, what="value"):
    """``got`` equals ``want`` to the case's tolerance for the result dtype (exactly for ints)."""
    got = _np(got)
    want = np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != expected {want.shape}"
    dt = np.dtype(dtype_name or got.dtype)
    if dt.kind in "fc":
        rtol, atol = case.tolerance(dt.name)
        np.testing.assert_allclose(got.astype(np.complex128 if dt.kind == "c" else np.float64),
                                   want.astype(dt).astype(np.complex128 if dt.kind == "c" else np.float64),
                                   rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want.astype(dt), err_msg=what)


# ---------------------------------------------------------------- the table


@pytest.mark.parametrize("case", ALL_CASES, ids=str)
def test_values(case):
    args = case.make_args()
    out = case.fn(*to_numjax(args))
    ref = case.record.reference(*[a.copy() for a in args])
    exp = case.expected
    assert_matches(out, ref, case, exp[0] if exp else None)


@pytest.mark.parametrize("case", DTYPE_CASES, ids=str)
def test_dtype_and_weak_type(case):
    exp = case.expected
    assert exp is not None, f"no JAX expectation for {case.key}: run op_table.py --regen"
    out = case.fn(*to_numjax(case.make_args()))
    assert isinstance(out, jax.Array), type(out)
    assert (out.dtype.name, bool(out.weak_type)) == exp


def test_table_covers_every_record():
    missing = [(r.name, d) for r in RECORDS for d in r.dtypes if (r.name, d) not in EXPECTED]
    assert not missing


def _check_jit(case, expect_fallback=False):
    args = to_numjax(case.make_args())
    eager = case.fn(*args)
    if expect_fallback:
        jitted = jit_falls_back(case.fn, *args)
    else:
        jitted = jit_compiled(case.fn, *args)
    assert isinstance(jitted, jax.Array), type(jitted)
    assert (jitted.dtype, jitted.weak_type) == (eager.dtype, eager.weak_type)
    assert_matches(jitted, _np(eager), case, what="jit vs eager")


@pytest.mark.jit
@pytest.mark.parametrize("case", JIT_SMOKE, ids=str)
def test_jit_vs_eager(case):
    _check_jit(case)


_NO_LOWERING = ("float16", "jnp.mean(dtype)")   # mean(dtype) casts to float16


def _has_no_lowering(case):
    return any(tag in str(case) for tag in _NO_LOWERING)


@pytest.mark.jit
@pytest.mark.slow
@pytest.mark.parametrize("case", JIT_CASES, ids=str)
def test_jit_vs_eager_table(case):
    # float16 programs have no CPU lowering (listed as missing in README): jit must say so
    # with an EagerFallbackWarning and still give eager's values.
    _check_jit(case, expect_fallback=_has_no_lowering(case))


# ---------------------------------------------------------------- promotion lattice
# jnp.add(a, b) for each pair; "int"/"float"/"complex" are Python scalars (weak) and a
# trailing "*" marks a weakly typed result.  From JAX 0.10.2, x64 disabled.
LATTICE_TYPES = ["bool", "uint8", "uint16", "uint32", "int8", "int16", "int32", "float16", "float32",
                 "complex64", "int", "float", "complex"]
LATTICE = [
    ['bool', 'uint8', 'uint16', 'uint32', 'int8', 'int16', 'int32', 'float16', 'float32', 'complex64', 'int32*', 'float32*', 'complex64*'],  # bool
    ['uint8', 'uint8', 'uint16', 'uint32', 'int16', 'int16', 'int32', 'float16', 'float32', 'complex64', 'uint8', 'float32*', 'complex64*'],  # uint8
    ['uint16', 'uint16', 'uint16', 'uint32', 'int32', 'int32', 'int32', 'float16', 'float32', 'complex64', 'uint16', 'float32*', 'complex64*'],  # uint16
    ['uint32', 'uint32', 'uint32', 'uint32', 'int32', 'int32', 'int32', 'float16', 'float32', 'complex64', 'uint32', 'float32*', 'complex64*'],  # uint32
    ['int8', 'int16', 'int32', 'int32', 'int8', 'int16', 'int32', 'float16', 'float32', 'complex64', 'int8', 'float32*', 'complex64*'],  # int8
    ['int16', 'int16', 'int32', 'int32', 'int16', 'int16', 'int32', 'float16', 'float32', 'complex64', 'int16', 'float32*', 'complex64*'],  # int16
    ['int32', 'int32', 'int32', 'int32', 'int32', 'int32', 'int32', 'float16', 'float32', 'complex64', 'int32', 'float32*', 'complex64*'],  # int32
    ['float16', 'float16', 'float16', 'float16', 'float16', 'float16', 'float16', 'float16', 'float32', 'complex64', 'float16', 'float16', 'complex64'],  # float16
    ['float32', 'float32', 'float32', 'float32', 'float32', 'float32', 'float32', 'float32', 'float32', 'complex64', 'float32', 'float32', 'complex64'],  # float32
    ['complex64', 'complex64', 'complex64', 'complex64', 'complex64', 'complex64', 'complex64', 'complex64', 'complex64', 'complex64', 'complex64', 'complex64', 'complex64'],  # complex64
    ['int32*', 'uint8', 'uint16', 'uint32', 'int8', 'int16', 'int32', 'float16', 'float32', 'complex64', 'int32*', 'float32*', 'complex64*'],  # int
    ['float32*', 'float32*', 'float32*', 'float32*', 'float32*', 'float32*', 'float32*', 'float16', 'float32', 'complex64', 'float32*', 'float32*', 'complex64*'],  # float
    ['complex64*', 'complex64*', 'complex64*', 'complex64*', 'complex64*', 'complex64*', 'complex64*', 'complex64', 'complex64', 'complex64', 'complex64*', 'complex64*', 'complex64*'],  # complex
]
_PY = {"int": 1, "float": 1.0, "complex": 1j}


def _lattice_operand(t):
    return _PY[t] if t in _PY else jnp.ones((), t)


@pytest.mark.parametrize("a", LATTICE_TYPES)
@pytest.mark.parametrize("b", LATTICE_TYPES)
def test_promotion_lattice_add(a, b):
    want = LATTICE[LATTICE_TYPES.index(a)][LATTICE_TYPES.index(b)]
    out = jnp.add(_lattice_operand(a), _lattice_operand(b))
    assert out.dtype.name + ("*" if out.weak_type else "") == want


@pytest.mark.parametrize("a", LATTICE_TYPES)
@pytest.mark.parametrize("b", LATTICE_TYPES)
def test_promotion_lattice_result_type(a, b):
    want = LATTICE[LATTICE_TYPES.index(a)][LATTICE_TYPES.index(b)].rstrip("*")
    assert jnp.result_type(_lattice_operand(a), _lattice_operand(b)) == np.dtype(want)


@pytest.mark.parametrize("a", LATTICE_TYPES[:10])
@pytest.mark.parametrize("b", LATTICE_TYPES[:10])
def test_promote_types(a, b):
    want = LATTICE[LATTICE_TYPES.index(a)][LATTICE_TYPES.index(b)]
    assert jnp.promote_types(a, b) == np.dtype(want)


# (expression, dtype, weak_type, shape) from JAX 0.10.2, x64 disabled.
PROMOTION_EXAMPLES = [
    ('jnp.arange(5) * 2.0', 'float32', True, (5,)),
    ('jnp.arange(5) * 2', 'int32', False, (5,)),
    ('jnp.ones(3, jnp.int32) + jnp.ones(3, jnp.float16)', 'float16', False, (3,)),
    ('jnp.ones(3, jnp.uint8) + 1', 'uint8', False, (3,)),
    ('jnp.ones(3, jnp.uint8) + 1.0', 'float32', True, (3,)),
    ('jnp.ones(3, jnp.int8) * 300', 'int8', False, (3,)),
    ('jnp.array([True, False]) + jnp.array([True, True])', 'bool', False, (2,)),
    ('jnp.array([True, False]) * jnp.array([True, True])', 'bool', False, (2,)),
    ('jnp.array([True]) + 1', 'int32', True, (1,)),
    ('jnp.array([True]) + 1.5', 'float32', True, (1,)),
    ('jnp.array([True]).sum()', 'int32', False, ()),
    ('jnp.array([True, True]).mean()', 'float32', False, ()),
    ('jnp.float32(1) + 1', 'float32', False, ()),
    ('jnp.float16(1) + 1.0', 'float16', False, ()),
    ('jnp.float16(1) + jnp.float32(1)', 'float32', False, ()),
    ('jnp.ones(2) + 1j', 'complex64', False, (2,)),
    ('jnp.ones(2, jnp.int8) + jnp.ones(2, jnp.uint8)', 'int16', False, (2,)),
    ('jnp.ones(2, jnp.uint32) + jnp.ones(2, jnp.int32)', 'int32', False, (2,)),
    ('jnp.ones(2, jnp.uint8) + jnp.ones(2, jnp.int32)', 'int32', False, (2,)),
    ('jnp.ones(2, jnp.int16) / 2', 'float32', False, (2,)),
    ('jnp.ones(2, jnp.int16) // 2', 'int16', False, (2,)),
    ('jnp.ones(2, jnp.uint8) ** 2', 'uint8', False, (2,)),
    ('jnp.ones(2, jnp.float16) ** 2.5', 'float16', False, (2,)),
    ('jnp.asarray(1) + 1', 'int32', True, ()),
    ('jnp.asarray(1.0) * 2', 'float32', True, ()),
    ('jnp.zeros(3) + jnp.zeros(3, jnp.bool_)', 'float32', False, (3,)),
    ('jnp.sqrt(2)', 'float32', True, ()),
    ('jnp.sqrt(jnp.int8(2))', 'float32', False, ()),
    ('jnp.exp(1.0)', 'float32', True, ()),
    ('jnp.sin(True)', 'float32', False, ()),
    ('jnp.add(1, 2)', 'int32', True, ()),
    ('jnp.add(1, 2.0)', 'float32', True, ()),
    ('jnp.multiply(True, 2)', 'int32', True, ()),
    ('jnp.maximum(1.5, 2)', 'float32', True, ()),
    ('jnp.where(True, 1, 2.0)', 'float32', True, ()),
    ('jnp.where(jnp.ones(2, bool), jnp.ones(2, jnp.int8), 1)', 'int8', False, (2,)),
    ('jnp.where(jnp.ones(2, bool), 1.0, jnp.ones(2, jnp.int8))', 'float32', True, (2,)),
    ('jnp.array(1) * jnp.array(2.0)', 'float32', True, ()),
    ('jnp.array([1, 2]) / jnp.array([2, 2])', 'float32', False, (2,)),
    ('jnp.float32(2) ** 2', 'float32', False, ()),
    ('-jnp.asarray(1.0)', 'float32', True, ()),
    ('abs(jnp.asarray(-1))', 'int32', True, ()),
    ('jnp.zeros(3, jnp.uint8) - 1', 'uint8', False, (3,)),
    ('jnp.full((2,), 2) * 1.5', 'float32', True, (2,)),
    ('jnp.linspace(0, 1, 3)', 'float32', False, (3,)),
    ('jnp.arange(3.0) + jnp.arange(3)', 'float32', False, (3,)),
    ('jnp.ones((2, 3)) @ jnp.ones(3, jnp.int32)', 'float32', False, (2,)),
    ('jnp.dot(jnp.ones(3, jnp.int8), jnp.ones(3, jnp.int8))', 'int8', False, ()),
    ('jnp.sum(jnp.ones(3, jnp.uint8))', 'uint32', False, ()),
    ('jnp.sum(jnp.ones(3, jnp.int8))', 'int32', False, ()),
    ('jnp.prod(jnp.ones(3, jnp.int16))', 'int32', False, ()),
    ('jnp.cumsum(jnp.ones(3, jnp.int8))', 'int8', False, (3,)),
    ('jnp.cumsum(jnp.ones(3, jnp.bool_))', 'int32', False, (3,)),
    ('jnp.mean(jnp.ones(3, jnp.float16))', 'float16', False, ()),
    ('jnp.mean(jnp.ones(3, jnp.int8))', 'float32', False, ()),
    ('jnp.argmax(jnp.ones(3))', 'int32', False, ()),
    ('jnp.max(jnp.ones(3, jnp.uint8))', 'uint8', False, ()),
    ('jnp.round(jnp.ones(3, jnp.int8))', 'int8', False, (3,)),
    ('jnp.floor(jnp.ones(2, jnp.int32))', 'int32', False, (2,)),
    ('jnp.abs(jnp.ones(2, jnp.uint8))', 'uint8', False, (2,)),
    ('jnp.ones(3)[0]', 'float32', False, ()),
    ('jnp.arange(3)[1:]', 'int32', False, (2,)),
    ('jnp.asarray(2.0)[None]', 'float32', True, (1,)),
    ('jnp.float32(3)', 'float32', False, ()),
    ('jnp.array(3) + jnp.float32(1)', 'float32', False, ()),
    ('jnp.reshape(jnp.asarray(2.0), (1,))', 'float32', True, (1,)),
    ('jnp.asarray(2.0).T', 'float32', True, ()),
    ('jnp.stack([jnp.asarray(1.0), 2.0])', 'float32', True, (2,)),
    ('jnp.concatenate([jnp.ones(2), jnp.ones(2, jnp.int32)])', 'float32', False, (4,)),
    ('jnp.clip(jnp.ones(3, jnp.int32), 0.5, 2)', 'float32', True, (3,)),
    ('jnp.isnan(1.0)', 'bool', True, ()),
    ('jnp.ones(3) > 1', 'bool', False, (3,)),
    ('jnp.array(2) == 2.0', 'bool', True, ()),
    ('jnp.zeros_like(3.0)', 'float32', True, ()),
    ('jnp.ones_like(jnp.ones(2, jnp.int8))', 'int8', False, (2,)),
    ('jnp.full((2,), 3.0)', 'float32', True, (2,)),
    ('jnp.full((2,), jnp.float16(3))', 'float16', False, (2,)),
    ('jnp.array([1, 2]).astype(float)', 'float32', False, (2,)),
    ('jnp.array([1.5]).astype(int)', 'int32', False, (1,)),
    ('jnp.array([1, 2], dtype=float)', 'float32', False, (2,)),
    ('jnp.array(2, dtype=bool) + 1', 'int32', True, ()),
]


@pytest.mark.parametrize("expr,dtype,weak,shape", PROMOTION_EXAMPLES,
                         ids=[e[0] for e in PROMOTION_EXAMPLES])
def test_promotion_examples(expr, dtype, weak, shape):
    out = eval(expr, {"jnp": jnp, "np": np})  # noqa: S307
    assert (out.dtype.name, bool(out.weak_type), tuple(out.shape)) == (dtype, weak, shape)


def test_weak_type_repr():
    assert repr(jnp.arange(3) * 2.0) == "Array([0., 2., 4.], dtype=float32, weak_type=True)"
    assert repr(jnp.arange(3)) == "Array([0, 1, 2], dtype=int32)"


# ---------------------------------------------------------------- hypothesis properties

_SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow])
_DTYPES = st.sampled_from(["float32", "int32", "int8", "uint8", "bool", "float16"])


def _rand(shape, dtype, seed=0):
    from op_table import rand_default
    return rand_default(np.random.default_rng(seed), shape, dtype)


_BINARY_FNS = {
    "add": (jnp.add, np.add), "multiply": (jnp.multiply, np.multiply),
    "maximum": (jnp.maximum, np.maximum), "less": (jnp.less, np.less),
    "operator+": (lambda a, b: a + b, lambda a, b: a + b),
    "operator==": (lambda a, b: a == b, lambda a, b: a == b),
}


@_SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4),
       name=st.sampled_from(sorted(_BINARY_FNS)), dtype=st.sampled_from(["float32", "int32", "int8"]))
def test_binary_broadcasting(shapes, name, dtype):
    s1, s2 = shapes.input_shapes
    x, y = _rand(s1, dtype, 1), _rand(s2, dtype, 2)
    fn, ref = _BINARY_FNS[name]
    out = fn(jnp.asarray(x), jnp.asarray(y))
    want = ref(x, y)
    assert out.shape == shapes.result_shape
    np.testing.assert_array_equal(np.asarray(out), want.astype(out.dtype))


@_SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3))
def test_where_broadcasting(shapes):
    sc, sx, sy = shapes.input_shapes
    c, x, y = _rand(sc, "bool", 1), _rand(sx, "float32", 2), _rand(sy, "int32", 3)
    out = jnp.where(jnp.asarray(c), jnp.asarray(x), jnp.asarray(y))
    assert out.shape == shapes.result_shape and out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out), np.where(c, x, y).astype(np.float32))


@_SETTINGS
@given(shapes=st.tuples(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                        hnp.array_shapes(min_dims=1, max_dims=3, max_side=4)))
def test_incompatible_broadcasting_raises(shapes):
    s1, s2 = shapes
    try:
        np.broadcast_shapes(s1, s2)
    except ValueError:
        with pytest.raises((ValueError, TypeError)):
            jnp.add(jnp.zeros(s1), jnp.zeros(s2))
    else:
        assert jnp.add(jnp.zeros(s1), jnp.zeros(s2)).shape == np.broadcast_shapes(s1, s2)


@st.composite
def _reshape_case(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=4))
    size = int(np.prod(shape))
    # Split the size into a random factorization for the new shape.
    factors, n = [], size
    for p in (2, 3):
        while n % p == 0:
            factors.append(p)
            n //= p
    factors = draw(st.permutations(factors))
    new, i = [], 0
    while i < len(factors):
        k = draw(st.integers(1, len(factors) - i))
        new.append(int(np.prod(factors[i:i + k])))
        i += k
    new = draw(st.permutations(new))
    ones = draw(st.integers(0, 2))
    new = list(new) + [1] * ones
    if new and draw(st.booleans()):
        new[draw(st.integers(0, len(new) - 1))] = -1
    return shape, tuple(new)


@_SETTINGS
@given(case=_reshape_case(), dtype=_DTYPES)
def test_reshape_round_trip(case, dtype):
    shape, new = case
    x = _rand(shape, dtype)
    y = jnp.reshape(jnp.asarray(x), new)
    want = np.reshape(x, new)
    assert y.shape == want.shape and y.dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(y), want)
    back = jnp.reshape(y, shape)
    assert back.shape == shape
    np.testing.assert_array_equal(np.asarray(back), x)
    np.testing.assert_array_equal(np.asarray(jnp.ravel(y)), x.ravel())


@_SETTINGS
@given(data=st.data(), shape=hnp.array_shapes(min_dims=0, max_dims=4, max_side=4))
def test_transpose_permutations(data, shape):
    perm = data.draw(st.permutations(range(len(shape))))
    x = _rand(shape, "float32")
    out = jnp.transpose(jnp.asarray(x), perm)
    np.testing.assert_array_equal(np.asarray(out), np.transpose(x, perm))
    inv = np.argsort(perm)
    np.testing.assert_array_equal(np.asarray(jnp.transpose(out, tuple(inv))), x)


@_SETTINGS
@given(data=st.data(), shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=5),
       dtype=st.sampled_from(["float32", "int8", "bool"]))
def test_basic_indexing(data, shape, dtype):
    idx = data.draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    x = _rand(shape, dtype)
    out = jnp.asarray(x)[idx]
    want = x[idx]
    assert out.shape == want.shape
    assert out.dtype == x.dtype and not out.weak_type
    np.testing.assert_array_equal(np.asarray(out), want)


@_SETTINGS
@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
       name=st.sampled_from(["sum", "max", "min", "prod", "mean", "any", "all"]),
       keepdims=st.booleans(), dtype=st.sampled_from(["float32", "int32", "int8"]))
def test_reduction_axes(data, shape, name, keepdims, dtype):
    nd = len(shape)
    axes = data.draw(st.one_of(
        st.none(), st.integers(-nd, nd - 1),
        st.lists(st.integers(0, nd - 1), unique=True, max_size=nd).map(tuple)))
    x = _rand(shape, dtype) % 3 if dtype != "float32" else _rand(shape, dtype)
    out = getattr(jnp, name)(jnp.asarray(x), axis=axes, keepdims=keepdims)
    want = getattr(np, name)(x, axis=axes, keepdims=keepdims)
    assert out.shape == np.shape(want)
    np.testing.assert_allclose(np.asarray(out).astype(np.float64), np.asarray(want).astype(np.float64),
                               rtol=1e-5, atol=1e-5)


@_SETTINGS
@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
def test_argmax_argmin_axes(data, shape):
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    x = np.random.default_rng(0).permutation(int(np.prod(shape))).reshape(shape).astype(np.float32)
    for name in ("argmax", "argmin"):
        out = getattr(jnp, name)(jnp.asarray(x), axis=axis)
        want = getattr(np, name)(x, axis=axis)
        assert out.dtype == np.int32
        np.testing.assert_array_equal(np.asarray(out), want)


@_SETTINGS
@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=3), n=st.integers(1, 3))
def test_concatenate_stack(data, shape, n):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    xs = [_rand(shape, "float32", i) for i in range(n)]
    out = jnp.concatenate([jnp.asarray(x) for x in xs], axis=axis)
    np.testing.assert_array_equal(np.asarray(out), np.concatenate(xs, axis=axis))
    saxis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    out = jnp.stack([jnp.asarray(x) for x in xs], axis=saxis)
    np.testing.assert_array_equal(np.asarray(out), np.stack(xs, axis=saxis))


@_SETTINGS
@given(data=st.data(), shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=3))
def test_expand_dims_squeeze_round_trip(data, shape):
    nd = len(shape) + 1
    axis = data.draw(st.integers(-nd, nd - 1))
    x = _rand(shape, "int32")
    y = jnp.expand_dims(jnp.asarray(x), axis)
    np.testing.assert_array_equal(np.asarray(y), np.expand_dims(x, axis))
    np.testing.assert_array_equal(np.asarray(jnp.squeeze(y, axis)), x)


@_SETTINGS
@given(x=hnp.arrays(np.float32, hnp.array_shapes(max_dims=2, max_side=5),
                    elements=st.floats(-1e3, 1e3, width=32)),
       name=st.sampled_from(["exp", "sin", "tanh", "abs", "floor", "negative", "square"]))
def test_unary_matches_numpy_on_arbitrary_floats(x, name):
    out = getattr(jnp, name)(jnp.asarray(x))
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x)
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------- odds and ends

def test_matmul_operator_and_methods():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    ja, jb = jnp.asarray(a), jnp.asarray(b)
    np.testing.assert_array_equal(np.asarray(ja @ jb), a @ b)
    np.testing.assert_array_equal(np.asarray(b.T @ ja.T), b.T @ a.T)   # __rmatmul__ with numpy lhs
    np.testing.assert_array_equal(np.asarray(ja.T), a.T)
    np.testing.assert_array_equal(np.asarray(ja.reshape(3, 2)), a.reshape(3, 2))
    np.testing.assert_array_equal(np.asarray(ja.sum(axis=1)), a.sum(axis=1))


def test_array_is_immutable_and_unhashable():
    x = jnp.arange(3)
    with pytest.raises(TypeError):
        x[0] = 1
    with pytest.raises(TypeError):
        hash(x)


def test_scalar_conversions():
    assert float(jnp.asarray(2.5)) == 2.5
    assert int(jnp.asarray(3)) == 3
    assert bool(jnp.asarray(True)) is True
    assert [int(v) for v in jnp.arange(3)] == [0, 1, 2]
    assert len(jnp.zeros((4, 2))) == 4
    assert jnp.arange(5)[jnp.asarray(2)].item() == 2


def _check_in_branch(case):
    # The op inside a cond branch: compiled as kernel-language code inside one loop/branch kernel
    # (lowering/kernel_program.py), not as a driver node.
    from numjax import lax
    args = to_numjax(case.make_args())
    eager = case.fn(*args)
    pred = jax.numpy.asarray(True)
    fn = lambda p, *a: lax.cond(p, case.fn, case.fn, *a)   # noqa: E731
    # Complex values have no CPU lowering inside control flow (README lists it as missing).
    jitted = jit_falls_back(fn, pred, *args) if eager.dtype.kind == "c" else jit_compiled(fn, pred, *args)
    assert (jitted.dtype, jitted.shape) == (eager.dtype, eager.shape)
    assert_matches(jitted, _np(eager), case, what="jit inside cond vs eager")


@pytest.mark.jit
@pytest.mark.parametrize("case", JIT_SMOKE, ids=str)
def test_jit_inside_cond_vs_eager(case):
    _check_in_branch(case)


@pytest.mark.jit
@pytest.mark.slow
@pytest.mark.parametrize("case", [c for c in JIT_CASES if not _has_no_lowering(c)], ids=str)
def test_jit_inside_cond_vs_eager_table(case):
    _check_in_branch(case)
