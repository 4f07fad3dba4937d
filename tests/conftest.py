"""Test-suite wide options.

* Tests marked ``slow`` are skipped unless ``--runslow`` is given or a ``-m``
  expression names ``slow`` (``tox -e slow`` runs ``pytest --runslow -m slow``).
* Tests under ``tests/compat/`` (or marked ``compat``) compare numjax with real
  JAX; they are skipped when ``jax`` is not importable, unless NUMJAX_COMPAT=1
  (set by ``tox -e compat``), where a missing JAX must fail instead of
  silently skipping.  A compat test module must not ``import jax`` at module
  level; use ``jax = pytest.importorskip("jax", reason=...)`` there.

So a plain ``pytest -q`` runs neither slow nor (without JAX) compat tests.

* ``EagerFallbackWarning`` (jit could not lower a program and ran it op by op) is an
  error everywhere (setup.cfg's ``filterwarnings``), so no test passes on a silent
  fallback. A test that expects one says so: ``pytest.warns(EagerFallbackWarning)``,
  or the marker ``@pytest.mark.allow_eager_fallback`` (the warning is then ignored).
"""

import importlib.util
import os
from pathlib import Path

import pytest

_COMPAT_DIR = Path(__file__).resolve().parent / "compat"
_NO_JAX_REASON = "real JAX not installed (tox -e compat)"
_ALLOW_FALLBACK = pytest.mark.filterwarnings("ignore::numjax.errors.EagerFallbackWarning")


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False,
                     help="run tests marked slow")


def _is_compat(item):
    return item.get_closest_marker("compat") is not None or \
        _COMPAT_DIR in Path(str(item.path)).resolve().parents


def pytest_collection_modifyitems(config, items):
    run_slow = config.getoption("--runslow") or "slow" in (config.getoption("markexpr") or "")
    have_jax = importlib.util.find_spec("jax") is not None
    skip_compat = not have_jax and os.environ.get("NUMJAX_COMPAT") != "1"
    skip_slow = pytest.mark.skip(reason="slow test: pass --runslow (tox -e slow)")
    for item in items:
        if _is_compat(item):
            item.add_marker(pytest.mark.compat)
            if skip_compat:
                item.add_marker(pytest.mark.skip(reason=_NO_JAX_REASON))
        if not run_slow and item.get_closest_marker("slow") is not None:
            item.add_marker(skip_slow)
        if item.get_closest_marker("allow_eager_fallback") is not None:
            # An item's own filterwarnings mark takes precedence over setup.cfg's.
            item.add_marker(_ALLOW_FALLBACK)


def pytest_configure(config):
    # Marker used by tests/test_ops.py (jit vs eager over the shared op table).
    config.addinivalue_line(
        "markers", "jit: compiles through jax.jit (the Numba lowering); deselect with -m 'not jit'")


@pytest.fixture
def x64():
    """jax_enable_x64 on for one test, then back as it was."""
    import numjax
    old = numjax.config.jax_enable_x64
    numjax.config.update("jax_enable_x64", True)
    yield
    numjax.config.update("jax_enable_x64", old)


@pytest.fixture
def make_foreign(monkeypatch):
    """``make_foreign(path)``: ``path`` belongs to another user from now on (the cache tests'
    untrusted entries).  Root chowns it; anyone else cannot, so numjax's ownership test
    (``diskcache._owned_by_me``) is told about those inodes instead."""
    try:
        from numjax.lowering import diskcache
    except ImportError:     # a bare checkout: lowering/ is the top-level package
        from lowering import diskcache
    inodes = set()
    if os.getuid() != 0:
        real = diskcache._owned_by_me
        monkeypatch.setattr(diskcache, "_owned_by_me", lambda st: st.st_ino not in inodes and real(st))

    def make(path):
        if os.getuid() == 0:
            os.chown(path, 12345, -1, follow_symlinks=False)
        else:
            inodes.add(os.lstat(path).st_ino)
    return make
