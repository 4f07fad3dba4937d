"""Host callbacks print and compute exactly as real JAX's: jax.debug.print output (eagerly, and
ordered prints under jit), pure_callback values under jit and every vmap_method, io_callback,
and the errors of each (captured stdout compared line for line)."""
import contextlib
import io
import re

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.experimental  # noqa: E402
import jax.numpy as jjnp  # noqa: E402

import numjax as nj  # noqa: E402
import numjax.experimental  # noqa: E402,F401
import numjax.numpy as njnp  # noqa: E402

jax.config.update("jax_platform_name", "cpu")


def _print_program(lib, jnp):
    x = jnp.array([1.5, 2.25, 3.0])
    lib.debug.print("x={x}", x=x)
    lib.debug.print("pos {} {}", x, 2)
    lib.debug.print("fmt {x:.3f}", x=x[0])
    lib.debug.print("nofmt", x, skip_format_check=True)
    lib.debug.print("sum={s} i={i}", s=x.sum(), i=jnp.arange(3))
    lib.debug.print("big {}", jnp.arange(2000.))
    lib.debug.print("third {} {}", jnp.float32(1) / 3, jnp.array([True, False]))
    lib.debug.print(ordered=True)("two-call {a}", a=jnp.ones(2))
    with np.printoptions(precision=2):
        lib.debug.print("prec {}", jnp.array([1 / 3, 2 / 3]))
        lib.jit(lambda v: lib.debug.print("jprec {}", v))(jnp.array([1 / 3, 2 / 3]))

    def ordered(v):
        for i in range(3):
            lib.debug.print("o{} {}", i, v + i, ordered=True)
        return v
    lib.jit(ordered)(x)
    lib.jit(lambda: lib.debug.print("jit {} {} {s}", jnp.float32(1) / 3, jnp.int32(4), s="str"))()
    lib.vmap(lambda r: lib.debug.print("r={}", r))(jnp.arange(6.).reshape(2, 3))
    lib.jit(lib.vmap(lambda r: lib.debug.print("jr={}", r)))(jnp.arange(6.).reshape(2, 3))
    sq = lambda v: (lib.debug.print("g {}", v), v ** 2)[1].sum()    # noqa: E731
    print(lib.grad(sq)(x), lib.jit(lib.grad(sq))(x), lib.grad(lib.jit(sq))(x))

    def scan_body(c, t):
        lib.debug.print("step {} {}", t, c, ordered=True)
        return c + t, c
    print(lib.jit(lambda c: lib.lax.scan(scan_body, c, jnp.arange(3.)))(1.0))

    def while_body(c):
        lib.debug.print("w {}", c)
        return c + 1
    print(lib.jit(lambda c: lib.lax.while_loop(lambda c: c < 3, while_body, c))(0))
    for bad in [lambda: lib.debug.print("{x}", y=x), lambda: lib.debug.print("{}", x, x),
                lambda: lib.debug.print("{x}", x=x, y=2)]:
        try:
            bad()
        except Exception as e:
            print(type(e).__name__, e)


