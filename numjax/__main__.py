"""``python -m numjax script.py [args]`` runs a JAX script (and the libraries it imports) on
numjax: every ``import jax`` resolves to numjax.  ``python -m numjax -m module [args]`` runs a
module the same way."""
import os
import runpy
import sys

from .jax_alias import install_as_jax

_USAGE = "usage: python -m numjax script.py [args...]  |  python -m numjax -m module [args...]"


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(_USAGE, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    install_as_jax()
    if argv[0] == "-m":
        if len(argv) < 2:
            print(_USAGE, file=sys.stderr)
            return 2
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    script = argv[0]
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(script))   # as `python script.py` would
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
