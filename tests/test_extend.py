"""The extension surface: primitives defined from outside numjax the way JAX libraries
(equinox, flax) define them, through ``jax.extend.core`` and ``jax.interpreters.*``.

A primitive made here has JAX's rule conventions (impl, abstract eval returning a
``ShapedArray``, jvp ``(primals, tangents)``, transpose ``(ct, *args)`` with
``UndefinedPrimal`` for linear inputs, batching ``(args, dims) -> (out, dim)``,
``mlir.lower_fun``), and must work under jit (compiled, never the eager fallback: the suite
turns that warning into an error), grad and vmap, alone and composed.  Without a ``lower_fun``
rule its impl runs as a host callback inside the compiled program.
"""
import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
from numjax import core as numjax_core
from numjax import lax
from numjax.errors import EagerFallbackWarning, JaxRuntimeError
from numjax.extend import core as jex_core
from numjax.interpreters import ad, batching, mlir


def _x():
    return jnp.asarray(np.linspace(-1.5, 2.0, 6, dtype=np.float32))


# ---------------------------------------------------------------- a user primitive
# ``scale_p``: c * x, linear in x (its transpose is exercised by grad).
# ``scaled_sin_p``: c * sin(x), whose tangent is scale_p applied to cos(x) * t.
# Each rule counts its calls so a test can tell the user's rule ran.

calls = {"scale_batch": 0, "scaled_sin_batch": 0, "scale_transpose": 0, "scaled_sin_jvp": 0}

scale_p = jex_core.Primitive("user_scale")
scale_p.def_impl(lambda x, *, c: jnp.multiply(x, c))
scale_p.def_abstract_eval(lambda x, *, c: numjax_core.ShapedArray(x.shape, x.dtype))
mlir.register_lowering(scale_p, mlir.lower_fun(lambda x, *, c: x * c, multiple_results=False))


def _scale_jvp(primals, tangents, *, c):
    (x,), (t,) = primals, tangents
    return scale_p.bind(x, c=c), scale_p.bind(ad.instantiate_zeros(t), c=c)


def _scale_transpose(ct, x, *, c):
    assert ad.is_undefined_primal(x)
    calls["scale_transpose"] += 1
    return [scale_p.bind(ct, c=c)]


def _scale_batch(args, dims, *, c):
    calls["scale_batch"] += 1
    return scale_p.bind(args[0], c=c), dims[0]


ad.primitive_jvps[scale_p] = _scale_jvp
ad.primitive_transposes[scale_p] = _scale_transpose
batching.primitive_batchers[scale_p] = _scale_batch

scaled_sin_p = jex_core.Primitive("user_scaled_sin")


@scaled_sin_p.def_impl
def _scaled_sin_impl(x, *, c):
    return jnp.sin(x) * c


@scaled_sin_p.def_abstract_eval
def _scaled_sin_abstract(x, *, c):
    return numjax_core.ShapedArray(x.shape, x.dtype)


def _scaled_sin_jvp(primals, tangents, *, c):
    calls["scaled_sin_jvp"] += 1
    (x,), (t,) = primals, tangents
    return scaled_sin_p.bind(x, c=c), scale_p.bind(jnp.cos(x) * ad.instantiate_zeros(t), c=c)


def _scaled_sin_batch(args, dims, *, c):
    calls["scaled_sin_batch"] += 1
    return scaled_sin_p.bind(args[0], c=c), dims[0]


ad.primitive_jvps[scaled_sin_p] = _scaled_sin_jvp
batching.primitive_batchers[scaled_sin_p] = _scaled_sin_batch
mlir.register_lowering(scaled_sin_p, mlir.lower_fun(_scaled_sin_impl, multiple_results=False))


def scaled_sin(x, c=3.0):
    return scaled_sin_p.bind(x, c=c)


def _want(x, c=3.0):
    return c * np.sin(np.asarray(x, np.float64))