def _callback_program(lib, jnp):
    x = jnp.array([1.5, 2.25, 3.0])
    pf = lambda v: lib.pure_callback(np.sin, lib.ShapeDtypeStruct(v.shape, v.dtype), v)  # noqa: E731
    print(repr(pf(jnp.arange(3.))), repr(lib.jit(pf)(jnp.arange(3.))))
    tree = lambda v: lib.pure_callback(  # noqa: E731
        lambda a, b: {"s": a + b, "p": (a * b).astype(np.int32)},
        {"s": lib.ShapeDtypeStruct((3,), jnp.float32), "p": lib.ShapeDtypeStruct((3,), jnp.int32)}, v, b=v)
    print(tree(x), lib.jit(tree)(x))
    sc = lambda v: lib.pure_callback(lambda a: np.float32(a) * 3, lib.ShapeDtypeStruct((), jnp.float32), v)  # noqa
    print(repr(lib.jit(lambda v: sc(v) + 1)(2.0)))

    def show(a, b):
        print("callback got", a.shape, b.shape)
        return a + b
    for method in ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all", "legacy_vectorized"]:
        vf = lambda a, b: lib.pure_callback(show, lib.ShapeDtypeStruct(a.shape, a.dtype), a, b,  # noqa: E731
                                            vmap_method=method)
        print(method, lib.vmap(vf, in_axes=(0, None))(jnp.arange(6.).reshape(2, 3), jnp.ones(3)))
        print(method, lib.jit(lib.vmap(vf, in_axes=(1, None)))(jnp.arange(6.).reshape(3, 2), jnp.ones(3)))
    for bad in [lambda: lib.vmap(pf)(jnp.ones((2, 3))), lambda: lib.grad(lambda v: pf(v).sum())(jnp.ones(3)),
                lambda: lib.pure_callback(np.sin, lib.ShapeDtypeStruct((3,), jnp.float32), x, vmap_method="x"),
                lambda: lib.pure_callback(np.sin, lib.ShapeDtypeStruct((3,), jnp.float64), x),
                lambda: lib.jvp(pf, (x,), (x,))]:
        try:
            bad()
        except Exception as e:
            print(type(e).__name__, e)
    for result in [lambda v: np.zeros((2,), np.float32), lambda v: np.zeros((3,), np.int32), lambda v: (v, v)]:
        bad = lambda v: lib.pure_callback(result, lib.ShapeDtypeStruct((3,), jnp.float32), v)  # noqa: E731
        for fn in (bad, lib.jit(bad)):
            try:
                fn(x)
            except Exception as e:
                lines = str(e).strip().splitlines()
                print(type(e).__name__, lines[0], "|", lines[-1])
    print(lib.pure_callback(lambda v: np.zeros((3,)), lib.ShapeDtypeStruct((3,), jnp.float32), x).dtype)

    log = []

    def record(v):
        log.append(float(v))
        return np.float32(len(log))
    io_cb = lib.experimental.io_callback

    def h(v):
        a = io_cb(record, lib.ShapeDtypeStruct((), jnp.float32), v, ordered=True)
        io_cb(record, lib.ShapeDtypeStruct((), jnp.float32), v + 1, ordered=True)
        return a
    print(h(1.0), lib.jit(h)(10.0), log)
    print(lib.vmap(lambda v: io_cb(record, lib.ShapeDtypeStruct((), jnp.float32), v))(jnp.arange(3.)), log)
    for bad in [lambda: lib.vmap(h)(jnp.arange(2.)), lambda: lib.grad(h)(1.0)]:
        try:
            bad()
        except Exception as e:
            print(type(e).__name__, e)


def _jaxpr_program(lib, jnp):
    def cb(v):
        return v
    print(lib.make_jaxpr(lambda v: lib.pure_callback(cb, lib.ShapeDtypeStruct((), jnp.float32), v))(1.))
    print(lib.make_jaxpr(lambda v: lib.experimental.io_callback(
        cb, lib.ShapeDtypeStruct((), jnp.float32), v, ordered=True))(1.))
    print(lib.make_jaxpr(lambda v: lib.debug.print("{v} {s}", v=v, s="s"))(1.))
    print(lib.make_jaxpr(lib.vmap(lambda v: lib.pure_callback(
        cb, lib.ShapeDtypeStruct((), jnp.float32), v, vmap_method="expand_dims")))(jnp.ones(2)))


def _stdout(program, lib, jnp):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        program(lib, jnp)
    return buf.getvalue()


def _same_lines(program):
    ours, theirs = _stdout(program, nj, njnp), _stdout(program, jax, jjnp)
    assert ours.splitlines() == theirs.splitlines()


def test_debug_print_output_matches_jax():
    _same_lines(_print_program)


def test_pure_and_io_callbacks_match_jax():
    ours = _stdout(_callback_program, nj, njnp)
    theirs = _stdout(_callback_program, jax, jjnp)
    # JAX's Array class is ArrayImpl; the printed values, errors and call order are the same.
    assert ours.splitlines() == theirs.splitlines()


def test_callback_jaxprs_print_as_jax():
    ours, theirs = _stdout(_jaxpr_program, nj, njnp), _stdout(_jaxpr_program, jax, jjnp)
    assert ours == theirs
