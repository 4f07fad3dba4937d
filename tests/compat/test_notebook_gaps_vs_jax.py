"""Differences JAX's documentation notebooks found (tests/ecosystem/run_notebooks.py), each
checked against real JAX 0.10.2 in the same process: what print_saved_residuals prints
(source positions, order), custom_jvp rules that call their function or branch on their
primals under grad, printed jaxprs of custom_jvp calls, fori_loop and lists of tracers,
ShapeDtypeStruct.like, and errors from pytrees whose constructor rejects None."""
import contextlib
import io

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402
from jax import ad_checkpoint as j_ad_checkpoint  # noqa: E402

import numjax as nj  # noqa: E402
import numjax.numpy as njnp  # noqa: E402
from numjax import ad_checkpoint as n_ad_checkpoint  # noqa: E402

jax.config.update("jax_platform_name", "cpu")

LIBS = ((nj, njnp, n_ad_checkpoint), (jax, jjnp, j_ad_checkpoint))


def _printed_by_both(program):
    """What ``program(lib, jnp, ad_checkpoint)`` prints (and returns) on numjax and on JAX."""
    results = []
    for lib in LIBS:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            returned = program(*lib)
        results.append((buf.getvalue(), returned))
    return results


# ---------------------------------------------------------------- print_saved_residuals

def _residuals_program(lib, jnp, ad_checkpoint):
    def g(W, x):
        y = jnp.dot(W, x)
        return jnp.sin(y)

    def f(W1, W2, x):
        return g(W2, g(W1, x)) * 2.0

    def chain(x):
        for fun in [jnp.sin] * 3:
            x = fun(x)
        return x
    ad_checkpoint.print_saved_residuals(f, jnp.ones((5, 4)), jnp.ones((3, 5)), jnp.ones(4))
    ad_checkpoint.print_saved_residuals(chain, 3.0)


def test_print_saved_residuals_names_source_positions_in_program_order():
    (numjax_out, _), (jax_out, _) = _printed_by_both(_residuals_program)
    assert "output of cos from " in jax_out          # the test sees real positions
    assert numjax_out == jax_out


# ---------------------------------------------------------------- custom_jvp

def _custom_jvp_program(lib, jnp, _):
    @lib.custom_jvp
    def f(x):
        print("called f!")
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        print("called f_jvp!")
        x, = primals
        t, = tangents
        return f(x), jnp.cos(x) * t

    @lib.custom_jvp
    def branchy(x):
        return jnp.sin(x) if x > 0 else jnp.cos(x)

    @branchy.defjvp
    def branchy_jvp(primals, tangents):
        x, = primals
        x_dot, = tangents
        ans = branchy(x)
        return (ans, 2 * x_dot) if x > 0 else (ans, 3 * x_dot)
    outs = [lib.grad(lib.grad(f))(3.0), lib.grad(branchy)(1.0), lib.grad(branchy)(-1.0)]
    print(lib.make_jaxpr(lib.grad(f))(3.0))
    return [float(o) for o in outs]


def test_custom_jvp_rule_sees_concrete_primals_and_reapplies_outer_rule():
    (numjax_out, numjax_vals), (jax_out, jax_vals) = _printed_by_both(_custom_jvp_program)
    assert numjax_out == jax_out
    np.testing.assert_allclose(numjax_vals, jax_vals, rtol=1e-6)


def test_custom_jvp_jaxpr_shows_num_consts_only_when_closing_over_values():
    def program(lib, jnp, _):
        c = np.arange(3.0, dtype=np.float32)

        @lib.custom_jvp
        def closes(x):
            return jnp.sin(x) * c
        closes.defjvp(lambda p, t: (closes(p[0]), t[0]))

        @lib.custom_jvp
        def plain(x):
            return jnp.sin(x)
        plain.defjvp(lambda p, t: (plain(p[0]), t[0]))
        print(lib.make_jaxpr(closes)(jnp.ones(3)))
        print(lib.make_jaxpr(plain)(jnp.ones(3)))
    (numjax_out, _), (jax_out, _) = _printed_by_both(program)
    assert numjax_out == jax_out


