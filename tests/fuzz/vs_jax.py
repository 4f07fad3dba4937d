"""The fuzz programs under real JAX: numjax must agree with it node by node.

Used by tests/compat/test_fuzz_vs_jax.py (JAX installed).  Each program runs in JAX op by
op (not under ``jax.jit``, whose algebraic simplifier rewrites some corner cases); for
every node

* numjax's eager result type equals JAX's (dtype, weak type, shape);
* numjax's eager op on JAX's operand values equals JAX's value: integers and bools
  exactly, floats bit for bit for IEEE-exact ops and within 2 ulps for transcendentals,
  order-dependent nodes within the reference's rounding bound; a float subnormal that
  JAX flushed to zero (XLA's CPU backend does) matches numjax's unflushed one;
* a program that raises in JAX raises the same exception class in numjax.

Failures that show the fuzzer's own expectations wrong (its type rule or reference
disagreeing with JAX) say so: they are fuzzer bugs, not numjax bugs.
"""
import dataclasses

import numpy as np

from expect import Expect, flush_subnormals, mismatches, ulp
from jax_types import np_dtype
from oracles import Checker, FuzzFailure, _operand_views, exc_kind, run_program


def check_case_vs_jax(case, nj, jx):
    ck = Checker(case, nj)
    for k, p in enumerate(case.programs):
        mine = run_program(p, case.values[k], nj)
        # JAX eagerly (op by op): under jit, XLA's algebraic simplifier changes results
        # numpy cannot model (float(b) * -0.5 gives +0.0, int32 -> uint32 -> float64
        # converts fold into one).
        theirs = run_program(p, case.values[k], jx)
        if p.raises is not None or isinstance(mine, Exception):
            _check_error(ck, k, mine, theirs)
            continue
        if isinstance(theirs, Exception):
            ck.fail(k, None, f"JAX raised {type(theirs).__name__}: {theirs}; numjax did not "
                             "(and the fuzzer expected no error: FUZZER BUG or numjax bug)")
        _check_program(ck, k, mine, theirs, nj)


def _check_error(ck, k, mine, theirs):
    p = ck.case.programs[k]
    if isinstance(theirs, Exception) != isinstance(mine, Exception):
        who = "numjax" if isinstance(mine, Exception) else "JAX"
        err = mine if isinstance(mine, Exception) else theirs
        ck.fail(k, None, f"only {who} raised: {type(err).__name__}: {err}")
    if isinstance(theirs, Exception):
        if exc_kind(theirs) is not exc_kind(mine):
            ck.fail(k, None, f"numjax raised {type(mine).__name__}: {mine}; JAX raised "
                             f"{type(theirs).__name__}: {theirs}")
        if p.raises is not None and exc_kind(theirs) is not p.raises:
            ck.fail(k, None, f"FUZZER BUG: expected {p.raises.__name__}, JAX raised "
                             f"{type(theirs).__name__}: {theirs}")
    elif p.raises is not None:
        ck.fail(k, None, f"FUZZER BUG: expected {p.raises.__name__}, JAX did not raise")


def _type_of(x):
    a = np.asarray(x)
    return a.dtype.name, bool(getattr(x, "weak_type", False)), tuple(a.shape)


def _check_program(ck, k, mine, theirs, nj):
    p = ck.case.programs[k]
    first = len(p.inputs)
    for j, node in enumerate(p.nodes):
        i = first + j
        t_jax, t_nj = _type_of(theirs[j]), _type_of(mine[j])
        if t_nj != t_jax:
            ck.fail(k, i, f"numjax type {_fmt(t_nj)}, JAX's is {_fmt(t_jax)}")
        want = (np_dtype(node.ty.dtype).name, node.ty.weak, node.ty.shape)
        if want != t_jax:
            ck.fail(k, i, f"FUZZER BUG: type rule says {_fmt(want)}, JAX gives {_fmt(t_jax)}")
    for j, node in enumerate(p.nodes):
        i = first + j
        np_ops, nj_ops = _operand_views(nj, p, ck.case.values[k], theirs, node, None, None)
        got_jax = np.asarray(theirs[j])
        ref = ck.reference(k, i, np_ops)
        if _bad(got_jax, ref, node):
            ck.check_value(k, i, got_jax, _relaxed(ref, node), "FUZZER BUG? JAX",
                           "the fuzzer's numpy reference (on JAX's operands)")
        if node.tol == "bound":
            expect = ref
        else:
            try:
                expect = np.asarray(p.node_function(node, nj.namespace)(*nj_ops))
            except Exception as e:   # noqa: BLE001
                ck.fail(k, i, f"numjax raised {type(e).__name__} on JAX's operands: {e}")
            if isinstance(ref, Expect):
                # Two approximations of one function: each within the reference's ulps;
                # and the reference's alternative (e.g. XLA's select for float(b) * y).
                expect = Expect(expect, ulps=2 * np.asarray(ref.ulps), atol=ref.atol,
                                alt=ref.alt, unknown=ref.unknown)
        ck.check_value(k, i, got_jax, _relaxed(expect, node), "JAX",
                       "numjax's eager op (on JAX's operands)")


def _fmt(t):
    dtype, weak, shape = t
    return f"{'~' if weak else ''}{dtype}{list(shape)}"


def _relaxed(expect, node):
    """``expect`` widened by what JAX's CPU backend may legitimately do differently: flush
    subnormal results to zero, round into the 16-bit subnormals one step off, divide via a
    reciprocal (1 ulp), and (transcendentals) differ by 2 ulps."""
    if not isinstance(expect, Expect):
        expect = Expect(np.asarray(expect))
    dtype = node.ty.dtype
    alt = flush_subnormals(np.asarray(expect.value), dtype)
    # XLA divides by a broadcast scalar with a reciprocal: 1 ulp even for IEEE-exact ops.
    ulps = np.maximum(expect.ulps, 2 if node.tol == "ulps" else 1)
    # XLA rounds a float32 result into the float16 subnormal range one step off at times.
    atol = expect.atol + (ulp(0.0, dtype) if dtype in ("float16", "bfloat16") else 0.0)
    return dataclasses.replace(expect, ulps=ulps, atol=atol,
                               alt=alt if expect.alt is None else expect.alt)


def _bad(got, ref, node):
    return bool(np.any(mismatches(got, _relaxed(ref, node), node.ty.dtype)))


__all__ = ["check_case_vs_jax", "FuzzFailure"]
