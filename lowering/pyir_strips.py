"""Straight-line loops over math functions, run in strips: split into stages, and speculative.

A fused elementwise loop such as ``cos(log1p(tanh(exp(sin(x)))))`` is one long dependent chain
per element: each iteration is hundreds of vector instructions, so the CPU's out-of-order
window holds about two of them and the loop runs at the chain's latency, not at the machine's
throughput (5.4 ns per element on one core, where the five functions alone take 2.9).  So such
a loop runs in strips of ``STRIP`` iterations, and within a strip in *stages*, one per math
call: each stage is a short loop over the strip whose values for later stages go to small
stack arrays (in L1), so its iterations are independent and overlap.

Speculation: float32 sin/cos give glibc's bits only through its whole algorithm, whose large-
argument reduction (|x| >= 120) costs half of every element's time in a vectorized loop, where
each lane computes every path, and real data almost never needs it.  A function marks itself
with ``fn.speculative = ((fast, needs_full), ...)``, cheapest variant first: ``fast(x)`` equals
``fn(x)`` wherever ``needs_full(x)`` is false.  A stage calling such functions runs on the strip
with the variants of one tier, OR-ing their ``needs_full``; if any was true, it runs again one
tier up, and where no tier held, with the functions' ``rare`` variants (or the functions).  The
tier a stage starts at sticks to the last one that held (so data that always needs tier 1 does
not pay for tier 0 on every strip), and drops back to 0 every ``RETRY_STRIPS`` strips.  A loop
whose only math call is speculative runs in strips too, unless the function says
``fn.speculate_alone = False`` (exp: its tier saves less than its extra loops cost to compile,
except in a chain that is staged anyway).  Running
a stage twice must give what running it once gives: the loop stores no array it also reads at
the same time (an in-place result), else its stages run with the full functions.

Whole strips run stage loops of a constant trip count, which LLVM vectorizes into one loop each;
the last partial strip (all of a loop shorter than a strip) runs predicated stage loops (masked
vector iterations) with the functions' ``tail`` variants, then their ``rare`` ones: a vector
loop, a vector epilogue and a scalar remainder for every stage and tier made the compile time of
a program 3x.

Only loops whose bodies are straight-line assignments qualify, each name assigned once and none
read before it is assigned (no value carried from one iteration to the next).
"""
import ast
import inspect

from llvmlite import ir

STRIP = 512        # iterations per strip: a few vector iterations; its arrays stay in L1
RETRY_STRIPS = 64  # a stage tries its cheapest tier again after this many strips
# Lanes of a whole strip's stage loops: a float32 vector of 512 bits.  Left to itself LLVM gave
# sin's stage (float32 in and out, float64 inside) 8 lanes, and its float32 ends half vectors
# (4.4 instructions per element, 3.7 at 16 lanes: the chain 1.45 -> 1.38 ns per element).
STAGE_LANES = 16


class Plan:
    def __init__(self, stages, imports, exports, tiers):
        self.stages, self.imports, self.exports = stages, imports, exports
        self.tiers = tiers       # per stage: how many speculative tiers it has (0: none)


def _callee(scope, node):
    """The Python object a call's function expression names (module globals and attributes of
    them), or None; emits no code."""
    if isinstance(node, ast.Name):
        return None if node.id in scope.vars else scope.globals.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _callee(scope, node.value)
        return None if base is None else getattr(base, node.attr, None)
    return None


def _plain(f):
    return getattr(f, "py_func", f)


def _calls(scope, node):
    """The plain Python functions called in ``node`` (the math the translator inlines)."""
    return [f for f in (_plain(_callee(scope, c.func)) for c in ast.walk(node) if isinstance(c, ast.Call))
            if inspect.isfunction(f)]


