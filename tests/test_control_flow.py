"""lax control flow: cond, switch, while_loop, fori_loop, scan, map, select.

Every function in the SHARED block below is evaluated under eager execution,
jit, grad, jvp, vmap and their compositions. ``EXPECTED`` holds what real
JAX 0.10.2 returns for the same block (values, dtype and weak type per leaf);
it was produced by executing the SHARED block with ``jax``/``jax.numpy``/
``jax.lax`` bound to real JAX and is committed here as plain data (numjax
never imports JAX). Further tests check against Python/numpy loops, JAX's
error messages, and that jit lowers loops to real compiled loops.
"""
import re
import time

import numpy as np
import pytest

import numjax as jax
import numjax.numpy as jnp
from numjax import lax

# ---- BEGIN SHARED
X3 = np.array([0.2, -0.7, 1.3], np.float32)
Y = np.float32(1.5)
XS = np.linspace(-1.0, 1.0, 6).astype(np.float32)
M = ((np.arange(12, dtype=np.float32).reshape(4, 3) - 5.0) / 4.0).astype(np.float32)
PREDS = np.array([True, False, False, True])
IDX = np.array([-3, 0, 1, 2, 9], np.int32)
SQ = np.array([2.0, 9.0, 0.25, 1e4], np.float32)
N4 = np.array([0, 1, 3, 5], np.int32)
ONES3 = np.ones(3, np.float32)


def cond_tree(p, x, y):
    return lax.cond(p,
                    lambda o: {"u": o[0] * 2.0 + o[1]["a"], "v": jnp.sin(o[0])},
                    lambda o: {"u": o[0] - o[1]["a"] ** 2, "v": jnp.cos(o[0]) * o[1]["a"]},
                    (x, {"a": y}))


def cond_loss(x, y, p):
    out = cond_tree(p, x, y)
    return jnp.sum(out["u"] * out["v"])


def cond_on_value(x):
    return lax.cond(jnp.sum(x) > 0, lambda v: v * v, lambda v: -v, x)


def cond_closure(x):
    w = jnp.array([1.0, 2.0, 3.0])
    return lax.cond(x[0] > 0, lambda v: v * w, lambda v: v + w, x)


def switch3(i, x):
    return lax.switch(i, [lambda v: jnp.sin(v), lambda v: v * v * 3.0, lambda v: jnp.exp(-v)], x)


def while_power(x, n):
    return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * x),
                          (jnp.int32(0), jnp.ones_like(x)))[1]


def while_newton_sqrt(a):
    def cond(c):
        x, k = c
        return (jnp.abs(x * x - a) > 1e-6 * a) & (k < 100)

    def body(c):
        x, k = c
        return 0.5 * (x + a / x), k + 1
    return lax.while_loop(cond, body, (a, jnp.int32(0)))


def fori_static(x):
    return lax.fori_loop(0, 5, lambda i, c: c * x + i, jnp.ones_like(x))


def fori_dynamic(x, n):
    return lax.fori_loop(jnp.int32(0), n, lambda i, c: c * 0.9 + i.astype(jnp.float32) * x, x)


def fori_weak_carry():
    return lax.fori_loop(0, 3, lambda i, c: c + 0.5, 0)


def scan_tree(xs, ys):
    def step(carry, inp):
        a, b = inp
        s = carry["s"] + a * b
        return {"s": s, "n": carry["n"] + 1}, (s, {"prod": a * b, "neg": -a})
    return lax.scan(step, {"s": jnp.float32(0.0), "n": jnp.int32(0)}, (xs, ys))


def scan_rnn(w, h0, xs):
    def step(h, x):
        h = jnp.tanh(w * h + x)
        return h, h * h
    h, ys = lax.scan(step, h0, xs)
    return h, ys


def scan_rnn_loss(w, h0, xs):
    h, ys = scan_rnn(w, h0, xs)
    return jnp.sum(h) + jnp.sum(ys)


def scan_length_only(x):
    return lax.scan(lambda c, _: (c * 1.5, c), x, None, length=4)


def scan_reverse(xs):
    return lax.scan(lambda c, x: (c + x, c * x), jnp.float32(0.0), xs, reverse=True)


def map_tree(m):
    return lax.map(lambda v: (v ** 2 + 1.0, jnp.sum(v)), m)


def select_ops(m):
    return lax.select(m > 0, m, -2.0 * m), lax.select_n(jnp.int32(1), m, m * 3.0)


