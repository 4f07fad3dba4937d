"""How much of jax.numpy's public namespace numjax.numpy provides.

tests/jnp_names.txt lists every public name of JAX 0.10.2's jax.numpy (functions, types,
constants and the linalg/fft submodules). A drop-in replacement fails on the first missing
name, so the coverage must stay at or above 90%; the missing names are printed.
"""
import os

import numjax.numpy as jnp

_NAMES_FILE = os.path.join(os.path.dirname(__file__), "jnp_names.txt")


def _jax_names():
    with open(_NAMES_FILE) as f:
        rows = [line.split() for line in f if line.strip() and not line.startswith("#")]
    return {name: kind for name, kind in rows}


def test_names_file_is_complete():
    names = _jax_names()
    assert len(names) > 400
    assert {"sum", "einsum", "linalg", "fft", "float32", "pi"} <= set(names)


def test_coverage_at_least_90_percent():
    names = _jax_names()
    missing = sorted(n for n in names if not hasattr(jnp, n))
    ratio = 1 - len(missing) / len(names)
    print(f"\njax.numpy coverage: {len(names) - len(missing)}/{len(names)} = {ratio:.1%}")
    print("missing:", " ".join(missing))
    assert ratio >= 0.90, f"only {ratio:.1%} of jax.numpy is provided; missing: {missing}"


def test_kinds_match():
    # A name JAX exports as a module/type/callable has the same kind here.
    names = _jax_names()
    for name, kind in names.items():
        if not hasattr(jnp, name):
            continue
        obj = getattr(jnp, name)
        if kind == "function":
            assert callable(obj), name
        elif kind == "module":
            assert hasattr(obj, "__name__") and not callable(obj), name
