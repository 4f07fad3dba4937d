"""Run a library's shipped tests on numjax and on real JAX; compare the outcomes.

    python tests/ecosystem/run_suite.py optax                 # numjax (python -m numjax -m pytest)
    python tests/ecosystem/run_suite.py optax --jax           # real JAX: writes the baseline
    python tests/ecosystem/run_suite.py optax --files alias_test.py --timeout 300

Each test file runs in its own process (``pytest --junitxml``) with a time limit, so one
hang or crash costs that file only.  Outcomes go to ``<out>/<lib>-<engine>.json`` as
``{test id: "passed" | "failed" | "error" | "skipped" | "timeout" | "crashed"}``.  With a
baseline from real JAX beside it, the report counts, of the tests that pass on JAX, how
many pass on numjax (issue 10: >= 95 % for optax, >= 90 % for chex), and lists the rest
grouped by their first error line so the gaps can be read at a glance.

The tests are the installed library's own files (found next to its package); nothing
here edits them.  numjax runs them through ``python -m numjax``, so every ``import jax``
in the library and its tests is numjax.
"""
import argparse
import collections
import glob
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))


def test_files(lib, only=None):
    spec = importlib.util.find_spec(lib)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{lib} is not installed in {sys.executable}")
    root = list(spec.submodule_search_locations)[0]
    files = sorted(glob.glob(os.path.join(root, "**", "*_test.py"), recursive=True))
    if only:
        files = [f for f in files if any(f.endswith(o) for o in only)]
    return root, files


def _outcomes(xml_path, lib_root):
    """{test id: outcome, first error line} from a junit file."""
    out = {}
    tree = ET.parse(xml_path)
    for case in tree.iter("testcase"):
        tid = f"{case.get('classname')}::{case.get('name')}"
        outcome, msg = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed" if child.tag == "failure" else "error"
                msg = (child.get("message") or "").strip().splitlines()[:1]
                msg = msg[0][:200] if msg else ""
                break
            if child.tag == "skipped":
                outcome = "skipped"
        out[tid] = (outcome, msg)
    return out


def run_file(path, engine, timeout, lib_root):
    """Run one test file; its outcomes, or a single pseudo-test naming what went wrong."""
    with tempfile.TemporaryDirectory() as tmp:
        xml_path = os.path.join(tmp, "junit.xml")
        prefix = [sys.executable] + (["-m", "numjax"] if engine == "numjax" else [])
        # An empty config of our own: pytest would otherwise pick up the nearest ancestor's
        # (numjax's setup.cfg when the venv sits in the checkout, which makes numjax's
        # fallback warning an error).
        ini = os.path.join(tmp, "pytest.ini")
        with open(ini, "w") as f:
            f.write("[pytest]\n")
        cmd = prefix + ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", ini,
                        f"--rootdir={lib_root}", f"--junitxml={xml_path}", path]
        env = dict(os.environ, JAX_PLATFORMS="cpu", NUMBA_NUM_THREADS="2")
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                                  cwd=tmp, env=env)
        except subprocess.TimeoutExpired:
            return {f"{os.path.relpath(path, lib_root)}::<file>": ("timeout", f"> {timeout} s")}, timeout
        elapsed = time.perf_counter() - t0
        if os.path.exists(xml_path):
            got = _outcomes(xml_path, lib_root)
            if got:
                return got, elapsed
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        return {f"{os.path.relpath(path, lib_root)}::<file>": ("crashed", tail[0][:200])}, elapsed


def report(lib, results, baseline, engine="numjax"):
    counts = collections.Counter(o for o, _ in results.values())
    lines = [f"{lib} on {engine}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))]
    if baseline is not None:
        passing = [t for t, o in baseline.items() if o[0] == "passed"]
        ok = [t for t in passing if results.get(t, ("missing",))[0] == "passed"]
        share = len(ok) / max(1, len(passing))
        lines.append(f"of the {len(passing)} tests passing on JAX, {len(ok)} pass on numjax "
                     f"({100 * share:.1f} %)")
        groups = collections.Counter()
        for t in passing:
            o, msg = results.get(t, ("missing", ""))
            if o != "passed":
                groups[f"{o}: {msg}"] += 1
        for msg, n in groups.most_common(40):
            lines.append(f"  {n:5d}  {msg}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lib")
    ap.add_argument("--jax", action="store_true", help="run on real JAX (the baseline)")
    ap.add_argument("--files", nargs="*", help="only test files whose path ends so")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--min-share", type=float, default=None,
                    help="exit 1 if fewer of JAX's passing tests pass on numjax")
    args = ap.parse_args()
    engine = "jax" if args.jax else "numjax"
    root, files = test_files(args.lib, args.files)
    root = os.path.dirname(root)      # ids read "optax._src.alias_test.Class::test"
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{args.lib}-{engine}.json")
    results = {}
    if args.files and os.path.exists(path):
        with open(path) as f:
            results = {k: tuple(v) for k, v in json.load(f).items()}
    for file in files:
        rel = os.path.relpath(file, root)
        results = {k: v for k, v in results.items() if not k.startswith(_module_of(rel))
                   and not k.startswith(rel)}
        got, elapsed = run_file(file, engine, args.timeout, root)
        results.update(got)
        c = collections.Counter(o for o, _ in got.values())
        print(f"{rel}: {dict(c)} ({elapsed:.0f} s)", flush=True)
    with open(path + ".tmp", "w") as f:
        json.dump(results, f, indent=0, sort_keys=True)
    os.replace(path + ".tmp", path)
    baseline = None
    base_path = os.path.join(args.out, f"{args.lib}-jax.json")
    if engine == "numjax" and os.path.exists(base_path):
        with open(base_path) as f:
            baseline = {k: tuple(v) for k, v in json.load(f).items()}
    print(report(args.lib, results, baseline, engine))
    if args.min_share is not None and baseline is not None:
        passing = [t for t, o in baseline.items() if o[0] == "passed"]
        ok = sum(results.get(t, ("missing",))[0] == "passed" for t in passing)
        if ok < args.min_share * len(passing):
            sys.exit(1)


def _module_of(rel):
    """junit classnames are dotted module paths: the prefix of this file's tests."""
    return rel[:-3].replace(os.sep, ".")


if __name__ == "__main__":
    main()