CASES = {
    # eager values
    "cond_true": lambda: cond_tree(True, X3, Y),
    "cond_false": lambda: cond_tree(False, X3, Y),
    "cond_int_pred_0": lambda: cond_tree(0, X3, Y),
    "cond_int_pred_3": lambda: cond_tree(jnp.int32(3), X3, Y),
    "cond_int_pred_neg": lambda: cond_tree(-1, X3, Y),
    "cond_float_pred": lambda: cond_tree(jnp.float32(0.5), X3, Y),
    "cond_on_value": lambda: (cond_on_value(X3), cond_on_value(-X3)),
    "cond_closure": lambda: (cond_closure(X3), cond_closure(-X3)),
    "switch_clamped": lambda: [switch3(i, X3) for i in [-3, 0, 1, 2, 9]],
    "while_power": lambda: while_power(X3, 3),
    "while_newton_sqrt": lambda: while_newton_sqrt(jnp.float32(2.0)),
    "fori_static": lambda: fori_static(X3),
    "fori_dynamic": lambda: fori_dynamic(X3, jnp.int32(4)),
    "fori_weak_carry": fori_weak_carry,
    "scan_tree": lambda: scan_tree(XS, XS[::-1] * 2.0),
    "scan_rnn": lambda: scan_rnn(jnp.float32(0.8), jnp.float32(0.1), XS),
    "scan_length_only": lambda: scan_length_only(X3),
    "scan_reverse": lambda: scan_reverse(XS),
    "map_tree": lambda: map_tree(M),
    "select_ops": lambda: select_ops(M),
    # reverse mode
    "grad_cond_true": lambda: jax.grad(cond_loss, argnums=(0, 1))(X3, Y, True),
    "grad_cond_false": lambda: jax.grad(cond_loss, argnums=(0, 1))(X3, Y, False),
    "grad_cond_on_value": lambda: (jax.grad(lambda x: jnp.sum(cond_on_value(x)))(X3),
                                   jax.grad(lambda x: jnp.sum(cond_on_value(x)))(-X3)),
    "grad_cond_closure": lambda: jax.grad(lambda x: jnp.sum(cond_closure(x) ** 2))(X3),
    "grad_switch": lambda: [jax.grad(lambda v: jnp.sum(switch3(i, v)))(X3) for i in [-1, 1, 5]],
    "grad_fori_static": lambda: jax.grad(lambda x: jnp.sum(fori_static(x)))(X3),
    "grad_scan_rnn": lambda: jax.grad(scan_rnn_loss, argnums=(0, 1, 2))(jnp.float32(0.8), jnp.float32(0.1), XS),
    "grad_scan_tree": lambda: jax.grad(lambda a, b: scan_tree(a, b)[0]["s"] + jnp.sum(scan_tree(a, b)[1][1]["prod"] ** 2),
                                       argnums=(0, 1))(XS, XS[::-1] * 2.0),
    "grad_scan_reverse": lambda: jax.grad(lambda xs: jnp.sum(scan_reverse(xs)[1] ** 2))(XS),
    "grad_scan_length_only": lambda: jax.grad(lambda x: jnp.sum(scan_length_only(x)[1]))(X3),
    "grad_map": lambda: jax.grad(lambda m: jnp.sum(map_tree(m)[0]) + jnp.sum(map_tree(m)[1] ** 3))(M),
    "grad_select": lambda: jax.grad(lambda m: jnp.sum(select_ops(m)[0] + select_ops(m)[1]))(M),
    # forward mode
    "jvp_cond": lambda: jax.jvp(lambda x, y: cond_tree(True, x, y), (X3, Y), (ONES3, jnp.float32(0.5))),
    "jvp_cond_false": lambda: jax.jvp(lambda x, y: cond_tree(False, x, y), (X3, Y), (ONES3, jnp.float32(0.5))),
    "jvp_switch": lambda: jax.jvp(lambda v: switch3(2, v), (X3,), (ONES3,)),
    "jvp_while_power": lambda: jax.jvp(lambda x: while_power(x, 3), (X3,), (ONES3,)),
    "jvp_while_newton": lambda: jax.jvp(lambda a: while_newton_sqrt(a)[0], (jnp.float32(2.0),), (jnp.float32(1.0),)),
    "jvp_fori_static": lambda: jax.jvp(fori_static, (X3,), (ONES3,)),
    "jvp_fori_dynamic": lambda: jax.jvp(lambda x: fori_dynamic(x, jnp.int32(4)), (X3,), (ONES3,)),
    "jvp_scan_rnn": lambda: jax.jvp(scan_rnn, (jnp.float32(0.8), jnp.float32(0.1), XS),
                                    (jnp.float32(1.0), jnp.float32(0.0), jnp.ones(6, jnp.float32))),
    "jvp_scan_reverse": lambda: jax.jvp(scan_reverse, (XS,), (jnp.ones(6, jnp.float32),)),
    # vmap
    "vmap_cond_unbatched_pred": lambda: jax.vmap(cond_tree, in_axes=(None, 0, None))(True, M, Y),
    "vmap_cond_batched_pred": lambda: jax.vmap(cond_tree, in_axes=(0, 0, None))(PREDS, M, Y),
    "vmap_cond_pred_from_value": lambda: jax.vmap(cond_on_value)(M),
    "vmap_cond_batched_pred_only": lambda: jax.vmap(cond_tree, in_axes=(0, None, None))(PREDS, X3, Y),
    "vmap_switch_batched_index": lambda: jax.vmap(switch3, in_axes=(0, None))(IDX, X3),
    "vmap_switch_both": lambda: jax.vmap(switch3)(IDX[:4], M),
    "vmap_while_newton": lambda: jax.vmap(while_newton_sqrt)(SQ),
    "vmap_while_batched_n": lambda: jax.vmap(while_power, in_axes=(0, 0))(M, N4),
    "vmap_while_unbatched_pred": lambda: jax.vmap(while_power, in_axes=(0, None))(M, 3),
    "vmap_fori_static": lambda: jax.vmap(fori_static)(M),
    "vmap_fori_dynamic": lambda: jax.vmap(fori_dynamic, in_axes=(0, None))(M, jnp.int32(3)),
    "vmap_fori_batched_bound": lambda: jax.vmap(fori_dynamic, in_axes=(0, 0))(M, N4),
    "vmap_scan_rnn_xs": lambda: jax.vmap(scan_rnn, in_axes=(None, None, 0))(jnp.float32(0.8), jnp.float32(0.1), M),
    "vmap_scan_rnn_all": lambda: jax.vmap(scan_rnn, in_axes=(0, 0, 1))(M[:, 0], M[:, 1], M.T),
    "vmap_scan_tree": lambda: jax.vmap(scan_tree, in_axes=(0, None))(M, X3),
    "vmap_scan_reverse": lambda: jax.vmap(scan_reverse)(M),
    "vmap_map": lambda: jax.vmap(map_tree)(jnp.stack([M, M * 2.0])),
    "vmap_scan_length_only": lambda: jax.vmap(scan_length_only)(M),
    # compositions
    "vmap_grad_cond": lambda: jax.vmap(jax.grad(cond_loss, argnums=(0, 1)), in_axes=(0, None, None))(M, Y, False),
    "vmap_grad_cond_batched_pred": lambda: jax.vmap(jax.grad(cond_loss), in_axes=(0, None, 0))(M, Y, PREDS),
    "grad_vmap_cond": lambda: jax.grad(lambda m: jnp.sum(jax.vmap(cond_on_value)(m)))(M),
    "grad_vmap_scan": lambda: jax.grad(lambda w: jnp.sum(jax.vmap(scan_rnn_loss, in_axes=(None, None, 0))(w, jnp.float32(0.1), M)))(jnp.float32(0.8)),
    "vmap_grad_scan": lambda: jax.vmap(jax.grad(scan_rnn_loss, argnums=(0, 2)), in_axes=(0, None, 0))(M[:, 0], jnp.float32(0.1), M),
    "jvp_vmap_while": lambda: jax.jvp(lambda a: jax.vmap(while_newton_sqrt)(a)[0], (SQ,), (jnp.ones(4, jnp.float32),)),
    "grad_grad_cond": lambda: jax.grad(jax.grad(lambda s: jnp.sum(cond_on_value(s * X3))))(jnp.float32(0.7)),
}
# ---- END SHARED