def _compiled(f, *args):
    """The source of ``jit(f)``'s program; it must be compiled, not evaluated op by op."""
    text = jax.jit(f).lower(*args).as_text()
    assert "no Numba lowering" not in text
    return text


# ---------------------------------------------------------------- the tables are numjax's

def test_jax_names_are_numjax_tables_and_classes():
    assert jex_core.Primitive is numjax_core.Primitive
    assert ad.primitive_jvps is ad.jvp_rules and ad.primitive_transposes is ad.transpose_rules
    assert batching.primitive_batchers is batching.batch_rules
    assert ad.primitive_jvps[scaled_sin_p] is _scaled_sin_jvp
    assert numjax_core.impl_rules[scaled_sin_p] is _scaled_sin_impl
    from numjax.jaxpr import ClosedJaxpr, Jaxpr, Literal, Var
    assert (jex_core.Jaxpr, jex_core.ClosedJaxpr, jex_core.Var, jex_core.Literal) == \
        (Jaxpr, ClosedJaxpr, Var, Literal)
    assert jex_core.primitives.add_p is lax.elementwise.add_p


def test_primitive_without_rules_says_so():
    p = jex_core.Primitive("user_ruleless")
    with pytest.raises(NotImplementedError, match="Evaluation rule for 'user_ruleless'"):
        p.bind(1.0)
    with pytest.raises(NotImplementedError, match="Abstract evaluation for 'user_ruleless'"):
        jax.make_jaxpr(p.bind)(1.0)


# ---------------------------------------------------------------- eager, jit, grad, vmap

def test_eager_and_jit_agree_and_jit_compiles_the_lowering():
    x = _x()
    np.testing.assert_allclose(scaled_sin(x), _want(x), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(jax.jit(scaled_sin)(x), _want(x), rtol=1e-6, atol=1e-6)
    assert "user_scaled_sin" in str(jax.make_jaxpr(scaled_sin)(x))   # staged as itself
    _compiled(scaled_sin, x)


def test_grad_uses_the_user_jvp_and_transpose_rules():
    x = _x()
    before = dict(calls)
    g = jax.grad(lambda v: jnp.sum(scaled_sin(v)))(x)
    np.testing.assert_allclose(g, 3.0 * np.cos(np.asarray(x, np.float64)), rtol=1e-6, atol=1e-6)
    assert calls["scaled_sin_jvp"] > before["scaled_sin_jvp"]
    assert calls["scale_transpose"] > before["scale_transpose"]


def test_grad_of_jit_and_jit_of_grad_compile():
    x = _x()
    want = 3.0 * np.cos(np.asarray(x, np.float64))
    f = lambda v: jnp.sum(scaled_sin(v))   # noqa: E731
    np.testing.assert_allclose(jax.grad(jax.jit(f))(x), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.grad(f))(x), want, rtol=1e-6, atol=1e-6)
    _compiled(jax.grad(f), x)


