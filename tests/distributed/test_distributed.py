"""Multi-process pmap, devices and multihost_utils under mpiexec, against the single-process
run over the same total number of CPU devices."""
import functools

import numpy as np
import pytest

from mpirun import needs_mpi, run

# Float sums (psum, pmean, psum_scatter of floats) may add the shards in another order across
# processes than in one (MPI chooses its reduction tree), so they agree to rounding; everything
# else must be bit-identical.
FLOAT_SUMS = {"psum_f", "pmean", "scatter_tiled", "psum_c64"}
LAYOUTS = [pytest.param(2, 1, marks=pytest.mark.mpi_smoke, id="2x1"), pytest.param(4, 1, id="4x1"),
           pytest.param(2, 2, id="2x2")]


@functools.lru_cache(maxsize=None)
def collectives(processes, local):
    return run("collectives.py", processes, local)


@functools.lru_cache(maxsize=None)
def reference(total):
    return run("collectives.py", None, total)


@needs_mpi
@pytest.mark.parametrize("processes,local", LAYOUTS)
def test_process_and_devices(processes, local):
    r = collectives(processes, local)
    assert r.returncode == 0, r
    assert len(r.results) == processes, r
    total = processes * local
    for k, res in enumerate(r.results):
        assert int(res["process_index"]) == k and int(res["process_count"]) == processes
        assert int(res["local_device_count"]) == local
        assert res["device_ids"].tolist() == list(range(total))
        assert res["device_processes"].tolist() == [i // local for i in range(total)]
        assert res["local_ids"].tolist() == list(range(k * local, (k + 1) * local))
        assert res["process_indices"].tolist() == list(range(processes))
        assert res["local_of_last"].tolist() == list(range(total - local, total))


@needs_mpi
@pytest.mark.parametrize("processes,local", LAYOUTS)
def test_collectives_match_single_process(processes, local):
    r, ref = collectives(processes, local), reference(processes * local)
    assert r.returncode == 0, r
    assert ref.returncode == 0, ref
    (single,) = ref.results
    keys = [k for k in single if k not in ("process_index", "process_count", "local_device_count",
                                           "device_ids", "device_processes", "local_ids",
                                           "process_indices", "local_of_last")]
    assert len(keys) == 22
    for key in keys:
        got, want = r.concat(key), single[key]
        assert got.shape == want.shape and got.dtype == want.dtype, key
        if key in FLOAT_SUMS:
            np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6, err_msg=key)
        else:
            np.testing.assert_array_equal(got, want, err_msg=key)


@needs_mpi
@pytest.mark.mpi_smoke
def test_multihost_utils():
    r = run("multihost.py", 2)
    assert r.returncode == 0, r
    for res in r.results:
        np.testing.assert_array_equal(res["stacked_v"], [[0, 1, 2], [10, 11, 12]])
        np.testing.assert_array_equal(res["stacked_s"], [0, 1])
        np.testing.assert_array_equal(res["tiled_v"], [0, 1, 2, 10, 11, 12])
        np.testing.assert_array_equal(res["tiled_s"], [0, 1])     # scalars are stacked even tiled
        np.testing.assert_array_equal(res["zero_v"], [0, 1, 2])
        np.testing.assert_array_equal(res["last_v"], [10, 11, 12])
        assert bool(res["differs"])


def _failure(mode, timeout="60"):
    return run("failure.py", 2, env={"FAILURE_MODE": mode, "NUMJAX_MPI_TIMEOUT": timeout}, timeout=120)


@needs_mpi
@pytest.mark.mpi_smoke
def test_failed_process_ends_the_job_with_its_name():
    r = _failure("raise")
    assert r.returncode != 0, r
    assert r.seconds < 30, r       # the surviving process must not wait out its 60 s timeout
    assert "numjax: process 1 failed: RuntimeError: deliberate failure in process 1" in r.stderr, r


@needs_mpi
def test_hung_process_times_out_with_a_clear_error():
    r = _failure("hang", timeout="3")
    assert r.returncode != 0, r
    assert r.seconds < 60, r
    assert ("numjax: process 0 of 2 waited 3 s in pmap (comparing the processes' argument shapes: "
            "1 local shards of float32[3]) and not every process joined it") in r.stderr, r
    assert r.stderr.count("waited 3 s") == 2, r     # the message, then the abort line repeating it
    assert "numjax: process 0 failed: CollectiveTimeoutError" in r.stderr, r


@needs_mpi
def test_timeout_in_a_collective_names_it():
    r = _failure("skip", timeout="3")
    assert r.returncode != 0, r
    assert r.seconds < 25, r       # the abort also ends process 1's 30 s sleep
    assert ("numjax: process 0 of 2 waited 3 s in pmap psum over axis 'i' (MPI allreduce sum of "
            "float32[3]) and not every process joined it") in r.stderr, r


@needs_mpi
@pytest.mark.parametrize("mode", ["crash", "exit"])
def test_process_dying_or_leaving_early_ends_the_job(mode):
    """A crash (no Python cleanup) ends the job through mpiexec; a process leaving early with
    status 0 makes the others time out with the message."""
    r = _failure(mode, timeout="3")
    assert r.returncode != 0, r
    assert r.seconds < 30, r
    if mode == "exit":
        assert "numjax: process 0 failed: CollectiveTimeoutError" in r.stderr, r


@needs_mpi
@pytest.mark.parametrize("mode", ["shape", "shape_after_plan", "shape_both_planned"])
def test_processes_disagreeing_on_shapes_is_an_error(mode):
    r = _failure(mode)
    assert r.returncode != 0, r
    assert r.seconds < 30, r
    assert ("they differ: process 0: 1 local shards of float32[3]; process 1: 1 local shards of "
            "float32[4]") in r.stderr, r
    assert "ValueError: pmap across processes" in r.stderr, r


@needs_mpi
def test_loop_running_differently_across_processes_is_an_error():
    r = _failure("diverge")
    assert r.returncode != 0, r
    assert r.seconds < 30, r
    assert r.stderr.count("must run the same number of iterations on every device") >= 2, r