# Real JAX 0.10.2 on the SHARED block: leaf -> (value, dtype, weak_type).
EXPECTED = {  # noqa: E501
    'cond_true': {'u': ([1.899999976158142, 0.10000002384185791, 4.099999904632568], 'float32', False), 'v': ([0.19866932928562164, -0.6442176699638367, 0.9635581970214844], 'float32', False)},
    'cond_false': {'u': ([-2.049999952316284, -2.950000047683716, -0.9500000476837158], 'float32', False), 'v': ([1.470099925994873, 1.1472632884979248, 0.40124833583831787], 'float32', False)},
    'cond_int_pred_0': {'u': ([-2.049999952316284, -2.950000047683716, -0.9500000476837158], 'float32', False), 'v': ([1.470099925994873, 1.1472632884979248, 0.40124833583831787], 'float32', False)},
    'cond_int_pred_3': {'u': ([1.899999976158142, 0.10000002384185791, 4.099999904632568], 'float32', False), 'v': ([0.19866932928562164, -0.6442176699638367, 0.9635581970214844], 'float32', False)},
    'cond_int_pred_neg': {'u': ([1.899999976158142, 0.10000002384185791, 4.099999904632568], 'float32', False), 'v': ([0.19866932928562164, -0.6442176699638367, 0.9635581970214844], 'float32', False)},
    'cond_float_pred': {'u': ([1.899999976158142, 0.10000002384185791, 4.099999904632568], 'float32', False), 'v': ([0.19866932928562164, -0.6442176699638367, 0.9635581970214844], 'float32', False)},
    'cond_on_value': (([0.04000000283122063, 0.4899999797344208, 1.6899998188018799], 'float32', False), ([0.20000000298023224, -0.699999988079071, 1.2999999523162842], 'float32', False)),
    'cond_closure': (([0.20000000298023224, -1.399999976158142, 3.8999998569488525], 'float32', False), ([0.800000011920929, 2.700000047683716, 1.7000000476837158], 'float32', False)),
    'switch_clamped': [([0.19866932928562164, -0.6442176699638367, 0.9635581970214844], 'float32', False), ([0.19866932928562164, -0.6442176699638367, 0.9635581970214844], 'float32', False), ([0.12000000476837158, 1.46999990940094, 5.069999694824219], 'float32', False), ([0.8187307715415955, 2.0137526988983154, 0.27253180742263794], 'float32', False), ([0.8187307715415955, 2.0137526988983154, 0.27253180742263794], 'float32', False)],
    'while_power': ([0.00800000037997961, -0.34299999475479126, 2.1969997882843018], 'float32', False),
    'while_newton_sqrt': ((1.4142135381698608, 'float32', False), (4, 'int32', False)),
    'fori_static': ([4.688320159912109, 2.3689301013946533, 17.18992805480957], 'float32', False),
    'fori_dynamic': ([1.2532199621200562, -4.386269569396973, 8.145929336547852], 'float32', False),
    'fori_weak_carry': (1.5, 'float32', False),
    'scan_tree': ({'n': (6, 'int32', False), 's': (-5.599999904632568, 'float32', False)}, (([-2.0, -2.7200000286102295, -2.799999952316284, -2.879999876022339, -3.5999999046325684, -5.599999904632568], 'float32', False), {'neg': ([1.0, 0.6000000238418579, 0.20000000298023224, -0.20000000298023224, -0.6000000238418579, -1.0], 'float32', False), 'prod': ([-2.0, -0.7200000286102295, -0.08000000566244125, -0.08000000566244125, -0.7200000286102295, -2.0], 'float32', False)})),
    'scan_rnn': ((0.8486886620521545, 'float32', False), ([0.5269271731376648, 0.6850507259368896, 0.4863106906414032, 0.11789073050022125, 0.09878936409950256, 0.720272421836853], 'float32', False)),
    'scan_length_only': (([1.0125000476837158, -3.5437498092651367, 6.581249713897705], 'float32', False), ([[0.20000000298023224, -0.699999988079071, 1.2999999523162842], [0.30000001192092896, -1.0499999523162842, 1.9499999284744263], [0.45000001788139343, -1.5749999284744263, 2.924999952316284], [0.675000011920929, -2.362499952316284, 4.387499809265137]], 'float32', False)),
    'scan_reverse': ((0.0, 'float32', False), ([-1.0, -0.9600000381469727, -0.36000001430511475, 0.320000022649765, 0.6000000238418579, 0.0], 'float32', False)),
    'map_tree': (([[2.5625, 2.0, 1.5625], [1.25, 1.0625, 1.0], [1.0625, 1.25, 1.5625], [2.0, 2.5625, 3.25]], 'float32', False), ([-3.0, -0.75, 1.5, 3.75], 'float32', False)),
    'select_ops': (([[2.5, 2.0, 1.5], [1.0, 0.5, -0.0], [0.25, 0.5, 0.75], [1.0, 1.25, 1.5]], 'float32', False), ([[-3.75, -3.0, -2.25], [-1.5, -0.75, 0.0], [0.75, 1.5, 2.25], [3.0, 3.75, 4.5]], 'float32', False)),
    'grad_cond_true': (([2.259465217590332, -1.2119511365890503, 3.023861885070801], 'float32', False), (0.5180098414421082, 'float32', False)),
    'grad_cond_false': (([2.081007957458496, -1.7034000158309937, 1.774318814277649], 'float32', False), (-13.575379371643066, 'float32', False)),
    'grad_cond_on_value': (([0.4000000059604645, -1.399999976158142, 2.5999999046325684], 'float32', False), ([-1.0, -1.0, -1.0], 'float32', False)),
    'grad_cond_closure': ([0.4000000059604645, -5.599999904632568, 23.399999618530273], 'float32', False),
    'grad_switch': [([0.9800665974617004, 0.7648422122001648, 0.2674988806247711], 'float32', False), ([1.2000000476837158, -4.199999809265137, 7.799999713897705], 'float32', False), ([-0.8187307715415955, -2.0137526988983154, -0.27253180742263794], 'float32', False)],
    'grad_fori_static': ([3.9280002117156982, 2.870499849319458, 27.55049705505371], 'float32', False),
    'grad_scan_rnn': ((0.6658235788345337, 'float32', False), (-0.7563689947128296, 'float32', False), ([-0.9454612135887146, -0.6834474205970764, -0.6433347463607788, 0.17792320251464844, 1.1105079650878906, 0.7545307278633118], 'float32', False)),
    'grad_scan_tree': (([-6.0, -0.5280001163482666, 0.335999995470047, -0.335999995470047, 0.5280001163482666, 6.0], 'float32', False), ([3.0, 0.2640000581741333, -0.1679999977350235, 0.1679999977350235, -0.2640000581741333, -3.0], 'float32', False)),
    'grad_scan_reverse': ([-2.0, -1.0720001459121704, 1.8560000658035278, 4.320000171661377, 4.624000549316406, 4.14400053024292], 'float32', False),
    'grad_scan_length_only': ([8.125, 8.125, 8.125], 'float32', False),
    'grad_map': ([[24.5, 25.0, 25.5], [0.6875, 1.1875, 1.6875], [7.25, 7.75, 8.25], [44.1875, 44.6875, 45.1875]], 'float32', False),
    'grad_select': ([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [4.0, 4.0, 4.0], [4.0, 4.0, 4.0]], 'float32', False),
    'jvp_cond': ({'u': ([1.899999976158142, 0.10000002384185791, 4.099999904632568], 'float32', False), 'v': ([0.19866932928562164, -0.6442176699638367, 0.9635581970214844], 'float32', False)}, {'u': ([2.5, 2.5, 2.5], 'float32', False), 'v': ([0.9800665974617004, 0.7648422122001648, 0.2674988806247711], 'float32', False)}),
    'jvp_cond_false': ({'u': ([-2.049999952316284, -2.950000047683716, -0.9500000476837158], 'float32', False), 'v': ([1.470099925994873, 1.1472632884979248, 0.40124833583831787], 'float32', False)}, {'u': ([-0.5, -0.5, -0.5], 'float32', False), 'v': ([0.19202929735183716, 1.3487476110458374, -1.3115878105163574], 'float32', False)}),
    'jvp_switch': (([0.8187307715415955, 2.0137526988983154, 0.27253180742263794], 'float32', False), ([-0.8187307715415955, -2.0137526988983154, -0.27253180742263794], 'float32', False)),
    'jvp_while_power': (([0.00800000037997961, -0.34299999475479126, 2.1969997882843018], 'float32', False), ([0.12000000476837158, 1.46999990940094, 5.069999694824219], 'float32', False)),
    'jvp_while_newton': ((1.4142135381698608, 'float32', False), (0.3535533547401428, 'float32', False)),
    'jvp_fori_static': (([4.688320159912109, 2.3689301013946533, 17.18992805480957], 'float32', False), ([3.927999973297119, 2.870500087738037, 27.55049705505371], 'float32', False)),
    'jvp_fori_dynamic': (([1.2532199621200562, -4.386269569396973, 8.145929336547852], 'float32', False), ([6.26609992980957, 6.26609992980957, 6.26609992980957], 'float32', False)),
    'jvp_scan_rnn': (((0.8486886620521545, 'float32', False), ([0.5269271731376648, 0.6850507259368896, 0.4863106906414032, 0.11789073050022125, 0.09878936409950256, 0.720272421836853], 'float32', False)), ((0.5634014010429382, 'float32', False), ([-0.7554852962493896, -0.3599456548690796, -0.2480907291173935, -0.2695235013961792, 0.5498812794685364, 0.9563047885894775], 'float32', False))),
    'jvp_scan_reverse': (((0.0, 'float32', False), ([-1.0, -0.9600000381469727, -0.36000001430511475, 0.320000022649765, 0.6000000238418579, 0.0], 'float32', False)), ((6.0, 'float32', False), ([-4.0, -0.8000000715255737, 1.2000000476837158, 2.0, 1.600000023841858, 0.0], 'float32', False))),
    'vmap_cond_unbatched_pred': {'u': ([[-1.0, -0.5, 0.0], [0.5, 1.0, 1.5], [2.0, 2.5, 3.0], [3.5, 4.0, 4.5]], 'float32', False), 'v': ([[-0.9489846229553223, -0.8414709568023682, -0.681638777256012], [-0.4794255495071411, -0.24740396440029144, 0.0], [0.24740396440029144, 0.4794255495071411, 0.681638777256012], [0.8414709568023682, 0.9489846229553223, 0.9974949955940247]], 'float32', False)},
    'vmap_cond_batched_pred': {'u': ([[-1.0, -0.5, 0.0], [-2.75, -2.5, -2.25], [-2.0, -1.75, -1.5], [3.5, 4.0, 4.5]], 'float32', False), 'v': ([[-0.9489846229553223, -0.8414709568023682, -0.681638777256012], [1.3163738250732422, 1.4533686637878418, 1.5], [1.4533686637878418, 1.3163738250732422, 1.0975332260131836], [0.8414709568023682, 0.9489846229553223, 0.9974949955940247]], 'float32', False)},
    'vmap_cond_pred_from_value': ([[1.25, 1.0, 0.75], [0.5, 0.25, -0.0], [0.0625, 0.25, 0.5625], [1.0, 1.5625, 2.25]], 'float32', False),
    'vmap_cond_batched_pred_only': {'u': ([[1.899999976158142, 0.10000002384185791, 4.099999904632568], [-2.049999952316284, -2.950000047683716, -0.9500000476837158], [-2.049999952316284, -2.950000047683716, -0.9500000476837158], [1.899999976158142, 0.10000002384185791, 4.099999904632568]], 'float32', False), 'v': ([[0.19866932928562164, -0.6442176699638367, 0.9635581970214844], [1.470099925994873, 1.1472632884979248, 0.40124833583831787], [1.470099925994873, 1.1472632884979248, 0.40124833583831787], [0.19866932928562164, -0.6442176699638367, 0.9635581970214844]], 'float32', False)},
    'vmap_switch_batched_index': ([[0.19866932928562164, -0.6442176699638367, 0.9635581970214844], [0.19866932928562164, -0.6442176699638367, 0.9635581970214844], [0.12000000476837158, 1.46999990940094, 5.069999694824219], [0.8187307715415955, 2.0137526988983154, 0.27253180742263794], [0.8187307715415955, 2.0137526988983154, 0.27253180742263794]], 'float32', False),
    'vmap_switch_both': ([[-0.9489846229553223, -0.8414709568023682, -0.681638777256012], [-0.4794255495071411, -0.24740396440029144, 0.0], [0.1875, 0.75, 1.6875], [0.3678794503211975, 0.2865048050880432, 0.22313016653060913]], 'float32', False),
    'vmap_while_newton': (([1.4142135381698608, 3.0, 0.5, 100.0], 'float32', False), ([4, 5, 4, 10], 'int32', False)),
    'vmap_while_batched_n': ([[1.0, 1.0, 1.0], [-0.5, -0.25, 0.0], [0.015625, 0.125, 0.421875], [1.0, 3.0517578125, 7.59375]], 'float32', False),
    'vmap_while_unbatched_pred': ([[-1.953125, -1.0, -0.421875], [-0.125, -0.015625, 0.0], [0.015625, 0.125, 0.421875], [1.0, 1.953125, 3.375]], 'float32', False),
    'vmap_fori_static': ([[-1.6298828125, 1.0, 2.2158203125], [2.84375, 3.3583984375, 4.0], [4.8916015625, 6.15625, 8.0341796875], [11.0, 15.8798828125, 23.96875]], 'float32', False),
    'vmap_fori_dynamic': ([[-4.536250114440918, -3.628999948501587, -2.721750020980835], [-1.8144999742507935, -0.9072499871253967, 0.0], [0.9072499871253967, 1.8144999742507935, 2.721750020980835], [3.628999948501587, 4.536250114440918, 5.44350004196167]], 'float32', False),
    'vmap_fori_batched_bound': ([[-1.25, -1.0, -0.75], [-0.44999998807907104, -0.22499999403953552, 0.0], [0.9072499871253967, 1.8144999742507935, 2.721750020980835], [9.639490127563477, 12.049362182617188, 14.459234237670898]], 'float32', False),
    'vmap_scan_rnn_xs': (([-0.9040783047676086, -0.38918811082839966, 0.851177453994751, 0.9786227941513062], 'float32', False), ([[0.6794245839118958, 0.8651579022407532, 0.81735759973526], [0.1575537621974945, 0.2637372612953186, 0.15146738290786743], [0.10145548731088638, 0.40706151723861694, 0.7245030403137207], [0.6291649341583252, 0.9118260741233826, 0.9577025771141052]], 'float32', False)),
    'vmap_scan_rnn_all': (([0.19928964972496033, 0.03533684089779854, 0.7076197266578674, 0.9859899878501892], 'float32', False), ([[0.0, 0.5800256729125977, 0.039716362953186035], [0.12842002511024475, 0.004998932126909494, 0.0012486922787502408], [0.12842002511024475, 0.2804763615131378, 0.5007256865501404], [0.9565351605415344, 0.9546269774436951, 0.9721762537956238]], 'float32', False)),
    'vmap_scan_tree': ({'n': ([3, 3, 3, 3], 'int32', False), 's': ([-0.5249999761581421, 0.07499999552965164, 0.6749999523162842, 1.2749998569488525], 'float32', False)}, (([[-0.25, 0.44999998807907104, -0.5249999761581421], [-0.10000000149011612, 0.07499999552965164, 0.07499999552965164], [0.05000000074505806, -0.29999998211860657, 0.6749999523162842], [0.20000000298023224, -0.675000011920929, 1.2749998569488525]], 'float32', False), {'neg': ([[1.25, 1.0, 0.75], [0.5, 0.25, -0.0], [-0.25, -0.5, -0.75], [-1.0, -1.25, -1.5]], 'float32', False), 'prod': ([[-0.25, 0.699999988079071, -0.9749999642372131], [-0.10000000149011612, 0.17499999701976776, 0.0], [0.05000000074505806, -0.3499999940395355, 0.9749999642372131], [0.20000000298023224, -0.875, 1.9499999284744263]], 'float32', False)})),
    'vmap_scan_reverse': (([-3.0, -0.75, 1.5, 3.75], 'float32', False), ([[2.1875, 0.75, -0.0], [0.125, -0.0, 0.0], [0.3125, 0.375, 0.0], [2.75, 1.875, 0.0]], 'float32', False)),
    'vmap_map': (([[[2.5625, 2.0, 1.5625], [1.25, 1.0625, 1.0], [1.0625, 1.25, 1.5625], [2.0, 2.5625, 3.25]], [[7.25, 5.0, 3.25], [2.0, 1.25, 1.0], [1.25, 2.0, 3.25], [5.0, 7.25, 10.0]]], 'float32', False), ([[-3.0, -0.75, 1.5, 3.75], [-6.0, -1.5, 3.0, 7.5]], 'float32', False)),
    'vmap_scan_length_only': (([[-6.328125, -5.0625, -3.796875], [-2.53125, -1.265625, 0.0], [1.265625, 2.53125, 3.796875], [5.0625, 6.328125, 7.59375]], 'float32', False), ([[[-1.25, -1.0, -0.75], [-1.875, -1.5, -1.125], [-2.8125, -2.25, -1.6875], [-4.21875, -3.375, -2.53125]], [[-0.5, -0.25, 0.0], [-0.75, -0.375, 0.0], [-1.125, -0.5625, 0.0], [-1.6875, -0.84375, 0.0]], [[0.25, 0.5, 0.75], [0.375, 0.75, 1.125], [0.5625, 1.125, 1.6875], [0.84375, 1.6875, 2.53125]], [[1.0, 1.25, 1.5], [1.5, 1.875, 2.25], [2.25, 2.8125, 3.375], [3.375, 4.21875, 5.0625]]], 'float32', False)),
    'vmap_grad_cond': (([[-4.509185791015625, -3.291717529296875, -1.9698412418365479], [-0.6612565517425537, 0.5256037712097168, 1.5], [2.19558048248291, 2.5748658180236816, 2.631220579147339], [2.388211488723755, 1.8964605331420898, 1.228287696838379]], 'float32', False), ([-12.197587966918945, -19.894861221313477, -16.172954559326172, -5.212381362915039], 'float32', False)),
    'vmap_grad_cond_batched_pred': ([[-2.213291645050049, -1.9530930519104004, -1.363277554512024], [-0.6612565517425537, 0.5256037712097168, 1.5], [2.19558048248291, 2.5748658180236816, 2.6312203407287598], [3.5739998817443848, 3.1592588424682617, 2.313307285308838]], 'float32', False),
    'grad_vmap_cond': ([[-1.0, -1.0, -1.0], [-1.0, -1.0, -1.0], [0.5, 1.0, 1.5], [2.0, 2.5, 3.0]], 'float32', False),
    'grad_vmap_scan': (1.6363216638565063, 'float32', False),
    'vmap_grad_scan': (([-0.4700939953327179, 0.1938813179731369, 0.9565505981445312, 0.2472517043352127], 'float32', False), ([[-0.524979829788208, 0.4513942003250122, -0.20559731125831604], [-0.563133180141449, -0.4993496537208557, 0.9997398257255554], [0.7250751852989197, 0.9790518283843994, 1.210811734199524], [0.6215592622756958, 0.12939485907554626, 0.08425989747047424]], 'float32', False)),
    'jvp_vmap_while': (([1.4142135381698608, 3.0, 0.5, 100.0], 'float32', False), ([0.3535533547401428, 0.1666666567325592, 0.9999990463256836, 0.005000000819563866], 'float32', False)),
    'grad_grad_cond': (4.439999580383301, 'float32', False),
}


