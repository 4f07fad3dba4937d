"""Entry points of compiled kernels: how a driver's call ``k(lo, hi, *args)`` reaches a
kernel's machine code, with no ctypes on the way.

Each kernel ``k`` is compiled as ``void k(i64 lo, i64 hi, dims..., scalars..., data
pointers...)`` plus ``k_py``, a CPython ``METH_FASTCALL`` function ``PyObject *k_py(PyObject
*self, PyObject *const *args, Py_ssize_t nargs)`` (``entry_point``).  ``k_py`` tail-calls
``numjax_entry`` with the kernel's *argument descriptor* (a table of words) and itself;
``numjax_entry`` checks the Python arguments (exact int/float/bool types; arrays: type,
dtype, rank, contiguity, sizes), converts them into slots and calls ``k_py`` back in "run"
mode, which calls ``k`` -- with the GIL released for large calls, or in chunks on the
parallel runner (``cpu_runtime``) when asked with ``lo < 0``.  Whatever the fast path does
not take as it is goes to ``self`` (a ``KernelSelf``), that is to the kernel's ``CheckedCall``
in Python, which raises TypeError or ValueError, or converts and calls the body through ctypes.

``kernel_functions`` makes each ``k_py`` a builtin function (PyCFunction_NewEx): a call costs
~0.06 µs (through ctypes it took ~0.5 µs).  ``numjax_entry`` is the same for every kernel, so
it lives in the *runtime* object (``runtime_module``), compiled once per machine and cached
like programs (``cpu_llvm_build.load_runtime``).  The C API, None, numpy's ndarray type, the
parallel runner's cell and ``numjax_entry`` itself are external symbols bound when an object
is loaded: nothing of the compiling process is in any object.  The array fields read are
checked against this process's numpy once (``check_layout``).
"""
import ctypes
import functools
import operator
import re
import sys

import numpy as np

from . import cpu_runtime, objload
from .unsupported import Unsupported

ENTRY_FORMAT = "fastcall-7"     # the entry points' ABI, part of every object's cache key
_PY_SUFFIX = "_py"
NDARRAY_SYMBOL = "numjax_ndarray_type"
RUNNER_SYMBOL = "numjax_parallel_runner"   # a cell: the runner of parallel calls, or null
ENTRY_SYMBOL = "numjax_entry"
_OB_TYPE = 8                                                    # PyObject.ob_type
_DATA_OFFSET, _ND, _DIMS, _DESCR, _FLAGS = 16, 24, 32, 56, 64   # PyArrayObject fields
_BYTEORDER, _TYPE_NUM = 26, 28                                  # PyArray_Descr fields
_C_CONTIGUOUS, _WRITEABLE = 0x1, 0x400                          # NPY_ARRAY_* flags
_METH_FASTCALL = 0x80
# A call whose arrays hold this many elements releases the GIL (other Python threads run
# meanwhile, run_chunked's chunks run at once); smaller ones keep it, saving ~35 ns.
_GIL_RELEASE_ELEMENTS = 1 << 14
_MAX_THREADS = 256              # of one parallel call (kernel(-n, hi, ...))
# A parallel call ``kernel(-(chunks << CHUNKS_SHIFT | threads), hi, ...)`` runs [0, hi) in
# ``chunks`` pieces (``threads`` when 0) that ``threads`` threads claim one at a time.
CHUNKS_SHIFT = cpu_runtime.CHUNKS_SHIFT
objload.define_symbol(NDARRAY_SYMBOL, id(np.ndarray))
objload.define_symbol(RUNNER_SYMBOL, cpu_runtime.runner_cell_address())


