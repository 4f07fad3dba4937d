"""GPU benchmark for issue 12's speed targets: numjax's CUDA backend against the device's
copy bandwidth, cuBLAS and (when importable on the same GPU) JAX, all in one process.

    python benchmarks/gpu.py                         # full sizes; a markdown table at the end
    python benchmarks/gpu.py --sizes 1e7 --reps 5    # smaller / fewer
    NUMBA_ENABLE_CUDASIM=1 NUMJAX_PLATFORMS=cuda python benchmarks/gpu.py --tiny
                                                     # checks the script on the simulator

Every numjax input is put on the GPU first (``numjax.device_put``) and every timing ends in
``block_until_ready``.  Each contestant of a row is timed in turn, REPS times over
(interleaved), and the median is reported.  Two figures per call:

- *call*: ``number`` calls issued back to back, then one block, divided by ``number``: what a
  program sees (host dispatch and GPU work overlap; the larger of the two dominates).
- *gpu*: the GPU's own time per call, from CUDA events on numjax's stream around the same
  batch of calls.  A *hold* kernel first keeps the stream busy (it spins until the host has
  queued the whole batch and releases it through a flag written from a second stream), so the
  events measure back-to-back kernels, not the host's dispatch gaps.  If the hold runs out
  (something in the batch waited for the GPU, or the launch queue filled up) the batch is
  timed again without it and the figure is marked ``~`` (an upper bound on the GPU time).

Bandwidth targets compare *gpu* times: a device-to-device copy of the same bytes (the faster
of ``cuMemcpyDtoD`` and a one-element-per-thread copy kernel) is the reference; selu and the
chain read and write as many bytes as that copy, row softmax's bound is one read and one write
of the matrix.  JAX runs on its own stream, so ratios to JAX compare *call* times.

On the simulator (``NUMBA_ENABLE_CUDASIM=1``) every figure is meaningless: the run only
checks that the script works end to end.
"""
import argparse
import datetime
import importlib.metadata
import os
import platform
import statistics
import sys
import time

import numpy as np

os.environ.setdefault("NUMJAX_PLATFORMS", "cuda")
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")   # JAX shares the GPU with numjax

import numjax                                  # noqa: E402
import numjax.numpy as jnp                     # noqa: E402
from numba import cuda                         # noqa: E402  (after the environment is set)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from first_call import chain, mlp_data, mlp_loss, selu, softmax   # noqa: E402

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
REPS = 7
CALL_BUDGET_S = 0.05        # host time one timed batch aims for
MAX_BATCH = 64              # calls per device-timed batch (keeps the launch queue short)
HOLD_ITERS = 2_000_000      # the hold kernel gives up after about this many microseconds

# Issue 12's speed targets: (direction, value).
TARGETS = {
    "elementwise": (">=", 0.80),     # fraction of the device's copy bandwidth
    "softmax": ("<=", 1.5),          # time / bandwidth bound (one read + one write)
    "cached_call": ("<=", 15e-6),    # seconds per cached call on a small device array
    "matmul": ("<=", 1 / 0.9),       # numjax time / cuBLAS time (issue 12: >= 90 % of cuBLAS)
    "mlp": ("<=", 1.1),              # numjax / JAX on the same GPU (issue 12)
}


# ---------------------------------------------------------------- programs (np_: numjax.numpy or jax.numpy)

def matmul(np_, a, b):
    return a @ b


def sgd_step(lib, np_, params, x, y, lr=0.01):
    grads = lib.grad(lambda p: mlp_loss(np_, p, x, y))(params)
    return lib.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)


# ---------------------------------------------------------------- timing

def numjax_stream():
    from numjax.cuda import memory
    return memory.stream(numjax.devices()[0].id)


def block_numjax(out):
    numjax.block_until_ready(out)


def batch_number(call, block, tiny):
    """How many calls one timed batch makes: about CALL_BUDGET_S of host time (2 with --tiny)."""
    block(call())
    if tiny:
        return 2
    t = time.perf_counter()
    block(call())
    one = time.perf_counter() - t
    return max(1, min(10000, int(CALL_BUDGET_S / max(one, 1e-7))))


