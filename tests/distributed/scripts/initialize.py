"""numjax.distributed.initialize's argument checks; prints one line per case."""
import os
import warnings

import numjax as jax

case = os.environ["INIT_CASE"]
try:
    if case == "no_args":
        jax.distributed.initialize()
    elif case == "two_processes":
        jax.distributed.initialize("localhost:1234", num_processes=2, process_id=0)
    elif case == "single":
        jax.distributed.initialize(num_processes=1, process_id=0)
        print("initialized", jax.distributed.is_initialized(), jax.process_count(), jax.devices())
        jax.distributed.shutdown()
        print("after shutdown", jax.distributed.is_initialized())
    elif case == "after_devices":
        jax.devices()
        jax.distributed.initialize()
    elif case == "wrong_count":       # under mpiexec -n 2
        jax.distributed.initialize(num_processes=3)
    elif case == "uninitialized":     # under mpiexec -n 2
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            # one string per line: the processes' output interleaves at each write
            print(f"count {jax.process_count()} {len(jax.devices())}", flush=True)
        print(f"warned {[str(w.message) for w in caught]}", flush=True)
    elif case == "after_shutdown":    # under mpiexec -n 2
        import numpy as np
        jax.distributed.initialize()
        jax.distributed.shutdown()
        print(f"devices {jax.process_index()} {jax.process_count()} {jax.local_devices()}", flush=True)
        jax.pmap(lambda v: jax.lax.psum(v, "i"), "i")(np.ones((1, 2)))
    elif case == "twice":             # under mpiexec -n 2
        jax.distributed.initialize()
        jax.distributed.initialize()
except Exception as e:  # noqa: BLE001  (the test reads the class and message)
    print(f"{type(e).__name__}: {e}", flush=True)
