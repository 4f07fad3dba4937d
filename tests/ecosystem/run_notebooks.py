"""Run JAX's documentation notebooks cell by cell on numjax and on real JAX; compare.

    python tests/ecosystem/run_notebooks.py DOCS_DIR [names...]     # both engines, a report
    python tests/ecosystem/run_notebooks.py DOCS_DIR --engine numjax  # numjax only (baseline kept)

DOCS_DIR holds the MyST sources of JAX's docs (``thinking_in_jax.md``, ...: the ``docs/`` and
``docs/notebooks/`` files of the jax repository; they are not part of numjax).  Each notebook
runs in one fresh process per engine, its code cells in order in one namespace, as Jupyter
would: a cell's output is what it prints plus the ``repr`` of its last expression, or the
class of the exception it raised.  ``%timeit stmt`` runs ``stmt`` once (so later cells see
its effects) and prints nothing; other magics are skipped (see ``code_cells``).

A cell *matches* when numjax's output equals JAX's with numbers compared at a relative
tolerance of 1e-4 (float32 results may differ in the last printed digits), with addresses,
timings and the object ids in a jaxpr ``Var``'s repr masked.  Whitespace is not compared:
NumPy pads columns to the widest printed number, so a last-digit difference moves spaces and
line breaks.  The same leniency hides one real, cosmetic difference: JAX wraps a jaxpr header
with many binders (``{ lambda ; a:i32[] ... j:i32[]. let``) over lines, numjax prints it on
one line.  ``type(x)`` of a numjax array names numjax's class; ``_CLASS_EQUIVALENTS`` reads it
as JAX's ``ArrayImpl``.  Nothing else is masked: exception classes, the order of printed
lines and every word must agree.  Issue 10 asks that >= 95 % of the cells match.
"""
import argparse
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_NAMES = (
    "thinking_in_jax", "jit-compilation", "automatic-differentiation", "autodiff_cookbook",
    "control-flow", "pytrees", "random-numbers", "Custom_derivative_rules_for_Python_code",
    "gradient-checkpointing", "external-callbacks", "debugging", "convolutions",
    "complex-differentiation", "jaxpr", "automatic-vectorization", "key-concepts",
    "stateful-computations", "jacobian-vector-products", "custom_pytrees", "higher-order",
    "Common_Gotchas_in_JAX", "autodiff_remat", "vmapped_log_probs",
    "Writing_custom_interpreters_in_Jax",
)
# Not run: Neural_Network_and_Data_Loading installs and downloads (``!pip``, torchvision MNIST).


# ---------------------------------------------------------------- reading MyST

_FENCE = re.compile(r"^```\{code-cell\}.*$")
_TAGS = re.compile(r"^:?tags:\s*\[(.*)\]")
# ``%timeit [-n N -r R ...] stmt`` and ``%time stmt``: the options IPython's timers take.
_TIMER = re.compile(r"^(\s*)%(timeit|time)((?:\s+-[nrp]\s*\d+|\s+-[tcqo])*)\s+(.*)$")


def _python_line(line):
    """A notebook line as plain Python.  A timer runs its statement once (later cells see its
    effects, as in Jupyter; the timing it prints is not compared); other magics and shell
    escapes have no Python effect here and become ``pass``."""
    timer = _TIMER.match(line)
    if timer:
        indent, kind, _, stmt = timer.groups()
        # ``%timeit`` shows no value; ``%time expr`` shows the value of ``expr``.
        return indent + stmt + ("; pass" if kind == "timeit" else "")
    if line.lstrip().startswith(("%", "!")):
        return line[:len(line) - len(line.lstrip())] + "pass  # " + line.lstrip()
    return line


def code_cells(text):
    """The source of each executed ``{code-cell}`` block, as Python.

    Options (a ``---`` YAML block or ``:key: value`` lines) are read for their tags: a cell
    tagged ``skip-execution`` is not run by the docs build either, so it is left out.  A
    ``%%timeit``/``%%time`` cell runs its body once; other cell magics are not Python and are
    left out.  Line magics are rewritten by ``_python_line``.
    """
    cells, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        if not _FENCE.match(lines[i]):
            i += 1
            continue
        i += 1
        options = []
        if i < len(lines) and lines[i].strip() == "---":         # YAML options block
            i += 1
            while i < len(lines) and lines[i].strip() != "---":
                options.append(lines[i].strip())
                i += 1
            i += 1
        while i < len(lines) and lines[i].startswith(":"):       # `:tags: [...]` options
            options.append(lines[i].strip())
            i += 1
        body = []
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1
        tags = {t.strip().strip("'\"") for o in options for m in [_TAGS.match(o)] if m
                for t in m.group(1).split(",")}
        if "skip-execution" in tags:
            continue
        while body and not body[0].strip():
            body.pop(0)
        if body and body[0].startswith("%%"):
            if body[0].split()[0] not in ("%%timeit", "%%time"):
                continue                                          # a cell magic: not Python
            body = body[1:]
        cells.append("\n".join(_python_line(l) for l in body))
    return cells


# ---------------------------------------------------------------- running (child process)

def _ends_with_semicolon(src):
    code = [l.split("#")[0].rstrip() for l in src.splitlines()]
    code = [l for l in code if l]
    return bool(code) and code[-1].endswith(";")