def call_timer(call, block, number):
    """Seconds per call: ``number`` calls back to back, one block at the end."""
    def measure():
        t = time.perf_counter()
        out = None
        for _ in range(number):
            out = call()
        block(out)
        return (time.perf_counter() - t) / number
    return measure


def blocking_timer(call, block, number):
    """Seconds per call when every call is waited for."""
    def measure():
        t = time.perf_counter()
        for _ in range(number):
            block(call())
        return (time.perf_counter() - t) / number
    return measure


class DeviceTimer:
    """GPU seconds per call on numjax's stream, behind a hold kernel (module docstring).
    ``approximate`` records the rows whose hold ran out."""

    def __init__(self):
        self.stream = numjax_stream()
        self.approximate = set()
        self.hold_error = None
        if SIMULATOR:
            return
        self.release_stream = cuda.stream()
        self.flag = cuda.to_device(np.zeros(2, np.int32), stream=self.stream)
        self.zeros = cuda.pinned_array(2, np.int32)
        self.zeros[:] = 0
        self.one = cuda.pinned_array(1, np.int32)
        self.one[:] = 1
        self.hold = cuda.jit(_hold)

    def timer(self, label, call, block, number):
        if SIMULATOR:     # events carry no times there: the call time stands in
            return call_timer(call, block, number)
        number = min(number, MAX_BATCH)

        def measure():
            held = False
            if self.hold_error is None:
                try:
                    seconds, held = self._batch(call, block, number, hold=True)
                except Exception as err:   # the hold kernel itself failed: time without it
                    self.hold_error = f"{type(err).__name__}: {err}"
            if not held:
                self.approximate.add(label)
                seconds, _ = self._batch(call, block, number, hold=False)
            return seconds
        return measure

    def _batch(self, call, block, number, hold):
        stream = self.stream
        if hold:
            self.flag.copy_to_device(self.zeros, stream=stream)
            self.hold[1, 1, stream](self.flag, HOLD_ITERS)
        start, end = cuda.event(), cuda.event()
        start.record(stream)
        out = None
        for _ in range(number):
            out = call()
        end.record(stream)
        if hold:
            self.flag[0:1].copy_to_device(self.one, stream=self.release_stream)
        end.synchronize()
        block(out)
        held = not hold or self._flag_value()[1] == 0
        return start.elapsed_time(end) / 1e3 / number, held

    def _flag_value(self):
        return host_copy(self.flag, self.stream)


def _hold(flag, max_iters):
    """Spins until ``flag[0]`` is set (an atomic read, so every pass reads memory), or sets
    ``flag[1]`` after ``max_iters`` naps of about a microsecond."""
    i = 0
    while i < max_iters:
        if cuda.atomic.add(flag, 0, 0) != 0:
            return
        cuda.nanosleep(1000)
        i += 1
    flag[1] = 1


def interleaved(measures, reps):
    """Median of each measure, the measures taking turns ``reps`` times."""
    samples = {name: [] for name in measures}
    for _ in range(reps):
        for name, measure in measures.items():
            samples[name].append(measure())
    return {name: statistics.median(times) for name, times in samples.items()}


# ---------------------------------------------------------------- contestants

class Jax:
    """Real JAX on the same GPU, or ``why`` it is not measured."""

    def __init__(self):
        self.jax = self.jnp = None
        try:
            import jax
            import jax.numpy as jax_jnp
            device = jax.devices()[0]
        except Exception as err:   # not installed, or no usable backend
            self.why = f"JAX (GPU) not importable: not measured ({type(err).__name__}: {err})"
            return
        if device.platform != "gpu":
            self.why = f"JAX (GPU) not importable: not measured (JAX's device is {device.platform})"
            return
        self.jax, self.jnp, self.device, self.why = jax, jax_jnp, device, None

    def put(self, tree):
        return self.jax.device_put(tree, self.device)

    def block(self, out):
        self.jax.block_until_ready(out)