# ---------------------------------------------------------------- printed jaxprs

def test_fori_loop_carry_order_in_jaxpr():
    def program(lib, jnp, _):
        def func(arg, n):
            ones = jnp.ones(arg.shape)
            return lib.lax.fori_loop(0, n, lambda i, carry: carry + ones * 3. + arg, arg + ones)
        print(lib.make_jaxpr(func)(np.ones(16), 5))
        return np.asarray(func(np.ones(3), 4)).tolist()
    (numjax_out, numjax_val), (jax_out, jax_val) = _printed_by_both(program)
    assert numjax_out == jax_out
    assert numjax_val == jax_val


def test_list_of_weak_tracers_is_cast_element_by_element():
    def program(lib, jnp, _):
        def f(*xs):
            out = jnp.array(list(xs))
            print(out.weak_type)
            return jnp.sum(out)
        print(lib.make_jaxpr(f)(*range(3)))
        print(lib.make_jaxpr(f)(*[np.int32(i) for i in range(3)]))
    (numjax_out, _), (jax_out, _) = _printed_by_both(program)
    assert numjax_out == jax_out


# ---------------------------------------------------------------- values and errors

def test_shape_dtype_struct_like():
    def program(lib, jnp, _):
        S = lib.ShapeDtypeStruct
        print(S.like(jnp.arange(5.0)), S.like(1.0), S.like(np.zeros((2, 3), np.int8)))
        print(S.like(S((2,), jnp.float32, weak_type=True)))
        lib.jit(lambda x: print(S.like(x)) or x)(jnp.ones(3))
        try:
            S.like([1, 2])
        except Exception as err:  # noqa: BLE001  (the class is compared)
            print(type(err).__name__)
    (numjax_out, _), (jax_out, _) = _printed_by_both(program)
    assert numjax_out == jax_out


def test_pytree_rejecting_none_fails_jacrev_and_jacfwd_alike():
    def program(lib, jnp, _):
        class Validated:
            def __init__(self, a):
                self.a = jnp.asarray(a)
        lib.tree_util.register_pytree_node(Validated, lambda t: ((t.a,), None),
                                           lambda _, args: Validated(*args))
        tree = Validated(jnp.arange(3.0))
        for transform in (lib.jacrev, lib.jacfwd):
            try:
                transform(lambda t: t.a)(tree)
                print("no error")
            except Exception as err:  # noqa: BLE001  (the class is compared)
                print(type(err).__name__)
        for value in (None, [1.0, None]):
            try:
                jnp.array(value)
            except Exception as err:  # noqa: BLE001
                print(type(err).__name__)
    (numjax_out, _), (jax_out, _) = _printed_by_both(program)
    assert jax_out.splitlines()[0] == "ValueError"
    assert numjax_out == jax_out


def test_jaxpr_variable_and_literal_reprs():
    import re

    def program(lib, jnp, _):
        for fun, arg in [(lambda x: x + 1 + 2.0 * x + jnp.float32(3) + (x > 2), 1),
                         (lambda x: x * 2.5, jnp.ones(3, jnp.float16)), (lambda x: x & True, True)]:
            closed = lib.make_jaxpr(fun)(arg)
            print(closed.literals == closed.consts)
            for eqn in closed.jaxpr.eqns:
                print(eqn.invars, eqn.outvars)
    (numjax_out, _), (jax_out, _) = _printed_by_both(program)
    unaddressed = [re.sub(r"id=\d+", "id=?", out) for out in (numjax_out, jax_out)]
    assert unaddressed[0] == unaddressed[1]


def test_extend_source_info_summarizes_the_user_line():
    def program(lib, jnp, _):
        from importlib import import_module
        siu = import_module(lib.__name__ + ".extend.source_info_util")

        def f(x):
            print(siu.summarize(siu.current()))
            return x
        f(1)
        print(siu.summarize(lib.make_jaxpr(lambda x: jnp.sin(x))(1.0).jaxpr.eqns[0].source_info))
    (numjax_out, _), (jax_out, _) = _printed_by_both(program)
    assert numjax_out == jax_out
