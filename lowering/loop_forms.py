"""The innermost loops of ``RegionCodegen`` (``compile.py``) that carry reductions, and the
monoids their accumulators follow.

The accumulators of a reduction over the innermost loop keep numjax's summation order
(``numjax/lax/_summation.py``) bit for bit whichever form the loop takes:

* unrolled (``_emit_unrolled_innermost``): short bodies, UNROLL copies of each accumulator;
* lane loop (``_emit_lane_loop``): long bodies, one copy of the body indexing the lanes;
* two-phase (``_emit_two_phase``, ``_emit_blocked_two_phase``): transcendental values computed
  block by block in a vector loop, then added to the lanes.
"""
import re
from typing import Callable, NamedTuple

import numpy as np

from numjax.lax._summation import LANES

from . import scalar

# The accumulators of a reduction over the innermost loop follow numjax's summation order
# (numjax/lax/_summation.py, which eager reductions follow too): LANES partial results over
# interleaved elements, the tail added to lane 0, then lanes 1.. folded into lane 0.  Short
# loop bodies are unrolled into LANES copies (below); longer ones keep one copy of the body
# and index the lanes (``_emit_lane_loop``), so the order never depends on what is fused.
UNROLL = LANES


class InnermostLoops:
    """Innermost-loop emitters mixed into ``RegionCodegen`` (they use its ``gen``, ``accs``,
    ``acc_inputs``, ``_acc_depth``, ``unrollable``, ``flat`` and ``rank``)."""

    def _two_phase(self, body):
        """Row reductions of transcendental values: compute each block of 16 values in one
        vectorizable loop, then add them to the partial accumulators (``_emit_blocked_two_phase``;
        a float accumulator in the value loop stops LLVM vectorizing the transcendental). An accumulator
        living outside the row loop (a reduction over all axes, as in a summed log-likelihood)
        takes each row's partial sums after that row (sum(logaddexp(0, x)) over 32x784: 880 to
        64 us; JAX 57 to 81 us)."""
        return (self.unrollable and not self.flat and self.rank >= 1
                and any("vm." in line for line in body)
                and all(acc in self.acc_inputs and acc in self._acc_depth for acc, *_ in self.accs))

    def _emit_two_phase(self, loop, body, depth, bufs):
        # ``bufs``: row buffers the values must fill anyway (a later pass of a row region
        # reads them); without any, the blocked form needs none.
        if not bufs:
            return self._emit_blocked_two_phase(loop, body, depth)
        gen = self.gen
        var, bound = loop
        gen.emit(f"for {var} in range({bound}):", depth)
        acc_lines = {f"{acc} = " for acc, *_ in self.accs}
        for line in body:
            target = next((a for a in acc_lines if line.startswith(a)), None)
            if target is None:
                gen.emit(line, depth + 1)
            else:
                acc = target[:-3]
                gen.emit(f"{bufs[acc]}[{var}] = {self.acc_inputs[acc]}", depth + 1)
        reduce_body = [f"{acc} = {combine(acc, f'{bufs[acc]}[{var}]', dt)}"
                       for acc, _, combine, dt in self.accs]
        return self._emit_unrolled_innermost(loop, reduce_body, depth)

    def _emit_blocked_two_phase(self, loop, body, depth):
        """Two-phase by blocks of 2 x UNROLL elements: the block's values in one vector loop,
        then added to the lanes in the summation order; the next block's values do not wait
        for the adds (the adds' chain overlaps the transcendental work)."""
        gen = self.gen
        var, bound = loop
        block, tail, base, k = 2 * UNROLL, gen.tmp("it"), gen.tmp("ib"), gen.tmp("k")
        self._begin_row(depth)
        blks = {}
        for acc, init, _, dt in self.accs:
            blks[acc] = gen.tmp("blk")
            gen.emit(f"{blks[acc]} = np.empty({block}, {scalar.np_type(dt)})", depth)
            for u in range(1, UNROLL):
                gen.emit(f"{acc}_{u} = {init}", depth)
        acc_lines = {f"{acc} = " for acc, *_ in self.accs}

        def values(target_index, d):
            for line in body:
                target = next((a for a in acc_lines if line.startswith(a)), None)
                if target is None:
                    gen.emit(line, d)
                else:
                    acc = target[:-3]
                    gen.emit(f"{blks[acc]}[{target_index}] = {self.acc_inputs[acc]}", d)

        def adds(count, d):
            for acc, _, combine, dt in self.accs:
                for u in range(count):
                    lane = acc if u % UNROLL == 0 else f"{acc}_{u % UNROLL}"
                    gen.emit(f"{lane} = {combine(lane, f'{blks[acc]}[{u}]', dt)}", d)

        gen.emit(f"{tail} = ({bound}) - ({bound}) % {block}", depth)
        gen.emit(f"for {base} in range(0, {tail}, {block}):", depth)
        gen.emit(f"for {k} in range({block}):", depth + 1)
        gen.emit(f"{var} = {base} + {k}", depth + 2)
        values(k, depth + 2)
        adds(block, depth + 1)
        # The rest: one more group of UNROLL into the lanes, then single elements into lane 0.
        gen.emit(f"if ({bound}) - {tail} >= {UNROLL}:", depth)
        gen.emit(f"for {k} in range({UNROLL}):", depth + 1)
        gen.emit(f"{var} = {tail} + {k}", depth + 2)
        values(k, depth + 2)
        adds(UNROLL, depth + 1)
        gen.emit(f"{tail} = {tail} + {UNROLL}", depth + 1)
        gen.emit(f"for {var} in range({tail}, {bound}):", depth)
        values(0, depth + 1)
        for acc, _, combine, dt in self.accs:
            gen.emit(f"{acc} = {combine(acc, f'{blks[acc]}[0]', dt)}", depth + 1)
        for acc, _, combine, dt in self.accs:
            for u in range(1, UNROLL):
                gen.emit(f"{acc} = {combine(acc, f'{acc}_{u}', dt)}", depth)
        self._end_row(depth)
        return depth + 1

    def _unroll_worth_it(self, body):
        # Partial accumulators pay off for memory-bound reductions with short bodies; long
        # bodies are compute-bound and would only multiply compile time.
        return self.unrollable and len(body) <= 2 * len(self.accs) + 4

    def _emit_unrolled_innermost(self, loop, body, depth):
        """The innermost loop with UNROLL independent copies of each accumulator.

        Separate partial sums break the serial dependency on one accumulator, so LLVM
        can vectorize the reduction without fast-math reassociation of the whole body.
        """
        gen = self.gen
        var, bound = loop
        unroll = _unroll_factor(self.accs)
        base, tail = gen.tmp("ib"), gen.tmp("it")
        self._begin_row(depth)
        for acc, init, _, _ in self.accs:
            for u in range(1, unroll):
                gen.emit(f"{acc}_{u} = {init}", depth)
        gen.emit(f"{tail} = ({bound}) - ({bound}) % {unroll}", depth)
        gen.emit(f"for {base} in range(0, {tail}, {unroll}):", depth)
        for u in range(unroll):
            gen.emit(f"{var} = {base} + {u}", depth + 1)
            for line in body:
                gen.emit(_suffix_locals(line, u, self.accs), depth + 1)
        return self._finish_row(var, tail, bound, body, depth, unroll, lambda acc, u: f"{acc}_{u}")

    def _begin_row(self, depth):
        """An accumulator that outlives the innermost loop (a reduction over several trailing
        axes) reduces each row from the identity; ``_end_row`` then adds the row's result to the
        running one, so rows combine one at a time, as the summation order says."""
        innermost = 0 if self.flat else self.rank - 1
        for acc, init, _, _ in self.accs:
            if self._acc_depth.get(acc, innermost) < innermost:
                self.gen.emit(f"{acc}_run = {acc}", depth)
                self.gen.emit(f"{acc} = {init}", depth)

    def _end_row(self, depth):
        innermost = 0 if self.flat else self.rank - 1
        for acc, _, combine, dt in self.accs:
            if self._acc_depth.get(acc, innermost) < innermost:
                self.gen.emit(f"{acc} = {combine(f'{acc}_run', acc, dt)}", depth)

    def _finish_row(self, var, tail, bound, body, depth, copies, partial):
        """The remainder loop after the unrolled steps, then each accumulator combined with
        its ``copies - 1`` partial ones (``partial(acc, u)`` names copy ``u``), in order."""
        gen = self.gen
        gen.emit(f"for {var} in range({tail}, {bound}):", depth)
        for line in body:
            gen.emit(line, depth + 1)
        for acc, _, combine, dt in self.accs:
            for u in range(1, copies):
                gen.emit(f"{acc} = {combine(acc, partial(acc, u), dt)}", depth)
        self._end_row(depth)
        return depth + 1


    def _emit_lane_loop(self, loop, body, depth):
        """The innermost loop in the lanes' order with one copy of ``body``: each accumulator's
        lanes live in a small array (lane 0 starts from the accumulator), indexed by the
        position within each group of UNROLL elements.  The array is allocated inside the loops,
        private to each parallel iteration (pyir hoists it to the kernel's entry, once per call)."""
        gen = self.gen
        var, bound = loop
        base, tail, lane = gen.tmp("ib"), gen.tmp("it"), gen.tmp("lane")
        self._begin_row(depth)
        lanes = {}
        for acc, init, _, dt in self.accs:
            lanes[acc] = gen.tmp("lanes")
            gen.emit(f"{lanes[acc]} = np.empty({UNROLL}, {scalar.np_type(dt)})", depth)
            gen.emit(f"{lanes[acc]}[0] = {acc}", depth)
            for u in range(1, UNROLL):
                gen.emit(f"{lanes[acc]}[{u}] = {init}", depth)
        gen.emit(f"{tail} = ({bound}) - ({bound}) % {UNROLL}", depth)
        gen.emit(f"for {base} in range(0, {tail}, {UNROLL}):", depth)
        gen.emit(f"for {lane} in range({UNROLL}):", depth + 1)
        gen.emit(f"{var} = {base} + {lane}", depth + 2)
        acc_lines = {f"{acc} = ": acc for acc, *_ in self.accs}
        for line in body:
            acc = next((a for prefix, a in acc_lines.items() if line.startswith(prefix)), None)
            if acc is None:
                gen.emit(line, depth + 2)
                continue
            combine, dt = next((c, d) for a, _, c, d in self.accs if a == acc)
            slot = f"{lanes[acc]}[{lane}]"
            gen.emit(f"{slot} = {combine(slot, self.acc_inputs[acc], dt)}", depth + 2)
        for acc in lanes:
            gen.emit(f"{acc} = {lanes[acc]}[0]", depth)
        return self._finish_row(var, tail, bound, body, depth, UNROLL, lambda acc, u: f"{lanes[acc]}[{u}]")


