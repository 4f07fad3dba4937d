"""The direction of imports: only ``numjax.dispatch`` chooses a backend.

The core, ``lax``, the interpreters, ``numpy``, ``scipy``, ``nn``, ``random`` and the rest of
``numjax`` import neither ``numjax.lowering`` nor ``numjax.cuda``, lazily or not (an import
inside a function, ``importlib.import_module("...")``), and ``lowering`` imports nothing of
``cuda``. Checked on the source (every import statement) and at run time (tracing and eager
work leave Numba and the lowering unimported).
"""
import ast
import pathlib
import subprocess
import sys
import textwrap

import pytest

import numjax
import numjax.lowering

NUMJAX_DIR = pathlib.Path(numjax.__file__).resolve().parent
LOWERING_DIR = pathlib.Path(numjax.lowering.__file__).resolve().parent
BACKEND_CHOOSER = NUMJAX_DIR / "dispatch.py"
# An installed (not editable) numjax holds the backends as subpackages of its own directory.
BACKENDS = (NUMJAX_DIR / "lowering", NUMJAX_DIR / "cuda")


def _module_name(path, root, package):
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package] + parts)


def _resolve(module, level, importer, is_package):
    """The absolute name of ``from <level dots><module> import ...`` written in ``importer``."""
    if level == 0:
        return module or ""
    base = importer.split(".")
    base = base[:len(base) - level + (1 if is_package else 0)]
    return ".".join(base + ([module] if module else []))


def _string_prefix(node):
    """The constant text of a string argument (the leading part of an f-string), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return node.values[0].value
    return None


def imported_names(path, root, package):
    """Every module name ``path`` imports, absolute: import statements anywhere in the file and
    string arguments of ``importlib.import_module``/``__import__``."""
    importer = _module_name(path, root, package)
    is_package = path.name == "__init__.py"
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node.module, node.level, importer, is_package)
            names.append(base)
            names.extend(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            text = _string_prefix(node.args[0]) if called in ("import_module", "__import__") else None
            if text is not None:
                names.append(_resolve(text.lstrip("."), len(text) - len(text.lstrip(".")),
                                      importer, is_package) if text.startswith(".") else text)
    return names


def _is_under(name, packages):
    return any(name == p or name.startswith(p + ".") for p in packages)


def _violations(root, package, forbidden, skip=()):
    found = []
    for path in sorted(root.rglob("*.py")):
        if any(path == s or path.is_relative_to(s) for s in skip):
            continue
        for name in imported_names(path, root, package):
            if _is_under(name, forbidden):
                found.append(f"{path.relative_to(root.parent)} imports {name}")
    return found


def test_numjax_imports_no_backend_except_dispatch():
    forbidden = ("numjax.lowering", "numjax.cuda", "lowering", "cuda")
    assert _violations(NUMJAX_DIR, "numjax", forbidden, skip={BACKEND_CHOOSER, *BACKENDS}) == []


def test_lowering_imports_nothing_of_cuda():
    assert _violations(LOWERING_DIR, "numjax.lowering", ("numjax.cuda", "cuda")) == []


def test_checker_sees_lazy_relative_and_dynamic_imports(tmp_path):
    pkg = tmp_path / "numjax"
    (pkg / "lax").mkdir(parents=True)
    (pkg / "lax" / "bad.py").write_text(textwrap.dedent("""
        import importlib

        def eager(x):
            from ..lowering import kernels
            return kernels

        def dynamic():
            return importlib.import_module("numjax.cuda.runtime")

        def formatted(name):
            return importlib.import_module(f"numjax.lowering.{name}")
    """))
    (pkg / "fine.py").write_text("from . import core\nfrom .lax import shape\n")
    found = _violations(pkg, "numjax", ("numjax.lowering", "numjax.cuda"))
    assert found == ["numjax/lax/bad.py imports numjax.lowering",
                     "numjax/lax/bad.py imports numjax.lowering.kernels",
                     "numjax/lax/bad.py imports numjax.cuda.runtime",
                     "numjax/lax/bad.py imports numjax.lowering."]


_RUNTIME_CHECK = """
import sys
import numjax as jax
import numjax.nn, numjax.numpy as jnp, numjax.random, numjax.scipy, numjax.scipy.special
import numjax.tree_util, numjax.lax as lax

x = jnp.arange(6.0).reshape(2, 3)
y = (x * 2 + 1).sum(axis=0) - jnp.max(x)
y = jnp.where(x > 2, x, 0.0) @ jnp.ones((3, 2))
jax.make_jaxpr(lambda v: jnp.exp(jnp.sin(v)).sum())(x)
g = jax.grad(lambda v: jnp.sum(v * v * 3.0))(x)
m = jax.vmap(lambda row: row * row.sum())(x)
j = jax.jacfwd(lambda v: v * 2.0)(jnp.arange(3.0))
key = jax.random.PRNGKey(0)
jax.make_jaxpr(lambda k: jax.random.normal(k, (3,)))(key)
jax.make_jaxpr(lambda v: jax.nn.relu(v) + jax.scipy.special.logsumexp(v))(x)
jax.tree_util.tree_map(lambda a: a + 1, {"a": x})
loaded = sorted(m for m in sys.modules
                if m.startswith("numjax.lowering") or m.startswith("numjax.cuda")
                or m == "numba" or m.startswith("numba.") or m == "llvmlite")
assert not loaded, loaded
print("ok")
"""


def test_tracing_and_eager_work_import_no_backend():
    # Eager float32 transcendentals reuse the compiled library (through dispatch), so this
    # sticks to arithmetic, reductions, matmul and transformations, which need no compiler.
    result = subprocess.run([sys.executable, "-c", _RUNTIME_CHECK], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "ok"