def entry_point(mod, spec, body):
    """``PyObject *NAME_py(PyObject *self, PyObject *const *args, Py_ssize_t nargs)``, the
    ``METH_FASTCALL`` entry point of kernel ``body`` (see the module docstring): a
    tail call of the runtime's ``numjax_entry`` with the kernel's argument descriptor and
    itself, which ``numjax_entry`` then calls back with ``nargs = -1`` (never a count) and
    ``args`` pointing at {slots, lo, hi}: ``body(lo, hi, args...)`` with the arguments as
    converted into the slots (floats as double bits, arrays as data pointers)."""
    from llvmlite import ir
    i64 = ir.IntType(64)
    kinds = _arg_kinds(spec)
    words = _descriptor(kinds, spec.chunked)
    table = ir.GlobalVariable(mod, ir.ArrayType(i64, len(words)), spec.name + "_args")
    table.global_constant, table.linkage = True, "private"
    table.initializer = ir.Constant(table.type.pointee, words)
    fastcall = _entry_type().args[4].pointee
    fn = ir.Function(mod, fastcall, spec.name + _PY_SUFFIX)
    fn.attributes.add("noinline")
    fn.attributes.add("optnone")        # fast instruction selection: 0.5 ms less a kernel, no slower
    self_, argv, nargs = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    call, run = fn.append_basic_block("call"), fn.append_basic_block("run")
    b.cbranch(b.icmp_signed("==", nargs, ir.Constant(i64, -1)), run, call)
    b.position_at_end(call)
    entry = mod.globals.get(ENTRY_SYMBOL)
    if entry is None:                   # in the runtime object, bound when loaded
        entry = ir.Function(mod, _entry_type(), ENTRY_SYMBOL)
    table_start = table.gep([ir.Constant(i64, 0)] * 2)
    b.ret(b.call(entry, [self_, argv, nargs, table_start, fn], tail=True))
    b.position_at_end(run)
    block = b.bitcast(argv, _run_block_type().as_pointer())
    zero = ir.Constant(ir.IntType(32), 0)
    slots, lo, hi = (b.load(b.gep(block, [zero, ir.Constant(ir.IntType(32), k)])) for k in range(3))
    args = [lo, hi]
    for i, (kind, t) in enumerate(zip(kinds[2:], body.function_type.args[2:]), start=2):
        v = b.load(b.gep(slots, [ir.Constant(i64, i)]))
        if kind[0] == "array":
            v = b.inttoptr(v, t)
        elif kind[0] == "float":
            v = b.bitcast(v, ir.DoubleType())
            v = b.fptrunc(v, t) if t != v.type else v
        elif t.width < 64:
            v = b.trunc(v, t)
        args.append(v)
    b.call(body, args)
    b.ret(ir.Constant(fastcall.return_type, None))
    return fn


# Argument descriptors: per argument a kind word, and for arrays the accepted numpy type
# numbers (a bit mask), the rank, whether writable, and per axis its size: a constant >= 0,
# -(i + 1) for "the value of int argument i", or _ANY_SIZE.
_INT, _FLOAT, _BOOL, _ARRAY = 0, 1, 2, 3
_ANY_SIZE = -(1 << 62)


def _descriptor(kinds, chunked):
    words, seen = [len(kinds), int(chunked)], {}
    for i, kind in enumerate(kinds):
        if kind[0] != "array":
            words.append({"int": _INT, "float": _FLOAT, "bool": _BOOL}[kind[0]])
            if kind[0] == "int":
                seen[kind[1]] = i
            continue
        _, _, dtype, shape, writable = kind
        words += [_ARRAY, sum(1 << n for n in _type_nums(dtype)), len(shape), int(writable)]
        words += [s if isinstance(s, int) else -(seen[s] + 1) if s in seen else _ANY_SIZE
                  for s in shape]
    return words


def _arg_kinds(spec):
    """Per Python argument of a kernel: ``("int", name)``, ``("float", name)``,
    ``("bool", name)`` or ``("array", name, dtype, shape, writable)``."""
    names = ["lo", "hi"] + _param_names(spec)
    kinds = [("int", "lo"), ("int", "hi")]
    for p, name in zip(spec.params, names[2:]):
        if p[0] == "dim":
            kinds.append(("int", name))
        elif p[0] == "scalar":
            kind = np.dtype(p[1]).kind
            kinds.append(("bool" if kind == "b" else "int" if kind in "iu" else "float", name))
        else:
            kinds.append(("array", name, p[1], tuple(p[2]), False))
    outs = zip(names[2 + len(spec.params):], spec.outputs)
    return kinds + [("array", name, dt, tuple(shape), True) for name, (dt, shape) in outs]


def _run_block_type():
    """What ``numjax_entry`` passes a kernel's entry point to run it: slots, lo, hi."""
    from llvmlite import ir
    i64 = ir.IntType(64)
    return ir.LiteralStructType([i64.as_pointer(), i64, i64])


