"""Behaviours JAX's documentation notebooks rely on (tests/ecosystem/run_notebooks.py found
them missing); tests/compat/test_notebook_gaps_vs_jax.py compares the same against JAX."""
import inspect

import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
from numjax import lax
from numjax.ad_checkpoint import print_saved_residuals


def _line_of(fun, text):
    """The line number in this file of the first line of ``fun`` containing ``text``."""
    lines, start = inspect.getsourcelines(fun)
    return start + next(i for i, line in enumerate(lines) if text in line)


def test_saved_residuals_carry_the_user_line_and_program_order(capsys):
    def g(W, x):
        y = jnp.dot(W, x)
        return jnp.sin(y)

    def f(W1, W2, x):
        return g(W2, g(W1, x))
    print_saved_residuals(f, jnp.ones((5, 4)), jnp.ones((3, 5)), jnp.ones(4))
    lines = capsys.readouterr().out.splitlines()
    where = f"{__file__}:{_line_of(g, 'jnp.sin')}:15 ({g.__qualname__})"
    assert lines[:3] == ["f32[5,4] from the argument W1", "f32[3,5] from the argument W2",
                         "f32[4] from the argument x"]
    # sin and cos of the first layer, then the second layer's cos (its sin is not needed).
    assert lines[3:] == [f"f32[5] output of sin from {where}", f"f32[5] output of cos from {where}",
                         f"f32[3] output of cos from {where}"]


def test_saved_residuals_list_a_literal_first(capsys):
    print_saved_residuals(lambda x: jnp.sin(x) * 2.0, 1.0)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "f32[] from a literal"
    assert lines[1].startswith("f32[] output of cos from ")


def test_jaxpr_equations_record_their_user_line():
    def f(x):
        return jnp.cos(x) + 1.0
    eqns = jax.make_jaxpr(f)(1.0).jaxpr.eqns
    positions = {(e.source_info.start_line, e.source_info.function_name) for e in eqns}
    assert positions == {(_line_of(f, "jnp.cos"), f.__qualname__)}


def _branchy():
    @jax.custom_jvp
    def f(x):
        return jnp.sin(x) if x > 0 else jnp.cos(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        x, = primals
        x_dot, = tangents
        ans = f(x)               # the function on its own primals, under grad
        return (ans, 2 * x_dot) if x > 0 else (ans, 3 * x_dot)
    return f


def test_custom_jvp_rule_may_branch_on_primals_and_call_its_function():
    f = _branchy()
    assert float(jax.grad(f)(1.0)) == 2.0
    assert float(jax.grad(f)(-1.0)) == 3.0
    # Under jit the primals are traced: the branch is an error there, as in JAX.
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(jax.grad(f))(1.0)


def test_custom_jvp_second_derivative_applies_the_rule_again(capsys):
    @jax.custom_jvp
    def f(x):
        print("called f!")
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        print("called f_jvp!")
        x, = primals
        t, = tangents
        return f(x), jnp.cos(x) * t
    np.testing.assert_allclose(jax.grad(jax.grad(f))(3.0), -np.sin(3.0), rtol=1e-6)
    assert capsys.readouterr().out.splitlines() == ["called f_jvp!", "called f_jvp!", "called f!"]


def test_custom_jvp_equation_prints_num_consts_only_when_nonzero():
    @jax.custom_jvp
    def plain(x):
        return jnp.sin(x)
    plain.defjvp(lambda p, t: (plain(p[0]), t[0]))
    c = np.arange(3.0, dtype=np.float32)

    @jax.custom_jvp
    def closes(x):
        return jnp.sin(x) * c
    closes.defjvp(lambda p, t: (closes(p[0]), t[0]))
    assert "num_consts" not in str(jax.make_jaxpr(plain)(jnp.ones(3)))
    assert "num_consts=1" in str(jax.make_jaxpr(closes)(jnp.ones(3)))


def test_fori_loop_carry_is_index_bound_value():
    jaxpr = jax.make_jaxpr(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 2.0, x))(jnp.ones(2), 3)
    (loop,) = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "while"]
    assert [str(v.aval.dtype) for v in loop.outvars] == ["int32", "int32", "float32"]
    f = jax.jit(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 2.0 + i, x))
    np.testing.assert_array_equal(f(jnp.ones(2), 3), [12.0, 12.0])   # ((1*2+0)*2+1)*2+2


def test_list_of_weak_tracers_loses_weak_type_per_element():
    def f(a, b):
        out = jnp.array([a, b])
        assert not out.weak_type
        return out
    jaxpr = jax.make_jaxpr(f)(1, 2)
    names = [e.primitive.name for e in jaxpr.jaxpr.eqns]
    assert names == ["convert_element_type", "broadcast_in_dim"] * 2 + ["concatenate"]
    assert all(e.params["weak_type"] is False for e in jaxpr.jaxpr.eqns[::2][:2])
    # Already strongly typed elements need no cast.
    strong = jax.make_jaxpr(f)(np.int32(1), np.int32(2))
    assert "convert_element_type" not in str(strong)


