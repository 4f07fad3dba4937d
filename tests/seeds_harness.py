"""Run the user tutorials in the seeds directory against numjax, cell by cell.

The seed tutorials (notebook and blog exports) print what real JAX printed.
Each one is described below by a table of cells: the line ranges of its code and
of the output printed right after it.  The tutorial's cells run in order in one
namespace in a child process where ``import jax`` (and every ``jax.<sub>``)
imports numjax; each cell's stdout plus the IPython-style display of its last
expression (or ``ErrorType: message`` if it raised) is compared with the output
in the file:

* line breaks count, other whitespace and blank lines do not; numbers compare with float32 tolerance (integers exactly,
  and a float never matches an integer: ``10`` vs ``10.0`` is a dtype difference),
* timing lines (``... ms per loop``, ``0.0088 sec``) and memory addresses are ignored,
* ``%timeit STMT`` runs STMT once (and, like %timeit, displays nothing),
* no cell may make jit fall back to eager evaluation (numjax warns "runs eagerly").

Seed files are found in ``$NUMJAX_SEEDS_DIR``, else ``tests/seeds/``, else
``/work/shared/seeds``.  Each table is pinned to its file by a sha256 prefix so
an edited tutorial fails loudly instead of comparing shifted line ranges.

Command line (from the repository root)::

    python tests/seeds_harness.py                 # every tutorial, report mismatches
    python tests/seeds_harness.py NAME --slow     # one tutorial, including slow cells
    /tmp/jaxvenv/bin/python tests/seeds_harness.py --real-jax   # check the tables against real JAX
"""
from __future__ import annotations

import ast
import contextlib
import dataclasses
import hashlib
import importlib
import importlib.abc
import importlib.util
import io
import json
import linecache
import math
import os
import re
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def seeds_dir():
    for cand in (os.environ.get("NUMJAX_SEEDS_DIR"), REPO / "tests" / "seeds", "/work/shared/seeds"):
        if cand and Path(cand).is_dir():
            return Path(cand)
    return None


# ----------------------------------------------------------------------------- tables


@dataclasses.dataclass(frozen=True)
class Out:
    """Expected output: lines ``first..last`` (1-based, inclusive) of the seed file.

    ``source`` picks what it is compared with: everything the cell printed
    ("all"), only its stdout, or only the display of its last expression.
    ``prefix``: the export truncated this output, so it must only start the actual one.
    """
    first: int
    last: int
    source: str = "all"
    prefix: bool = False


@dataclasses.dataclass(frozen=True)
class Cell:
    name: str
    code: tuple            # (first, last) line numbers of the code
    out: tuple = ()        # Out records; empty: the tutorial shows no output (only must not raise)
    strip: str = ""        # prefix removed from output lines (quickstart puts outputs in '## ' comments)
    reindent: bool = False  # the export lost the indentation of one-line def bodies
    expect_subs: tuple = ()  # (old, new) applied to the expected text, each with a reason in the table
    expect_error: str = ""  # the tutorial says this cell fails; the exception type it must raise
    rtol: float = 1e-5
    atol: float = 1e-6
    skip: str = ""         # reason the cell cannot run at all (pseudo-code, undefined names)
    slow: bool = False     # runs only with --slow (tests marked slow)


@dataclasses.dataclass(frozen=True)
class Tutorial:
    file: str
    sha256: str            # prefix of the seed file's sha256
    cells: tuple
    prelude: str = ""      # imports the export left out


_FD_TOL = dict(rtol=2e-2, atol=1e-3)
# ^ finite differences of float32 losses: (f(x+e) - f(x-e)) / 2e loses about
#   ulp(f)/e of absolute precision (3e-3 for f~3, e=1e-4), so any one-ulp
#   difference in f moves the printed quotient in its third digit.