def _run_kernel(b, kernel, block, slots, lo, hi):
    """``kernel(NULL, block = {slots, lo, hi}, -1)``: the kernel's body on [lo, hi)."""
    from llvmlite import ir
    i32, i64 = ir.IntType(32), ir.IntType(64)
    for k, v in enumerate((slots, lo, hi)):
        b.store(v, b.gep(block, [ir.Constant(i32, 0), ir.Constant(i32, k)]))
    obj = ir.IntType(8).as_pointer()
    b.call(kernel, [ir.Constant(obj, None), b.bitcast(block, obj.as_pointer()), ir.Constant(i64, -1)])


def _entry_type():
    """``numjax_entry(self, args, nargs, descriptor, kernel)``; ``kernel`` is the calling
    entry point (METH_FASTCALL signature)."""
    from llvmlite import ir
    i64, obj = ir.IntType(64), ir.IntType(8).as_pointer()
    fastcall = ir.FunctionType(obj, [obj, obj.as_pointer(), i64])
    return ir.FunctionType(obj, [obj, obj.as_pointer(), i64, i64.as_pointer(), fastcall.as_pointer()])


def _generic_entry(mod):
    """``PyObject *numjax_entry(self, args, nargs, i64 *descriptor, kernel)``, in the
    runtime object and shared by all entry points: checks and converts the arguments into
    slots, then runs the kernel (the GIL released when the arrays hold
    ``_GIL_RELEASE_ELEMENTS`` elements or more; a chunked call with ``lo < 0``: on the
    runner's threads, as ``CHUNKS_SHIFT`` says).  The fast path takes exactly what drivers
    pass: ints, floats and bools of exactly those types, ndarrays of exactly that type with
    the dtype, rank, layout and sizes described.  Anything else goes to ``self``, the
    kernel's ``CheckedCall``."""
    from llvmlite import ir
    i8, i32, i64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
    obj = i8.as_pointer()
    fn = ir.Function(mod, _entry_type(), ENTRY_SYMBOL)
    self_, argv, nargs, desc, kernel = fn.args
    block = fn.append_basic_block
    entry = block("entry")
    b = ir.IRBuilder(entry)

    def const(v, t=i64):
        return ir.Constant(t, v)

    def api(name, ret, args):
        f = mod.globals.get(name)
        return f if f is not None else ir.Function(mod, ir.FunctionType(ret, args), name)

    def extern(name, t=i8):
        return _extern(mod, name, t)

    def field(ptr, offset, t):
        return b.load(b.bitcast(b.gep(ptr, [const(offset)]), t.as_pointer()))

    def word(k):
        return b.load(b.gep(desc, [k]))

    slow = block("slow")                 # the CheckedCall does it all
    sb = ir.IRBuilder(slow)
    sb.ret(sb.call(_slow_call(mod), [self_, argv, nargs]))

    def slow_unless(cond):
        cont = block()
        b.cbranch(cond, cont, slow).set_weights([1 << 20, 1])
        b.position_at_end(cont)

    b.position_at_end(entry)
    run_block = b.alloca(_run_block_type())
    n = word(const(0))
    slots = b.alloca(i64, n)
    slow_unless(b.icmp_signed("==", nargs, n))
    # for i in range(n): one argument per iteration; cursor walks the descriptor
    head, done_args = block("arg"), block("args_done")
    start = b.block
    b.branch(head)
    b.position_at_end(head)
    i, cursor, total = b.phi(i64), b.phi(i64), b.phi(i64)
    for phi, v in ((i, 0), (cursor, 2), (total, 0)):
        phi.add_incoming(const(v), start)
    more = block()
    b.cbranch(b.icmp_signed("<", i, n), more, done_args)
    b.position_at_end(more)
    o = b.load(b.gep(argv, [i]))
    tp = field(o, _OB_TYPE, obj)
    slot = b.gep(slots, [i])
    kind = word(cursor)
    next_arg = block("next")
    k_int, k_float, k_bool, k_array = block("int"), block("float"), block("bool"), block("array")
    sw = b.switch(kind, slow)
    for code, target in ((_INT, k_int), (_FLOAT, k_float), (_BOOL, k_bool), (_ARRAY, k_array)):
        sw.add_case(const(code), target)
    incoming = []                       # (block, new cursor, new total) into next_arg
    # int: exactly int; wraps modulo 2**64 as C does (cannot fail on an int)
    b.position_at_end(k_int)
    slow_unless(b.icmp_unsigned("==", tp, extern("PyLong_Type")))
    b.store(b.call(api("PyLong_AsUnsignedLongLongMask", i64, [obj]), [o]), slot)
    incoming.append((b.block, b.add(cursor, const(1)), total))
    b.branch(next_arg)
    # float: exactly float, stored as double bits
    b.position_at_end(k_float)
    slow_unless(b.icmp_unsigned("==", tp, extern("PyFloat_Type")))
    d = b.call(api("PyFloat_AsDouble", ir.DoubleType(), [obj]), [o])
    b.store(b.bitcast(d, i64), slot)
    incoming.append((b.block, b.add(cursor, const(1)), total))
    b.branch(next_arg)
    # bool: True or False
    b.position_at_end(k_bool)
    is_true = b.icmp_unsigned("==", o, extern("_Py_TrueStruct"))
    slow_unless(b.or_(is_true, b.icmp_unsigned("==", o, extern("_Py_FalseStruct"))))
    b.store(b.zext(is_true, i64), slot)
    incoming.append((b.block, b.add(cursor, const(1)), total))
    b.branch(next_arg)
    # array: exactly ndarray; dtype (type number in the mask), native byte order, rank,
    # C-contiguous (and writable), sizes
    b.position_at_end(k_array)
    slow_unless(b.icmp_unsigned("==", tp, extern(NDARRAY_SYMBOL)))
    descr = field(o, _DESCR, obj)
    num = b.zext(field(descr, _TYPE_NUM, i32), i64)
    mask = word(b.add(cursor, const(1)))
    rank = word(b.add(cursor, const(2)))
    flags = b.select(b.icmp_signed("!=", word(b.add(cursor, const(3))), const(0)),
                     const(_C_CONTIGUOUS | _WRITEABLE, i32), const(_C_CONTIGUOUS, i32))
    foreign = const(ord(">" if sys.byteorder == "little" else "<"), i8)
    good = b.and_(b.icmp_unsigned("<", num, const(64)),
                  b.icmp_unsigned("!=", b.and_(b.lshr(mask, num), const(1)), const(0)))
    for c in (b.icmp_unsigned("!=", field(descr, _BYTEORDER, i8), foreign),
              b.icmp_signed("==", b.sext(field(o, _ND, i32), i64), rank),
              b.icmp_unsigned("==", b.and_(field(o, _FLAGS, i32), flags), flags)):
        good = b.and_(good, c)
    slow_unless(good)
    dims = field(o, _DIMS, i64.as_pointer())
    axes = b.add(cursor, const(4))
    ahead, abody, aend = block("axis"), block(), block()
    pre = b.block
    b.branch(ahead)
    b.position_at_end(ahead)
    j, count = b.phi(i64), b.phi(i64)
    j.add_incoming(const(0), pre)
    count.add_incoming(const(1), pre)
    b.cbranch(b.icmp_signed("<", j, rank), abody, aend)
    b.position_at_end(abody)
    size = b.load(b.gep(dims, [j]))
    want = word(b.add(axes, j))
    is_const, is_any = b.icmp_signed(">=", want, const(0)), b.icmp_signed("==", want, const(_ANY_SIZE))
    index = b.select(b.or_(is_const, is_any), const(0), b.sub(const(-1), want))
    wanted = b.select(is_const, want, b.select(is_any, size, b.load(b.gep(slots, [index]))))
    slow_unless(b.icmp_signed("==", size, wanted))
    j.add_incoming(b.add(j, const(1)), b.block)
    count.add_incoming(b.mul(count, size), b.block)
    b.branch(ahead)
    b.position_at_end(aend)
    b.store(b.ptrtoint(field(o, _DATA_OFFSET, obj), i64), slot)
    incoming.append((b.block, b.add(axes, rank), b.add(total, count)))
    b.branch(next_arg)
    b.position_at_end(next_arg)
    new_cursor, new_total = b.phi(i64), b.phi(i64)
    for blk, c, t in incoming:
        new_cursor.add_incoming(c, blk)
        new_total.add_incoming(t, blk)
    i.add_incoming(b.add(i, const(1)), next_arg)
    cursor.add_incoming(new_cursor, next_arg)
    total.add_incoming(new_total, next_arg)
    b.branch(head)
    # the call
    b.position_at_end(done_args)
    lo, hi = b.load(slots), b.load(b.gep(slots, [const(1)]))
    runner = b.load(extern(RUNNER_SYMBOL, obj.as_pointer()))
    negative = b.icmp_signed("<", lo, const(0))
    chunked = b.icmp_signed("!=", word(const(1)), const(0))
    parallel, serial, finish = block("parallel"), block("serial"), block("finish")
    b.cbranch(b.and_(b.and_(chunked, negative), b.icmp_unsigned("!=", runner, ir.Constant(obj, None))),
              parallel, serial)

    def without_gil(emit):
        state = b.call(api("PyEval_SaveThread", obj, []), [])
        emit()
        b.call(api("PyEval_RestoreThread", ir.VoidType(), [obj]), [state])

    b.position_at_end(parallel)       # at most one chunk per iteration, _MAX_THREADS threads

    def smaller(x, y):
        return b.select(b.icmp_signed("<", x, y), x, y)
    most = b.select(b.icmp_signed(">", hi, const(1)), hi, const(1))
    asked = b.neg(lo)
    threads = b.and_(asked, const((1 << CHUNKS_SHIFT) - 1))
    threads = smaller(smaller(threads, most), const(_MAX_THREADS))
    threads = b.select(b.icmp_signed("<", threads, const(1)), const(1), threads)
    chunks = b.ashr(asked, const(CHUNKS_SHIFT))
    chunks = smaller(b.select(b.icmp_signed("<", chunks, threads), threads, chunks), most)
    at_entry = ir.IRBuilder(entry)
    at_entry.position_at_start(entry)
    pack = at_entry.alloca(_pack_type())
    for k, v in enumerate((const(0), chunks, hi, kernel, slots)):
        b.store(v, b.gep(pack, [const(0, i32), const(k, i32)]))
    chunk_fn = _chunks_function(mod)
    runner_type = ir.FunctionType(ir.VoidType(), [chunk_fn.type, obj, i32, i32])
    run = b.bitcast(runner, runner_type.as_pointer())
    without_gil(lambda: b.call(run, [chunk_fn, b.bitcast(pack, obj), b.trunc(threads, i32), const(0, i32)]))
    b.branch(finish)
    b.position_at_end(serial)
    lo = b.select(negative, const(0), lo)
    release, hold = block("release"), block("hold")
    b.cbranch(b.icmp_unsigned(">=", total, const(_GIL_RELEASE_ELEMENTS)), release, hold)
    b.position_at_end(release)
    without_gil(lambda: _run_kernel(b, kernel, run_block, slots, lo, hi))
    b.branch(finish)
    b.position_at_end(hold)
    _run_kernel(b, kernel, run_block, slots, lo, hi)
    b.branch(finish)
    b.position_at_end(finish)
    none = extern("_Py_NoneStruct")
    b.call(api("Py_IncRef", ir.VoidType(), [obj]), [none])
    b.ret(none)
    return fn


