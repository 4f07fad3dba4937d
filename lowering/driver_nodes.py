"""Driver rules of the LLVM backend: node primitives the program's Python driver runs through
a library (numpy, or a Numba-compiled numerics library compiled once per machine).

``DRIVER_RULES[primitive](gen, eqn)`` returns driver source lines, with the rule signature of
``nodes.py`` (``gen.name(v)``, ``gen.tmp()``, ``gen.dim(size)``, ``gen.shape_src(shape)``).
"""

DRIVER_RULES = {}
