"""checkify on numjax reports what real JAX reports: the same ``Error.get()`` messages (which
check site wins, which loop iteration or batch element, formatted payloads), the same
outputs, and the same exception classes and messages for misuse, for user checks through
jit/cond/switch/scan/while/fori/vmap/grad and for the automatic NaN, division and index checks."""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.experimental.checkify  # noqa: E402
import jax.numpy as jjnp  # noqa: E402

import numjax as nj  # noqa: E402
import numjax.experimental.checkify  # noqa: E402,F401
import numjax.numpy as njnp  # noqa: E402

jax.config.update("jax_platform_name", "cpu")

LIBS = {"jax": (jax, jjnp, jax.experimental.checkify), "numjax": (nj, njnp, nj.experimental.checkify)}


def _outcome(thunk):
    """What a call did, as text: its (error message, output) or the exception it raised."""
    try:
        result = thunk()
    except Exception as e:   # noqa: BLE001 - the exception is the outcome compared
        return f"raised {type(e).__name__}: {e}"
    if isinstance(result, tuple) and len(result) == 2 and hasattr(result[0], "get"):
        err, out = result
        leaves = [np.asarray(x).tolist() for x in jax.tree_util.tree_leaves(out)] if not hasattr(out, "_value") \
            else [np.asarray(out).tolist()]
        return f"error={err.get()!r} out={leaves}"
    return f"returned {np.asarray(result).tolist() if result is not None else None}"


def _user_cases(lib, jnp, ck):
    lax = lib.lax
    A = jnp.array

    def positive(x):
        ck.check(x > 0, "x must be positive, got {}", x)
        return x * 2

    def two(x):
        ck.check(x > 5, "first")
        ck.check(x > 0, "second {}", x)
        return x

    def branches(x):
        return lax.cond(x > 0, lambda x: (ck.check(x < 10, "big {}", x), x)[1],
                        lambda x: (ck.check(x > -5, "too small {}", x), x)[1], x)

    def switch(i, x):
        return lax.switch(i, [lambda x: x, lambda x: (ck.check(x > 0, "b1"), x)[1],
                              lambda x: (ck.check(x > 0, "b2 {}", x), x + 1)[1]], x)

    def scan(xs):
        def body(c, x):
            ck.check(x < 3, "bad x {}", x)
            ck.check(x < 2, "bad2 x {}", x)
            return c + x, x * 2
        return lax.scan(body, 0.0, xs)

    def scan_two_types(xs):
        def body(c, x):
            ck.check(x < 3, "bad x {}", x)
            ck.check(x < 2, "bad2 x {} {}", x, x)
            return c + x, None
        return lax.scan(body, 0.0, xs)

    def while_body(x):
        def body(c):
            ck.check(c < 3, "bad c {}", c)
            return c + 1
        return lax.while_loop(lambda c: c < 10, body, x)

    def while_cond(x):
        def cond(c):
            ck.check(c < 3, "cond c {}", c)
            return c < 10
        return lax.while_loop(cond, lambda c: c + 1, x)

    def fori(n):
        return lax.fori_loop(0, n, lambda i, c: (ck.check(i < 2, "i={i} c={c}", i=i, c=c), c + i)[1], 0)

    chk = lambda f, errors=ck.user_checks: ck.checkify(f, errors=errors)   # noqa: E731
    return {
        "eager": lambda: positive(A(-1.0)),
        "jit_unchecked": lambda: lib.jit(positive)(A(1.0)),
        "checkify": lambda: chk(positive)(A(-1.0)),
        "checkify_ok": lambda: chk(positive)(A(1.0)),
        "jit_checkify": lambda: lib.jit(chk(positive))(A(-3.0)),
        "checkify_jit": lambda: chk(lib.jit(positive))(A(-3.0)),
        "two_sites_first": lambda: chk(two)(A(-1.0)),
        "two_sites_second_only": lambda: chk(two)(A(1.0)) and chk(lambda x: two(x + 5))(A(-6.0)),
        "format": lambda: chk(lambda x: ck.check(x > 0, "m {:.2f} {} {k}", x, jnp.arange(3), k=jnp.int32(7)))(A(-1.0)),
        "format_tree": lambda: chk(lambda x: ck.check(x > 0, "{a[k]} {b[1]}", a={"k": x}, b=[x, x + 1]))(A(-1.0)),
        "python_pred": lambda: chk(lambda x: ck.check(False, "always"))(A(1.0)),
        "debug_check": lambda: chk(lambda x: (ck.debug_check(x > 0, "d {}", x), x)[1])(A(-1.0)),
        "debug_check_jit": lambda: lib.jit(lambda x: (ck.debug_check(x > 0, "d {}", x), x)[1])(A(-1.0)),
        "cond_false_branch": lambda: chk(branches)(A(-6.0)),
        "cond_true_branch": lambda: lib.jit(chk(branches))(A(11.0)),
        "cond_ok": lambda: chk(branches)(A(1.0)),
        "switch_2": lambda: chk(switch)(A(2), A(-1.0)),
        "switch_clamped": lambda: chk(switch)(A(7), A(-1.0)),
        "switch_0": lambda: chk(switch)(A(0), A(-1.0)),
        "scan": lambda: chk(scan)(jnp.arange(6.0)),
        "scan_jit": lambda: lib.jit(chk(scan))(jnp.arange(6.0)),
        "scan_two_types": lambda: chk(scan_two_types)(jnp.arange(6.0)),
        "while_body": lambda: chk(while_body)(A(0)),
        "while_cond": lambda: chk(while_cond)(A(0)),
        "while_cond_first": lambda: chk(while_cond)(A(7)),
        "fori_static": lambda: chk(fori)(5),
        "fori_traced": lambda: lib.jit(chk(fori))(A(5)),
        "vmap_of_checkify": lambda: lib.vmap(chk(positive))(A([1.0, -2.0, -3.0])),
        "vmap_of_checkify_scan": lambda: lib.vmap(chk(scan))(jnp.arange(12.0).reshape(3, 4) - 4),
        "vmap_of_checkify_cond": lambda: lib.vmap(chk(branches))(A([1.0, 11.0, -1.0, -6.0])),
        "checkify_of_vmap": lambda: chk(lib.vmap(positive))(A([1.0, -2.0, -3.0, 4.0])),
        "checkify_of_vmap_cond": lambda: chk(lib.vmap(branches))(A([1.0, 11.0, -1.0, -6.0])),
        "vmap_unchecked": lambda: lib.vmap(positive)(A([1.0, -2.0, -3.0])),
        "grad_of_checkify": lambda: lib.grad(lambda x: chk(positive)(x)[1])(-1.0),
        "checkify_of_grad": lambda: chk(lib.grad(positive))(A(-1.0)),
        "grad_unchecked": lambda: lib.grad(positive)(A(-1.0)),
        "nested_checkify": lambda: chk(lambda x: chk(positive)(x)[1])(A(-1.0)),
        "check_error_rechecked": lambda: chk(lambda x: ck.check_error(chk(positive)(x)[0]))(A(-1.0)),
        "bad_pred": lambda: ck.check(jnp.array([True, False]), "m"),
        "bad_pred_traced": lambda: chk(lambda x: ck.check(x > 0, "m"))(jnp.ones(3)),
        "bad_fmt": lambda: ck.check(False, "m {}", 1.0),
        "bad_check_error": lambda: ck.check_error(3),
    }


