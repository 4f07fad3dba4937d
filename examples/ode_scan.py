"""Integrate a damped harmonic oscillator with lax.scan under jit (RK4), against numpy.

    x'' + 2 zeta omega x' + omega^2 x = 0,   x(0) = 1, x'(0) = 0

The jitted scan is one compiled loop; the same RK4 written as a numpy loop gives
the reference, and the closed-form solution measures the integration error.
With ``--extras``, vmap also integrates a batch of damping ratios at once and grad
gives the sensitivity of x(t=1) to the damping ratio through 1,000 scan steps
(another, larger Numba compile: slow on a cold cache).

Run: python examples/ode_scan.py [--extras]
(The first run compiles with Numba; compiled code is cached on disk for later runs.)
"""
import sys
import time

import numpy as np

import numjax as jax
import numjax.numpy as jnp
from numjax import lax

OMEGA = 2.0
DT = 0.001
STEPS = 10_000          # t = 0 .. 10


def rhs(state, zeta):
    x, v = state[0], state[1]
    return jnp.stack([v, -2.0 * zeta * OMEGA * v - OMEGA ** 2 * x])


def rk4_step(state, zeta):
    k1 = rhs(state, zeta)
    k2 = rhs(state + 0.5 * DT * k1, zeta)
    k3 = rhs(state + 0.5 * DT * k2, zeta)
    k4 = rhs(state + DT * k3, zeta)
    return state + (DT / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def trajectory(state0, zeta, steps=STEPS):
    def step(state, _):
        new = rk4_step(state, zeta)
        return new, new[0]                 # carry the state, record the position
    return lax.scan(step, state0, None, length=steps)


integrate = jax.jit(trajectory)


def integrate_numpy(state0, zeta):
    def f(s):
        return np.array([s[1], -2.0 * zeta * OMEGA * s[1] - OMEGA ** 2 * s[0]], np.float32)
    s = np.array(state0, np.float32)
    xs = np.empty(STEPS, np.float32)
    for n in range(STEPS):
        k1 = f(s)
        k2 = f(s + np.float32(0.5 * DT) * k1)
        k3 = f(s + np.float32(0.5 * DT) * k2)
        k4 = f(s + np.float32(DT) * k3)
        s = s + np.float32(DT / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4)
        xs[n] = s[0]
    return s, xs


def exact_position(t, zeta):
    wd = OMEGA * np.sqrt(1 - zeta ** 2)
    return np.exp(-zeta * OMEGA * t) * (np.cos(wd * t) + zeta * OMEGA / wd * np.sin(wd * t))


state0 = jnp.array([1.0, 0.0])
zeta = jnp.float32(0.1)

t0 = time.perf_counter()
final, xs = integrate(state0, zeta)
final.block_until_ready()
t_first = time.perf_counter() - t0
t0 = time.perf_counter()
final, xs = integrate(state0, zeta)
final.block_until_ready()
t_jit = time.perf_counter() - t0

t0 = time.perf_counter()
np_final, np_xs = integrate_numpy([1.0, 0.0], 0.1)
t_np = time.perf_counter() - t0

t_end = STEPS * DT
print(f"damped oscillator, omega={OMEGA}, zeta=0.1, RK4 with dt={DT}, {STEPS} steps to t={t_end:g}")
print("final state (x, v), lax.scan under jit:", np.asarray(final))
print("final state (x, v), numpy RK4 loop:    ", np_final)
print("exact x(t_end):                        ", exact_position(t_end, 0.1))
print("max |scan - numpy| over the trajectory:", float(np.max(np.abs(np.asarray(xs) - np_xs))))
ts = DT * np.arange(1, STEPS + 1)
print("max |scan - exact| over the trajectory:", float(np.max(np.abs(np.asarray(xs) - exact_position(ts, 0.1)))))
print(f"timings: jit first call (trace + compile) {t_first:.2f} s, compiled call {t_jit * 1e3:.2f} ms, "
      f"numpy loop {t_np * 1e3:.1f} ms")

# A batch of damping ratios at once (vmap), and the sensitivity of x(t=1) to zeta for each
# (grad through 1,000 scan steps), in one more compiled function.
def x_at_1(state0, z):
    return trajectory(state0, z, steps=1000)[0][0]


@jax.jit
def batch_and_sensitivity(state0, zetas):
    finals, _ = jax.vmap(trajectory, in_axes=(None, 0))(state0, zetas)
    return finals, jax.vmap(jax.grad(x_at_1, argnums=1), in_axes=(None, 0))(state0, zetas)


if "--extras" not in sys.argv[1:]:
    sys.exit(0)
zetas = jnp.array([0.05, 0.1, 0.3, 0.7])
t0 = time.perf_counter()
finals, dxdz = batch_and_sensitivity(state0, zetas)
print(f"\nvmap + grad over {zetas.shape[0]} damping ratios (compile + run {time.perf_counter() - t0:.2f} s)")
print("zeta:             ", np.asarray(zetas))
print("final x, scan:    ", np.asarray(finals[:, 0]))
print("final x, exact:   ", exact_position(t_end, np.asarray(zetas)))
eps = 1e-4
fd = (exact_position(1.0, np.asarray(zetas, np.float64) + eps) -
      exact_position(1.0, np.asarray(zetas, np.float64) - eps)) / (2 * eps)
print("dx(1)/dzeta, grad:", np.asarray(dxdz))
print("dx(1)/dzeta, exact finite difference:", fd)