def _pack_type():
    """A parallel call's shared state: next chunk, chunks, hi, kernel, slots."""
    from llvmlite import ir
    i64 = ir.IntType(64)
    return ir.LiteralStructType([i64, i64, i64, _entry_type().args[4], i64.as_pointer()])


def _chunks_function(mod):
    """``void numjax_chunks(pack*)``, run by every thread of a parallel call: claims chunks
    of [0, hi) and runs them through the kernel's entry point until none is left."""
    fn = mod.globals.get("numjax_chunks")
    if fn is not None:
        return fn
    from llvmlite import ir
    i32, i64 = ir.IntType(32), ir.IntType(64)
    fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [ir.IntType(8).as_pointer()]), "numjax_chunks")
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    loop, work = fn.append_basic_block("loop"), fn.append_basic_block("work")
    done = fn.append_basic_block("done")
    pack = b.bitcast(fn.args[0], _pack_type().as_pointer())

    def field(k):
        return b.gep(pack, [ir.Constant(i32, 0), ir.Constant(i32, k)])
    chunks, hi, kernel, slots = (b.load(field(k)) for k in (1, 2, 3, 4))
    block = b.alloca(_run_block_type())
    b.branch(loop)
    b.position_at_end(loop)
    chunk = b.atomic_rmw("add", field(0), ir.Constant(i64, 1), "monotonic")
    b.cbranch(b.icmp_signed("<", chunk, chunks), work, done)
    b.position_at_end(work)
    # Chunk k is [k*hi/chunks, (k+1)*hi/chunks): sizes differ by one at most, none empty
    # (chunks <= hi).
    lo = b.sdiv(b.mul(chunk, hi), chunks)
    end = b.sdiv(b.mul(b.add(chunk, ir.Constant(i64, 1)), hi), chunks)
    _run_kernel(b, kernel, block, slots, lo, end)
    b.branch(loop)
    b.position_at_end(done)
    b.ret_void()
    return fn


