"""Scalar functions that Numba inlines into its callers, kept as plain Python until one needs them.

vmath and scalar_helpers mark their functions with an ``InlineRegistry`` instead of ``numba.njit``:
importing them then costs no Numba (150+ ms), and the LLVM IR translator reads the plain functions'
source.  ``jit_all`` imports Numba once and rebinds each marked module attribute to its
``numba.njit(inline="always")`` dispatcher.  Numba resolves a function's globals when it compiles a
caller, so after the rebinding, Numba code calling ``vm.exp_f32`` and marked functions calling each
other through module globals work exactly as when the modules were jitted at import.

Deliberately free of Numba and llvmlite imports at module level.
"""
import threading


class InlineRegistry:
    """Decorator recording a module's inlinable functions; ``jit_all`` swaps in their dispatchers."""

    def __init__(self, module_globals, **njit_flags):
        self.functions = []                 # in definition order, helpers before their callers
        self._module_globals = module_globals
        self._njit_flags = njit_flags
        self._lock = threading.Lock()
        self._jitted = False

    def __call__(self, function):
        """Record ``function`` and return it unchanged."""
        self.functions.append(function)
        return function

    def plain_by_name(self):
        """{module attribute name: plain function} for every recorded function bound in the module.
        Call before ``jit_all`` (at the end of the module), while attributes are still plain."""
        recorded = {id(f) for f in self.functions}
        return {name: value for name, value in self._module_globals.items() if id(value) in recorded}

    def jit_all(self, register_lowerings=None):
        """Import Numba, run ``register_lowerings()``, then rebind every module attribute holding a
        recorded function to its dispatcher.  Idempotent and thread-safe; the flag is set only once
        every attribute is rebound, so no caller sees a half-jitted module."""
        if self._jitted:
            return
        with self._lock:
            if self._jitted:
                return
            import numba
            if register_lowerings is not None:
                register_lowerings()
            # Under NUMBA_DISABLE_JIT=1 njit returns the function itself: the rebinding is a no-op.
            jitted = {id(f): numba.njit(**self._njit_flags)(f) for f in self.functions}
            for name, value in list(self._module_globals.items()):
                dispatcher = jitted.get(id(value))
                if dispatcher is not None:
                    self._module_globals[name] = dispatcher
            self._jitted = True
