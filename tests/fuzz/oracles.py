"""Running fuzz programs on every path and comparing, node by node.

Paths: eager numjax, ``jit`` (several programs compiled as one function, to share the
compile), ``vmap`` over a leading batch axis, and (tests/compat) real JAX.  Every node of
every program is an output, and each node is checked on the path's own operand values, so
a rounding difference upstream can never be mistaken for a bug downstream:

* type: dtype, weak type and shape are JAX's (:mod:`jax_types`) on every path;
* numpy oracle: the node's value matches its reference (:mod:`reference`);
* eager vs jit / vmap: the eager op applied to the jit (or vmap) operands gives the same
  bits (NaN == NaN, -0.0 != +0.0); order-dependent nodes (sums, dots) are instead held to
  the reference's rounding bound;
* errors: a program that raises does so with JAX's exception class on every path.
"""
import dataclasses
import os
import re
import tempfile
import warnings

import numpy as np

from expect import Expect, mismatches
from jax_types import np_dtype
from program import repro_text


class FuzzFailure(AssertionError):
    pass


@dataclasses.dataclass
class Case:
    """Programs with their inputs, and batched inputs for vmap."""
    x64: bool
    programs: list
    values: list          # per program: tuple of input values
    batch: int = 0
    in_axes: list = None  # per program: tuple of 0/None
    batched: list = None  # per program: tuple of batched input values

    def __repr__(self):
        parts = [f"Case(x64={self.x64}, batch={self.batch})"]
        for k, (p, v) in enumerate(zip(self.programs, self.values)):
            parts.append(repro_text(p, v, f"# program {k}; vmap in_axes="
                                    f"{self.in_axes[k] if self.in_axes else None}"))
        return "\n".join(parts)

    def _repr_pretty_(self, printer, cycle):   # hypothesis prints the case with this
        printer.text(repr(self))


class Backend:
    """jnp/lax/jit/vmap of numjax or of real JAX, and how to hand it input values."""

    def __init__(self, name, module, jnp, lax, array_cls=None):
        self.name, self.module, self.jnp, self.lax = name, module, jnp, lax
        self.namespace = {"jnp": jnp, "lax": lax, "jax": module, "np": np}
        self.array_cls = array_cls

    def arg(self, v):
        return v if isinstance(v, (bool, int, float)) else self.jnp.asarray(v)

    def wrap(self, value, weak):
        """A numjax Array of ``value`` with weak type ``weak`` (to rerun a node eagerly)."""
        return self.array_cls(np.asarray(value), weak)


def exc_kind(e):
    """The builtin exception class an error is (TypeError, ValueError, ...)."""
    for cls in type(e).__mro__:
        if cls.__module__ == "builtins":
            return cls
    return type(e)


def describe(x, limit=12):
    a = np.asarray(x)
    flat = a.reshape(-1)[:limit]
    more = "" if a.size <= limit else f" ... ({a.size} elements)"
    return f"{a.dtype.name}{list(a.shape)} {flat.tolist()}{more}"


# ---------------------------------------------------------------- running


def call_quietly(fn, *args):
    """``fn(*args)``; a jit that fell back to eager evaluation is an error."""
    from numjax.errors import EagerFallbackWarning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args)
    fallback = [w for w in caught if issubclass(w.category, EagerFallbackWarning)]
    if fallback:
        raise FuzzFailure(f"jit fell back to eager evaluation: {fallback[0].message}")
    return out


def run_program(program, values, backend, transform=None):
    """Every node's value (list), or the exception raised."""
    fn = program.function(backend.namespace, return_all=True)
    if transform is not None:
        fn = transform(fn)
    try:
        return list(call_quietly(fn, *[backend.arg(v) for v in values]))
    except FuzzFailure:
        raise
    except Exception as e:   # noqa: BLE001 - compared with JAX's class below
        return e


def run_bundle(case, backend, which):
    """jit (or vmap) of all non-raising programs as one function; per program its outputs."""
    progs = [k for k, p in enumerate(case.programs) if p.raises is None]
    fns = [case.programs[k].function(backend.namespace, return_all=True) for k in progs]
    values = case.batched if which == "vmap" else case.values
    sizes = [len(values[k]) for k in progs]

    def bundle(*args):
        outs, i = [], 0
        for fn, n in zip(fns, sizes):
            outs.append(fn(*args[i:i + n]))
            i += n
        return outs
    flat = [backend.arg(v) for k in progs for v in values[k]]
    if which == "jit":
        transformed = backend.module.jit(bundle)
    else:
        axes = [a for k in progs for a in case.in_axes[k]]
        transformed = backend.module.vmap(bundle, in_axes=axes)
    result = {}
    try:
        outs = call_quietly(transformed, *flat)
    except FuzzFailure:
        raise
    except Exception as e:   # noqa: BLE001
        # Find the program that raised: run each on its own.
        for k in progs:
            one = run_program(case.programs[k], values[k], backend,
                              transform=_single_transform(backend, which, case.in_axes, k))
            result[k] = one
        if all(not isinstance(r, Exception) for r in result.values()):
            raise FuzzFailure(f"{which} of the bundle raised {type(e).__name__}: {e}, "
                              "though each program alone did not") from e
        return result
    for k, out in zip(progs, outs):
        result[k] = list(out)
    return result