def _automatic_cases(lib, jnp, ck):
    lax = lib.lax
    A = jnp.array
    chk = ck.checkify
    return {
        "nan_log": lambda: chk(jnp.log, errors=ck.nan_checks)(A(-1.0)),
        "nan_sin_inf": lambda: chk(jnp.sin, errors=ck.float_checks)(A(np.inf)),
        "nan_in": lambda: chk(lambda x: x + 1, errors=ck.nan_checks)(A(np.nan)),
        "nan_grad": lambda: chk(lib.grad(jnp.sqrt), errors=ck.nan_checks)(A(-1.0)),
        "nan_jit": lambda: lib.jit(chk(lib.jit(lambda x: jnp.sqrt(x) * 2), errors=ck.nan_checks))(A(-1.0)),
        "nan_off": lambda: chk(jnp.log)(A(-1.0)),
        "div_int": lambda: chk(lambda x, y: x // y, errors=ck.div_checks)(A(1), A(0)),
        "div_float": lambda: chk(lambda x, y: x / y, errors=ck.all_checks)(A(0.0), A(0.0)),
        "div_ok": lambda: chk(lambda x, y: x // y, errors=ck.div_checks)(A(1), A(2)),
        "oob_index": lambda: chk(lambda x, i: x[i], errors=ck.index_checks)(jnp.arange(3), A(5)),
        "oob_negative": lambda: chk(lambda x, i: x[i], errors=ck.index_checks)(jnp.arange(3), A(-5)),
        "oob_gather": lambda: chk(lambda x, i: x[i], errors=ck.index_checks)(jnp.ones((3, 4)), A([1, 7])),
        "oob_dynamic_slice": lambda: chk(lambda x, i: lax.dynamic_slice(x, (i,), (2,)),
                                         errors=ck.index_checks)(jnp.arange(3), A(2)),
        "oob_dus": lambda: chk(lambda x, i: lax.dynamic_update_slice(x, jnp.ones(2), (i,)),
                               errors=ck.index_checks)(jnp.ones(3), A(2)),
        "oob_scatter": lambda: chk(lambda x, i: x.at[i].set(1.0), errors=ck.index_checks)(jnp.ones(3), A(5)),
        "oob_ok": lambda: chk(lambda x, i: x[i], errors=ck.index_checks)(jnp.arange(3), A(2)),
        "user_before_nan": lambda: chk(lambda x: (jnp.log(x), ck.check(x > 0, "m"))[0],
                                       errors=ck.all_checks)(A(-1.0)),
        "nan_in_scan": lambda: chk(lambda xs: lax.scan(lambda c, x: (c + jnp.log(x), None), 0.0, xs),
                                   errors=ck.nan_checks)(A([1.0, -1.0, 2.0])),
        "nan_in_vmap": lambda: lib.vmap(chk(jnp.log, errors=ck.nan_checks))(A([1.0, -1.0])),
    }


def _run(cases_of, name):
    out = {}
    for lib_name, (lib, jnp, ck) in LIBS.items():
        out[lib_name] = _outcome(cases_of(lib, jnp, ck)[name])
    return out["jax"], out["numjax"]


def _normalize(text):
    # Exception modules differ (jax._src.checkify vs numjax.experimental.checkify_errors).
    return text.replace("JitTracer", "Tracer")


@pytest.mark.parametrize("name", list(_user_cases(nj, njnp, nj.experimental.checkify)))
def test_user_checks_match_jax(name):
    want, got = _run(_user_cases, name)
    assert _normalize(got) == _normalize(want)


@pytest.mark.parametrize("name", list(_automatic_cases(nj, njnp, nj.experimental.checkify)))
def test_automatic_checks_match_jax(name):
    want, got = _run(_automatic_cases, name)
    assert got == want
