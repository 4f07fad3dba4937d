"""numjax across processes: the cost of a pmap psum over MPI, and weak scaling of a
data-parallel training step.

    .venv/bin/python benchmarks/mpi_allreduce.py          # runs every case below, prints a table

1. ``psum`` of 1M float32 per step through ``pmap`` under ``mpiexec -n 2`` (one device per
   process) against raw mpi4py ``Comm.Allreduce`` on the same buffers: the two are timed
   interleaved (in alternating order), REPS times, each after a barrier, taking for each
   repetition the slowest process's time; medians are reported, and the median of the
   per-repetition ratios (less sensitive to load from other programs, which changes more slowly
   than one repetition).
   Target: pmap / raw <= 1.2.
2. Weak scaling: the data-parallel SGD step of examples/data_parallel_sgd.py (PER_DEVICE
   examples per device, one device per process) alone and under ``mpiexec -n 2``;
   efficiency = time(1 process) / time(2 processes) (1.0 is perfect).
"""
import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
MPIEXEC = pathlib.Path(sys.executable).parent / "mpiexec"
ELEMENTS, REPS, STEP_REPS, PER_DEVICE = 1 << 20, 300, 30, 1024


def _example():
    spec = importlib.util.spec_from_file_location("data_parallel_sgd", ROOT / "examples" / "data_parallel_sgd.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)       # joins the MPI job when launched by mpiexec
    module.PER_DEVICE = PER_DEVICE
    return module


def _slowest(times):
    """Per repetition, the slowest process's time (the step is done when all are)."""
    import numjax as jax
    from numjax._src import mpi
    times = np.asarray(times, np.float64)
    return mpi.allreduce(times, "max") if jax.process_count() > 1 else times


def allreduce_worker():
    import numjax as jax
    from numjax import lax
    from numjax._src import mpi
    _example()                            # initializes numjax.distributed
    comm = mpi.comm()
    x = np.random.default_rng(jax.process_index()).standard_normal((1, ELEMENTS)).astype(np.float32)
    psum = jax.pmap(lambda v: lax.psum(v, "i"), "i")
    raw_out = np.empty_like(x)
    # A copy: holding the result itself would keep its buffer from pmap's pool for the whole
    # timed loop (mpi._output), so the loop would measure pmap on a second buffer, as a training
    # loop that drops each step's result never does.
    expected = np.array(psum(x))
    comm.Allreduce(x, raw_out)
    assert np.array_equal(expected, raw_out), "pmap psum differs from MPI Allreduce"
    cases = {"pmap": lambda: psum(x), "raw": lambda: comm.Allreduce(x, raw_out)}
    times = {name: [] for name in cases}
    for rep in range(REPS):
        # Each repetition times both, in alternating order: neither always runs right after the
        # other (whose buffers then fill the caches) nor always first.
        for name in (("pmap", "raw") if rep % 2 == 0 else ("raw", "pmap")):
            comm.Barrier()
            start = time.perf_counter()
            cases[name]()
            times[name].append(time.perf_counter() - start)
    t_pmap, t_raw = _slowest(times["pmap"]), _slowest(times["raw"])
    return {"pmap_psum_ms": 1e3 * float(np.median(t_pmap)), "raw_allreduce_ms": 1e3 * float(np.median(t_raw)),
            "ratio_median": float(np.median(t_pmap / t_raw))}


def step_worker():
    import numjax as jax
    ex = _example()
    x, y = ex.dataset(n=8 * PER_DEVICE)
    params = ex.init_params()
    batch = ex.local_batch(x, y, 0)
    for _ in range(3):                    # compile and warm up
        jax.block_until_ready(ex.step(params, *batch))
    times = []
    for k in range(STEP_REPS):
        batch = ex.local_batch(x, y, k)
        if jax.process_count() > 1:
            from numjax._src import mpi
            mpi.barrier()
        start = time.perf_counter()
        jax.block_until_ready(ex.step(params, *batch))
        times.append(time.perf_counter() - start)
    return {"step_ms": 1e3 * float(np.median(_slowest(times)))}


def _launch(worker, processes):
    cmd = [sys.executable, __file__, "--worker", worker]
    if processes > 1:
        cmd = [str(MPIEXEC), "-n", str(processes)] + cmd
    env = dict(os.environ, NUMJAX_NUM_CPU_DEVICES="1")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if out.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stderr[-3000:]}")
    return json.loads([line for line in out.stdout.splitlines() if line.startswith("{")][0])


def main():
    reduce = _launch("allreduce", 2)
    one, two = _launch("step", 1), _launch("step", 2)
    ratio = reduce["pmap_psum_ms"] / reduce["raw_allreduce_ms"]
    print(f"psum of {ELEMENTS} float32 through pmap, mpiexec -n 2 (median of {REPS}, interleaved):")
    print(f"  pmap psum      {reduce['pmap_psum_ms']:8.3f} ms")
    print(f"  raw Allreduce  {reduce['raw_allreduce_ms']:8.3f} ms")
    print(f"  overhead       {ratio:8.2f}x   (ratio of medians; target <= 1.2x)")
    print(f"  overhead       {reduce['ratio_median']:8.2f}x   (median of the per-repetition ratios)")
    print(f"data-parallel SGD step, {PER_DEVICE} examples per device, 1 device per process "
          f"(median of {STEP_REPS}):")
    print(f"  1 process      {one['step_ms']:8.3f} ms")
    print(f"  2 processes    {two['step_ms']:8.3f} ms")
    print(f"  weak-scaling efficiency {one['step_ms'] / two['step_ms']:.2f}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        result = {"allreduce": allreduce_worker, "step": step_worker}[sys.argv[2]]()
        import numjax as jax
        if jax.process_index() == 0:
            print(json.dumps(result), flush=True)
    else:
        main()
