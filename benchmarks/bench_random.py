"""Random-number throughput: jit(normal(key, (N,))) against numpy's generator, a hand-written
Numba threefry+normal loop, and real JAX when it is importable.

Run all three in one process (so they share the machine's load):
    cd /tmp && PYTHONPATH=/work/main /tmp/jaxvenv/bin/python /work/main/benchmarks/bench_random.py
Each contender runs in turn, round after round, and the median per contender is reported, so
a burst of load from other processes hits every contender alike.
"""
import argparse
import statistics
import time

import numba
import numpy as np

import numjax
from numjax import random
from numjax.lowering import vmath as vm

vm.ensure_jitted()   # _numba_normal calls its Numba dispatchers


@numba.njit(parallel=True, error_model="numpy", cache=True)
def _numba_normal(k0, k1, n):
    # Hand-written reference: the same threefry bits and float32 erf_inv, one prange loop.
    out = np.empty(n, np.float32)
    lo = np.nextafter(np.float32(-1.0), np.float32(0.0))
    for i in numba.prange(n):
        bits = vm.threefry2x32_xor(k0, k1, np.uint32(0), np.uint32(i))
        f = vm._f32_from_bits(np.int32((bits >> np.uint32(9)) | np.uint32(0x3F800000)))
        u = max(lo, (f - np.float32(1.0)) * (np.float32(1.0) - lo) + lo)
        out[i] = np.float32(1.4142135) * vm.erf_inv_f32(u)
    return out


def contenders(n):
    key = random.PRNGKey(0)
    nj = numjax.jit(lambda k: random.normal(k, (n,)))
    out = {"numjax": lambda: nj(key).block_until_ready()}
    gen = np.random.default_rng(0)
    out["numpy"] = lambda: gen.standard_normal(n, dtype=np.float32)
    out["numba"] = lambda: _numba_normal(np.uint32(0), np.uint32(0), n)
    try:
        import jax
        jkey = jax.random.PRNGKey(0)
        jf = jax.jit(lambda k: jax.random.normal(k, (n,)))
        out["jax"] = lambda: jf(jkey).block_until_ready()
    except ImportError:
        pass
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    runs = contenders(args.n)
    for fn in runs.values():   # compile and warm up
        fn()
        fn()
    times = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, fn in runs.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    med = {name: statistics.median(ts) * 1e3 for name, ts in times.items()}
    print(f"normal(key, ({args.n},)) float32, median of {args.rounds} rounds, "
          f"numba threads={numba.get_num_threads()}")
    for name, ms in med.items():
        print(f"  {name:7s} {ms:8.1f} ms")
    for other in ("numpy", "numba", "jax"):
        if other in med:
            print(f"  numjax / {other}: {med['numjax'] / med[other]:.2f}x")


if __name__ == "__main__":
    main()