TUTORIALS = {t.file.rsplit(".", 1)[0]: t for t in [
    Tutorial("jit_vmap_random_pytree_pmap_tutorial.txt", "c5ef9a4a1469", cells=(
        Cell("In [1]", (14, 21), (Out(23, 26),)),
        # The tutorial printed tracers in an older JAX's form; JAX 0.10.2 prints JitTracer(~float32[]).
        Cell("In [2]", (36, 43), (Out(45, 50),),
             expect_subs=(("JitTracer<~float32[]>", "JitTracer(~float32[])"),)),
        Cell("In [3]", (58, 65), (Out(67, 67),)),
        Cell("In [4]", (75, 75), (Out(77, 77),)),
        Cell("In [5]", (89, 94), (Out(97, 97),)),
        Cell("In [6]", (101, 106), (Out(108, 108),)),
        Cell("In [7]", (120, 128), (Out(130, 132),)),
        Cell("In [8]", (135, 145), (Out(147, 149),)),
        Cell("In [9]", (160, 172), (Out(175, 175),)),
        Cell("In [10]", (182, 186), (Out(188, 189),)),
        Cell("In [11]", (199, 209), (Out(212, 212),)),
        Cell("In [12]", (228, 268), (Out(271, 276),), slow=True),
        Cell("In [13]", (292, 304), (Out(306, 306),)),
        Cell("In [14]", (309, 310)),
        Cell("In [15]", (313, 320), (Out(323, 324),)),
        Cell("In [16]", (329, 337), (Out(340, 340),)),
        Cell("In [17]", (346, 348), (Out(350, 351),)),
        Cell("In [18]", (358, 363), (Out(365, 367),)),
        Cell("td_loss", (380, 387), skip="tutorial pseudo-code: value_fn, theta, s_tm1 are never defined"),
        Cell("td_loss_with_stop_gradient", (391, 398),
             skip="tutorial pseudo-code: value_fn, theta, s_tm1 are never defined"),
        Cell("In [19]", (411, 413), (Out(415, 415),)),
        Cell("In [20]", (424, 429), (Out(431, 433),)),
        Cell("In [21]", (441, 452), (Out(454, 458),)),
        Cell("In [22]", (468, 482), (Out(485, 489),)),
        Cell("In [23]", (495, 502), (Out(505, 505),)),
        Cell("In [24]", (512, 530), (Out(533, 546, "stdout", prefix=True), Out(548, 550, "display"))),
        Cell("In [25]", (557, 568), (Out(572, 572),)),
        Cell("In [26]", (575, 582), (Out(584, 587),)),
        Cell("In [27]", (590, 590), (Out(592, 592),)),
        Cell("In [28]", (595, 601), (Out(603, 604),)),
    )),
    # Recorded before JAX 0.5 made partitionable threefry the default: under the
    # old flag real JAX 0.10.2 prints the tutorial's numbers, under the new one not.
    Tutorial("vmap_and_autodiff_tutorial.txt", "53f3d9bebed3",
             prelude="import jax\njax.config.update('jax_threefry_partitionable', False)\n", cells=(
        Cell("convolve", (18, 27), (Out(28, 28),)),
        Cell("stack", (32, 33)),
        Cell("manually_batched", (37, 42), (Out(43, 44),)),
        Cell("manually_vectorized", (52, 57), (Out(58, 59),)),
        Cell("vmap", (67, 68), (Out(69, 70),)),
        Cell("vmap_in_axes_1", (76, 79), (Out(80, 82),)),
        Cell("vmap_in_axes_none", (86, 87), (Out(88, 89),)),
        Cell("jit_of_vmap", (95, 96), (Out(97, 98),)),
        Cell("grad_tanh", (120, 124), (Out(125, 125),)),
        Cell("grad_grad_tanh", (131, 132), (Out(133, 134),)),
        Cell("dfdx", (140, 141)),
        Cell("d2fdx_d4fdx", (149, 151)),
        Cell("print_derivatives", (159, 162), (Out(163, 166),)),
        Cell("logistic_setup", (170, 190)),
        Cell("argnums", (194, 206), (Out(207, 211),)),
        Cell("grad_dict", (221, 225), (Out(226, 226),)),
        Cell("value_and_grad", (234, 236), (Out(237, 238),)),
        Cell("finite_differences", (243, 255), (Out(256, 259),), **_FD_TOL),
        Cell("check_grads", (263, 264)),
    )),
    Tutorial("quickstart_and_autodiff_tutorial.txt", "b2b5bf587731", cells=(
        Cell("imports", (44, 52)),
        Cell("normal_10", (58, 60)),
        Cell("matmul_3000", (62, 82), slow=True),
        Cell("selu_jit", (95, 104)),
        Cell("grad_logistic", (110, 116), (Out(116, 116),), strip="## "),
        Cell("finite_differences", (119, 125), (Out(125, 125),), strip="## ", **_FD_TOL),
        Cell("vmap_matrix", (133, 163)),   # its prints' outputs are not shown, only timings
    )),
    Tutorial("jax_basics_grad_notes.txt", "b0c148d9275b", prelude="import jax\nimport jax.numpy as jnp\n", cells=(
        Cell("sum_of_squares", (9, 13), (Out(14, 14),), reindent=True),
        Cell("sum_squared_error", (16, 21), (Out(22, 22),), reindent=True),
        # The notes were written with JAX 0.3, whose arrays printed as DeviceArray.
        Cell("argnums_tuple", (24, 24), (Out(26, 27),), expect_subs=(("DeviceArray", "Array"),)),
        Cell("loss_fn", (29, 31), skip="pseudo-code: '...' body, params/data_batch never defined"),
        Cell("value_and_grad_identity", (34, 34), skip="pseudo-code: f and xs never defined"),
        # "위의 코드는 실행이 안되는데" -- the notes say this one does not run.
        Cell("grad_of_tuple", (37, 39), reindent=True, expect_error="TypeError"),
        Cell("has_aux", (41, 41)),
    )),
]}
# jax_flax_overview_notes.txt is prose only: it has no code to run.