# ---------------------------------------------------------------- helpers

def _is_expected_leaf(t):
    return isinstance(t, tuple) and len(t) == 3 and isinstance(t[1], str)


def assert_matches_jax(got, name, rtol=2e-5, atol=1e-6, check_weak=True):
    want = jax.tree_util.tree_leaves(EXPECTED[name], is_leaf=_is_expected_leaf)
    got_l = jax.tree_util.tree_leaves(got)
    assert len(got_l) == len(want), f"{name}: {len(got_l)} leaves, JAX has {len(want)}"
    for k, (g, (value, dtype, weak)) in enumerate(zip(got_l, want)):
        arr = np.asarray(g)
        assert arr.shape == np.shape(value), f"{name} leaf {k}: shape {arr.shape} != {np.shape(value)}"
        assert str(arr.dtype) == dtype, f"{name} leaf {k}: dtype {arr.dtype} != {dtype}"
        if check_weak:
            assert bool(getattr(g, "weak_type", False)) == weak, f"{name} leaf {k}: weak_type != {weak}"
        np.testing.assert_allclose(arr, np.asarray(value, dtype=arr.dtype), rtol=rtol, atol=atol,
                                   err_msg=f"{name} leaf {k}")


# ---------------------------------------------------------------- eager (incl. grad, jvp, vmap) vs JAX

