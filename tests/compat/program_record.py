"""Runs a recording program (one that prints `RESULT-JSON {...}` last) under real JAX or under
numjax (`python -m numjax`) on 4 CPU devices, and returns the recorded dict."""
import json
import os
import subprocess
import sys


def record(program, on, devices=4):
    env = dict(os.environ, NUMJAX_NUM_CPU_DEVICES=str(devices),
               XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}")
    runner = ["-m", "numjax"] if on == "numjax" else []
    proc = subprocess.run([sys.executable, *runner, str(program)], capture_output=True, text=True,
                          env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT-JSON ")][-1]
    return json.loads(line[len("RESULT-JSON "):])