def put(tree):
    out = numjax.device_put(tree, numjax.devices()[0])
    numjax.block_until_ready(out)
    return out


def on_gpu(out):
    return all(getattr(leaf, "_on_device", False) for leaf in numjax.tree_util.tree_leaves(out))


def device_array(x):
    """The numba device array behind a device-resident numjax array."""
    return x.device_value()


class Bench:
    def __init__(self, args):
        self.args, self.reps = args, args.reps
        self.timer = DeviceTimer()
        self.jax = Jax()
        self.rows = []
        self.notes = []
        self.copy_cache = {}

    def number(self, call, block=block_numjax):
        return batch_number(call, block, self.args.tiny)

    def check_gpu(self, label, out):
        if not on_gpu(out):
            self.notes.append(f"{label}: numjax's result is not on the GPU (the program fell back "
                              "to the CPU backend): its figures are not the CUDA backend's")

    # -- the copy reference
    def copy_time(self, nbytes):
        """GPU seconds of the device's fastest copy of ``nbytes`` (float32 elements)."""
        if nbytes not in self.copy_cache:
            self.copy_cache[nbytes] = self._measure_copy(nbytes // 4)
        return self.copy_cache[nbytes]

    def _measure_copy(self, n):
        stream = self.timer.stream
        src = cuda.to_device(np.ones(n, np.float32), stream=stream)
        dst = cuda.device_array(n, np.float32, stream=stream)
        kernel = cuda.jit(_copy_kernel)
        blocks = -(-n // 256)

        def memcpy():
            dst.copy_to_device(src, stream=stream)
            return None

        def kernel_copy():
            kernel[blocks, 256, stream](src, dst)
            return None

        def block(_):
            stream.synchronize()
        number = self.number(memcpy, block)
        times = interleaved({"memcpy": self.timer.timer("copy", memcpy, block, number),
                             "kernel": self.timer.timer("copy", kernel_copy, block, number)}, self.reps)
        if not np.array_equal(host_copy(dst, stream), np.ones(n, np.float32)):
            raise AssertionError("the copy kernel did not copy")
        best = min(times.values())
        self.notes.append(f"copy of {n * 4 / 1e6:.3g} MB: memcpy {fmt_t(times['memcpy'])}, kernel "
                          f"{fmt_t(times['kernel'])}: {2 * n * 4 / best / 1e9:.0f} GB/s (read + write)")
        return best

    # -- rows
    def compare(self, label, program, host_args, extra=None):
        """gpu and call times of numjax.jit(program(jnp, ...)) on device-resident
        ``host_args``, the call time of JAX's jit of the same (if measured), and ``extra``
        measures, interleaved.  Returns the medians, the jitted function and its arguments."""
        args = put(host_args)
        f = numjax.jit(lambda *a: program(jnp, *a))
        call = lambda: f(*args)   # noqa: E731
        self.check_gpu(label, call())
        number = self.number(call)
        measures = {"gpu": self.timer.timer(label, call, block_numjax, number),
                    "call": call_timer(call, block_numjax, number)}
        if self.jax.why is None:
            g, jargs = self.jax.jax.jit(lambda *a: program(self.jax.jnp, *a)), self.jax.put(host_args)
            jcall = lambda: g(*jargs)   # noqa: E731
            measures["jax"] = call_timer(jcall, self.jax.block, batch_number(jcall, self.jax.block, self.args.tiny))
        measures.update(extra or {})
        return interleaved(measures, self.reps), f, args

    def elementwise(self, rng):
        for n in self.args.sizes:
            x = rng.standard_normal(n).astype(np.float32)
            for name, program in (("selu", selu), ("8-op chain", chain)):
                label = f"{name} {fmt_n(n)} f32"
                t, _, _ = self.compare(label, program, [x])
                copy = self.copy_time(x.nbytes)
                self.add(label, t, reference=("copy", copy), measured=copy / t["gpu"], unit="of copy BW",
                         target=TARGETS["elementwise"])

    def softmax(self, rng):
        rows, cols = self.args.softmax
        x = rng.standard_normal((rows, cols)).astype(np.float32)
        label = f"row softmax {rows}x{cols} f32"
        t, _, _ = self.compare(label, softmax, [x])
        bound = self.copy_time(x.nbytes)
        self.add(label, t, reference=("bound", bound), measured=t["gpu"] / bound, unit="x bound",
                 target=TARGETS["softmax"])

    def matmul(self, rng):
        n = self.args.matmul
        a = rng.standard_normal((n, n)).astype(np.float32)
        b = rng.standard_normal((n, n)).astype(np.float32)
        label = f"matmul {n}^2 f32"
        cublas = Cublas(self.timer.stream)
        extra = {}
        if cublas.why is None:
            da, db = device_array(put(a)), device_array(put(b))
            dc = cuda.device_array((n, n), np.float32, stream=self.timer.stream)
            gemm = lambda: cublas.gemm(da, db, dc, n)   # noqa: E731
            sync = lambda _: self.timer.stream.synchronize()   # noqa: E731
            extra["cublas"] = self.timer.timer("cuBLAS", gemm, sync, self.number(gemm, sync))
        t, f, args = self.compare(label, matmul, [a, b], extra)
        if cublas.why is None:
            ours = np.asarray(f(*args))
            cublas.gemm(da, db, dc, n)
            err = float(np.max(np.abs(ours - host_copy(dc, self.timer.stream))))
            self.notes.append(f"{label}: max |numjax - cuBLAS| = {err:.3g}; numjax's dot_general "
                              f"{'calls cuBLAS' if numjax_uses_cublas() else 'runs the tiled kernel'}")
            self.add(label, t, reference=("cuBLAS", t["cublas"]), measured=t["gpu"] / t["cublas"],
                     unit="x cuBLAS", target=TARGETS["matmul"])
        else:
            self.notes.append(cublas.why)
            self.add(label, t, reference=None, measured=None, unit="", target=TARGETS["matmul"])

    def cached_call(self):
        x_host = np.arange(8, dtype=np.float32)
        x = put(x_host)
        f = numjax.jit(lambda v: v * 2.0 + 1.0)
        call = lambda: f(x)   # noqa: E731
        self.check_gpu("cached call", call())
        number = self.number(call)
        measures = {"call": call_timer(call, block_numjax, number),
                    "blocking": blocking_timer(call, block_numjax, number)}
        if self.jax.why is None:
            g, jx = self.jax.jax.jit(lambda v: v * 2.0 + 1.0), self.jax.put(x_host)
            jcall = lambda: g(jx)   # noqa: E731
            jnumber = batch_number(jcall, self.jax.block, self.args.tiny)
            measures["jax"] = call_timer(jcall, self.jax.block, jnumber)
            measures["jax_blocking"] = blocking_timer(jcall, self.jax.block, jnumber)
        t = interleaved(measures, self.reps)
        target = TARGETS["cached_call"]
        for name, ours, theirs in (("cached jit call, 8 f32, no block per call", "call", "jax"),
                                   ("cached jit call, 8 f32, block per call", "blocking", "jax_blocking")):
            row = {"call": t[ours], "gpu": None, "jax": t.get(theirs)}
            self.add(name, row, reference=None, measured=t[ours], unit="s", target=target)

    def mlp(self, rng):
        sizes, batch = self.args.mlp_sizes, self.args.mlp_batch
        params, x, y = mlp_data(rng, sizes, batch)
        label = f"MLP {'-'.join(map(str, sizes))} b{batch} SGD step"
        step = numjax.jit(lambda p, a, b: sgd_step(numjax, jnp, p, a, b))
        state = {"numjax": put(params)}
        args = put([x, y])

        def call():
            state["numjax"] = step(state["numjax"], *args)
            return state["numjax"]
        self.check_gpu(label, call())
        measures = {"call": call_timer(call, block_numjax, self.number(call))}
        if self.jax.why is None:
            jstep = self.jax.jax.jit(lambda p, a, b: sgd_step(self.jax.jax, self.jax.jnp, p, a, b))
            state["jax"] = self.jax.put(params)
            jargs = self.jax.put([x, y])

            def jcall():
                state["jax"] = jstep(state["jax"], *jargs)
                return state["jax"]
            measures["jax"] = call_timer(jcall, self.jax.block, batch_number(jcall, self.jax.block, self.args.tiny))
        t = interleaved(measures, self.reps)
        t["gpu"] = None
        ratio = t["call"] / t["jax"] if t.get("jax") else None
        self.add(label, t, reference=None, measured=ratio, unit="x JAX", target=TARGETS["mlp"])

    def add(self, name, t, reference, measured, unit, target):
        self.rows.append({"name": name, "gpu": t.get("gpu"), "call": t["call"], "jax": t.get("jax"),
                          "reference": reference, "measured": measured, "unit": unit, "target": target,
                          "approx": name in self.timer.approximate})
        print(progress_line(self.rows[-1]), flush=True)


def _copy_kernel(src, dst):
    i = cuda.grid(1)
    if i < src.size:
        dst[i] = src[i]


def numjax_uses_cublas():
    from numjax.cuda import blas
    return bool(blas._handles)


class Cublas:
    """sgemm through nvmath-python's cuBLAS bindings on numjax's stream, or ``why`` not."""

    def __init__(self, stream):
        self.why = None
        if SIMULATOR:
            self.why = "cuBLAS: not measured on the simulator"
            return
        try:
            from nvmath.bindings import cublas
        except ImportError:
            self.why = "cuBLAS: nvmath-python not installed"
            return
        self.cublas = cublas
        self.handle = cublas.create()
        cublas.set_stream(self.handle, int(stream.handle))
        self.one, self.zero = np.ones(1, np.float32), np.zeros(1, np.float32)

    def gemm(self, a, b, c, n):
        """Row-major c = a @ b (n x n) as column-major c^T = b^T a^T."""
        cb, N = self.cublas, self.cublas.Operation.N
        cb.sgemm(self.handle, N, N, n, n, n, self.one.ctypes.data, pointer(b), n, pointer(a), n,
                 self.zero.ctypes.data, pointer(c), n)


def host_copy(device_array, stream):
    """The device array's value once everything queued on ``stream`` is done."""
    host = device_array.copy_to_host(stream=stream)
    stream.synchronize()
    return host


def pointer(array):
    return array.__cuda_array_interface__["data"][0]


# ---------------------------------------------------------------- report

def fmt_t(t):
    if t is None:
        return "–"
    if t < 1e-3:
        return f"{t * 1e6:.1f} µs"
    return f"{t * 1e3:.3f} ms" if t < 1 else f"{t:.2f} s"


def fmt_n(n):
    for unit, size in (("M", 1_000_000), ("k", 1_000)):
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


def fmt_measured(row):
    m, unit = row["measured"], row["unit"]
    if m is None:
        return "–"
    if unit == "of copy BW":
        return f"{m * 100:.0f} % of copy BW"
    if unit == "s":
        return fmt_t(m)
    return f"{m:.2f}{unit}"


def fmt_target(row):
    if row["target"] is None:
        return "–"
    op, value = row["target"]
    shown = {"of copy BW": f"{value * 100:.0f} %", "s": fmt_t(value)}.get(row["unit"], f"{value}{row['unit']}")
    return f"{op} {shown}"


def target_ratio(row):
    """measured / target, and whether the target is met."""
    if row["target"] is None or row["measured"] is None:
        return "–", "–"
    op, value = row["target"]
    r = row["measured"] / value
    met = r >= 1 if op == ">=" else r <= 1
    return f"{r:.2f}", "yes" if met else "no"


def progress_line(row):
    gpu = ("~" if row["approx"] else "") + fmt_t(row["gpu"])
    return (f"{row['name']:45} gpu {gpu:>11}  call {fmt_t(row['call']):>11}  jax {fmt_t(row['jax']):>11}  "
            f"{fmt_measured(row)} (target {fmt_target(row)})")


def header():
    device = numjax.devices()[0]
    try:
        nc = importlib.metadata.version("numba-cuda")
    except importlib.metadata.PackageNotFoundError:
        nc = "not installed"
    cc = getattr(device, "compute_capability", None)
    lines = [f"device: {device.device_kind}" + (f" (compute capability {cc[0]}.{cc[1]})" if cc else ""),
             f"date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
             f"numba-cuda {nc}, numpy {np.__version__}, Python {platform.python_version()}"]
    if SIMULATOR:
        lines.append("SIMULATOR (NUMBA_ENABLE_CUDASIM=1): every figure below is meaningless; "
                     "this run only checks the script")
    return lines


def table(bench):
    lines = ["| benchmark | numjax gpu | numjax call | reference | measured | target | "
             "measured/target | met | JAX call | numjax/JAX (call) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in bench.rows:
        ref = "–" if r["reference"] is None else f"{r['reference'][0]} {fmt_t(r['reference'][1])}"
        ratio, met = target_ratio(r)
        vs_jax = f"{r['call'] / r['jax']:.2f}" if r["jax"] else "–"
        gpu = ("~" if r["approx"] else "") + fmt_t(r["gpu"])
        lines.append(f"| {r['name']} | {gpu} | {fmt_t(r['call'])} | {ref} | {fmt_measured(r)} | "
                     f"{fmt_target(r)} | {ratio} | {met} | {fmt_t(r['jax'])} | {vs_jax} |")
    return lines


# ---------------------------------------------------------------- main

def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=lambda s: int(float(s)), nargs="+", default=[10_000_000, 100_000_000],
                   help="elementwise vector lengths (float32)")
    p.add_argument("--softmax", type=lambda s: tuple(int(v) for v in s.split("x")), default=(16384, 1024),
                   help="ROWSxCOLS of the row softmax")
    p.add_argument("--matmul", type=int, default=4096, help="edge of the square float32 matmul")
    p.add_argument("--mlp-sizes", type=lambda s: tuple(int(v) for v in s.split("-")), default=(784, 512, 512, 10))
    p.add_argument("--mlp-batch", type=int, default=128)
    p.add_argument("--reps", type=int, default=REPS, help="interleaved repetitions (medians)")
    p.add_argument("--tiny", action="store_true",
                   help="a few hundred elements everywhere and 2 repetitions (to check the script)")
    args = p.parse_args(argv)
    if args.tiny:
        args.sizes, args.softmax, args.matmul = [300], (8, 32), 16
        args.mlp_sizes, args.mlp_batch, args.reps = (16, 12, 12, 4), 8, 2
    return args


def main(argv=None):
    args = parse_args(argv)
    device = numjax.devices()[0]
    if device.platform != "gpu":
        sys.exit(f"numjax's device is {device} (platform {device.platform}): run with a CUDA GPU "
                 "(or NUMBA_ENABLE_CUDASIM=1 NUMJAX_PLATFORMS=cuda to check the script)")
    for line in header():
        print(line)
    bench = Bench(args)
    if bench.jax.why:
        print(bench.jax.why)
    else:
        print(f"JAX {bench.jax.jax.__version__} on {bench.jax.device.device_kind}")
    rng = np.random.default_rng(0)
    bench.elementwise(rng)
    bench.softmax(rng)
    bench.matmul(rng)
    bench.cached_call()
    bench.mlp(rng)
    print()
    print("\n".join(header()))
    print(bench.jax.why or f"JAX {bench.jax.jax.__version__} in the same process (call times interleaved)")
    for note in bench.notes:
        print(f"- {note}")
    if bench.timer.hold_error:
        print(f"- the hold kernel failed ({bench.timer.hold_error}): gpu figures are event times "
              "of batches without it")
    if bench.timer.approximate:
        print("- ~: the hold kernel ran out for these rows, so their gpu figure includes host gaps: "
              + ", ".join(sorted(bench.timer.approximate)))
    print(f"- medians of {args.reps} interleaved repetitions; gpu: CUDA events behind a hold kernel; "
          "call: back-to-back calls, one block at the end")
    print()
    print("\n".join(table(bench)))


if __name__ == "__main__":
    main()