def test_vmap_uses_the_user_batching_rule():
    xs = jnp.asarray(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
    before = calls["scaled_sin_batch"]
    out = jax.vmap(scaled_sin, in_axes=1, out_axes=1)(xs)
    np.testing.assert_allclose(out, _want(xs), rtol=1e-6, atol=1e-6)
    assert calls["scaled_sin_batch"] == before + 1
    np.testing.assert_allclose(jax.jit(jax.vmap(scaled_sin))(xs), _want(xs), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(jax.vmap(jax.jit(scaled_sin))(xs), _want(xs), rtol=1e-6, atol=1e-6)


def test_per_example_gradients_through_the_primitive():
    xs = jnp.asarray(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
    g = jax.jit(jax.vmap(jax.grad(lambda v: jnp.sum(scaled_sin(v)))))(xs)
    np.testing.assert_allclose(g, 3.0 * np.cos(np.asarray(xs, np.float64)), rtol=1e-6, atol=1e-6)


def test_lowering_expands_inside_a_scan_body():
    def f(x):
        def body(carry, _):
            return scaled_sin(carry, c=0.5), carry
        return lax.scan(body, x, None, length=3)
    x = _x()
    carry, ys = jax.jit(f)(x)
    want = np.asarray(x, np.float64)
    for _ in range(3):
        want = 0.5 * np.sin(want)
    np.testing.assert_allclose(carry, want, rtol=1e-5, atol=1e-6)
    assert ys.shape == (3, 6)
    _compiled(f, x)


# ---------------------------------------------------------------- multiple results, constants

split_p = jex_core.Primitive("user_split_sum")
split_p.multiple_results = True
split_p.def_impl(lambda x: [jnp.sum(x), x * 2.0])
split_p.def_abstract_eval(lambda x: [numjax_core.ShapedArray((), x.dtype),
                                     numjax_core.ShapedArray(x.shape, x.dtype)])
# The lowering holds an array constant: it becomes a constant of the compiled program.
_offsets = np.arange(6, dtype=np.float32)
mlir.register_lowering(split_p, mlir.lower_fun(
    lambda x: [jnp.sum(x), x * 2.0 + jnp.asarray(_offsets) * 0.0], multiple_results=True))


def test_multiple_results_primitive_under_jit():
    x = _x()
    total, doubled = jax.jit(lambda v: split_p.bind(v))(x)
    np.testing.assert_allclose(total, np.sum(np.asarray(x)), rtol=1e-6)
    np.testing.assert_allclose(doubled, 2 * np.asarray(x), rtol=1e-6)
    _compiled(lambda v: split_p.bind(v), x)


# ---------------------------------------------------------------- impl only: a host callback
# A library's primitive with an impl and no lower_fun rule runs inside the compiled program as
# a host callback of its impl; the rest of the program stays compiled.

def _impl_only(name, impl, abstract, multiple_results=False):
    p = jex_core.Primitive(name)
    p.multiple_results = multiple_results
    p.def_impl(impl)
    p.def_abstract_eval(abstract)
    return p


def test_primitive_without_lowering_is_a_host_call_in_compiled_code():
    seen = []

    def impl(x, *, k):
        seen.append((type(x).__name__, k))
        return x + k
    p = _impl_only("user_impl_only", impl, lambda x, *, k: numjax_core.ShapedArray(x.shape, x.dtype))
    f = lambda v: jnp.sin(p.bind(v * 3.0, k=2.0)) * 2.0   # noqa: E731
    x = _x()
    out = jax.jit(f)(x)
    np.testing.assert_allclose(out, np.sin(np.asarray(x) * 3 + 2) * 2, rtol=1e-6, atol=1e-6)
    assert seen == [("Array", 2.0)]          # the impl ran once, with the equation's params
    text = _compiled(f, x)
    assert "host_callback0(" in text and "def k_" in text   # the rest is compiled kernels
    assert "user_impl_only" in str(jax.make_jaxpr(f)(x))      # transformations still see it


def test_host_called_primitive_with_rules_under_grad_vmap_and_scan():
    p = _impl_only("user_cube", lambda x: x ** 3, lambda x: numjax_core.ShapedArray(x.shape, x.dtype))
    ad.defjvp(p, lambda g, x: 3.0 * x * x * g)
    batching.primitive_batchers[p] = lambda args, dims: (p.bind(args[0]), dims[0])
    x = _x()
    np.testing.assert_allclose(jax.jit(jax.grad(lambda v: jnp.sum(p.bind(v))))(x), 3 * np.asarray(x) ** 2,
                               rtol=1e-6)
    xs = jnp.reshape(jnp.arange(6.0), (2, 3))
    np.testing.assert_allclose(jax.jit(jax.vmap(p.bind))(xs), np.arange(6.0).reshape(2, 3) ** 3)

    def body(c, _):
        return p.bind(c) * 0.5, c
    carry, _ = jax.jit(lambda v: lax.scan(body, v, None, length=3))(x)
    want = np.asarray(x, np.float64)
    for _ in range(3):
        want = want ** 3 * 0.5
    np.testing.assert_allclose(carry, want, rtol=1e-5, atol=1e-6)
    _compiled(lambda v: lax.scan(body, v, None, length=3), x)


def test_host_called_primitive_with_multiple_results_and_an_mlir_rule():
    p = _impl_only("user_minmax", lambda x: [jnp.min(x), jnp.max(x)],
                   lambda x: [numjax_core.ShapedArray((), x.dtype)] * 2, multiple_results=True)
    # A rule that would emit MLIR itself: numjax cannot use it and calls the impl instead.
    mlir.register_lowering(p, lambda ctx, x: None)
    lo, hi = jax.jit(lambda v: p.bind(v))(_x())
    assert (float(lo), float(hi)) == (-1.5, 2.0)
    _compiled(lambda v: p.bind(v), _x())


def test_host_called_primitive_results_are_checked():
    p = _impl_only("user_liar", lambda x: jnp.zeros(2, x.dtype), lambda x: x)
    with pytest.raises(JaxRuntimeError, match="Incorrect output shape for return value #0"):
        jax.jit(lambda v: p.bind(v) + 1.0)(_x())


def test_numjax_primitive_without_backend_rule_still_falls_back():
    # numjax's own primitives are not turned into callbacks: a missing rule stays visible.
    from numjax.lax._base import make_primitive
    p = make_primitive("numjax_unlowered", lambda x: x + 1.0, lambda x: x)
    with pytest.warns(EagerFallbackWarning, match="numjax_unlowered"):
        out = jax.jit(lambda v: p.bind(v) * 2.0)(_x())
    np.testing.assert_allclose(out, (np.asarray(_x()) + 1) * 2, rtol=1e-6)


def test_primitive_without_impl_or_lowering_falls_back_with_a_warning():
    p = jex_core.Primitive("user_abstract_only")
    p.def_abstract_eval(lambda x: x)
    with pytest.warns(EagerFallbackWarning, match="user_abstract_only"):
        with pytest.raises(NotImplementedError, match="Evaluation rule for 'user_abstract_only'"):
            jax.jit(lambda v: p.bind(v) * 2.0)(_x())


# ---------------------------------------------------------------- JAX's other rule conventions

def test_deflinear_takes_a_transpose_rule_without_operands():
    p = jex_core.Primitive("user_double")
    p.def_impl(lambda x: x * 2.0)
    p.def_abstract_eval(lambda x: x)
    ad.deflinear(p, lambda ct: [p.bind(ct)])
    mlir.register_lowering(p, mlir.lower_fun(lambda x: x * 2.0, multiple_results=False))
    x = _x()
    np.testing.assert_allclose(jax.grad(lambda v: jnp.sum(p.bind(v) ** 2))(x), 8 * np.asarray(x),
                               rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.grad(lambda v: jnp.sum(p.bind(v))))(x), np.full(6, 2.0))


def test_defjvp_rule_per_argument():
    p = jex_core.Primitive("user_mul")
    p.def_impl(lambda x, y: x * y)
    p.def_abstract_eval(lambda x, y: x)
    ad.defjvp(p, lambda g, x, y: g * y, lambda g, x, y: x * g)
    mlir.register_lowering(p, mlir.lower_fun(lambda x, y: x * y, multiple_results=False))
    gx, gy = jax.jit(jax.grad(lambda a, b: jnp.sum(p.bind(a, b)), argnums=(0, 1)))(_x(), _x() + 1.0)
    np.testing.assert_allclose(gx, np.asarray(_x()) + 1.0, rtol=1e-6)
    np.testing.assert_allclose(gy, np.asarray(_x()), rtol=1e-6)


def test_axis_and_fancy_batchers_see_the_axis():
    seen = []
    p = jex_core.Primitive("user_axis_rule")
    p.def_impl(lambda x: x + 1.0)
    p.def_abstract_eval(lambda x: x)

    def axis_rule(axis_size, axis_name, trace_type, args, dims):
        seen.append(("axis", axis_size, axis_name))
        return p.bind(*args), dims[0]
    batching.axis_primitive_batchers[p] = axis_rule
    assert p in batching.axis_primitive_batchers and p in batching.batch_rules
    out = jax.vmap(p.bind, axis_name="i")(jnp.ones((4, 2)))
    np.testing.assert_allclose(out, np.full((4, 2), 2.0))

    def fancy_rule(axis_data, args, dims):
        seen.append(("fancy", axis_data.size, axis_data.name))
        return p.bind(*args), dims[0]
    batching.fancy_primitive_batchers[p] = fancy_rule
    jax.vmap(p.bind)(jnp.ones((5, 2)))
    assert seen == [("axis", 4, "i"), ("fancy", 5, None)]


def test_zero_and_undefined_primal_helpers():
    z = ad.Zero.from_primal_value(jnp.ones((2, 3), jnp.int32))
    assert z.aval.shape == (2, 3) and z.aval.dtype == np.float32   # numjax's int tangent type
    np.testing.assert_array_equal(ad.instantiate_zeros(z), np.zeros((2, 3)))
    assert ad.is_undefined_primal(ad.UndefinedPrimal(z.aval)) and not ad.is_undefined_primal(1.0)
    with pytest.raises(NotImplementedError, match="user_ruleless2"):
        ad.get_primitive_transpose(jex_core.Primitive("user_ruleless2"))


# ---------------------------------------------------------------- jaxprs and avals

def test_jaxpr_as_fun_and_avals():
    closed = jax.make_jaxpr(lambda v: jnp.sin(v) * 2.0)(_x())
    assert isinstance(closed, jex_core.ClosedJaxpr)
    np.testing.assert_allclose(jex_core.jaxpr_as_fun(closed)(_x())[0], 2 * np.sin(np.asarray(_x())),
                               rtol=1e-6)
    aval = numjax_core.ShapedArray((3, 5), np.float32)
    assert jex_core.mapped_aval(5, 1, aval).shape == (3,)
    assert jex_core.unmapped_aval(4, 0, aval).shape == (4, 3, 5)
    assert aval.to_tangent_aval() == aval


def test_opaque_trace_state_tells_transformations_apart():
    outside = jex_core.get_opaque_trace_state(convention="flax")
    assert outside == jex_core.get_opaque_trace_state()
    inside = []
    jax.jit(lambda v: inside.append(jex_core.get_opaque_trace_state()) or v)(1.0)
    assert inside[0] != outside


def test_named_scope_is_a_context_manager():
    with jax.named_scope("block"):
        out = jax.jit(lambda v: v + 1)(1.0)
    assert float(out) == 2.0
    with pytest.raises(TypeError):
        with jax.named_scope(3):
            pass


def test_uint32_from_a_python_int_above_int32():
    # flax folds a 32-bit hash into its PRNG keys with jnp.uint32(hash).
    assert int(jnp.uint32(2998342421)) == 2998342421 and jnp.uint32(5).dtype == np.uint32


def test_partial_eval_entry_points():
    from numjax.extend import linear_util as lu
    from numjax.interpreters import partial_eval as pe
    aval = numjax_core.ShapedArray((6,), np.float32)
    jaxpr, out_avals, consts = pe.trace_to_jaxpr_dynamic(lu.wrap_init(lambda x: [scaled_sin(x)]), [aval])
    assert [e.primitive for e in jaxpr.eqns] == [scaled_sin_p] and out_avals == [aval]
    known = pe.PartialVal.known(_x())
    jaxpr, pvals, _ = pe.trace_to_jaxpr_nounits(lambda k, u: [k * 2.0, k + u],
                                                [known, pe.PartialVal.unknown(aval)])
    (pv0, c0), (pv1, c1) = pvals   # JAX's (aval or None, const or None) pairs
    assert pv0 is None and c1 is None and pv1 == aval and len(jaxpr.eqns) == 1
    np.testing.assert_allclose(c0, 2 * np.asarray(_x()))