@pytest.mark.parametrize("name", list(CASES))
def test_matches_jax(name):
    assert_matches_jax(CASES[name](), name)


def test_expected_covers_every_case():
    assert set(EXPECTED) == set(CASES)


# ---------------------------------------------------------------- against Python / numpy loops

def test_scan_is_a_python_loop():
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((7, 2)).astype(np.float32)

    def step(c, x):
        c = c * 0.5 + x
        return c, jnp.sum(c)
    carry, ys = lax.scan(step, np.zeros(2, np.float32), xs)
    c, ref = np.zeros(2, np.float32), []
    for x in xs:
        c = c * np.float32(0.5) + x
        ref.append(c.sum())
    np.testing.assert_allclose(np.asarray(carry), c, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ys), ref, rtol=1e-6)
    # reverse: the same loop from the end, ys stored at their own positions
    carry_r, ys_r = lax.scan(step, np.zeros(2, np.float32), xs, reverse=True)
    c, ref = np.zeros(2, np.float32), [None] * 7
    for t in range(6, -1, -1):
        c = c * np.float32(0.5) + xs[t]
        ref[t] = c.sum()
    np.testing.assert_allclose(np.asarray(carry_r), c, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ys_r), ref, rtol=1e-6)


def test_fori_and_while_are_python_loops():
    out = lax.fori_loop(2, 9, lambda i, c: c + i * i, 0)
    assert int(out) == sum(i * i for i in range(2, 9))
    assert int(lax.fori_loop(5, 2, lambda i, c: c + 1, 0)) == 0          # empty range
    n, steps = lax.while_loop(lambda c: c[0] != 1,
                              lambda c: (jnp.where(c[0] % 2 == 0, c[0] // 2, 3 * c[0] + 1), c[1] + 1),
                              (jnp.int32(27), jnp.int32(0)))
    assert (int(n), int(steps)) == (1, 111)                                 # Collatz(27)
    # zero iterations: the initial value comes back
    assert float(lax.while_loop(lambda c: c > 10.0, lambda c: c + 1.0, 3.0)) == 3.0


def test_map_equals_stacked_python_results():
    xs = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    out = lax.map(lambda v: {"s": jnp.sum(v), "d": v[::-1]}, xs)
    np.testing.assert_allclose(np.asarray(out["s"]), xs.sum(1))
    np.testing.assert_allclose(np.asarray(out["d"]), xs[:, ::-1])
    # map over a pytree of xs
    out = lax.map(lambda t: t[0] * t[1], (xs, xs + 1))
    np.testing.assert_allclose(np.asarray(out), xs * (xs + 1))


def test_select_and_select_n():
    a = np.array([1.0, -2.0, 3.0], np.float32)
    b = np.array([10.0, 20.0, 30.0], np.float32)
    np.testing.assert_array_equal(np.asarray(lax.select(a > 0, a, b)), [1.0, 20.0, 3.0])
    which = np.array([0, 1, 2], np.int32)
    np.testing.assert_array_equal(np.asarray(lax.select_n(which, a, b, a + b)), [1.0, 20.0, 33.0])
    np.testing.assert_array_equal(np.asarray(lax.select_n(np.array([True, False, True]), a, b)),
                                  [10.0, -2.0, 30.0])


def test_eager_cond_traces_both_branches_once_like_jax():
    calls = []

    def t(x):
        calls.append("t")
        return x + 1.0

    def f(x):
        calls.append("f")
        return x - 1.0
    assert float(lax.cond(True, t, f, 1.0)) == 2.0
    assert sorted(calls) == ["f", "t"]
    # under jax.disable_jit only the chosen Python branch runs (as in JAX)
    calls.clear()
    with jax.disable_jit():
        assert float(lax.cond(False, t, f, 1.0)) == 0.0
        assert float(lax.switch(7, [t, f], 1.0)) == 0.0
        assert float(lax.while_loop(lambda c: c < 3.0, lambda c: c + 1.0, 0.0)) == 3.0
    assert calls == ["f", "f"]


def test_cond_without_operands_and_with_constants_only():
    assert float(lax.cond(True, lambda: jnp.float32(1.0), lambda: jnp.float32(2.0))) == 1.0
    w = jnp.arange(3.0)
    out = lax.cond(jnp.int32(0), lambda: w * 2.0, lambda: w + 1.0)
    np.testing.assert_array_equal(np.asarray(out), [1.0, 2.0, 3.0])


def test_scan_length_zero_and_no_carry():
    carry, ys = lax.scan(lambda c, x: (c + x, x * 2.0), jnp.float32(1.0), jnp.zeros((0,), jnp.float32))
    assert float(carry) == 1.0 and ys.shape == (0,) and ys.dtype == jnp.float32
    _, ys = lax.scan(lambda c, x: (c, x * 2.0), None, jnp.arange(3.0))
    np.testing.assert_array_equal(np.asarray(ys), [0.0, 2.0, 4.0])


# ---------------------------------------------------------------- while_loop reverse mode

WHILE_GRAD_MSG = ("Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic "
                  "start/stop values. Try using lax.scan, or using fori_loop with static start/stop.")


def test_grad_of_while_loop_raises_jax_error():
    with pytest.raises(ValueError) as e:
        jax.grad(lambda a: while_newton_sqrt(a)[0])(jnp.float32(2.0))
    assert str(e.value) == WHILE_GRAD_MSG
    with pytest.raises(ValueError) as e:
        jax.vjp(lambda x: while_power(x, 3), X3)
    assert str(e.value) == WHILE_GRAD_MSG


def test_grad_of_fori_loop_with_dynamic_bounds_raises_under_jit():
    # traced bounds (a jit argument) make fori_loop a while_loop: no reverse mode
    f = jax.jit(jax.grad(lambda x, n: jnp.sum(fori_dynamic(x, n))))
    with pytest.raises(ValueError) as e:
        f(X3, jnp.int32(3))
    assert str(e.value) == WHILE_GRAD_MSG


# ---------------------------------------------------------------- type errors (JAX's messages)

def _message(fn):
    with pytest.raises(Exception) as e:
        fn()
    return e.type, str(e.value)


COND_TYPES = "cond branches must have equal output types but they differ.\n\ntrue_fun is "
COND_TREES = "cond branch outputs must have the same pytree structure, but they differ:\n\ntrue_fun is "


@pytest.mark.parametrize("under_jit", [False, True])
def test_cond_branch_type_errors(under_jit):
    wrap = jax.jit if under_jit else (lambda f: f)
    kind, msg = _message(lambda: wrap(lambda p: lax.cond(p, lambda x: x, lambda x: x.astype(jnp.int32),
                                                         jnp.float32(1.0)))(True))
    assert kind is TypeError and msg.startswith(COND_TYPES)
    assert ("The output of true_fun has type float32[] but the corresponding output of false_fun has type "
            "int32[], so the dtypes do not match.\n\nRevise true_fun and/or false_fun so that all output "
            "types match.") in msg
    kind, msg = _message(lambda: wrap(lambda p: lax.cond(p, lambda x: x, lambda x: jnp.stack([x, x]),
                                                         jnp.float32(1.0)))(True))
    assert kind is TypeError and msg.startswith(COND_TYPES)
    assert msg.endswith("has type float32[2], so the shapes do not match.\n\n"
                        "Revise true_fun and/or false_fun so that all output types match.")
    kind, msg = _message(lambda: wrap(lambda p: lax.cond(p, lambda x: (x, x), lambda x: x,
                                                         jnp.float32(1.0)))(True))
    assert kind is TypeError and msg.startswith(COND_TREES)
    assert ("true_fun output is a <class 'tuple'> but false_fun output is a pytree leaf, so their Python "
            "types differ.\n\nRevise true_fun and/or false_fun so that they have the same pytree "
            "structure.") in msg


def test_switch_branch_type_errors():
    kind, msg = _message(lambda: lax.switch(1, [lambda x: x, lambda x: x.astype(jnp.int32), lambda x: x],
                                            jnp.float32(1.0)))
    assert kind is TypeError
    assert msg.startswith("switch branches must have equal output types but they differ.\n\nbranch 0 is ")
    assert ("The output of branch 0 has type float32[] but the corresponding output of branch1 has type "
            "int32[], so the dtypes do not match.") in msg
    kind, msg = _message(lambda: lax.switch(1, [lambda x: x, lambda x: (x, x)], jnp.float32(1.0)))
    assert kind is TypeError
    assert msg.startswith("switch branch outputs must have the same pytree structure, but they differ:")


@pytest.mark.parametrize("fn,kind,msg", [
    (lambda: lax.cond(jnp.array([True, False]), lambda x: x, lambda x: x, 1.0), TypeError,
     "Pred must be a scalar, got [ True False] of shape (2,)."),
    (lambda: lax.cond(None, lambda x: x, lambda x: x, 1.0), TypeError, "cond predicate is None"),
    (lambda: lax.cond(jnp.complex64(1.0), lambda x: x, lambda x: x, 1.0), TypeError,
     "Pred type must be either boolean or number, got complex64."),
    (lambda: lax.switch(0, [], 1.0), ValueError, "Empty branch sequence"),
    (lambda: lax.switch(1.0, [lambda x: x, lambda x: x], 1.0), TypeError,
     "Index type must be an integer, got 1.0 as float32"),
    (lambda: lax.switch(jnp.arange(2), [lambda x: x, lambda x: x], 1.0), TypeError,
     "Branch index must be scalar, got [0 1] of shape (2,)."),
    (lambda: lax.while_loop(lambda c: c, lambda c: c + 1, 0), TypeError,
     "cond_fun must return a boolean scalar, but got output type(s) [ShapedArray(int32[], weak_type=True)]."),
    (lambda: lax.scan(lambda c, x: (c, x), 0.0, jnp.ones(3), length=4), ValueError,
     "scan got `length` argument of 4 which disagrees with leading axis sizes [3]."),
    (lambda: lax.scan(lambda c, x: (c, x), 0.0, (jnp.ones(3), jnp.ones(2))), ValueError,
     "scan got values with different leading axis sizes: 3, 2."),
    (lambda: lax.scan(lambda c, x: (c, x), 0.0, None), ValueError,
     "scan got no values to scan over and `length` not provided."),
])
def test_argument_errors(fn, kind, msg):
    got_kind, got = _message(fn)
    assert got_kind is kind and got == msg


CARRY_TYPES = "{} function carry input and carry output must have equal types, but they differ:\n\n"
CARRY_TREES = "{} function carry input and carry output must have the same pytree structure, but they differ:\n\n"
REVISE_TYPES = "\n\nRevise the function so that all output types match the corresponding input types."


@pytest.mark.parametrize("under_jit", [False, True])
def test_loop_carry_type_errors(under_jit):
    wrap = jax.jit if under_jit else (lambda f: f)
    _, msg = _message(lambda: wrap(lambda x: lax.while_loop(lambda c: c < 3, lambda c: (c + 1).astype(jnp.float32),
                                                            x))(jnp.int32(0)))
    assert msg == (CARRY_TYPES.format("while_loop body") + "The input carry c has type int32[] but the "
                   "corresponding output carry component has type float32[], so the dtypes do not match."
                   + REVISE_TYPES)
    _, msg = _message(lambda: wrap(lambda x: lax.while_loop(
        lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1].astype(jnp.int32)), (x, jnp.float32(1.0))))(jnp.int32(0)))
    assert msg == (CARRY_TYPES.format("while_loop body") + "The input carry component c[1] has type float32[] "
                   "but the corresponding output carry component has type int32[], so the dtypes do not match."
                   + REVISE_TYPES)
    _, msg = _message(lambda: wrap(lambda x: lax.while_loop(lambda c: c < 3, lambda c: jnp.array([c, c]),
                                                            x))(jnp.int32(0)))
    assert msg.endswith("has type int32[2], so the shapes do not match." + REVISE_TYPES)
    _, msg = _message(lambda: wrap(lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: [c[0] + 1, c[1]],
                                                            (x, jnp.float32(1.0))))(jnp.int32(0)))
    assert msg.startswith(CARRY_TREES.format("while_loop body") + "The input carry c is a <class 'tuple'> but "
                          "the corresponding component of the carry output is a <class 'list'>, so their "
                          "Python types differ.")
    _, msg = _message(lambda: wrap(lambda xs: lax.scan(lambda c, x: (c.astype(jnp.int32), x), jnp.float32(0.0),
                                                       xs))(jnp.ones(3)))
    assert msg == (CARRY_TYPES.format("scan body") + "The input carry c has type float32[] but the corresponding "
                   "output carry component has type int32[], so the dtypes do not match." + REVISE_TYPES)
    _, msg = _message(lambda: wrap(lambda xs: lax.scan(lambda c, x: ((c, c), x), jnp.float32(0.0), xs))(jnp.ones(3)))
    assert msg.startswith(CARRY_TREES.format("scan body"))


