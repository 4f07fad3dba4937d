"""Process 1 fails (raise, crash, kill, exit, hang, skip the psum, or a different shape, on a first or a
later call) while the others enter a psum."""
import os
import signal
import sys
import time

import numpy as np

import _worker
import numjax as jax
from numjax import lax

p, local = _worker.init()
mode = os.environ["FAILURE_MODE"]
x = np.ones((local, 3), np.float32)
if p == 1 and mode == "raise":
    raise RuntimeError("deliberate failure in process 1")
if p == 1 and mode == "hang":
    time.sleep(600)
if p == 1 and mode == "crash":
    os._exit(3)                       # dies without Python's cleanup (no excepthook)
if p == 1 and mode == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
if p == 1 and mode == "exit":
    sys.exit(0)                       # leaves quietly, as if finished
if p == 1 and mode == "shape":
    x = np.ones((local, 4), np.float32)
if mode in ("shape_after_plan", "shape_both_planned"):
    # pmap remembers each argument signature's call plan: a later call with other shapes on
    # one process must still be compared, whether the other process reuses a plan or not.
    psum = jax.pmap(lambda v: lax.psum(v, "i"), "i")
    x4 = np.ones((local, 4), np.float32)
    for arg in ([x, x] if mode == "shape_after_plan" else [x, x4, x, x4]):
        print(psum(arg), flush=True)
    print(psum(x4 if p == 1 else x), flush=True)
if p == 1 and mode == "skip":     # same shapes, but no collective: process 0 waits in its psum
    print(jax.pmap(lambda v: v * 2, "i")(x), flush=True)
    time.sleep(30)
    sys.exit(0)
if mode == "diverge":    # a loop holding a collective, run more times on process 1
    def body(c):
        return c[0] + 1, lax.psum(c[1], "i")
    loop = lambda v: lax.while_loop(lambda c: c[0] < 2 + lax.axis_index("i"), body, (0, v))[1]
    print(jax.pmap(loop, "i")(x), flush=True)
print(jax.pmap(lambda v: lax.psum(v, "i"), "i")(x), flush=True)