# ----------------------------------------------------------------------------- cell text


def seed_lines(tutorial, directory=None):
    path = Path(directory or seeds_dir()) / tutorial.file
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if not digest.startswith(tutorial.sha256):
        raise RuntimeError(f"{path} changed (sha256 {digest[:12]}, table written for {tutorial.sha256}); "
                           "update its cell table in tests/seeds_harness.py")
    return data.decode("utf-8").splitlines()


_TIMEIT = re.compile(r"^(\s*)%timeit\s+(.*)$")


def _reindent(lines):
    """Indent the line after each ``def ...:`` (the export flattened one-line bodies)."""
    out, indent_next = [], False
    for line in lines:
        out.append(("    " + line) if indent_next else line)
        indent_next = bool(re.match(r"\s*def .*:\s*$", line))
    return out


def cell_source(lines, cell):
    code = lines[cell.code[0] - 1:cell.code[1]]
    if cell.reindent:
        code = _reindent(code)
    code = [_TIMEIT.sub(r"\1_ = \2", line) for line in code]   # %timeit STMT: run once, display nothing
    return "\n".join(code) + "\n"


def cell_expected(lines, cell):
    """[(source, prefix, text)] of the outputs the tutorial shows for ``cell``."""
    result = []
    for out in cell.out:
        text = "\n".join(line[len(cell.strip):] if cell.strip and line.startswith(cell.strip) else line
                         for line in lines[out.first - 1:out.last])
        for old, new in cell.expect_subs:
            text = text.replace(old, new)
        result.append((out.source, out.prefix, text))
    return result


# ----------------------------------------------------------------------------- comparison

_TIMING_LINE = re.compile(r"(\d\s*(ns|µs|us|ms|sec)\b)|per loop")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
_CELL_FILE = re.compile(r"/tmp/ipython-input-[\w-]+\.py")
_TOKEN = re.compile(r"""
    (?P<num>[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.]))
  | (?P<word>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<newline>\n)
  | (?P<other>\S)
""", re.X)


