"""numjax/numpy/__init__.py defines each public name once: a definition that a later
``from ._x import *`` replaces is dead code that reads as if it were the one in use."""
import ast
import importlib
from pathlib import Path

import numjax.numpy as jnp

_INIT = Path(jnp.__file__)


def _bound_names(node):
    """Names a module-level statement binds (defs, classes, assignments, non-star imports)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    if isinstance(node, ast.ImportFrom) and not any(a.name == "*" for a in node.names):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    return []


def _star_names(node):
    module = importlib.import_module(f"numjax.numpy.{node.module}")
    return getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]


def redefinitions(source):
    """(name, line of the definition, line of the star import that replaces it)."""
    defined, found = {}, []
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and any(a.name == "*" for a in node.names):
            found += [(n, defined[n], node.lineno) for n in _star_names(node) if n in defined]
        for name in _bound_names(node):
            defined.setdefault(name, node.lineno)
    return found


def test_no_name_in_numpy_init_is_replaced_by_a_star_import():
    assert redefinitions(_INIT.read_text()) == []


def test_the_check_finds_a_replaced_definition():
    source = "def sum(a):\n    return a\n\n\nfrom ._reductions import *\n"
    assert redefinitions(source) == [("sum", 1, 5)]