def test_weak_typed_carry_is_promoted_like_jax():
    out = lax.while_loop(lambda c: c < 3, lambda c: c + 1.0, 0)      # int init, float body: promoted
    assert out.dtype == jnp.float32 and float(out) == 3.0 and not out.weak_type
    assert_matches_jax(fori_weak_carry(), "fori_weak_carry")
    with pytest.raises(TypeError, match="^while_loop body function carry input"):
        lax.while_loop(lambda c: c < 3, lambda c: c + 1.0, jnp.int32(0))   # a strong int is not promoted


# ---------------------------------------------------------------- nested jits inside bodies

_helper = jax.jit(lambda v: v * 3.0 + 1.0)


def scan_with_helpers(xs):
    """A body using jnp functions staged as nested jits (where, cumsum) and a jitted helper twice."""
    def step(c, v):
        c = c + jnp.where(v > 0, v, 0.0) + _helper(v) - _helper(2.0 * v)
        return c, jnp.cumsum(jnp.stack([c, v]))
    return lax.scan(step, jnp.float32(0.0), xs)


def _scan_with_helpers_reference(xs):
    c, ys = np.float32(0.0), []
    for v in xs:
        c = np.float32(c + max(v, 0.0) + (3 * v + 1) - (6 * v + 1))
        ys.append(np.cumsum([c, v]))
    return c, np.array(ys, np.float32)