def normalize(text):
    lines = [ln for ln in text.splitlines() if not _TIMING_LINE.search(ln)]
    text = "\n".join(lines)
    text = _ADDRESS.sub("0xADDR", text)
    return _CELL_FILE.sub("<cell>", text)


def tokens(text):
    out = []
    for m in _TOKEN.finditer(normalize(text)):
        kind = m.lastgroup
        tok = m.group()
        if kind == "newline":
            if out and out[-1] != ("text", "\n"):   # blank lines between outputs do not count
                out.append(("text", "\n"))
        elif kind == "num":
            is_int = re.fullmatch(r"[-+]?\d+", tok) is not None
            out.append(("int" if is_int else "float", tok))
        else:
            out.append(("text", tok))
    while out and out[-1] == ("text", "\n"):
        out.pop()
    return out


def _token_equal(exp, act, rtol, atol):
    (ek, ev), (ak, av) = exp, act
    if ek != ak:
        return False
    if ek == "int":
        return int(ev) == int(av)
    if ek == "float":
        e, a = float(ev), float(av)
        return math.isclose(e, a, rel_tol=rtol, abs_tol=atol) or (math.isnan(e) and math.isnan(a))
    return ev == av


def _excerpt(text, token_index, width=6):
    """The lines of normalized ``text`` around its ``token_index``-th token."""
    lines = normalize(text).splitlines()
    line = sum(1 for kind, tok in tokens(text)[:token_index] if tok == "\n")
    lo = max(0, line - width)
    return "\n".join(lines[lo:line + width + 1])


def compare(expected, actual, rtol=1e-5, atol=1e-6, prefix=False):
    """None when ``actual`` prints what ``expected`` shows, else a message."""
    exp, act = tokens(expected), tokens(actual)
    if prefix:
        exp = exp[:-1]   # the truncated export may have cut the last token in half
        act = act[:len(exp)]
    bad = next((i for i, (e, a) in enumerate(zip(exp, act)) if not _token_equal(e, a, rtol, atol)), None)
    if bad is None and len(exp) == len(act):
        return None
    if bad is None:
        bad = min(len(exp), len(act))
        what = f"expected {len(exp)} tokens, got {len(act)}"
    else:
        what = f"token {bad}: expected {exp[bad][1]!r}, got {act[bad][1]!r}"
    return (f"{what}\n--- expected (near the mismatch) ---\n{_excerpt(expected, bad)}"
            f"\n--- actual (near the mismatch) ---\n{_excerpt(actual, bad)}")


def check_cell(cell, expected, result):
    """None when the cell's run ``result`` matches the tutorial, else a message."""
    if result is None:
        return "cell did not run (an earlier failure stopped the tutorial)"
    if cell.expect_error:
        if result["error_type"] != cell.expect_error:
            return f"expected {cell.expect_error}, got {result['error_type'] or 'no error'}: {result['error']}"
        return None
    if result["error_type"] and not any(src == "all" for src, _, _ in expected):
        return f"raised {result['error_type']}: {result['error']}\n{result['traceback']}"
    problems = []
    if "runs eagerly" in result["stderr"]:   # numjax's warning when jit cannot compile a jaxpr
        problems.append(f"jit fell back to eager evaluation:\n{result['stderr']}")
    for source, prefix, text in expected:
        actual = {"all": result["stdout"] + result["display"], "stdout": result["stdout"],
                  "display": result["display"]}[source]
        msg = compare(text, actual, cell.rtol, cell.atol, prefix)
        if msg:
            if result["error_type"]:
                msg += f"\n--- traceback ---\n{result['traceback']}"
            problems.append(f"[{source}] {msg}")
    return "\n".join(problems) or None


# ----------------------------------------------------------------------------- child process


