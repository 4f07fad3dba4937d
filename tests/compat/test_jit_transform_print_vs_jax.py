"""make_jaxpr of transformations of a jitted function prints exactly as real JAX prints it:
the jit stays one staged equation under grad/jvp/vmap (partial evaluation forwards known
inputs instead of returning them as residuals; unread results print as `_` inside and out)."""
import pytest

jax = pytest.importorskip("jax", reason="real JAX not installed (tox -e compat)")
import jax.numpy as jjnp  # noqa: E402

import numjax as nj  # noqa: E402
import numjax.numpy as njnp  # noqa: E402

jax.config.update("jax_platform_name", "cpu")


def _programs(lib, np_):
    @lib.jit
    def f(x):
        return np_.sin(x) * x

    @lib.jit
    def h(x, y):
        return np_.tanh(x * y) + np_.exp(x)

    @lib.jit
    def g(x):
        return np_.sum(np_.sin(x) ** 2)

    ones = np_.ones(3)
    return {
        "jit": (f, (ones,)),
        "grad_jit": (lib.grad(f), (1.0,)),
        "vmap_jit": (lib.vmap(f), (ones,)),
        "jvp_jit_same_operand_twice": (lambda x: lib.jvp(f, (x,), (x,)), (1.0,)),
        "jit_then_add": (lambda x: f(x) + 1, (ones,)),
        "grad_jit_two_args": (lib.grad(h, argnums=(0, 1)), (1.0, 2.0)),
        "grad_jit_sum": (lib.grad(g), (ones,)),
        "jit_grad_jit": (lib.jit(lib.grad(g)), (ones,)),
        "value_and_grad_of_jit": (lib.value_and_grad(lambda x: g(x) * 2), (ones,)),
    }


NAMES = sorted(_programs(nj, njnp))


@pytest.mark.parametrize("name", NAMES)
def test_make_jaxpr_text_matches_jax(name):
    fn, args = _programs(nj, njnp)[name]
    jfn, jargs = _programs(jax, jjnp)[name]
    assert str(nj.make_jaxpr(fn)(*args)) == str(jax.make_jaxpr(jfn)(*jargs))