def plan(tr, scope, loop):
    """A ``Plan`` for ``loop`` (an ``ast.For`` over range), or None for an ordinary loop."""
    body = loop.body
    if tr._strips_active or not body or not all(
            isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], (ast.Name, ast.Subscript))
            for s in body):
        return None
    names = [s.targets[0].id for s in body if isinstance(s.targets[0], ast.Name)]
    if len(set(names)) != len(names) or loop.target.id in names:
        return None
    assigned, stored, store_bases = set(), set(), set()
    stages, tiers, heavy_in_stage, alone = [[]], [0], False, False
    for s in body:
        tgt = s.targets[0]
        reads = list(ast.walk(s.value))
        if isinstance(tgt, ast.Subscript):
            if not isinstance(tgt.value, ast.Name):
                return None
            stored.add(tgt.value.id)
            store_bases.add(id(tgt.value))
            reads += list(ast.walk(tgt.slice))
        if any(isinstance(n, ast.Name) and n.id in names and n.id not in assigned for n in reads):
            return None                          # read before written: carried across iterations
        if isinstance(s.value, ast.Call) and tr._is_alloc(scope, s.value):
            return None
        if isinstance(tgt, ast.Name):
            assigned.add(tgt.id)
        calls = _calls(scope, s.value)
        if calls and heavy_in_stage:             # one math call a stage
            stages.append([])
            tiers.append(0)
        heavy_in_stage = heavy_in_stage or bool(calls)
        stages[-1].append(s)
        tiers[-1] = max([tiers[-1]] + [len(getattr(f, "speculative", ())) for f in calls])
        alone = alone or any(getattr(f, "speculative", None) and getattr(f, "speculate_alone", True)
                             for f in calls)
    loads = [n for s in body for n in ast.walk(s) if isinstance(n, ast.Name) and id(n) not in store_bases]
    if any(n.id in stored for n in loads):
        if not _same_element(body, stored, loop.target.id):
            return None                          # stages would reorder its loads and stores
        tiers = [0] * len(stages)                # a stage run twice would read its own stores
    if len(stages) == 1 and not (tiers[0] and alone):
        return None
    used = [{n.id for s in st for n in ast.walk(s) if isinstance(n, ast.Name)} for st in stages]
    defined = [{s.targets[0].id for s in st if isinstance(s.targets[0], ast.Name)} for st in stages]
    later = [set().union(*used[k + 1:]) for k in range(len(stages))]
    earlier = [set().union(*defined[:k]) for k in range(len(stages))]
    exports = [sorted(defined[k] & later[k]) for k in range(len(stages))]
    imports = [sorted(used[k] & earlier[k]) for k in range(len(stages))]
    value_of = {s.targets[0].id: s.value for s in body if isinstance(s.targets[0], ast.Name)}
    if not all(_scalar_expression(scope, value_of[name]) for names in exports for name in names):
        return None                              # a strip array holds scalars
    return Plan(stages, imports, exports, tiers)


def _scalar_expression(scope, value):
    """Whether ``value`` is surely a scalar: not a tuple, and not the bare result of a Python
    function (a tuple, maybe); the generated kernels cast every call's result."""
    if isinstance(value, (ast.Tuple, ast.List)):
        return False
    return not (isinstance(value, ast.Call) and inspect.isfunction(_plain(_callee(scope, value.func))))


def _same_element(body, stored, target):
    """Whether every access to an array the body stores is to the one element of this
    iteration: the same index expression everywhere, with the loop counter as one of its
    subscripts (an in-place result); the only other use of such an array is as that base."""
    nodes = [n for s in body for n in ast.walk(s)]
    index = {}                                   # array name -> (its index's dump, the index)
    for node in nodes:
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in stored:
            key = ast.dump(node.slice)
            if index.setdefault(node.value.id, (key, node.slice))[0] != key:
                return False
    subscripted = {id(n.value) for n in nodes if isinstance(n, ast.Subscript)}
    if any(isinstance(n, ast.Name) and n.id in stored and id(n) not in subscripted for n in nodes):
        return False
    for _, sl in index.values():
        elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        if not any(isinstance(e, ast.Name) and e.id == target for e in elts):
            return False
    return True


def strip_loop(tr, scope, loop, start, stop, plan):
    """``for loop.target in range(start, stop)`` (i64 values) in strips, as ``plan`` says.

    Whole strips first: their stage loops have a constant trip count, so LLVM makes one vector
    loop of each.  Then the rest (all of a loop shorter than a strip: the rows of a narrow 2-D
    region) as one more strip whose stage loops are predicated (see the module docstring)."""
    func = scope.func
    b, i64 = func.b, ir.IntType(64)
    # each stage's starting tier, and a strip count for the retries: per kernel call (a chunk of
    # a parallel loop), not per execution of this loop (a row of a 2-D region)
    levels = [_entry_slot(func, 0) if n else None for n in plan.tiers]
    count = _entry_slot(func, 0)
    strip = ir.Constant(i64, STRIP)
    full_end = b.add(start, b.mul(b.sdiv(b.sub(stop, start), strip), strip))
    lo, loop_state = _open_loop(func, start, full_end, "strip")
    hi = b.add(lo, strip, flags=["nsw"])
    _strip(tr, scope, loop, plan, lo, hi, levels, count, predicated=False)
    _close_loop(func, loop_state, hi)
    rest, end = b.append_basic_block("strip.rest"), b.append_basic_block("strip.restdone")
    b.cbranch(b.icmp_signed("<", full_end, stop), rest, end)
    b.position_at_end(rest)
    _strip(tr, scope, loop, plan, full_end, stop, levels, count, predicated=True)
    b.branch(end)
    b.position_at_end(end)


