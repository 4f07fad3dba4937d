"""numjax.cuda -- the CUDA backend of numjax (issue 12).

``devices.py`` finds the GPUs through the CUDA driver (standard library only, so ``import
numjax`` never imports numba-cuda or cuda-python).  A program's plan (``numjax.lowering.fusion``)
becomes steps of numba-cuda kernels: ``kernels.py`` fused regions (grid-stride elementwise
kernels, block-tree + warp-shuffle reductions), ``nodes.py`` single-kernel data movement, and the
rule modules of ``step_rules.py`` (indexing, cumulative ops, sorting, convolutions, dot_general,
control flow, host steps); ``value_forms.py`` rewrites float16/bfloat16/complex programs as the
CPU backend does; ``compiler.py`` compiles kernel source (``diskcache.py`` keeps the compiled
kernels on disk); ``backend.py`` runs the steps on the device's stream with ``memory.py``'s
caching allocator and returns ``arrays.CudaArray``s that stay on the device.
``numjax.dispatch`` alone chooses this backend: by default when a CUDA GPU is present, or when
asked for by name (``NUMJAX_PLATFORMS=cuda``; with ``NUMBA_ENABLE_CUDASIM=1`` that runs the
kernels on numba-cuda's simulator).  A program with anything it does not lower (``fft``,
custom scatter combiners, ...) runs whole on the CPU backend.

This directory is installed as ``numjax.cuda`` (``setup.cfg``: ``package_dir``
maps ``numjax.cuda = cuda``).  It is not meant to be imported as ``cuda``;
see the note below the docstring for what happens if it is.
"""

# Why this file starts with an ``if __name__ == "cuda"`` guard
# ------------------------------------------------------------
# When Python runs from the repository root ('' -- the current directory --
# is sys.path[0] for ``python -c``, ``python -m``, the REPL; pytest's rootdir
# insertion does the same), the top-level ``import cuda`` finds this
# directory.  Because it has an ``__init__.py`` it is a *regular* package, and
# the path finder prefers a regular package over namespace-package portions
# wherever they are on sys.path.  NVIDIA's ``cuda`` (pip packages
# cuda-bindings, cuda-python, cuda-core, cuda-pathfinder, which numba-cuda
# uses) is such a namespace package, so without this guard ``import
# cuda.bindings`` fails from the repo root.  Dropping ``__init__.py`` would
# make ``numjax.cuda`` itself an implicit namespace package, which we don't
# want (and a bare ``cuda/`` namespace portion would then also be merged into
# NVIDIA's ``cuda`` namespace).
#
# So when this file is executed as the top-level module ``cuda``, it steps
# aside: it looks ``cuda`` up again on sys.path *without* the directory that
# holds this checkout, creates that module (NVIDIA's namespace package, or a
# regular ``cuda`` package if some older distribution ships one) and puts it
# in ``sys.modules["cuda"]`` in its own place.  The import system returns
# ``sys.modules[name]`` after executing a module, so ``import cuda`` then
# yields exactly what it would yield if this checkout were not on sys.path;
# with no such package installed it raises ModuleNotFoundError as usual.
# None of the numjax names below are defined in that case.  Only the standard
# library is used here.  tests/test_cuda_namespace.py checks all of this.
if __name__ == "cuda":  # pragma: no cover - exercised in subprocesses

    def _step_aside():
        import importlib.machinery
        import importlib.util
        import os
        import sys

        this_file = os.path.realpath(__file__)
        checkout = os.path.dirname(os.path.dirname(this_file))

        def is_checkout(entry):
            if not isinstance(entry, str):
                return False
            try:
                return os.path.realpath(entry or os.getcwd()) == checkout
            except (OSError, ValueError):
                return False

        search = [p for p in sys.path if not is_checkout(p)]
        spec = None
        for finder in sys.meta_path:
            if finder is importlib.machinery.PathFinder:
                spec = finder.find_spec("cuda", search)
            elif hasattr(finder, "find_spec"):
                spec = finder.find_spec("cuda", None)
            if spec is not None and spec.origin and os.path.realpath(spec.origin) == this_file:
                spec = None  # some other finder handed us back this very file
            if spec is not None:
                break
        if spec is None:
            raise ModuleNotFoundError("No module named 'cuda'", name="cuda")

        module = importlib.util.module_from_spec(spec)
        sys.modules["cuda"] = module
        try:
            if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop("cuda", None)
            raise

    _step_aside()
    del _step_aside

else:
    __all__ = ["is_available"]

    def is_available() -> bool:
        """Whether a real CUDA GPU is usable (numba-cuda installed and the driver reports a
        device).  The simulator does not count.  Imports neither numba-cuda nor cuda-python."""
        from . import devices
        return bool(devices.gpu_devices())
