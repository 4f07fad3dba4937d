"""numjax's kernel language (a typed Python subset) translated to LLVM IR, without Numba.

The CPU backend writes each fused region as a small Python function (readable, and runnable
as plain Python in debug mode); this module compiles that source, and the scalar math library
it calls (``vmath``, ``scalar_helpers``: plain Python functions read with ``inspect``), into one
``llvmlite.ir`` module.  Callees are expanded inline at translation time, so LLVM sees one flat
loop nest it can vectorize, and no calling convention is involved.

Typing follows Numba's rules for the constructs used (so the same source gives the same bits
under both compilers): Python ints are int64 and floats float64; integer arithmetic widens to
64 bits; float32 op float32 stays float32; ``np.float32(...)`` and friends convert.

Supported: assignments (names, tuple unpacking, array element stores), ``for`` over ``range``
(unrolled when its bounds are constants), ``numba.prange`` (the chunked parallel loop: its
bounds come from the ``lo``/``hi`` parameters), ``while``, ``if``, ternaries, ``and``/``or``/
``not``, comparisons, arithmetic, ``abs``, casts, ``math``/``np`` functions with a libm or LLVM
equivalent, array loads/stores on C-contiguous arrays, ``np.empty``/``np.full`` temporaries
sized by parameters, calls of plain Python functions, tuples and module-level constant arrays.
Anything else raises ``Unsupported`` (the caller then uses another lowering).
"""
import ast
import inspect
import textwrap

import numpy as np
from llvmlite import ir


from . import pyir_strips  # noqa: E402
from .unsupported import Unsupported  # noqa: E402  (re-exported)


BOOL, I64, F32, F64 = (np.dtype(t) for t in (np.bool_, np.int64, np.float32, np.float64))
_I8P = ir.IntType(8).as_pointer()
UNROLL_MAX = 16        # constant-bound loops up to this trip count are unrolled at translation
UNROLL_BUDGET = 600    # ... when trips x body cost (``_unroll_cost``) stays under this
_CALL_COST = 40        # a call inlines a math function's body: counted as that many nodes
PREFER_VECTOR_WIDTH = "512"   # bits; LLVM caps it at what the target has


def _unroll_cost(stmts):
    """A rough size of the code ``stmts`` become: AST nodes, calls weighted, constant-bound
    inner loops multiplied by their trip counts."""
    cost = 0
    for node in stmts:
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Call):
            bounds = [a.value for a in node.iter.args if isinstance(a, ast.Constant)]
            trips = (bounds[0] if len(bounds) == 1 else bounds[1] - bounds[0]) \
                if len(bounds) == len(node.iter.args) and bounds else UNROLL_MAX
            cost += max(1, trips) * _unroll_cost(node.body)
            continue
        for sub in ast.walk(node):
            cost += _CALL_COST if isinstance(sub, ast.Call) else 1
    return cost


def lltype(dt):
    dt = np.dtype(dt)
    if dt == BOOL:
        return ir.IntType(1)
    if dt.kind in "iu":
        return ir.IntType(8 * dt.itemsize)
    if dt == F32:
        return ir.FloatType()
    if dt == F64:
        return ir.DoubleType()
    raise Unsupported(f"dtype {dt} in compiled kernels")


def memtype(dt):
    """In memory a bool is a byte."""
    return ir.IntType(8) if np.dtype(dt) == BOOL else lltype(dt)


# ---------------------------------------------------------------- values

class Val:
    """A runtime scalar."""
    __slots__ = ("v", "dt")

    def __init__(self, v, dt):
        self.v, self.dt = v, np.dtype(dt)


class Const:
    """A compile-time scalar (literals, module constants, unrolled loop counters)."""
    __slots__ = ("py", "dt")

    def __init__(self, py, dt):
        self.py, self.dt = py, np.dtype(dt)


class Arr:
    """A C-contiguous array: element pointer and shape (LLVM i64 values or ints)."""

    def __init__(self, ptr, shape, dt):
        self.ptr, self.shape, self.dt = ptr, list(shape), np.dtype(dt)


class Tup(tuple):
    pass


def const_of(obj):
    """A Python/numpy constant as a typed Const or Tup (None if not a constant)."""
    if isinstance(obj, (bool, np.bool_)):
        return Const(bool(obj), BOOL)
    if isinstance(obj, int):
        return Const(obj, I64)
    if isinstance(obj, float):
        return Const(obj, F64)
    if isinstance(obj, np.generic) and obj.dtype.kind in "biuf":
        return Const(obj.item(), obj.dtype)
    if isinstance(obj, tuple):
        items = [const_of(o) for o in obj]
        return None if any(i is None for i in items) else Tup(items)
    return None


# ---------------------------------------------------------------- typing (Numba's scalar rules)

def _is_int(dt):
    return dt.kind in "iu"


def promote(a, b, op=None):
    """Result type of ``a op b`` as Numba types it."""
    if a == BOOL and b == BOOL:
        return BOOL if op in (ast.BitAnd, ast.BitOr, ast.BitXor) else I64
    if a.kind == "f" or b.kind == "f":
        if a.kind == "f" and b.kind == "f":
            return F64 if F64 in (a, b) else F32
        f, i = (a, b) if a.kind == "f" else (b, a)
        return np.promote_types(f, i)
    a = I64 if a == BOOL else a
    b = I64 if b == BOOL else b
    if a.kind == b.kind:
        return np.dtype("u8") if a.kind == "u" else I64
    return I64 if max(a.itemsize, b.itemsize) < 8 else F64