def _unroll_factor(accs):
    """Copies of the body per step: a maximum or minimum is the same in any order, so those
    take more independent accumulators (wider vectors: the NaN-propagating compare-and-select
    of ``sh.fmax`` is a longer dependency chain than an add); sums keep the summation order."""
    order_free = (MONOIDS["max"].combine, MONOIDS["min"].combine)
    if accs and all(combine in order_free for _, _, combine, _ in accs):
        return 4 * UNROLL
    return UNROLL


def _suffix_locals(line, u, accs):
    if u == 0:
        return line
    line = re.sub(r"\b(t\d+)\b", lambda m: f"{m.group(1)}_{u}", line)
    for acc, *_ in accs:
        line = re.sub(rf"\b{acc}\b", f"{acc}_{u}", line)
    return line


class Monoid(NamedTuple):
    """How a reduction's accumulator starts and combines: ``identity(dtype)`` is its start value
    (a number, or the source ``"True"``/``"False"``); ``combine(acc, value, dtype)`` the source
    of one step (None for argmax/argmin, whose loops also track the position)."""
    identity: Callable
    combine: Callable


def _extremum(lowest):
    """The identity of max (``lowest``) or min: -inf/inf, the integer bounds, False/True."""
    def identity(dt):
        if dt.kind == "f":
            return -np.inf if lowest else np.inf
        if dt == np.bool_:
            return "False" if lowest else "True"
        info = np.iinfo(dt)
        return info.min if lowest else info.max
    return identity