def _extern(mod, name, ty):
    """The global ``name`` of ``mod``; declared external (bound when loaded) if new."""
    g = mod.globals.get(name)
    if g is None:
        from llvmlite import ir
        g = ir.GlobalVariable(mod, ty, name)
    return g


def _slow_call(mod):
    """``PyObject *numjax_slow_call(self, args, nargs)``: ``self(*args)``, shared by the
    module's entry points (through a tuple: PyObject_Vectorcall is no function before 3.11)."""
    fn = mod.globals.get("numjax_slow_call")
    if fn is not None:
        return fn
    from llvmlite import ir
    i64, obj = ir.IntType(64), ir.IntType(8).as_pointer()
    fn = ir.Function(mod, ir.FunctionType(obj, [obj, obj.as_pointer(), i64]), "numjax_slow_call")
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    fn.attributes.add("cold")
    callee, argv, nargs = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    loop, body, call, fail = (fn.append_basic_block(n) for n in ("loop", "body", "call", "fail"))

    def api(name, ret, args):
        f = mod.globals.get(name)
        return f if f is not None else ir.Function(mod, ir.FunctionType(ret, args), name)
    args = b.call(api("PyTuple_New", obj, [i64]), [nargs])
    b.cbranch(b.icmp_unsigned("==", args, ir.Constant(obj, None)), fail, loop)
    b.position_at_end(loop)
    i = b.phi(i64)
    i.add_incoming(ir.Constant(i64, 0), fn.entry_basic_block)
    b.cbranch(b.icmp_signed("<", i, nargs), body, call)
    b.position_at_end(body)
    item = b.load(b.gep(argv, [i]))
    b.call(api("Py_IncRef", ir.VoidType(), [obj]), [item])       # PyTuple_SetItem steals it
    b.call(api("PyTuple_SetItem", ir.IntType(32), [obj, i64, obj]), [args, i, item])
    i.add_incoming(b.add(i, ir.Constant(i64, 1)), body)
    b.branch(loop)
    b.position_at_end(call)
    result = b.call(api("PyObject_Call", obj, [obj, obj, obj]), [callee, args, ir.Constant(obj, None)])
    b.call(api("Py_DecRef", ir.VoidType(), [obj]), [args])
    b.ret(result)
    b.position_at_end(fail)
    b.ret(ir.Constant(obj, None))
    return fn