# ---------------------------------------------------------------- the translator

_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}

class Function:
    """Translation state of one LLVM function."""

    def __init__(self, mod, fn):
        self.mod, self.fn = mod, fn
        self.entry = fn.append_basic_block("entry")
        self.body = fn.append_basic_block("body")
        self.b = ir.IRBuilder(self.body)
        self.eb = ir.IRBuilder(self.entry)
        self.frees = []          # temporaries malloc'ed at entry
        self.prange = None       # (lo, hi) values for numba.prange

    def alloca(self, ty):
        with self.eb.goto_block(self.entry):
            return self.eb.alloca(ty)

    def finish(self):
        self.eb.position_at_end(self.entry)
        self.eb.branch(self.body)


class Scope:
    """Name bindings of one function body (an inlined callee has its own)."""

    def __init__(self, globals_, func):
        self.globals = globals_
        self.vars = {}           # name -> ("slot", alloca, dtype) | ("bind", value)
        self.func = func
        self.ret = None          # inlined callee: (exit block, [slots]) filled by return
        self.ret_shape = None    # inlined callee: nesting of its returned tuple
        self.out_params = {}     # kernel: output name -> caller's buffer
        self.kernel_ret = False  # kernel body (return stores outputs) vs inlined callee


class Translator:
    def __init__(self, module):
        self.mod = module
        self._inline_depth = 0
        self._speculation = None     # the strip's flag slot while a speculative pass is translated
        self._strips_active = False  # (no strips inside strips: inlined callees' loops stay plain)

    # ---- entry point
    def kernel(self, src, name, params, outputs, globals_):
        """Compile kernel ``src`` (one ``def``) as ``void name(i64 lo, i64 hi, params..., outs...)``.

        ``params``: per argument ``("dim",)``, ``("scalar", dtype)`` or
        ``("array", dtype, shape)`` where shape entries are parameter names or ints;
        ``outputs``: per returned value ``(dtype, shape)`` likewise; every output is a
        caller-allocated buffer (a rank-0 output is one element)."""
        tree = ast.parse(src).body[0]
        argnames = [a.arg for a in tree.args.args]
        lltys = [ir.IntType(64), ir.IntType(64)]
        for p in params:
            lltys.append(ir.IntType(64) if p[0] == "dim" else
                         lltype(p[1]) if p[0] == "scalar" else memtype(p[1]).as_pointer())
        lltys += [memtype(dt).as_pointer() for dt, _ in outputs]
        fn = ir.Function(self.mod, ir.FunctionType(ir.VoidType(), lltys), name)
        fn.attributes.add("nounwind")
        # Full-width vectors (AVX-512 where the CPU has it): LLVM's x86 default prefers
        # 256-bit ones (exp over 4M float32: 2.2 -> 1.5 ms). A string attribute, which
        # llvmlite's attribute set (enum attributes only) would refuse through ``add``.
        if PREFER_VECTOR_WIDTH:
            set.add(fn.attributes, f'"prefer-vector-width"="{PREFER_VECTOR_WIDTH}"')
        func = Function(self.mod, fn)
        func.prange = (fn.args[0], fn.args[1])
        scope = Scope(globals_, func)
        args = fn.args[2:2 + len(params)]
        for a, nm, p in zip(args, argnames, params):
            a.name = nm
            # Parameters are bound to the argument values themselves (kernels never
            # reassign them), so temporaries sized by them can be allocated at entry.
            if p[0] == "dim":
                scope.vars[nm] = ("bind", Val(a, I64))
            elif p[0] == "scalar":
                scope.vars[nm] = ("bind", Val(a, p[1]))
            else:
                a.add_attribute("noalias")
                shape = [self.lookup(scope, s).v if isinstance(s, str) else s for s in p[2]]
                scope.vars[nm] = ("bind", Arr(a, shape, p[1]))
        outs = fn.args[2 + len(params):]
        for o in outs:
            o.add_attribute("noalias")
        ret = next((s for s in tree.body if isinstance(s, ast.Return)), None)
        if ret is not None:
            elts = ret.value.elts if isinstance(ret.value, ast.Tuple) else [ret.value]
            for e, o, (dt, shape) in zip(elts, outs, outputs):
                sh = [self.lookup(scope, s).v if isinstance(s, str) else s for s in shape]
                scope.out_params[e.id] = Arr(o, sh, dt)
        scope.kernel_ret = True
        self.block(scope, tree.body)
        if not func.b.block.is_terminated:
            self._free_and_ret(func)
        func.finish()
        return fn

    def _free_and_ret(self, func):
        for p in func.frees:
            func.b.call(self._decl("free", ir.VoidType(), [_I8P]), [p])
        func.b.ret_void()

    # ---- declarations
    def _decl(self, name, ret, args):
        if name in self.mod.globals:
            return self.mod.globals[name]
        return ir.Function(self.mod, ir.FunctionType(ret, args), name)

    def intrinsic(self, name, dt, n):
        ty = lltype(dt)
        suffix = "f32" if dt == F32 else "f64"
        return self._decl(f"{name}.{suffix}", ty, [ty] * n)

    def libm(self, name, dt, n):
        ty = lltype(dt)
        return self._decl(name + ("f" if dt == F32 else ""), ty, [ty] * n)

    # ---- variables
    def bind_var(self, scope, name, value):
        if isinstance(value, (Arr, Tup)):
            scope.vars[name] = ("bind", value)
            return
        value = self.materialize(scope, value)
        cur = scope.vars.get(name)
        if cur is None or cur[0] != "slot" or cur[2] != value.dt:
            slot = scope.func.alloca(lltype(value.dt))
            cur = scope.vars[name] = ("slot", slot, value.dt)
        scope.func.b.store(value.v, cur[1])

    def lookup(self, scope, name):
        cur = scope.vars.get(name)
        if cur is not None:
            if cur[0] == "slot":
                return Val(scope.func.b.load(cur[1]), cur[2])
            return cur[1]
        if name in scope.globals:
            return self.global_value(scope.globals[name])
        import builtins
        if hasattr(builtins, name):
            return getattr(builtins, name)
        raise Unsupported(f"unknown name {name!r}")

    def global_value(self, obj):
        c = const_of(obj)
        if c is not None:
            return c
        if isinstance(obj, np.ndarray):
            return self.global_array(obj)
        return obj              # a module, function or type: resolved where used

    def global_array(self, arr):
        key = ("garr", arr.dtype.str, arr.tobytes())
        cache = self.__dict__.setdefault("_garrs", {})
        if key not in cache:
            ty = ir.ArrayType(memtype(arr.dtype), arr.size)
            g = ir.GlobalVariable(self.mod, ty, f"tab{len(cache)}")
            g.global_constant = True
            g.linkage = "private"
            vals = arr.astype(np.uint8) if arr.dtype == BOOL else arr
            g.initializer = ir.Constant(ty, [ir.Constant(memtype(arr.dtype), v.item()) for v in vals.ravel()])
            cache[key] = g
        g = cache[key]
        return Arr(g.bitcast(memtype(arr.dtype).as_pointer()), arr.shape, arr.dtype)

    def materialize(self, scope, value):
        if isinstance(value, Const):
            return Val(self.const_ir(value.py, value.dt), value.dt)
        if isinstance(value, Val):
            return value
        raise Unsupported(f"{type(value).__name__} used as a scalar")

    @staticmethod
    def const_ir(py, dt):
        if dt == BOOL:
            return ir.Constant(ir.IntType(1), int(bool(py)))
        if dt.kind in "iu":
            bits = 8 * dt.itemsize
            return ir.Constant(ir.IntType(bits), int(py) & ((1 << bits) - 1))
        return ir.Constant(lltype(dt), float(py))

    # ---- statements
    def block(self, scope, stmts):
        for st in stmts:
            if scope.func.b.block.is_terminated:
                return
            self.stmt(scope, st)

    def stmt(self, scope, st):
        meth = getattr(self, "st_" + type(st).__name__, None)
        if meth is None:
            raise Unsupported(f"statement {type(st).__name__}")
        meth(scope, st)

    def st_Expr(self, scope, st):
        if not (isinstance(st.value, ast.Constant) and isinstance(st.value.value, str)):
            self.expr(scope, st.value)

    def st_Pass(self, scope, st):
        pass

    def st_Assign(self, scope, st):
        if len(st.targets) != 1:
            raise Unsupported("chained assignment")
        tgt = st.targets[0]
        if isinstance(tgt, ast.Name) and isinstance(st.value, ast.Call) and self._is_alloc(scope, st.value):
            out = scope.out_params.get(tgt.id)
            if out is not None:       # a kernel output: the caller's buffer, maybe filled
                self._init_alloc(scope, out, st.value)
            scope.vars[tgt.id] = ("bind", out if out is not None else self._temp_alloc(scope, st.value))
            return
        self.assign(scope, tgt, self.expr(scope, st.value))

    def st_AugAssign(self, scope, st):
        cur = self.expr(scope, st.target) if not isinstance(st.target, ast.Name) else self.lookup(scope, st.target.id)
        self.assign(scope, st.target, self.binop(scope, st.op, cur, self.expr(scope, st.value)))

    def assign(self, scope, tgt, value):
        if isinstance(tgt, ast.Name):
            self.bind_var(scope, tgt.id, value)
        elif isinstance(tgt, (ast.Tuple, ast.List)):
            if not isinstance(value, Tup) or len(value) != len(tgt.elts):
                raise Unsupported("tuple unpacking of a non-tuple")
            for t, v in zip(tgt.elts, value):
                self.assign(scope, t, v)
        elif isinstance(tgt, ast.Subscript):
            arr = self.expr(scope, tgt.value)
            if not isinstance(arr, Arr):
                raise Unsupported("item assignment to a non-array")
            v = self.cast(scope, self.materialize(scope, value), arr.dt)
            self.store(scope, arr, self.index(scope, arr, tgt.slice), v)
        else:
            raise Unsupported(f"assignment to {type(tgt).__name__}")

    def st_Return(self, scope, st):
        value = Tup() if st.value is None else self.expr(scope, st.value)
        if scope.kernel_ret:
            elts = st.value.elts if isinstance(st.value, ast.Tuple) else [st.value]
            vals = value if isinstance(value, Tup) else [value]
            for e, v in zip(elts, vals):
                out = scope.out_params.get(getattr(e, "id", None))
                if out is None:
                    raise Unsupported("kernel returns a value that is not an output")
                if not isinstance(v, Arr):
                    self.store(scope, out, ir.Constant(ir.IntType(64), 0),
                               self.cast(scope, self.materialize(scope, v), out.dt))
                elif v.ptr is not out.ptr:      # computed elsewhere (a view, a temporary)
                    self._copy(scope, out, v)
            self._free_and_ret(scope.func)
            return
        exit_block, slots = scope.ret
        flat = self._flatten_ret(value)
        if not slots:
            for v in flat:
                v = self.materialize(scope, v) if not isinstance(v, Arr) else v
                slots.append(("arr", v) if isinstance(v, Arr) else
                             ("slot", scope.func.alloca(lltype(v.dt)), v.dt))
            scope.ret_shape = self._shape_of(value)
        for (kind, *rest), v in zip(slots, flat):
            if kind == "slot":
                v = self.cast(scope, self.materialize(scope, v), rest[1])
                scope.func.b.store(v.v, rest[0])
        scope.func.b.branch(exit_block)

    def _flatten_ret(self, value):
        if isinstance(value, Tup):
            return [x for v in value for x in self._flatten_ret(v)]
        return [value]

    def _shape_of(self, value):
        return [self._shape_of(v) for v in value] if isinstance(value, Tup) else None

    def st_If(self, scope, st):
        cond = self.truth(scope, self.expr(scope, st.test))
        if isinstance(cond, Const):
            self.block(scope, st.body if cond.py else st.orelse)
            return
        b = scope.func.b
        with b.if_else(cond.v) as (then, other):
            with then:
                self.block(scope, st.body)
            with other:
                self.block(scope, st.orelse)

    def st_While(self, scope, st):
        b = scope.func.b
        head = b.append_basic_block("while.head")
        loop = b.append_basic_block("while.body")
        done = b.append_basic_block("while.end")
        b.branch(head)
        b.position_at_end(head)
        cond = self.materialize(scope, self.truth(scope, self.expr(scope, st.test)))
        b.cbranch(cond.v, loop, done)
        b.position_at_end(loop)
        self.block(scope, st.body)
        if not b.block.is_terminated:
            b.branch(head)
        b.position_at_end(done)

    def st_For(self, scope, st):
        it = st.iter
        if not (isinstance(it, ast.Call) and isinstance(st.target, ast.Name)):
            raise Unsupported("for loop over something other than range")
        fobj = self.expr(scope, it.func)
        args = [self.expr(scope, a) for a in it.args]
        is_prange = getattr(fobj, "__name__", "") == "prange"
        if fobj is not range and not is_prange:
            raise Unsupported("for loop over something other than range")
        if len(args) == 1:
            args = [Const(0, I64)] + args
        step = args[2] if len(args) > 2 else Const(1, I64)
        trips = range(int(args[0].py), int(args[1].py), int(step.py)) \
            if all(isinstance(a, Const) for a in args[:2]) and isinstance(step, Const) else None
        # Short constant loops (polynomial terms) unroll, so their counters index tuples; not
        # when the copies would be large (a scan of 10 steps over 2x4 log-sum-exps took 8 s
        # at O3 unrolled): LLVM's time grows with the code, and a loop costs nothing here.
        if (trips is not None and len(trips) <= UNROLL_MAX and not is_prange
                and (len(trips) * _unroll_cost(st.body) <= UNROLL_BUDGET
                     or self._indexes_tuple(scope, st.body, st.target.id))):
            for k in trips:
                scope.vars[st.target.id] = ("bind", Const(k, I64))
                self.block(scope, st.body)
            return
        start, stop = (self.cast(scope, self.materialize(scope, a), I64).v for a in args[:2])
        if is_prange:
            lo, hi = scope.func.prange
            b = scope.func.b
            start = b.select(b.icmp_signed(">", lo, start), lo, start)
            stop = b.select(b.icmp_signed("<", hi, stop), hi, stop)
        if not (isinstance(step, Const) and int(step.py) != 0):
            raise Unsupported("range() with a step that is not a nonzero constant")
        plan = pyir_strips.plan(self, scope, st) if int(step.py) == 1 else None
        if plan is not None:
            pyir_strips.strip_loop(self, scope, st, start, stop, plan)
            return
        self._range_loop(scope, st, start, stop, self.cast(scope, self.materialize(scope, step), I64).v,
                         descending=int(step.py) < 0)

    def _indexes_tuple(self, scope, body, var):
        """Whether ``body`` subscripts a tuple known before the loop by the counter ``var``
        (then the loop must unroll: tuples are indexed by constants only)."""
        for node in ast.walk(ast.Module(body=body, type_ignores=[])):
            if not (isinstance(node, ast.Subscript) and isinstance(node.value, (ast.Name, ast.Attribute))
                    and any(isinstance(n, ast.Name) and n.id == var for n in ast.walk(node.slice))):
                continue
            try:
                base = self.expr(scope, node.value)
            except Exception:   # noqa: BLE001  (a name bound inside the loop: not a known tuple)
                continue
            if isinstance(base, Tup):
                return True
        return False

    def _range_loop(self, scope, st, start, stop, step, descending=False):
        b = scope.func.b
        slot = scope.func.alloca(ir.IntType(64))
        scope.vars[st.target.id] = ("slot", slot, I64)
        b.store(start, slot)
        head = b.append_basic_block("for.head")
        loop = b.append_basic_block("for.body")
        done = b.append_basic_block("for.end")
        b.branch(head)
        b.position_at_end(head)
        cur = b.load(slot, name="i")
        b.cbranch(b.icmp_signed(">" if descending else "<", cur, stop), loop, done)
        b.position_at_end(loop)
        self.block(scope, st.body)
        if not b.block.is_terminated:
            b.store(b.add(cur, step), slot)
            b.branch(head)
        b.position_at_end(done)

    # ---- array allocation
    def _is_alloc(self, scope, call):
        if isinstance(call.func, ast.Attribute) and call.func.attr == "reshape":
            return False
        f = self.expr(scope, call.func)
        return f is np.empty or f is np.full or f is np.zeros

    def _alloc_args(self, scope, call):
        f = self.expr(scope, call.func)
        shp = self.expr(scope, call.args[0])
        shape = list(shp) if isinstance(shp, Tup) else [shp]
        if f is np.full:
            fill, dtarg = call.args[1], call.args[2] if len(call.args) > 2 else None
        else:
            fill, dtarg = (ast.Constant(0) if f is np.zeros else None), (call.args[1] if len(call.args) > 1 else None)
        dt = np.dtype(self.expr(scope, dtarg)) if dtarg is not None else F64
        return shape, fill, dt

    def _size(self, scope, shape):
        b = scope.func.b
        n = ir.Constant(ir.IntType(64), 1)
        for s in shape:
            n = b.mul(n, self.cast(scope, self.materialize(scope, s), I64).v)
        return n

    def _init_alloc(self, scope, arr, call):
        shape, fill, _ = self._alloc_args(scope, call)
        if fill is not None:
            self._fill(scope, arr, self._size(scope, shape), self.expr(scope, fill))

    def _temp_alloc(self, scope, call):
        """A temporary array, malloc'ed once at function entry (the generator sizes
        temporaries by parameters only) and freed on return."""
        shape, fill, dt = self._alloc_args(scope, call)
        func = scope.func
        saved, func.b = func.b, func.eb
        try:
            n = self._size(scope, shape)
            nbytes = func.b.mul(n, ir.Constant(ir.IntType(64), np.dtype(dt).itemsize))
            raw = func.b.call(self._decl("malloc", _I8P, [ir.IntType(64)]), [nbytes])
            ptr = func.b.bitcast(raw, memtype(dt).as_pointer())
            dims = [self.materialize(scope, s).v for s in shape]
        finally:
            func.b = saved
        func.frees.append(raw)
        arr = Arr(ptr, dims, dt)
        if fill is not None:
            self._fill(scope, arr, self._size(scope, shape), self.expr(scope, fill))
        return arr

    def _copy(self, scope, dst, src):
        n = self._size(scope, [Const(s, I64) if isinstance(s, int) else Val(s, I64) for s in dst.shape])
        with _counted_loop(scope.func.b, n) as i:
            self.store(scope, dst, i, self.cast(scope, self.load(scope, src, i), dst.dt))

    def _fill(self, scope, arr, n, value):
        b = scope.func.b
        v = self.cast(scope, self.materialize(scope, value), arr.dt)
        with _counted_loop(b, n) as i:
            self.store(scope, arr, i, v)

    # ---- array access
    def index(self, scope, arr, sl):
        idx = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        if isinstance(sl, ast.Tuple) and not sl.elts:
            return ir.Constant(ir.IntType(64), 0)
        if len(idx) != len(arr.shape) and not (len(idx) == 1 and len(arr.shape) == 0):
            if not (len(idx) == 1 and len(arr.shape) > 1):
                raise Unsupported("partial indexing")
        b = scope.func.b
        lin = None
        for k, e in enumerate(idx):
            i = self.cast(scope, self.materialize(scope, self.expr(scope, e)), I64).v
            if lin is None:
                lin = i
            else:
                dim = arr.shape[k]
                dim = ir.Constant(ir.IntType(64), dim) if isinstance(dim, int) else dim
                lin = b.add(b.mul(lin, dim), i)
        return lin

    def load(self, scope, arr, lin):
        b = scope.func.b
        raw = b.load(b.gep(arr.ptr, [lin], inbounds=True))
        if arr.dt == BOOL:
            raw = b.icmp_unsigned("!=", raw, ir.Constant(ir.IntType(8), 0))
        return Val(raw, arr.dt)

    def store(self, scope, arr, lin, v):
        b = scope.func.b
        raw = b.zext(v.v, ir.IntType(8)) if arr.dt == BOOL else v.v
        b.store(raw, b.gep(arr.ptr, [lin], inbounds=True))

    # ---- expressions
    def expr(self, scope, e):
        meth = getattr(self, "ex_" + type(e).__name__, None)
        if meth is None:
            raise Unsupported(f"expression {type(e).__name__}")
        return meth(scope, e)

    def ex_Constant(self, scope, e):
        c = const_of(e.value)
        if c is None:
            if isinstance(e.value, str) or e.value is None:
                return e.value
            raise Unsupported(f"constant {e.value!r}")
        return c

    def ex_Name(self, scope, e):
        return self.lookup(scope, e.id)

    def ex_Attribute(self, scope, e):
        base = self.expr(scope, e.value)
        if isinstance(base, (Val, Const)):
            if e.attr in ("real",):
                return base
            raise Unsupported(f"attribute .{e.attr} of a scalar")
        if isinstance(base, Arr):
            if e.attr == "shape":
                return Tup(Val(s, I64) if not isinstance(s, int) else Const(s, I64) for s in base.shape)
            raise Unsupported(f"array attribute .{e.attr}")
        try:
            obj = getattr(base, e.attr)
        except AttributeError:
            raise Unsupported(f"{base!r} has no attribute {e.attr}") from None
        return self.global_value(obj)

    def ex_Tuple(self, scope, e):
        return Tup(self.expr(scope, x) for x in e.elts)

    def ex_Subscript(self, scope, e):
        base = self.expr(scope, e.value)
        if isinstance(base, Tup):
            k = self.expr(scope, e.slice)
            if not isinstance(k, Const):
                raise Unsupported("tuple index that is not a constant")
            return base[int(k.py)]
        if isinstance(base, Arr):
            if isinstance(e.slice, ast.Tuple) and e.slice.elts and _is_ellipsis(e.slice.elts[-1]):
                return self.subarray(scope, base, e.slice.elts[:-1])
            return self.load(scope, base, self.index(scope, base, e.slice))
        raise Unsupported("subscript of a scalar")

    def subarray(self, scope, arr, idx):
        """``arr[i, j, ...]``: the C-contiguous sub-array at the leading indices (a view)."""
        if len(idx) > len(arr.shape):
            raise Unsupported("too many indices for a view")
        b = scope.func.b
        lin = ir.Constant(ir.IntType(64), 0)
        for k, e in enumerate(idx):
            dim = arr.shape[k]
            dim = ir.Constant(ir.IntType(64), dim) if isinstance(dim, int) else dim
            i = self.cast(scope, self.materialize(scope, self.expr(scope, e)), I64).v
            lin = b.add(b.mul(lin, dim), i)
        rest = arr.shape[len(idx):]
        lin = b.mul(lin, self._size(scope, [Const(s, I64) if isinstance(s, int) else Val(s, I64) for s in rest]))
        return Arr(b.gep(arr.ptr, [lin], inbounds=True), rest, arr.dt)

    def reshape(self, scope, arr, args):
        """``arr.reshape(shape)``: the same buffer with another C-order shape (one -1 allowed)."""
        shp = args[0] if len(args) == 1 else Tup(args)
        shape = list(shp) if isinstance(shp, Tup) else [shp]
        total = self._size(scope, [Const(s, I64) if isinstance(s, int) else Val(s, I64) for s in arr.shape])
        known = [s for s in shape if not (isinstance(s, Const) and s.py == -1)]
        dims = []
        for s in shape:
            if isinstance(s, Const) and s.py == -1:
                rest = self._size(scope, known)
                dims.append(scope.func.b.sdiv(total, rest))
            elif isinstance(s, Const):
                dims.append(int(s.py))
            else:
                dims.append(self.cast(scope, self.materialize(scope, s), I64).v)
        return Arr(arr.ptr, dims, arr.dt)

    def ex_IfExp(self, scope, e):
        cond = self.truth(scope, self.expr(scope, e.test))
        if isinstance(cond, Const):
            return self.expr(scope, e.body if cond.py else e.orelse)
        a, c = self.expr(scope, e.body), self.expr(scope, e.orelse)
        return self.select(scope, cond, a, c)

    def select(self, scope, cond, a, c):
        if isinstance(a, Tup) and isinstance(c, Tup):
            return Tup(self.select(scope, cond, x, y) for x, y in zip(a, c))
        dt = promote(a.dt, c.dt) if a.dt != c.dt else a.dt
        av = self.cast(scope, self.materialize(scope, a), dt)
        cv = self.cast(scope, self.materialize(scope, c), dt)
        return Val(scope.func.b.select(self.materialize(scope, cond).v, av.v, cv.v), dt)

    def truth(self, scope, v):
        if isinstance(v, Const):
            return Const(bool(v.py), BOOL)
        if isinstance(v, Val):
            return v if v.dt == BOOL else self.cast(scope, v, BOOL)
        raise Unsupported("truth value of a non-scalar")

    def ex_BoolOp(self, scope, e):
        vals = [self.truth(scope, self.expr(scope, x)) for x in e.values]
        acc = vals[0]
        for v in vals[1:]:
            acc = self.binop(scope, ast.BitAnd() if isinstance(e.op, ast.And) else ast.BitOr(), acc, v)
        return acc

    def ex_UnaryOp(self, scope, e):
        v = self.expr(scope, e.operand)
        if isinstance(e.op, ast.Not):
            t = self.truth(scope, v)
            if isinstance(t, Const):
                return Const(not t.py, BOOL)
            return Val(scope.func.b.not_(t.v), BOOL)
        if isinstance(v, Const):
            py = {ast.USub: lambda x: -x, ast.UAdd: lambda x: x, ast.Invert: lambda x: ~x}[type(e.op)](v.py)
            return Const(py, v.dt if v.dt != BOOL else I64)
        b = scope.func.b
        if isinstance(e.op, ast.UAdd):
            return v
        if isinstance(e.op, ast.USub):
            if v.dt.kind == "f":
                return Val(b.fneg(v.v), v.dt)
            v = self.cast(scope, v, promote(v.dt, v.dt))
            return Val(b.neg(v.v), v.dt)
        if isinstance(e.op, ast.Invert):
            if v.dt == BOOL:
                return Val(b.not_(v.v), BOOL)
            v = self.cast(scope, v, promote(v.dt, v.dt))
            return Val(b.not_(v.v), v.dt)
        raise Unsupported(f"unary {type(e.op).__name__}")

    def ex_BinOp(self, scope, e):
        return self.binop(scope, e.op, self.expr(scope, e.left), self.expr(scope, e.right))

    def binop(self, scope, op, x, y):
        if isinstance(x, Const) and isinstance(y, Const) and isinstance(op, ast.Pow):
            return const_of(np.float64(x.py) ** y.py if F64 in (x.dt, y.dt) else x.py ** y.py)
        opt = type(op)
        dt = promote(x.dt, y.dt, opt)
        if opt is ast.Div and dt.kind != "f":
            dt = F64
        a = self.cast(scope, self.materialize(scope, x), dt).v
        c = self.cast(scope, self.materialize(scope, y), dt).v
        b = scope.func.b
        if dt.kind == "f":
            simple = {ast.Add: b.fadd, ast.Sub: b.fsub, ast.Mult: b.fmul, ast.Div: b.fdiv}
            if opt in simple:
                return Val(simple[opt](a, c), dt)
            if opt is ast.Mod:
                return Val(self._fmod_py(scope, a, c, dt), dt)
            if opt is ast.FloorDiv:
                q = b.call(self.intrinsic("llvm.floor", dt, 1), [b.fdiv(a, c)])
                return Val(q, dt)
            if opt is ast.Pow:
                return Val(b.call(self.intrinsic("llvm.pow", dt, 2), [a, c]), dt)
            raise Unsupported(f"float operator {opt.__name__}")
        simple = {ast.Add: b.add, ast.Sub: b.sub, ast.Mult: b.mul, ast.BitAnd: b.and_,
                  ast.BitOr: b.or_, ast.BitXor: b.xor, ast.LShift: b.shl,
                  ast.RShift: b.ashr if dt.kind == "i" else b.lshr}
        if opt in simple:
            return Val(simple[opt](a, c), dt)
        if opt in (ast.FloorDiv, ast.Mod):
            return Val(self._int_divmod(scope, a, c, dt, opt is ast.Mod), dt)
        raise Unsupported(f"integer operator {opt.__name__}")

    def _int_divmod(self, scope, a, c, dt, want_mod):
        """Python's floor division / modulo; a zero divisor gives 0 (Numba's numpy error model)."""
        b = scope.func.b
        zero = ir.Constant(a.type, 0)
        one = ir.Constant(a.type, 1)
        is_zero = b.icmp_unsigned("==", c, zero)
        safe = b.select(is_zero, one, c)
        if dt.kind == "u":
            r = b.urem(a, safe) if want_mod else b.udiv(a, safe)
            return b.select(is_zero, zero, r)
        q = b.sdiv(a, safe)
        r = b.srem(a, safe)
        adjust = b.and_(b.icmp_signed("!=", r, zero),
                        b.icmp_signed("!=", b.icmp_signed("<", r, zero), b.icmp_signed("<", safe, zero)))
        res = b.select(adjust, b.add(r, safe), r) if want_mod else b.select(adjust, b.sub(q, one), q)
        return b.select(is_zero, zero, res)

    def _fmod_py(self, scope, a, c, dt):
        b = scope.func.b
        r = b.frem(a, c)
        zero = ir.Constant(a.type, 0.0)
        fix = b.and_(b.fcmp_ordered("!=", r, zero),
                     b.icmp_unsigned("!=", b.fcmp_ordered("<", r, zero), b.fcmp_ordered("<", c, zero)))
        return b.select(fix, b.fadd(r, c), r)

    def ex_Compare(self, scope, e):
        x = self.expr(scope, e.left)
        result = None
        for op, right in zip(e.ops, e.comparators):    # a < b <= c: (a < b) and (b <= c)
            y = self.expr(scope, right)
            r = self.compare(scope, _CMP[type(op)], x, y)
            result = r if result is None else self.binop(scope, ast.BitAnd(), result, r)
            x = y
        return result

    def compare(self, scope, op, x, y):
        if isinstance(x, Const) and isinstance(y, Const):
            return Const(eval(f"x.py {op} y.py"), BOOL)
        dt = promote(x.dt, y.dt) if x.dt != y.dt else x.dt
        a = self.cast(scope, self.materialize(scope, x), dt).v
        c = self.cast(scope, self.materialize(scope, y), dt).v
        b = scope.func.b
        if dt.kind == "f":
            res = b.fcmp_unordered(op, a, c) if op == "!=" else b.fcmp_ordered(op, a, c)
        elif dt.kind == "u" or dt == BOOL:
            res = b.icmp_unsigned(op, a, c)
        else:
            res = b.icmp_signed(op, a, c)
        return Val(res, BOOL)

    # ---- casts
    def cast(self, scope, v, dt):
        dt = np.dtype(dt)
        if isinstance(v, Const):
            v = self.materialize(scope, v)
        if v.dt == dt:
            return v
        b, src = scope.func.b, v.dt
        ty = lltype(dt)
        if dt == BOOL:
            if src.kind == "f":
                return Val(b.fcmp_unordered("!=", v.v, ir.Constant(v.v.type, 0.0)), BOOL)
            return Val(b.icmp_unsigned("!=", v.v, ir.Constant(v.v.type, 0)), BOOL)
        if src == BOOL:
            return Val(b.zext(v.v, ty) if dt.kind in "iu" else b.uitofp(v.v, ty), dt)
        if src.kind in "iu" and dt.kind in "iu":
            if dt.itemsize < src.itemsize:
                return Val(b.trunc(v.v, ty), dt)
            if dt.itemsize == src.itemsize:
                return Val(v.v, dt)
            return Val(b.sext(v.v, ty) if src.kind == "i" else b.zext(v.v, ty), dt)
        if src.kind in "iu":
            return Val(b.sitofp(v.v, ty) if src.kind == "i" else b.uitofp(v.v, ty), dt)
        if dt.kind in "iu":
            return Val(b.fptosi(v.v, ty) if dt.kind == "i" else b.fptoui(v.v, ty), dt)
        return Val(b.fpext(v.v, ty) if dt.itemsize > src.itemsize else b.fptrunc(v.v, ty), dt)

    def const_cast(self, c, dt):
        """A constant converted as numpy converts it (exactly what Numba folds)."""
        with np.errstate(all="ignore"):
            try:
                arr = np.array(c.py, dtype=c.dt)
            except OverflowError:       # an int literal past int64, e.g. np.uint64(2**64 - 1)
                arr = np.array(c.py)
            return Const(arr.astype(dt).item(), dt)

    # ---- calls
    def ex_Call(self, scope, e):
        if e.keywords:
            raise Unsupported("keyword arguments")
        if isinstance(e.func, ast.Attribute) and e.func.attr == "reshape":
            base = self.expr(scope, e.func.value)
            if isinstance(base, Arr):
                return self.reshape(scope, base, [self.expr(scope, a) for a in e.args])
        f = self.expr(scope, e.func)
        args = [self.expr(scope, a) for a in e.args]
        if getattr(f, "__name__", "") == "dot_step" and getattr(f, "__module__", "").endswith("scalar_helpers"):
            return self.dot_step(scope, *args)
        handled = call_builtin(self, scope, f, args)
        if handled is not None:
            return handled
        fn = getattr(f, "py_func", f)
        if self._speculation is not None and getattr(fn, "speculative", None) is not None:
            value = pyir_strips.fast_call(self, scope, fn, args)
            if value is not None:
                return value
        if inspect.isfunction(fn):
            return self.inline_call(scope, fn, args)
        raise Unsupported(f"call of {f!r}")

    def dot_step(self, scope, acc, a, c):
        """``acc + a * c`` whose float sum may be reassociated and contracted to an FMA."""
        dt = promote(acc.dt, promote(a.dt, c.dt))
        if dt.kind != "f":
            return self.binop(scope, ast.Add(), acc, self.binop(scope, ast.Mult(), a, c))
        acc, a, c = (self.cast(scope, self.materialize(scope, v), dt).v for v in (acc, a, c))
        flags = ("reassoc", "contract")
        b = scope.func.b
        return Val(b.fadd(acc, b.fmul(a, c, flags=flags), flags=flags), dt)

    def inline_call(self, scope, fn, args):
        if self._inline_depth > 40:
            raise Unsupported(f"recursion in {fn.__name__}")
        tree = _parse_function(fn)
        func = scope.func
        inner = Scope(_globals_of(fn), func)
        params = [a.arg for a in tree.args.args]
        defaults = fn.__defaults__ or ()
        args = list(args) + [self.global_value(d) for d in defaults[len(args) - len(params):]] \
            if len(args) < len(params) else args
        for nm, v in zip(params, args):
            if isinstance(v, (Arr, Tup, Const)):
                inner.vars[nm] = ("bind", v)     # constants stay foldable inside the callee
            else:
                self.bind_var(inner, nm, v)
        exit_block = func.b.append_basic_block(f"ret.{fn.__name__}")
        inner.ret = (exit_block, [])
        self._inline_depth += 1
        try:
            self.block(inner, tree.body)
        finally:
            self._inline_depth -= 1
        if not func.b.block.is_terminated:
            func.b.branch(exit_block)
        func.b.position_at_end(exit_block)
        slots = inner.ret[1]
        if not slots:
            return Tup()
        vals = [s[1] if s[0] == "arr" else Val(func.b.load(s[1]), s[2]) for s in slots]
        return _unflatten(vals, inner.ret_shape)


