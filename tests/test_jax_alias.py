"""`python -m numjax script.py` and `numjax.install_as_jax()`: `import jax` gives numjax."""
import os
import pathlib
import subprocess
import sys
import textwrap

ROOT = pathlib.Path(__file__).resolve().parent.parent

SCRIPT = textwrap.dedent("""
    import sys
    import jax, jax.numpy as jnp
    from jax import lax
    import numjax
    assert jax is numjax and jnp is numjax.numpy and lax is numjax.lax
    assert jnp.__spec__.name == "numjax.numpy"
    print(jax.jit(lambda x: lax.fori_loop(0, 3, lambda i, c: c + 1.0, x))(jnp.ones(2)), sys.argv[1:])
    try:
        import jax.no_such_module
    except ModuleNotFoundError as e:
        print("missing:", e.name)
""")


def _run(args, tmp_path):
    env = dict(os.environ, NUMJAX_CACHE_DIR=str(tmp_path / "cache"))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300)


def test_python_m_numjax_runs_a_jax_script(tmp_path):
    (tmp_path / "script.py").write_text(SCRIPT)
    proc = _run(["-m", "numjax", "script.py", "a", "b"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["[4. 4.] ['a', 'b']", "missing: jax.no_such_module"]


def test_install_as_jax_from_inside_a_program(tmp_path):
    (tmp_path / "script.py").write_text("import numjax\nnumjax.install_as_jax()\n" + SCRIPT)
    proc = _run(["script.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == "[4. 4.] []"


def test_python_m_numjax_runs_the_quickstart(tmp_path):
    proc = _run(["-m", "numjax", str(ROOT / "examples" / "quickstart.py")], tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_usage_without_a_script(tmp_path):
    proc = _run(["-m", "numjax"], tmp_path)
    assert proc.returncode == 2 and "usage" in proc.stderr