def test_shape_dtype_struct_like():
    S = jax.ShapeDtypeStruct
    assert S.like(jnp.arange(5.0)) == S((5,), np.float32)
    assert S.like(1.0) == S((), np.float32, weak_type=True)
    assert S.like(np.zeros((2, 3), np.int8)) == S((2, 3), np.int8)
    assert S.like(S((2,), np.float32, weak_type=True)).weak_type
    with pytest.raises(TypeError):
        S.like([1, 2])


def test_none_is_no_array_and_jacobians_rebuild_trees_around_none():
    with pytest.raises(ValueError, match="None is not a valid value"):
        jnp.array(None)
    with pytest.raises(ValueError):
        jnp.asarray([1.0, None])

    class Validated:
        def __init__(self, a):
            self.a = jnp.asarray(a)
    jax.tree_util.register_pytree_node(Validated, lambda t: ((t.a,), None), lambda _, a: Validated(*a))
    tree = Validated(jnp.arange(3.0))
    for transform in (jax.jacrev, jax.jacfwd):
        with pytest.raises(ValueError):
            transform(lambda t: t.a)(tree)


def test_private_test_util_module_imports():
    from numjax._src import test_util
    assert test_util.check_grads is jax.test_util.check_grads


# ---------------------------------------------------------------- writing custom interpreters

def test_closed_jaxpr_exposes_literals_and_variables():
    c = np.arange(3.0, dtype=np.float32)
    closed = jax.make_jaxpr(lambda x: jnp.sin(x) * c)(jnp.ones(3))
    assert closed.literals is closed.consts and len(closed.literals) == 1
    assert closed.invars == closed.jaxpr.invars and closed.outvars == closed.jaxpr.outvars
    assert closed.constvars == closed.jaxpr.constvars


def test_safe_map_and_safe_zip_are_eager_and_length_checked():
    from numjax._src.util import safe_map, safe_zip
    seen = []
    assert safe_map(seen.append, [1, 2]) == [None, None] and seen == [1, 2]
    assert safe_zip((1, 2), "ab") == [(1, "a"), (2, "b")]
    with pytest.raises(ValueError):
        safe_map(lambda a, b: a, [1, 2], [3])
    with pytest.raises(ValueError):
        safe_zip([1, 2], [3])


def test_var_and_literal_reprs_take_jax_form():
    eqn = jax.make_jaxpr(lambda x: (x + 1) * 2.0)(1).jaxpr.eqns
    var, one = eqn[0].invars
    assert repr(var) == f"Var(id={id(var)}):int32[]"
    assert repr(one) == "Literal(TypedInt(1, dtype=int32))"
    assert repr(eqn[-1].invars[-1]) == "Literal(2.0)"


# ---------------------------------------------------------------- the notebook harness itself

def _harness():
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).parent / "ecosystem" / "run_notebooks.py"
    spec = importlib.util.spec_from_file_location("run_notebooks", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_harness_reads_magics_and_tags_as_jupyter_runs_them():
    h = _harness()
    text = "\n".join([
        "```{code-cell}", ":tags: [skip-execution]", "", "f(2.)  # pauses in a debugger", "```",
        "```{code-cell} ipython3", "%xmode minimal", "x = 1", "```",
        "```{code-cell}", "%timeit -n10 -r3 y = x + 1", "%timeit f(x)", "```",
        "```{code-cell}", "%%timeit", "z = 3", "```",
        "```{code-cell}", "%%bash", "ls", "```",
    ])
    assert h.code_cells(text) == ["pass  # %xmode minimal\nx = 1",
                                  "y = x + 1; pass\nf(x); pass", "z = 3"]
    # A timed statement runs once, shows no value, and later cells see what it assigned.
    outs = h.run_cells(["x = 1", "y = x + 1; pass", "y", "plt_like = 5;"])
    assert [o["out"] for o in outs] == ["", "", "2\n", ""]


def test_harness_compares_values_not_layout():
    h = _harness()

    def same(a, b, exc_a=None, exc_b=None):
        return h.outputs_match({"out": a, "exc": exc_a}, {"out": b, "exc": exc_b})
    assert same("[ 0.0294214  1.5]\n", "[0.02942139 1.5 ]\n")          # last digit moves padding
    assert same("<class 'numjax.array.Array'>\n", "<class 'jaxlib._jax.ArrayImpl'>\n")
    assert same("[Var(id=1234):int32[]]", "[Var(id=98765):int32[]]")
    assert not same("[1. 2.]", "[1. 2. 3.]")
    assert not same("output of sin", "output of cos")
    assert not same("1.0", "1.1")
    assert not same("", "", "TypeError", "ValueError")
    assert not same("<class 'numjax.array.Array'>", "<class 'int'>")
