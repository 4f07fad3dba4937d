"""Resolve ``import jax`` (and ``jax.<sub>``) to numjax, for running JAX libraries unmodified.

Call :func:`install` before importing the library (optax, chex, ...).  A meta-path
finder maps ``jax`` -> ``numjax`` and ``jax.a.b`` -> ``numjax.a.b``; the module
object is shared, so ``jax.numpy is numjax.numpy``.  ``jaxlib`` and submodules
numjax lacks are reported as plain ``ModuleNotFoundError`` naming the numjax
module that is missing, so a probe shows exactly which surface a library needs.
"""
import importlib
import importlib.abc
import importlib.util
import sys

_PREFIX = "jax"
_TARGET = "numjax"


def _target_name(fullname):
    if fullname == _PREFIX:
        return _TARGET
    if fullname.startswith(_PREFIX + "."):
        return _TARGET + fullname[len(_PREFIX):]
    return None


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        # Returning the already-imported numjax module makes the alias identical
        # to it; the import system then stores it under the ``jax...`` name.
        module = importlib.import_module(self.target)
        self._own_spec = module.__spec__
        return module

    def exec_module(self, module):
        # numjax already executed it; undo the import system's __spec__ rewrite
        # so numjax's own module keeps describing itself.
        module.__spec__ = self._own_spec


class JaxToNumjaxFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        name = _target_name(fullname)
        if name is None:
            return None
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:
                raise
            raise ModuleNotFoundError(
                f"jax shim: {fullname!r} maps to {name!r}, which numjax does not provide",
                name=fullname) from None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(name),
                                               is_package=hasattr(module, "__path__"))


_FINDER = JaxToNumjaxFinder()


def install():
    """Put the finder first on ``sys.meta_path`` (idempotent) and alias ``jax``."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    return importlib.import_module(_PREFIX)


def uninstall():
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in [n for n in sys.modules if n == _PREFIX or n.startswith(_PREFIX + ".")]:
        del sys.modules[name]