def _param_names(spec):
    """The kernel source's parameter names, then ``out0, out1, ...`` for its outputs."""
    head = re.search(r"^def\s+\w+\s*\(([^)]*)\)", spec.source, re.M)
    params = [p.strip() for p in head.group(1).split(",") if p.strip()] if head else []
    if len(params) < len(spec.params):     # not a plain signature: ask the parser
        import ast
        fn = next(n for n in ast.parse(spec.source).body if isinstance(n, ast.FunctionDef))
        params = [a.arg for a in fn.args.args]
    return params[:len(spec.params)] + [f"out{j}" for j in range(len(spec.outputs))]


@functools.lru_cache(maxsize=None)
def _type_nums(dtype):
    """numpy type numbers with the layout of ``dtype`` (int64 is both ``long`` and ``long
    long`` on Linux)."""
    dt = np.dtype(dtype)
    nums = set()
    for code in np.typecodes["All"]:
        try:
            other = np.dtype(code)
        except TypeError:
            continue
        if other == dt:
            nums.add(other.num)
    return sorted(nums | {dt.num})


def runtime_module():
    """The runtime's module: ``numjax_entry`` (with ``numjax_chunks`` and the slow call),
    in the entry module, so that ``compile_object`` skips the optimization pipeline for it:
    half the compile time (~15 ms, paid once per machine) for ~8 ns more per call."""
    from llvmlite import ir
    mod = ir.Module(name="numjax_runtime")
    mod.entry_module = ir.Module(name="numjax_runtime_entries")
    _generic_entry(mod.entry_module)
    return mod