def run_cells(cells):
    import ast
    namespace = {"__name__": "__main__"}
    results = []
    for src in cells:
        buf = io.StringIO()
        exc = None
        try:
            tree = ast.parse(src)
            last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            if last is not None and _ends_with_semicolon(src):
                last = None                           # IPython shows no value after a `;`
            if last is not None:
                tree.body = tree.body[:-1]
            with contextlib.redirect_stdout(buf):
                exec(compile(tree, "<cell>", "exec"), namespace)
                if last is not None:
                    value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)
                    if value is not None:
                        print(repr(value))
        except BaseException as err:  # noqa: BLE001  (a cell's error is its output)
            if isinstance(err, KeyboardInterrupt):
                raise
            exc = type(err).__name__
            if os.environ.get("NOTEBOOK_TRACEBACKS"):
                traceback.print_exc()
        results.append({"out": buf.getvalue(), "exc": exc})
    return results


def child(path):
    with open(path) as f:
        cells = code_cells(f.read())
    print("@@CELLS@@" + json.dumps(run_cells(cells)))


# ---------------------------------------------------------------- comparing

_NUM = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_MASKS = [(re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
          (re.compile(r"\bid=\d+"), "id=?"),                 # a Var's repr: its object's id
          (re.compile(r"\d+(?:\.\d+)?\s*(?:ns|µs|us|ms|s) ± .*"), "<timing>")]


# Where numjax's class plays the part of a JAX class, ``type(x)`` names a different module
# and class for the same behaviour; numjax's name is read as JAX's.  Only whole class reprs
# are rewritten, so a value of another type still differs.
_CLASS_EQUIVALENTS = {
    "<class 'numjax.array.Array'>": "<class 'jaxlib._jax.ArrayImpl'>",
}
_SPACE = re.compile(r"\s+")


def _masked(text):
    for pattern, repl in _MASKS:
        text = pattern.sub(repl, text)
    for numjax_name, jax_name in _CLASS_EQUIVALENTS.items():
        text = text.replace(numjax_name, jax_name)
    return text


def _skeleton(text):
    # NumPy pads each column to its widest printed number and wraps lines by width, so a
    # last-digit difference (within rtol) moves spaces and line breaks: layout is not compared.
    return _SPACE.sub("", _NUM.sub("#", text))


def outputs_match(a, b, rtol=1e-4, atol=1e-6):
    if a["exc"] != b["exc"]:
        return False
    ta, tb = _masked(a["out"]), _masked(b["out"])
    if _skeleton(ta) != _skeleton(tb):
        return False
    if len(_NUM.findall(ta)) != len(_NUM.findall(tb)):
        return False
    for x, y in zip(_NUM.findall(ta), _NUM.findall(tb)):
        fx, fy = float(x), float(y)
        if abs(fx - fy) > atol + rtol * abs(fy):
            return False
    return True


def run_engine(engine, path, timeout):
    prefix = [sys.executable] + (["-m", "numjax"] if engine == "numjax" else [])
    env = dict(os.environ, JAX_PLATFORMS="cpu", MPLBACKEND="Agg")
    with tempfile.TemporaryDirectory() as tmp:
        try:
            proc = subprocess.run(prefix + [os.path.abspath(__file__), "--child", path],
                                  capture_output=True, text=True, timeout=timeout, cwd=tmp,
                                  env=env)
        except subprocess.TimeoutExpired:
            return None, f"timeout after {timeout} s"
    for line in proc.stdout.splitlines():
        if line.startswith("@@CELLS@@"):
            return json.loads(line[len("@@CELLS@@"):]), None
    return None, (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("docs", nargs="?")
    ap.add_argument("names", nargs="*")
    ap.add_argument("--child")
    ap.add_argument("--engine", choices=("both", "numjax"), default="both")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "notebooks.json"))
    ap.add_argument("--verbose", action="store_true", help="print each differing cell")
    args = ap.parse_args()
    if args.child:
        return child(args.child)
    stored = {}
    if os.path.exists(args.out):
        with open(args.out) as f:
            stored = json.load(f)
    total = matched = 0
    for name in args.names or DEFAULT_NAMES:
        path = os.path.join(args.docs, name + ".md")
        if not os.path.exists(path):
            print(f"{name}: not in {args.docs}")
            continue
        entry = stored.get(name, {})
        if args.engine == "both" or "jax" not in entry:
            entry["jax"], entry["jax_error"] = run_engine("jax", path, args.timeout)
        entry["numjax"], entry["numjax_error"] = run_engine("numjax", path, args.timeout)
        stored[name] = entry
        ref, got = entry["jax"] or [], entry["numjax"] or []
        ok = [i for i, r in enumerate(ref) if i < len(got) and outputs_match(got[i], r)]
        total, matched = total + len(ref), matched + len(ok)
        note = entry["numjax_error"] or ""
        print(f"{name}: {len(ok)}/{len(ref)} cells match {note}", flush=True)
        if args.verbose:
            for i, r in enumerate(ref):
                if i not in ok:
                    g = got[i] if i < len(got) else {"out": "<not run>", "exc": None}
                    print(f"  cell {i}: jax {r['exc'] or ''} {r['out'][:300]!r}\n"
                          f"          numjax {g['exc'] or ''} {g['out'][:300]!r}")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out + ".tmp", "w") as f:
        json.dump(stored, f, indent=0, sort_keys=True)
    os.replace(args.out + ".tmp", args.out)
    print(f"all: {matched}/{total} cells match ({100 * matched / max(1, total):.1f} %)")


if __name__ == "__main__":
    main()