def test_nested_jits_in_bodies_under_vmap_grad_jvp():
    c, ys = scan_with_helpers(XS)
    rc, rys = _scan_with_helpers_reference(XS)
    np.testing.assert_allclose(float(c), rc, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(ys), rys, rtol=1e-5, atol=1e-6)
    vc, vys = jax.vmap(scan_with_helpers)(M)
    for k in range(4):
        rc, rys = _scan_with_helpers_reference(M[k])
        np.testing.assert_allclose(float(vc[k]), rc, rtol=1e-5)
        np.testing.assert_allclose(np.asarray(vys[k]), rys, rtol=1e-5, atol=1e-6)
    g = jax.grad(lambda xs: scan_with_helpers(xs)[0])(XS)
    np.testing.assert_allclose(np.asarray(g), np.where(XS > 0, 1.0, 0.0) - 3.0, rtol=1e-6)
    _, t = jax.jvp(lambda xs: scan_with_helpers(xs)[0], (XS,), (np.ones(6, np.float32),))
    np.testing.assert_allclose(float(t), float(np.sum(np.where(XS > 0, 1.0, 0.0) - 3.0)), rtol=1e-5)
    gc = jax.grad(lambda x: jnp.sum(lax.cond(x[0] > 0, lambda v: jnp.where(v > 0, v * v, 0.0),
                                             lambda v: _helper(v) + _helper(v), x)))(X3)
    np.testing.assert_allclose(np.asarray(gc), np.where(X3 > 0, 2 * X3, 0.0), rtol=1e-6)