# One entry per monoid named by ``Primitive.reduction``.
MONOIDS = {
    "sum": Monoid(lambda dt: 0, lambda a, v, dt: f"{scalar.np_type(dt)}({a} + {v})" if dt != np.bool_
                  else f"({a} or {v})"),
    "prod": Monoid(lambda dt: 1, lambda a, v, dt: f"{scalar.np_type(dt)}({a} * {v})" if dt != np.bool_
                   else f"({a} and {v})"),
    "max": Monoid(_extremum(True), lambda a, v, dt: f"sh.fmax({a}, {v})" if dt != np.bool_ else f"({a} or {v})"),
    "min": Monoid(_extremum(False), lambda a, v, dt: f"sh.fmin({a}, {v})" if dt != np.bool_ else f"({a} and {v})"),
    "and": Monoid(lambda dt: "True", lambda a, v, dt: f"({a} and {v})"),
    "or": Monoid(lambda dt: "False", lambda a, v, dt: f"({a} or {v})"),
    "argmax": Monoid(_extremum(True), None),
    "argmin": Monoid(_extremum(False), None),
}


def identity_source(monoid, dt):
    """Source of the accumulator's start value for ``monoid`` over ``dt``."""
    value = MONOIDS[monoid].identity(dt)
    return str(value) if dt == np.bool_ else scalar.literal(value, dt)
