"""numjax quickstart: the seed tutorial's programs, with `import numjax as jax`.

Prints jaxprs, times a jitted selu against the eager one, and shows static
arguments and the error JAX raises for Python control flow on traced values.
"""
import timeit
from functools import partial

import numjax as jax
import numjax.numpy as jnp
from numjax import make_jaxpr


def my_function(x, y):
    return x * y + 2


def log2_with_print(x):
    print("printed x:", x)
    ln_x = jnp.log(x)
    ln_2 = jnp.log(2.0)
    return ln_x / ln_2


def square_if_gt_2(x):
    if x.ndim > 2:
        return x**2
    return x


def selu(x, alpha=1.67, lambda_=1.05):
    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def f(x):
    if x > 0:
        return x
    return 2 * x


def g(x, n):
    i = 0
    while i < n:
        i += 1
    return x + i


@jax.jit
def loop_body(prev_i):
    return prev_i + 1


def g_inner_jitted(x, n):
    i = 0
    while i < n:
        i = loop_body(i)
    return x + i


def best_of(fn, number):
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def main():
    print(make_jaxpr(my_function)(3., 4.))
    print(jax.make_jaxpr(log2_with_print)(3.))
    print(make_jaxpr(square_if_gt_2)(jnp.array([1, 2, 3])))
    print(make_jaxpr(square_if_gt_2)(jnp.array([1, 2, 3, 4, 5])))

    x = jnp.arange(1000000)
    eager = best_of(lambda: selu(x).block_until_ready(), 10)
    selu_jit = jax.jit(selu)
    selu_jit(x).block_until_ready()  # warm up: trace and compile once
    jitted = best_of(lambda: selu_jit(x).block_until_ready(), 100)
    print(f"selu eager: {eager * 1e3:.2f} ms per loop")
    print(f"selu jit:   {jitted * 1e3:.2f} ms per loop")

    try:
        jax.jit(f)(10)
    except jax.errors.TracerBoolConversionError as err:
        print(f"TracerBoolConversionError: {err}")

    print(repr(g_inner_jitted(10, 20)))
    print(jax.jit(f, static_argnums=0)(10))
    print(jax.jit(g, static_argnames=["n"])(10, 20))

    @partial(jax.jit, static_argnames=["n"])
    def g_jit_decorated(x, n):
        return g(x, n)

    print(g_jit_decorated(10, 20))


if __name__ == "__main__":
    main()