def _single_transform(backend, which, in_axes, k):
    if which == "jit":
        return backend.module.jit
    return lambda fn: backend.module.vmap(fn, in_axes=tuple(in_axes[k]))


# ---------------------------------------------------------------- checking


class Checker:
    """Collects the first failure of a case, with a pasteable repro."""

    def __init__(self, case, numjax):
        self.case, self.numjax = case, numjax

    def fail(self, k, node_index, what):
        p, v = self.case.programs[k], self.case.values[k]
        where = "" if node_index is None else \
            f" at {p.name(node_index)} = {p.expression(p.node_at(node_index))}"
        header = (f"# {what}\n# program {k} of the case{where}; x64={self.case.x64}; "
                  f"vmap batch={self.case.batch}, in_axes="
                  f"{self.case.in_axes[k] if self.case.in_axes else None}")
        raise FuzzFailure(repro_text(p, v, header))

    def check_type(self, k, i, got, path):
        node = self.case.programs[k].node_at(i)
        ty = node.ty
        shape = tuple(np.shape(got))
        want_shape = ((self.case.batch,) if path.startswith("vmap") else ()) + ty.shape
        dtype = np.asarray(got).dtype.name
        weak = bool(getattr(got, "weak_type", False))
        if (dtype, weak, shape) != (np_dtype(ty.dtype).name, ty.weak, want_shape):
            self.fail(k, i, f"{path}: type {'~' if weak else ''}{dtype}{list(shape)}, "
                            f"JAX's is {'~' if ty.weak else ''}{ty.dtype}{list(want_shape)}")

    def check_value(self, k, i, got, expect, path, against):
        node = self.case.programs[k].node_at(i)
        bad = mismatches(np.asarray(got), expect, node.ty.dtype)
        if np.any(bad):
            want = expect.value if isinstance(expect, Expect) else expect
            first = tuple(int(j) for j in np.argwhere(bad)[0])
            self.fail(k, i, f"{path}: value differs from {against} at {first}"
                            f" ({int(np.sum(bad))} of {np.size(bad)} elements)\n"
                            f"#   got:  {describe(got)}\n#   want: {describe(want)}")

    def reference(self, k, i, operands):
        node = self.case.programs[k].node_at(i)
        try:
            return node.ref(*[np.asarray(o) if not isinstance(o, (bool, int, float)) else o
                              for o in operands])
        except Exception as e:   # noqa: BLE001
            self.fail(k, i, f"fuzzer reference raised {type(e).__name__}: {e}")


def operands_of(program, values, outs, node):
    first = len(program.inputs)
    return [values[a] if a < first else outs[a - first] for a in node.args]


def check_errors(ck, k, got, path):
    p = ck.case.programs[k]
    want = p.raises
    if want is None:
        if isinstance(got, Exception):
            ck.fail(k, None, f"{path} raised {type(got).__name__}: {got} (JAX does not raise)")
        return False
    if not isinstance(got, Exception):
        ck.fail(k, None, f"{path} did not raise; JAX raises {want.__name__}")
    if exc_kind(got) is not want:
        ck.fail(k, None, f"{path} raised {type(got).__name__}: {got}; JAX raises "
                         f"{want.__name__}")
    return True


def check_eager(ck, k, outs):
    """Types and numpy-oracle values of eagerly computed nodes."""
    p, values = ck.case.programs[k], ck.case.values[k]
    first = len(p.inputs)
    for j, node in enumerate(p.nodes):
        ck.check_type(k, first + j, outs[j], "eager")
        expect = ck.reference(k, first + j, operands_of(p, values, outs, node))
        ck.check_value(k, first + j, outs[j], expect, "eager", "the numpy reference")