class _JaxAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``import jax.X`` imports ``numjax.X`` and binds it under both names."""

    def find_spec(self, fullname, path, target=None):
        if fullname == "jax" or fullname.startswith("jax."):
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        module = importlib.import_module("numjax" + spec.name[3:])
        self._saved = (module, module.__spec__, getattr(module, "__loader__", None))
        return module

    def exec_module(self, module):
        # importlib stamped the alias spec on the real module: give it back its own
        real, spec, loader = self._saved
        real.__spec__, real.__loader__ = spec, loader


def _display(value):
    if value is None:
        return ""
    try:
        from IPython.lib.pretty import pretty
        return pretty(value)
    except ImportError:
        import pprint
        return pprint.pformat(value, sort_dicts=False)


def _run_cell(source, filename, namespace):
    tree = ast.parse(source, filename)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(tree, filename, "exec"), namespace)
    if last is not None:
        value = eval(compile(ast.Expression(last.value), filename, "eval"), namespace)
        if not source.rstrip().endswith(";"):
            return _display(value)
    return ""


def run_tutorial_here(name, include_slow=False, alias=True):
    """Run one tutorial's cells in this process; return {cell name: result}."""
    if alias:
        sys.meta_path.insert(0, _JaxAlias())
    tutorial = TUTORIALS[name]
    lines = seed_lines(tutorial)
    namespace = {"__name__": "__main__"}
    if tutorial.prelude:
        exec(tutorial.prelude, namespace)
    results = {}
    for index, cell in enumerate(tutorial.cells):
        if cell.skip or (cell.slow and not include_slow):
            continue
        source = cell_source(lines, cell)
        filename = f"/tmp/ipython-input-{index}.py"
        stdout, stderr = io.StringIO(), io.StringIO()
        result = {"stdout": "", "display": "", "error_type": "", "error": "", "traceback": "", "stderr": ""}
        try:
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                result["display"] = _run_cell(source, filename, namespace)
        except Exception as exc:   # noqa: BLE001 -- a tutorial cell may raise anything; we report it
            result["error_type"] = type(exc).__name__
            result["error"] = str(exc)
            result["traceback"] = traceback.format_exc()[-3000:]
        result["stdout"] = stdout.getvalue()
        result["stderr"] = stderr.getvalue()[-3000:]
        if result["error_type"] and not cell.expect_error:
            # as in a notebook, the error is what the cell shows (after what it printed)
            result["display"] = f"{result['error_type']}: {result['error']}"
        results[cell.name] = result
    return results


def run_tutorial(name, include_slow=False, python=None, alias=True, timeout=900):
    """Run one tutorial in a child process (so ``jax`` aliases never leak); {cell: result}."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "results.json"
        cmd = [python or sys.executable, str(Path(__file__).resolve()), "--child", name, str(out)]
        if include_slow:
            cmd.append("--slow")
        if not alias:
            cmd.append("--real-jax")
        env = dict(os.environ)
        if alias:
            env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=tmp, env=env)
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"tutorial {name} crashed (exit {proc.returncode}):\n"
                               f"{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}")
        return json.loads(out.read_text())


def check_tutorial(name, results, include_slow=False):
    """{cell name: mismatch message or None} for every cell that should have run."""
    tutorial = TUTORIALS[name]
    lines = seed_lines(tutorial)
    report = {}
    for cell in tutorial.cells:
        if cell.skip or (cell.slow and not include_slow):
            continue
        report[cell.name] = check_cell(cell, cell_expected(lines, cell), results.get(cell.name))
    return report


def main(argv):
    if argv[:1] == ["--child"]:
        name, out = argv[1], argv[2]
        results = run_tutorial_here(name, include_slow="--slow" in argv, alias="--real-jax" not in argv)
        Path(out).write_text(json.dumps(results))
        return 0
    real = "--real-jax" in argv
    slow = "--slow" in argv
    names = [a for a in argv if not a.startswith("--")] or list(TUTORIALS)
    failures = 0
    for name in names:
        report = check_tutorial(name, run_tutorial(name, slow, alias=not real), slow)
        bad = {k: v for k, v in report.items() if v}
        failures += len(bad)
        print(f"== {name}: {len(report) - len(bad)}/{len(report)} cells match")
        for cell, msg in bad.items():
            print(f"-- {cell}\n{msg}\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