class _PyMethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_void_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_void_p)]


def _method_def(name, address):
    """A bytearray holding a ``METH_FASTCALL`` PyMethodDef for ``address`` and, behind it,
    its NUL-terminated name; and the def's address."""
    size = ctypes.sizeof(_PyMethodDef)
    table = bytearray(size) + name.encode() + b"\0"
    view = _PyMethodDef.from_buffer(table)
    at = ctypes.addressof(view)
    view.ml_name, view.ml_meth, view.ml_flags = at + size, address, _METH_FASTCALL
    del view                      # the bytearray is not exported any more
    return table, at


class KernelSelf(tuple):
    """A kernel function's ``__self__``: ``(CheckedCall, method def)``, callable as the former.

    CPython reads a builtin function's PyMethodDef when it deallocates the function.  When a
    driver dies, its kernels die in a reference cycle (the driver and its globals), and the
    garbage collector first clears the cycle's objects in no particular order: a ctypes
    array's buffer is freed and an object's slots emptied, so a def held that way could be
    freed before the function is deallocated (a use after free that crashed the suite once in
    a while).  A tuple's items are never cleared and a bytearray is not tracked at all: the
    def lives until the function's own deallocation lets go of it."""
    __slots__ = ()

    def __call__(self, *args):
        return self[0](*args)


class CheckedCall:
    """A kernel's entry point's slow path, in Python (``KernelSelf`` calls it): for
    arguments the entry point does not take as they are, raises the precise TypeError or
    ValueError, or converts them (numpy scalars, ndarray subclasses, an int for a float)
    and calls the kernel's body through ctypes (a chunked call ``lo < 0``: in one piece).
    It holds the program's object code, so the code stays mapped while the kernel can be
    called."""
    __slots__ = ("obj", "spec", "_kinds", "_body")

    def __init__(self, obj, spec):
        self.obj, self.spec, self._kinds, self._body = obj, spec, None, None

    def __call__(self, *args):
        spec = self.spec
        if self._kinds is None:
            self._kinds = _arg_kinds(spec)
        kinds = self._kinds
        if len(args) != len(kinds):
            raise TypeError(f"{spec.name}() takes {len(kinds)} arguments "
                            f"({', '.join(k[1] for k in kinds)}); {len(args)} given")
        values, ints = [], {}
        for i, (kind, a) in enumerate(zip(kinds, args)):
            where = f"{spec.name}() argument {i} ({kind[1]})"
            if kind[0] == "int":
                try:
                    v = operator.index(a)
                except TypeError:
                    raise TypeError(f"{where} must be an integer, not {type(a).__name__}") from None
                ints[kind[1]] = v = (v + 2**63) % 2**64 - 2**63      # as C wraps it
                values.append(v)
            elif kind[0] == "float":
                if isinstance(a, (str, bytes, bytearray)) or not (
                        hasattr(type(a), "__float__") or hasattr(type(a), "__index__")):
                    raise TypeError(f"{where} must be a real number, not {type(a).__name__}")
                values.append(float(a))
            else:
                values.append(bool(a) if kind[0] == "bool" else a)
        for i, (kind, a) in enumerate(zip(kinds, args)):
            if kind[0] == "array":
                _check_array(f"{spec.name}() argument {i} ({kind[1]})", a, *kind[2:], ints)
        if spec.chunked and values[0] < 0:
            values[0] = 0
        if self._body is None:
            self._body = ctypes_function(self.obj.address(spec.name), spec)
        self._body(*values)