def _strip(tr, scope, loop, plan, lo, hi, levels, count, predicated):
    b, i64 = scope.func.b, ir.IntType(64)
    strips = b.load(count)
    b.store(b.add(strips, ir.Constant(i64, 1)), count)
    retry = b.icmp_signed("==", b.and_(strips, ir.Constant(i64, RETRY_STRIPS - 1)), ir.Constant(i64, 0))
    arrays = {}
    tr._strips_active = True
    try:
        for k, stmts in enumerate(plan.stages):
            stage = (loop.target.id, lo, hi, stmts, plan.imports[k], plan.exports[k], arrays, predicated)
            if plan.tiers[k] and predicated:
                _speculative_stage(tr, scope, stage, [TAIL], None, retry)
            elif plan.tiers[k]:
                _speculative_stage(tr, scope, stage, list(range(plan.tiers[k])), levels[k], retry)
            else:
                _stage(tr, scope, *stage)
    finally:
        tr._strips_active = False


def _entry_slot(func, value):
    """An i64 variable set to ``value`` once, on entry to the function."""
    slot = func.alloca(ir.IntType(64))
    with func.eb.goto_block(func.entry):
        func.eb.store(ir.Constant(ir.IntType(64), value), slot)
    return slot


def _speculative_stage(tr, scope, stage, tiers, level, retry):
    """The stage at ``tiers`` (tier numbers, or TAIL) from ``level`` on, each tried when the one
    before it failed on this strip, then with the functions' ``rare`` variants; ``level`` keeps
    the tier that held (None: always from the first)."""
    func = scope.func
    b, i64, i8 = func.b, ir.IntType(64), ir.IntType(8)
    if level is not None:
        b.store(b.select(retry, ir.Constant(i64, 0), b.load(level)), level)
    flag = func.alloca(i8)
    end = b.append_basic_block("stage.done")
    for k, t in enumerate(tiers):
        run, skip = b.append_basic_block(f"tier{t}"), b.append_basic_block(f"tier{t}.next")
        if level is None:
            b.branch(run)
        else:
            b.cbranch(b.icmp_signed("<=", b.load(level), ir.Constant(i64, k)), run, skip)
        b.position_at_end(run)
        b.store(ir.Constant(i8, 0), flag)
        _with_speculation(tr, (flag, t), _stage, tr, scope, *stage)
        failed = b.append_basic_block(f"tier{t}.failed")
        # A tier that holds is the common case, say the weights: LLVM then lays out and allocates
        # registers for it (sin at tier 1 ran 1.6x slower while the full functions' code was warm)
        b.cbranch(b.icmp_unsigned("!=", b.load(flag), ir.Constant(i8, 0)), failed, end).set_weights([1, 64])
        b.position_at_end(failed)
        if level is not None:
            b.store(ir.Constant(i64, k + 1), level)
        b.branch(skip)
        b.position_at_end(skip)
    _with_speculation(tr, RARE, _stage, tr, scope, *stage)
    b.branch(end)
    b.position_at_end(end)


def _with_speculation(tr, mode, fn, *args):
    tr._speculation = mode
    try:
        fn(*args)
    finally:
        tr._speculation = None


