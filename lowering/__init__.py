# Before any module here imports Numba: its cache of numjax's modules goes under numjax's
# cache directory, not next to these sources or in ~/.cache/numba (lowering/numba_cache.py).
from . import numba_cache as _numba_cache

_numba_cache.route_numba_caches()