def check_transformed(ck, k, outs, path, eager_backend, batch_index=None):
    """``path`` (jit/vmap/jax) node values against the eager op on the same operands (exact
    for elementwise and structural nodes) or the reference (order-dependent nodes)."""
    p = ck.case.programs[k]
    batched = batch_index is not None
    values = ck.case.batched[k] if batched else ck.case.values[k]
    first = len(p.inputs)
    if batch_index in (None, 0):
        for j in range(len(p.nodes)):
            ck.check_type(k, first + j, outs[j], path)
    for j, node in enumerate(p.nodes):
        got = np.asarray(outs[j])[batch_index] if batched else outs[j]
        np_ops, eager_ops = _operand_views(eager_backend, p, values, outs, node, batch_index,
                                           ck.case.in_axes[k] if batched else None)
        if batched and node.vmap_unspecified is not None and node.vmap_unspecified(*np_ops):
            continue
        if node.tol == "bound":
            expect, against = ck.reference(k, first + j, np_ops), "the numpy reference"
        else:
            eager_fn = p.node_function(node, eager_backend.namespace)
            try:
                expect, against = np.asarray(eager_fn(*eager_ops)), "the eager op"
            except Exception as e:   # noqa: BLE001
                ck.fail(k, first + j, f"eager op on the {path} operands raised "
                                      f"{type(e).__name__}: {e}")
        where = path if not batched else f"{path}[{batch_index}]"
        ck.check_value(k, first + j, got, expect, where, against)


def _operand_views(backend, program, values, outs, node, b, in_axes):
    """A node's operands as numpy values and as numjax values (weak types kept), taken from
    a path's inputs and outputs (element ``b`` of the batch for vmap)."""
    first = len(program.inputs)
    np_ops, nj_ops = [], []
    for a in node.args:
        if a < first:
            v = values[a]
            if b is not None and in_axes[a] == 0 and not isinstance(v, (bool, int, float)):
                v = np.asarray(v)[b]
            np_ops.append(v)
            nj_ops.append(backend.arg(v))
        else:
            out = outs[a - first]
            arr = np.asarray(out) if b is None else np.asarray(out)[b]
            np_ops.append(arr)
            nj_ops.append(backend.wrap(arr, bool(getattr(out, "weak_type", False))))
    return np_ops, nj_ops


# ---------------------------------------------------------------- a whole case


LAST_CASE_FILE = os.environ.get("NUMJAX_FUZZ_LAST_CASE") or os.path.join(
    tempfile.gettempdir(), f"numjax-fuzz-last-case-{os.getpid()}.py")


def remember(case):
    """Write the case about to run to LAST_CASE_FILE: if it crashes the process (a segfault
    in compiled code), the repro is there."""
    with open(LAST_CASE_FILE, "w") as f:
        f.write(repr(case) + "\n")


def check_case(case, numjax_backend):
    """Eager (numpy oracle), jit and vmap of every program in ``case``.  A failure under
    jit or vmap says whether the program fails on its own too (programs are compiled
    together, so a bug may need its neighbours: then the whole case is the repro)."""
    remember(case)
    try:
        _check_case(case, numjax_backend)
    except FuzzFailure as e:
        k = _failing_program(str(e))
        if k is None or len(case.programs) == 1:
            raise
        alone = Case(case.x64, [case.programs[k]], [case.values[k]],
                     case.batch if 0 in case.in_axes[k] else 0, [case.in_axes[k]],
                     [case.batched[k]])
        try:
            _check_case(alone, numjax_backend)
        except FuzzFailure:
            raise e from None
        raise FuzzFailure(f"{e}\n# NOTE: this program passes on its own; it fails only "
                          "when compiled with the other programs of the case (listed "
                          "below).") from None


def _failing_program(message):
    match = re.search(r"# program (\d+) of the case", message)
    return int(match.group(1)) if match else None


def _check_case(case, numjax_backend):
    ck = Checker(case, numjax_backend)
    nj = numjax_backend
    for k, p in enumerate(case.programs):
        got = run_program(p, case.values[k], nj)
        if not check_errors(ck, k, got, "eager"):
            check_eager(ck, k, got)
    for which in ("jit", "vmap") if case.batch else ("jit",):
        bundle = run_bundle(case, nj, which)
        for k, p in enumerate(case.programs):
            if p.raises is not None:
                if which == "vmap" and 0 not in case.in_axes[k]:
                    continue   # nothing to batch: vmap itself would refuse the call
                values = case.batched[k] if which == "vmap" else case.values[k]
                got = run_program(p, values, nj, _single_transform(nj, which, case.in_axes, k))
                check_errors(ck, k, got, which)
                continue
            got = bundle[k]
            if check_errors(ck, k, got, which):
                continue
            if which == "jit":
                check_transformed(ck, k, got, "jit", nj)
            else:
                for b in range(case.batch):
                    check_transformed(ck, k, got, "vmap", nj, batch_index=b)
