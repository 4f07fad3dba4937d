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
    assert len(keys) == 25
    for key in keys:
        got, want = r.concat(key), single[key]
        assert got.shape == want.shape and got.dtype == want.dtype, key
        if key in FLOAT_SUMS:
            np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6, err_msg=key)
        else:
            np.testing.assert_array_equal(got, want, err_msg=key)


@needs_mpi
@pytest.mark.parametrize("processes,local", LAYOUTS)
def test_all_to_all_across_processes_matches_numpy(processes, local):
    """One MPI Alltoall per all_to_all: each process's shards get their blocks from every shard."""
    from test_all_to_all import all_to_all
    r, n = collectives(processes, local), processes * local
    assert r.returncode == 0, r
    rng = np.random.default_rng(0)
    xf = rng.standard_normal((n, 4, 2 * n)).astype(np.float32)
    xi = rng.integers(-50, 50, (n, 3, n)).astype(np.int32)
    np.testing.assert_array_equal(r.concat("all_to_all"), all_to_all(xi, 1, 0, True))
    np.testing.assert_array_equal(r.concat("all_to_all_untiled"), all_to_all(xi, 1, 0, False))
    np.testing.assert_array_equal(r.concat("all_to_all_same_axis"), all_to_all(xf, 1, 1, True))
    y = all_to_all(xf, 1, 0, True)
    ct = np.cos(y) * np.arange(8.0 * n).reshape(4 * n, 2)
    np.testing.assert_allclose(r.concat("all_to_all_grad"), all_to_all(ct, 0, 1, True), rtol=1e-5, atol=1e-6)


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


def _failure(mode, timeout="60", mpiexec_args=()):
    return run("failure.py", 2, env={"FAILURE_MODE": mode, "NUMJAX_MPI_TIMEOUT": timeout}, timeout=120,
               mpiexec_args=mpiexec_args)


def _assert_failed_within(r, seconds):
    """The job ended with an error, well before the processes' timeout (nobody waited it out)."""
    assert r.returncode != 0, r
    assert r.seconds < seconds, r


@needs_mpi
@pytest.mark.mpi_smoke
def test_failed_process_ends_the_job_with_its_name():
    r = _failure("raise")
    _assert_failed_within(r, 30)       # the surviving process must not wait out its 60 s timeout
    assert "numjax: process 1 failed: RuntimeError: deliberate failure in process 1" in r.stderr, r


@needs_mpi
def test_hung_process_times_out_with_a_clear_error():
    r = _failure("hang", timeout="3")
    _assert_failed_within(r, 60)
    assert ("numjax: process 0 of 2 waited 3 s in pmap (comparing the processes' argument shapes: "
            "1 local shards of float32[3]) and not every process joined it") in r.stderr, r
    assert r.stderr.count("waited 3 s") == 2, r     # the message, then the abort line repeating it
    assert "numjax: process 0 failed: CollectiveTimeoutError" in r.stderr, r


@needs_mpi
def test_timeout_in_a_collective_names_it():
    r = _failure("skip", timeout="3")
    _assert_failed_within(r, 25)       # the abort also ends process 1's 30 s sleep
    assert ("numjax: process 0 of 2 waited 3 s in pmap psum over axis 'i' (MPI allreduce sum of "
            "float32[3]) and not every process joined it") in r.stderr, r


@needs_mpi
@pytest.mark.parametrize("mode", ["crash", "kill"])
def test_process_dying_ends_the_job(mode):
    """mpich's mpiexec ends the whole job at once when a process dies abnormally (os._exit(3),
    SIGKILL): it names that process's pid and exit status, and kills the others before they
    could print anything; the others must not be left waiting for their timeout."""
    r = _failure(mode, timeout="60")
    _assert_failed_within(r, 30)


@needs_mpi
@pytest.mark.parametrize("mode", ["crash", "exit"])
def test_dead_process_is_named(mode):
    """Where the survivors outlive the dead process (it left with status 0, or exited with an
    error under mpiexec -disable-auto-cleanup), numjax names it well before the 60 s timeout.
    (A process killed by a signal makes mpich's mpiexec SIGKILL the others even then.)"""
    r = _failure(mode, timeout="60", mpiexec_args=("-disable-auto-cleanup",))
    _assert_failed_within(r, 30)
    named = {"crash": "numjax: process 0 of 2: mpiexec reports a failed process of the job: process 1 (pid ",
             "exit": "numjax: process 0 of 2 stopped waiting in pmap"}[mode]
    assert named in r.stderr and "process 1 (pid " in r.stderr and "left the job" in r.stderr, r


@needs_mpi
def test_process_leaving_early_is_named_under_default_mpiexec():
    r = _failure("exit", timeout="60")
    _assert_failed_within(r, 30)
    assert ("numjax: process 0 of 2 stopped waiting in pmap (comparing the processes' argument shapes: "
            "1 local shards of float32[3]): process 1 (pid ") in r.stderr, r


@needs_mpi
def test_every_survivor_of_four_names_the_process_that_left():
    r = run("failure.py", 4, env={"FAILURE_MODE": "exit", "NUMJAX_MPI_TIMEOUT": "60"}, timeout=120)
    _assert_failed_within(r, 30)
    named = [k for k in (0, 2, 3) if f"numjax: process {k} of 4 stopped waiting in pmap" in r.stderr]
    assert named, r                # the first to notice aborts the job, which may end the others
    assert "process 1 (pid " in r.stderr and "left the job (its program ended" in r.stderr, r


@needs_mpi
def test_timeout_says_every_process_still_runs():
    r = _failure("skip", timeout="3")
    assert "every process still runs: one may be running a different computation, or be stuck" in r.stderr, r


@needs_mpi
@pytest.mark.parametrize("mode", ["shape", "shape_after_plan", "shape_both_planned"])
def test_processes_disagreeing_on_shapes_is_an_error(mode):
    r = _failure(mode)
    _assert_failed_within(r, 30)
    assert ("they differ: process 0: 1 local shards of float32[3]; process 1: 1 local shards of "
            "float32[4]") in r.stderr, r
    assert "ValueError: pmap across processes" in r.stderr, r


@needs_mpi
def test_loop_running_differently_across_processes_is_an_error():
    r = _failure("diverge")
    _assert_failed_within(r, 30)
    assert r.stderr.count("must run the same number of iterations on every device") >= 2, r
