"""``import jax`` resolved to numjax: ``install_as_jax()`` and ``python -m numjax script.py``.

A meta-path finder answers every ``jax`` / ``jax.<sub>`` import with the numjax module of the
same path (``jax.numpy`` is ``numjax.numpy``, the very same object), so a script and every
library it imports run on numjax unchanged.  A ``jax.<sub>`` numjax does not have fails with
``ModuleNotFoundError`` naming the numjax module that is missing.
"""
import importlib
import importlib.abc
import importlib.util
import sys

_ALIAS, _TARGET = "jax", "numjax"


class _JaxAliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name != _ALIAS and not name.startswith(_ALIAS + "."):
            return None
        real = _TARGET + name[len(_ALIAS):]
        if importlib.util.find_spec(real) is None:
            raise ModuleNotFoundError(f"No module named {name!r}: numjax has no {real!r} "
                                      "(see README, 'Missing')", name=name)
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        module = importlib.import_module(_TARGET + spec.name[len(_ALIAS):])
        self._own_spec = module.__spec__        # the import system overwrites __spec__
        return module

    def exec_module(self, module):
        module.__spec__ = self._own_spec         # already executed as numjax.<sub>


_finder = _JaxAliasFinder()


def install_as_jax():
    """Make ``import jax`` (and ``jax.*``) import numjax from now on; call it before the
    libraries that import jax are imported.  Idempotent."""
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    present = sys.modules.get(_ALIAS)
    if present is not None and getattr(present, "__name__", None) != _TARGET:
        raise ImportError("jax was imported before numjax.install_as_jax(): call it first")