def _stage(tr, scope, target, lo, hi, stmts, imports, exports, arrays, predicated):
    """One stage's loop over the strip: imported values read from the strip arrays, exported
    ones written to them (created here, typed by the values)."""
    from .pyir import I64, Arr, memtype
    func = scope.func
    b = func.b
    cur, loop_state = _open_loop(func, lo, hi, "stage")
    scope.vars[target] = ("slot", loop_state[0], I64)
    k = b.sub(cur, lo)
    for name in imports:
        tr.bind_var(scope, name, tr.load(scope, arrays[name], k))
    tr.block(scope, stmts)
    for name in exports:
        v = tr.materialize(scope, tr.lookup(scope, name))
        if name not in arrays:
            with func.eb.goto_block(func.entry):
                mem = func.eb.alloca(ir.ArrayType(memtype(v.dt), STRIP))
                arrays[name] = Arr(func.eb.bitcast(mem, memtype(v.dt).as_pointer()), [STRIP], v.dt)
        tr.store(scope, arrays[name], k, v)
    latch = _close_loop(func, loop_state, b.add(cur, ir.Constant(ir.IntType(64), 1)))
    if predicated:
        latch.set_metadata("llvm.loop", _predicated_loop(func.mod))
    else:
        latch.set_metadata("llvm.loop", _stage_loop(func.mod))


def _open_loop(func, lo, hi, name):
    """The head of ``for cur in range(lo, hi, step)``: returns cur and the loop's state for
    ``_close_loop``, with the builder in the body."""
    b = func.b
    slot = func.alloca(ir.IntType(64))
    b.store(lo, slot)
    head, body = b.append_basic_block(f"{name}.head"), b.append_basic_block(f"{name}.body")
    done = b.append_basic_block(f"{name}.end")
    b.branch(head)
    b.position_at_end(head)
    cur = b.load(slot)
    b.cbranch(b.icmp_signed("<", cur, hi), body, done)
    b.position_at_end(body)
    return cur, (slot, head, done)


def _close_loop(func, state, following):
    """Stores the next counter value and branches back; returns that branch (the latch)."""
    slot, head, done = state
    b = func.b
    b.store(following, slot)
    latch = b.branch(head)
    b.position_at_end(done)
    return latch


class _LoopID(ir.values.MDValue):
    """A loop's ``llvm.loop`` node: distinct, its first operand itself (llvmlite makes neither)."""

    def __init__(self, module, properties):
        super().__init__(module, properties, name=str(len(module.metadata)))

    def descr(self, buf):
        ops = ", ".join([self.get_reference()] + [p.get_reference() for p in self.operands])
        buf += (f"distinct !{{ {ops} }}", "\n")

    __eq__, __ne__, __hash__ = object.__eq__, object.__ne__, object.__hash__


def _stage_loop(module):
    """Loop metadata asking the vectorizer for ``STAGE_LANES`` lanes."""
    width = module.add_metadata([ir.MetaDataString(module, "llvm.loop.vectorize.width"),
                                 ir.Constant(ir.IntType(32), STAGE_LANES)])
    enable = module.add_metadata([ir.MetaDataString(module, "llvm.loop.vectorize.enable"),
                                  ir.Constant(ir.IntType(1), 1)])
    return _LoopID(module, [width, enable])


def _predicated_loop(module):
    """Loop metadata asking the vectorizer to fold the remainder into masked vector iterations
    (one loop, no epilogue or scalar remainder)."""
    hint = module.add_metadata([ir.MetaDataString(module, "llvm.loop.vectorize.predicate.enable"),
                                ir.Constant(ir.IntType(1), 1)])
    return _LoopID(module, [hint])


TAIL = -1               # the tier of the last partial strip: the functions' ``tail`` variants
RARE = (None, None)     # ``tr._speculation`` where no tier held: their ``rare`` variants


def fast_call(tr, scope, fn, args):
    """A speculative function's value in the stage being translated: its variant of the stage's
    tier, whose ``needs_full`` is OR-ed into the stage's flag; where no tier held, its ``rare``
    variant (code that seldom runs: small, not fast).  None: the function itself (a function
    without that tier or variant)."""
    from .pyir import BOOL
    flag, t = tr._speculation
    if flag is None:
        rare = getattr(fn, "rare", None)
        return None if rare is None else tr.inline_call(scope, _plain(rare), args)
    pair = getattr(fn, "tail", None) if t == TAIL else fn.speculative[t] if t < len(fn.speculative) else None
    if pair is None:
        return None
    fast, needs_full = (_plain(f) for f in pair)
    need = tr.cast(scope, tr.materialize(scope, tr.inline_call(scope, needs_full, args)), BOOL)
    b = scope.func.b
    flag_now = b.load(flag)
    b.store(b.or_(flag_now, b.zext(need.v, ir.IntType(8))), flag)
    return tr.inline_call(scope, fast, args)
