"""tests/distributed: numjax across processes (MPI). Each test launches scripts/ under
``mpiexec -n N`` through mpirun.run (with a timeout); without mpi4py or mpiexec the MPI tests
skip with the reason "mpi4py/mpiexec not installed: tox -e mpi"."""
import sys
import pathlib

sys.path.insert(0, str(pathlib.Path(__file__).parent))
