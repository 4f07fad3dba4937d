"""CPU lowering of the fft primitive through rocket-fft, which makes np.fft usable in Numba
(programs using it import rocket_fft: see compile._OPTIONAL_IMPORTS)."""
from numjax.lax.fft import fft_p

from . import scalar
from .nodes import NODE_RULES

_CALLS = {0: "np.fft.fftn", 1: "np.fft.ifftn", 2: "np.fft.rfftn", 3: "np.fft.irfftn"}


def _fft(gen, eqn):
    x, out = eqn.invars[0], eqn.outvars[0]
    lengths = tuple(eqn.params["fft_lengths"])
    kind = int(eqn.params["fft_type"])
    nd, k = x.aval.ndim, len(lengths)
    axes = tuple(range(nd - k, nd))
    dt = scalar.np_type(out.aval.dtype)
    if not k:
        return [f"{gen.name(out)} = {gen.name(x)}.copy()"]
    size = f", s={lengths}" if kind in (2, 3) else ""
    return [f"{gen.name(out)} = np.ascontiguousarray({_CALLS[kind]}(np.ascontiguousarray({gen.name(x)})"
            f"{size}, axes={axes})).astype({dt})"]


NODE_RULES[fft_p] = _fft
