"""The CUDA lowering rules for plan nodes that need more than one kernel, host logic, or a
sub-program (indexing, cumulative ops, sorting, convolutions, control flow).

Each module named in ``_MODULES`` defines ``STEP_RULES``: primitive -> ``build(eqn)``, which
returns a *step* -- an object with ``sources`` (the kernel source it compiled, for
``CudaExecutable.source``) and ``run(env, buffers)``, which reads its operands from ``env``
(variable -> device array; rank 0 as shape ``(1,)``; ``backend.env_read`` also takes literals),
launches on ``buffers.stream`` and stores its outputs in ``env``.  A rule raises
``kernels.CudaUnsupported`` for a case it does not lower; the program then runs on the CPU.
Single-kernel data movement stays in ``nodes.NODE_KERNELS``.
"""
import importlib

_MODULES = ("indexing", "cumulative", "sorting", "conv", "blas", "control", "host_steps")
_table = None


def step_rules():
    """primitive -> step builder, from every module in ``_MODULES`` (imported once)."""
    global _table
    if _table is None:
        table = {}
        for name in _MODULES:
            table.update(importlib.import_module(f"{__package__}.{name}").STEP_RULES)
        _table = table
    return _table
