"""``jax.extend.core.primitives``: numjax's primitive objects, by JAX's names (``add_p``, ...)."""


def _collect():
    import importlib
    import pkgutil

    from ... import custom_derivatives, dispatch, lax
    from ...core import Primitive
    modules = [importlib.import_module(f"numjax.lax.{m.name}") for m in pkgutil.iter_modules(lax.__path__)]
    found = {}
    for module in modules + [custom_derivatives, dispatch]:
        for name, value in vars(module).items():
            if name.endswith("_p") and isinstance(value, Primitive):
                found.setdefault(name, value)
    found.setdefault("pjit_p", found.get("jit_p"))
    return found


globals().update(_collect())
del _collect