def _is_ellipsis(e):
    return isinstance(e, ast.Constant) and e.value is Ellipsis


def _unflatten(vals, shape):
    if shape is None:
        return vals[0]
    it = iter(vals)

    def build(sh):
        return Tup(build(s) for s in sh) if sh is not None else next(it)
    return build(shape)


class _counted_loop:
    """``with _counted_loop(builder, n) as i:`` emits ``for i in range(n)``."""

    def __init__(self, b, n):
        self.b, self.n = b, n

    def __enter__(self):
        b = self.b
        self.pre = b.block
        self.head = b.append_basic_block("fill.head")
        self.body = b.append_basic_block("fill.body")
        self.done = b.append_basic_block("fill.end")
        b.branch(self.head)
        b.position_at_end(self.head)
        self.i = b.phi(ir.IntType(64))
        self.i.add_incoming(ir.Constant(ir.IntType(64), 0), self.pre)
        b.cbranch(b.icmp_signed("<", self.i, self.n), self.body, self.done)
        b.position_at_end(self.body)
        return self.i

    def __exit__(self, *exc):
        b = self.b
        nxt = b.add(self.i, ir.Constant(ir.IntType(64), 1))
        self.i.add_incoming(nxt, b.block)
        b.branch(self.head)
        b.position_at_end(self.done)


_parsed = {}


def _parse_function(fn):
    tree = _parsed.get(fn)
    if tree is None:
        src = textwrap.dedent(inspect.getsource(fn))
        node = ast.parse(src).body[0]
        node.decorator_list = []
        tree = _parsed[fn] = node
    return tree


def _globals_of(fn):
    """The callee's globals plus its closure variables (f2i's bounds, for instance)."""
    g = fn.__globals__
    if fn.__closure__:
        g = dict(g)
        g.update(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__)))
    return g


__all__ = ["Translator", "Unsupported", "lltype", "memtype"]

# The builtins table uses this module's value types, so it comes last.
from .pyir_builtins import call_builtin  # noqa: E402