def _check_array(where, a, dtype, shape, writable, ints):
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{where} must be a numpy array, not {type(a).__name__}")
    if a.dtype != np.dtype(dtype) or not a.dtype.isnative:
        raise TypeError(f"{where} must have dtype {dtype} in native byte order, not {a.dtype.str}")
    if a.ndim != len(shape):
        raise TypeError(f"{where} must have rank {len(shape)}, not {a.ndim}")
    if not a.flags.c_contiguous:
        raise TypeError(f"{where} must be C-contiguous")
    if writable and not a.flags.writeable:
        raise ValueError(f"{where} must be writable")
    wanted = tuple(s if isinstance(s, int) else ints.get(s) for s in shape)
    if any(w is not None and w != n for w, n in zip(wanted, a.shape)):
        comma = "," if len(shape) == 1 else ""
        names = ", ".join(str(s) for s in shape) + comma
        sizes = ", ".join("?" if w is None else str(w) for w in wanted) + comma
        raise ValueError(f"{where} must have shape ({names}) = ({sizes}), not {a.shape}")


_new_function = None


def kernel_functions(obj, specs):
    """name -> builtin function ``k(lo, hi, *args)`` calling entry point ``name_py``."""
    global _new_function
    if _new_function is None:   # a private prototype: ctypes.pythonapi's attributes are shared
        _new_function = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.py_object,
                                          ctypes.py_object)(("PyCFunction_NewEx", ctypes.pythonapi))
    funcs = {}
    for name in sorted(specs):
        table, at = _method_def(name, obj.address(name + _PY_SUFFIX))
        funcs[name] = _new_function(at, KernelSelf((CheckedCall(obj, specs[name]), table)), None)
    return funcs


_CTYPES = {"bool": ctypes.c_bool, "int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32,
           "int64": ctypes.c_int64, "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16,
           "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64, "float32": ctypes.c_float,
           "float64": ctypes.c_double}


def ctypes_function(addr, spec):
    """A ctypes function calling a kernel's body (``obj.address(spec.name)``) directly, past
    its entry point: arrays as C-contiguous ndarrays (ndpointer checks dtype and flags, not
    sizes).  The entry points' slow path, and for tests and debugging."""
    def array(dt):
        return np.ctypeslib.ndpointer(dtype=dt, flags="C_CONTIGUOUS")
    argtypes = [ctypes.c_int64, ctypes.c_int64]
    for p in spec.params:
        argtypes.append(ctypes.c_int64 if p[0] == "dim" else _CTYPES[p[1]] if p[0] == "scalar"
                        else array(p[1]))
    argtypes += [array(dt) for dt, _ in spec.outputs]
    return ctypes.CFUNCTYPE(None, *argtypes)(addr)


_layout_ok = False


def check_layout():
    """The ndarray and descriptor fields that entry points read are where they look."""
    global _layout_ok
    if _layout_ok:
        return
    if ctypes.sizeof(ctypes.c_ssize_t) != 8 or ctypes.sizeof(ctypes.c_int) != 4:
        raise Unsupported("entry points need a 64-bit Py_ssize_t and a 32-bit int")

    def read(ctype, address):
        return ctype.from_address(address).value

    a = np.empty((3, 5), np.float32)
    swapped = np.empty(2, np.dtype(np.float32).newbyteorder())
    strided = a[:, ::2]           # held: its memory is read below
    descr = read(ctypes.c_void_p, id(a) + _DESCR)
    ok = (read(ctypes.c_void_p, id(a) + _OB_TYPE) == id(np.ndarray)
          and read(ctypes.c_void_p, id(a) + _DATA_OFFSET) == a.ctypes.data
          and read(ctypes.c_int, id(a) + _ND) == 2
          and [read(ctypes.c_int64, read(ctypes.c_void_p, id(a) + _DIMS) + 8 * j) for j in (0, 1)] == [3, 5]
          and descr == id(a.dtype)
          and read(ctypes.c_int, descr + _TYPE_NUM) == a.dtype.num
          and read(ctypes.c_int, id(a) + _FLAGS) == a.flags.num
          and read(ctypes.c_int, id(strided) + _FLAGS) & _C_CONTIGUOUS == 0
          and read(ctypes.c_char, descr + _BYTEORDER) == b"="
          and read(ctypes.c_char, read(ctypes.c_void_p, id(swapped) + _DESCR) + _BYTEORDER)
          == swapped.dtype.byteorder.encode())
    if not ok:
        raise Unsupported("numpy array layout differs from the one entry points read")
    _layout_ok = True