# ---------------------------------------------------------------- under jit (Numba compiles: kept few)

def test_jit_cond_switch_one_compile_many_branches():
    f = jax.jit(lambda p, i, x, y: (cond_tree(p, x, y), switch3(i, x), cond_on_value(x)))
    for p, name in [(True, "cond_true"), (False, "cond_false")]:
        for k, i in enumerate([-3, 0, 1, 2, 9]):
            c, s, v = f(np.bool_(p), np.int32(i), X3, Y)
            assert_matches_jax(c, name)
            np.testing.assert_allclose(np.asarray(s), EXPECTED["switch_clamped"][k][0], rtol=2e-5)
    np.testing.assert_allclose(np.asarray(f(np.bool_(True), np.int32(0), -X3, Y)[2]),
                               EXPECTED["cond_on_value"][1][0], rtol=2e-5)
    assert f._cache_size() == 1
    src = f.lower(np.bool_(True), np.int32(0), X3, Y).as_text()
    assert re.search(r"^\s+if .*:\s*$", src, re.M) and re.search(r"^\s+else:\s*$", src, re.M), src


def test_jit_loops_match_jax_and_lower_to_loops():
    f = jax.jit(lambda x, a, n: (while_power(x, 3), while_newton_sqrt(a), fori_static(x), fori_dynamic(x, n),
                                 scan_with_helpers(XS + x[0])))
    wp, ns, fs, fd, (hc, hys) = f(X3, jnp.float32(2.0), jnp.int32(4))
    rc, rys = _scan_with_helpers_reference(XS + X3[0])
    np.testing.assert_allclose(float(hc), rc, rtol=1e-5)      # the helper called twice: two copies
    np.testing.assert_allclose(np.asarray(hys), rys, rtol=1e-5, atol=1e-6)
    assert_matches_jax(wp, "while_power")
    assert_matches_jax(ns, "while_newton_sqrt")
    assert_matches_jax(fs, "fori_static")
    assert_matches_jax(fd, "fori_dynamic")
    src = f.lower(X3, jnp.float32(2.0), jnp.int32(4)).as_text()
    assert re.search(r"^\s+while \w+:", src, re.M), src
    assert re.search(r"^\s+for \w+ in range\(", src, re.M), src


def test_jit_scans_match_jax():
    f = jax.jit(lambda xs, ys, x, m: (scan_tree(xs, ys), scan_length_only(x), scan_reverse(xs), map_tree(m),
                                      select_ops(m)))
    st, sl, sr, mt, so = f(XS, XS[::-1] * 2.0, X3, M)
    assert_matches_jax(st, "scan_tree")
    assert_matches_jax(sl, "scan_length_only")
    assert_matches_jax(sr, "scan_reverse")
    assert_matches_jax(mt, "map_tree")
    assert_matches_jax(so, "select_ops")


def test_jit_of_grad_scan_and_vmap_while_cond():
    def composed(w, h0, xs, sq, preds, m, y):
        return (jax.grad(scan_rnn_loss, argnums=(0, 1, 2))(w, h0, xs),
                jax.vmap(while_newton_sqrt)(sq),
                jax.vmap(cond_tree, in_axes=(0, 0, None))(preds, m, y))
    out = jax.jit(composed)(jnp.float32(0.8), jnp.float32(0.1), XS, SQ, PREDS, M, Y)
    assert_matches_jax(out[0], "grad_scan_rnn")
    assert_matches_jax(out[1], "vmap_while_newton")
    assert_matches_jax(out[2], "vmap_cond_batched_pred")


@pytest.mark.slow
def test_jit_of_more_compositions():
    def composed(m, y, preds, idx):
        return (jax.vmap(jax.grad(cond_loss), in_axes=(0, None, 0))(m, y, preds),
                jax.vmap(switch3)(idx, m),
                jax.jvp(lambda x: while_power(x, 3), (m[0],), (jnp.ones(3),)),
                jax.grad(lambda x: jnp.sum(fori_static(x)))(m[0]),
                jax.grad(lambda mm: jnp.sum(jax.vmap(cond_on_value)(mm)))(m))
    out = jax.jit(composed)(M, Y, PREDS, IDX[:4])
    assert_matches_jax(out[0], "vmap_grad_cond_batched_pred")
    assert_matches_jax(out[1], "vmap_switch_both")
    np.testing.assert_allclose(np.asarray(out[2][1]), 3 * M[0] ** 2, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(out[3]), np.asarray(jax.grad(lambda x: jnp.sum(fori_static(x)))(M[0])),
                               rtol=1e-5)
    assert_matches_jax(out[4], "grad_vmap_cond")


def test_fori_loop_10000_iterations_is_one_compiled_loop():
    def body(i, c):
        return c * 0.999 + 0.001 * jnp.sin(c + i.astype(jnp.float32))
    f = jax.jit(lambda x, n: (lax.fori_loop(0, 10000, body, x), lax.fori_loop(0, n, body, x)))
    x, n = jnp.float32(0.5), jnp.int32(10000)
    a, b = f(x, n)                                        # compiles
    ref = np.float32(0.5)
    for i in range(10000):
        ref = np.float32(ref * np.float32(0.999) + np.float32(0.001) * np.sin(np.float32(ref + np.float32(i))))
    np.testing.assert_allclose([float(a), float(b)], [ref, ref], rtol=1e-4)
    src = f.lower(x, n).as_text()
    assert re.search(r"^\s+for \w+ in range\(10000\):", src, re.M), src     # static bounds: a counted loop
    assert re.search(r"^\s+while \w+:", src, re.M), src                      # traced bound: a while loop
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        jax.block_until_ready(f(x, n))
        best = min(best, time.perf_counter() - t0)
    assert best < 0.05, f"20,000 loop iterations took {best * 1e3:.1f} ms: not a compiled loop"
