"""The object loader: objects llvmlite emits at O3 run after loading without LLVM,
malformed objects raise ObjectFormatError (never crash), memory is returned."""
import ctypes
import functools
import gc
import json
import struct
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from numjax.lowering import objload
from numjax.lowering.objload import ObjectFormatError

llvm = pytest.importorskip("llvmlite.binding")

needs_elf_loader = pytest.mark.skipif(not objload.supported(),
                                      reason="load_object reads Linux x86-64 ELF only")
P, F32, F64, I32, I64 = ctypes.c_void_p, ctypes.c_float, ctypes.c_double, ctypes.c_int32, ctypes.c_int64


# --------------------------------------------------------------------------
# Programs: LLVM IR compiled at O3, as the CPU backend compiles a program
# --------------------------------------------------------------------------

def _loop(name, params, body, n="%n"):
    """A counted loop `for i in range(n)` whose body sees %i."""
    return textwrap.dedent(f"""
    define void @{name}({params}) {{
    entry:
      %c = icmp sgt i64 {n}, 0
      br i1 %c, label %loop, label %done
    loop:
      %i = phi i64 [0, %entry], [%i1, %loop]
    {textwrap.indent(textwrap.dedent(body), '  ')}
      %i1 = add i64 %i, 1
      %d = icmp eq i64 %i1, {n}
      br i1 %d, label %done, label %loop
    done:
      ret void
    }}""")


SAXPY_PLUS_HALF = _loop("saxpy", "i64 %n, float %a, float* noalias %x, float* noalias %y", """
    %px = getelementptr float, float* %x, i64 %i
    %py = getelementptr float, float* %y, i64 %i
    %vx = load float, float* %px
    %vy = load float, float* %py
    %m = fmul float %a, %vx
    %s = fadd float %m, %vy
    %t = fadd float %s, 0.5
    store float %t, float* %py""")

EXP_LOOP = "declare float @expf(float)\n" + _loop("exp_loop", "i64 %n, float* noalias %x, float* noalias %y", """
    %px = getelementptr float, float* %x, i64 %i
    %vx = load float, float* %px
    %e = call float @expf(float %vx)
    %py = getelementptr float, float* %y, i64 %i
    store float %e, float* %py""")

CALL_EXTERNAL = """
declare double @ext_scale(double)
define double @call_ext(double %x) {
  %r = call double @ext_scale(double %x)
  %r2 = fadd double %r, 1.0
  ret double %r2
}"""

# a vector constant (a constant pool entry), a global table and a counter
TABLES = """
@table = global [8 x float] [float 1.0, float 2.0, float 3.0, float 4.0, float 5.0, float 6.0, float 7.0, float 8.0]
@counter = internal global i64 0
define void @scale8(<8 x float>* %p) {
  %v = load <8 x float>, <8 x float>* %p, align 4
  %w = fmul <8 x float> %v, <float 1.5, float 2.5, float 3.5, float 4.5, float 5.5, float 6.5, float 7.5, float 8.5>
  store <8 x float> %w, <8 x float>* %p, align 4
  ret void
}
define void @scale4(<4 x float>* %p) {
  %v = load <4 x float>, <4 x float>* %p, align 4
  %w = fadd <4 x float> %v, <float 0.25, float -1.0, float 3.0, float 100.0>
  store <4 x float> %w, <4 x float>* %p, align 4
  ret void
}
define i64 @bump() {
  %old = load i64, i64* @counter
  %new = add i64 %old, 1
  store i64 %new, i64* @counter
  ret i64 %new
}
""" + _loop("table_add", "i64 %n, float* noalias %y", """
    %k = and i64 %i, 7
    %pt = getelementptr [8 x float], [8 x float]* @table, i64 0, i64 %k
    %vt = load float, float* %pt
    %py = getelementptr float, float* %y, i64 %i
    %vy = load float, float* %py
    %s = fadd float %vy, %vt
    store float %s, float* %py""")

# a dense switch becomes a jump table: R_X86_64_32S when not PIC
JUMP_TABLE = """
define i32 @pick(i32 %k) {
entry:
  switch i32 %k, label %other [ i32 0, label %a  i32 1, label %b  i32 2, label %c
                                i32 3, label %d  i32 4, label %e  i32 5, label %f ]
a: ret i32 10
b: ret i32 -20
c: ret i32 30
d: ret i32 77
e: ret i32 -5
f: ret i32 123
other: ret i32 -1
}"""
PICK = {0: 10, 1: -20, 2: 30, 3: 77, 4: -5, 5: 123}

ALL = "\n".join((SAXPY_PLUS_HALF, EXP_LOOP, CALL_EXTERNAL, TABLES, JUMP_TABLE))


@functools.cache
def _target_machine(reloc):
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                        features=llvm.get_host_cpu_features().flatten(),
                                        opt=3, reloc=reloc, codemodel="default")


def compile_o3(ir, reloc="pic"):
    """(object bytes, optimized IR text) of a module compiled at O3."""
    tm = _target_machine(reloc)
    module = llvm.parse_assembly(ir)
    module.verify()
    tuning = llvm.create_pipeline_tuning_options(speed_level=3)
    tuning.loop_vectorization = tuning.slp_vectorization = True
    passes = llvm.create_pass_builder(tm, tuning)
    passes.getModulePassManager().run(module, passes)
    return tm.emit_object(module), str(module)


@functools.cache
def all_object(reloc="pic"):
    return compile_o3(ALL, reloc)[0]


def cfunc(obj, name, restype, *argtypes):
    return ctypes.CFUNCTYPE(restype, *argtypes)(obj.address(name))


def section_names(data):
    return {(s.name() or b"").decode() for s in llvm.ObjectFileRef.from_data(data).sections()}


_triple_callback = ctypes.CFUNCTYPE(F64, F64)(lambda x: 3.0 * x)
EXTERNALS = {"ext_scale": ctypes.cast(_triple_callback, P).value}


def check_program(obj):
    """Run every function of ALL from ``obj`` against numpy."""
    n = 1003                                   # not a multiple of any vector width
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    expected = (np.float32(2.5) * x + y) + np.float32(0.5)
    cfunc(obj, "saxpy", None, I64, F32, P, P)(n, 2.5, x.ctypes.data, y.ctypes.data)
    np.testing.assert_array_equal(y, expected)

    out = np.empty_like(x)
    cfunc(obj, "exp_loop", None, I64, P, P)(n, x.ctypes.data, out.ctypes.data)
    np.testing.assert_allclose(out, np.exp(x), rtol=2e-7)

    assert cfunc(obj, "call_ext", F64, F64)(2.0) == 7.0

    v = np.arange(8, dtype=np.float32)
    cfunc(obj, "scale8", None, P)(v.ctypes.data)
    np.testing.assert_array_equal(v, np.arange(8, dtype=np.float32) * (np.arange(8) + 1.5))
    w = np.ones(4, np.float32)
    cfunc(obj, "scale4", None, P)(w.ctypes.data)
    np.testing.assert_array_equal(w, [1.25, 0.0, 4.0, 101.0])

    bump = cfunc(obj, "bump", I64)
    assert [bump(), bump(), bump()] == [1, 2, 3]          # .bss is writable, starts at zero
    z = np.zeros(n, np.float32)
    cfunc(obj, "table_add", None, I64, P)(n, z.ctypes.data)
    np.testing.assert_array_equal(z, np.arange(n) % 8 + 1)

    pick = cfunc(obj, "pick", I32, I32)
    assert [pick(k) for k in range(-2, 8)] == [PICK.get(k, -1) for k in range(-2, 8)]


# --------------------------------------------------------------------------
# Loading and running
# --------------------------------------------------------------------------

def test_vectorized_loops_are_emitted_with_constant_pools():
    data, ir = compile_o3(SAXPY_PLUS_HALF + TABLES)
    assert "x float>" in ir.split("define void @saxpy")[1].split("define")[0]   # vectorized
    names = section_names(data)
    assert any(n.startswith(".rodata.cst") for n in names), names
    assert {".rodata.cst16", ".rodata.cst32", ".data", ".bss"} <= names, names
    assert {".eh_frame", ".rela.eh_frame", ".note.GNU-stack"} <= section_names(all_object())


@needs_elf_loader
@pytest.mark.parametrize("reloc", ["pic", "static", "default"])
def test_loaded_program_matches_numpy(reloc):
    obj = objload.load_object(all_object(reloc), EXTERNALS)
    assert obj.names == {"saxpy", "exp_loop", "call_ext", "scale8", "scale4", "bump",
                         "table_add", "pick"}
    check_program(obj)
    obj.release()


@needs_elf_loader
def test_load_needs_no_llvm_and_no_address_of_the_writer(tmp_path):
    """A fresh process without llvmlite runs the object: all symbols bound at load."""
    path = tmp_path / "prog.o"
    path.write_bytes(all_object())
    script = f"""
import ctypes, importlib.util, sys
spec = importlib.util.spec_from_file_location("objload", {objload.__file__!r})
objload = importlib.util.module_from_spec(spec); spec.loader.exec_module(objload)
cb = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(lambda x: -x)
obj = objload.load(open({str(path)!r}, "rb").read(), {{"ext_scale": ctypes.cast(cb, ctypes.c_void_p).value}})
f = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(obj.address("call_ext"))
print(f(5.0), "llvmlite" in sys.modules, "numba" in sys.modules)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["-4.0", "False", "False"]


@needs_elf_loader
def test_caller_symbols_win_over_the_process():
    fake_exp = ctypes.CFUNCTYPE(F32, F32)(lambda x: 42.0)
    obj = objload.load_object(compile_o3(EXP_LOOP)[0], {"expf": ctypes.cast(fake_exp, P).value})
    x, out = np.ones(5, np.float32), np.zeros(5, np.float32)
    cfunc(obj, "exp_loop", None, I64, P, P)(5, x.ctypes.data, out.ctypes.data)
    np.testing.assert_array_equal(out, 42.0)


@needs_elf_loader
def test_unresolved_symbol_is_named():
    with pytest.raises(ObjectFormatError, match="ext_scale"):
        objload.load_object(compile_o3(CALL_EXTERNAL)[0])


@needs_elf_loader
def test_address_of_unknown_or_released():
    obj = objload.load_object(all_object(), EXTERNALS)
    with pytest.raises(KeyError):
        obj.address("table")                   # a data symbol, not a function
    with pytest.raises(KeyError):
        obj.address("nope")
    obj.release()
    obj.release()                              # idempotent
    with pytest.raises(ValueError):
        obj.address("saxpy")


def test_load_dispatches_to_a_working_loader():
    obj = objload.load(all_object(), EXTERNALS)
    assert isinstance(obj, objload.LoadedObject)
    check_program(obj)


def test_mcjit_gives_the_same_results():
    obj = objload.mcjit_load(all_object(), EXTERNALS)
    check_program(obj)
    if objload.supported():
        native = objload.load_object(all_object(), EXTERNALS)
        assert native.names == obj.names
    obj.release()


def test_mcjit_checks_symbols_before_llvm_aborts():
    with pytest.raises(ObjectFormatError, match="ext_scale"):
        objload.mcjit_load(compile_o3(CALL_EXTERNAL)[0])


# --------------------------------------------------------------------------
# Memory: protections, release, no leak
# --------------------------------------------------------------------------

def _mapping_of(address):
    """The permissions of the mapping holding ``address``, or None."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            span, perms = line.split()[:2]
            start, end = (int(part, 16) for part in span.split("-"))
            if start <= address < end:
                return perms
    return None


@needs_elf_loader
def test_code_is_executable_not_writable_and_release_unmaps():
    obj = objload.load_object(all_object(), EXTERNALS)
    code = obj.address("saxpy")
    assert _mapping_of(code) == "r-xp"
    perms = {_mapping_of(obj.base + offset) for offset in range(0, obj.size, 4096)}
    assert perms == {"r-xp", "r--p", "rw-p"}  # code, constants + GOT, data + bss
    obj.release()
    assert _mapping_of(code) is None
    assert _mapping_of(obj.base) is None


@needs_elf_loader
def test_collected_object_is_unmapped():
    obj = objload.load_object(all_object(), EXTERNALS)
    base = obj.base
    del obj
    gc.collect()
    assert _mapping_of(base) is None


def _vm_size_kib():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmSize:"))


@needs_elf_loader
def test_2000_loads_do_not_grow_memory():
    data = all_object()
    for _ in range(50):                        # warm up allocator and caches
        objload.load_object(data, EXTERNALS).release()
    before = _vm_size_kib()
    for _ in range(2000):
        objload.load_object(data, EXTERNALS).release()
    assert _vm_size_kib() - before < 2048      # a leak would be >= 2000 * 12 KiB


# --------------------------------------------------------------------------
# Malformed objects
# --------------------------------------------------------------------------

def _patched(data, offset, fmt, value):
    patched = bytearray(data)
    struct.pack_into(fmt, patched, offset, value)
    return bytes(patched)


def _section_header(data, index):
    shoff, = struct.unpack_from("<Q", data, 0x28)
    return shoff + 64 * index


def _rela_text_first_entry(data):
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shnum, = struct.unpack_from("<H", data, 0x3C)
    for index in range(shnum):
        sh_type, = struct.unpack_from("<I", data, shoff + 64 * index + 4)
        sh_offset, sh_size = struct.unpack_from("<QQ", data, shoff + 64 * index + 0x18)
        if sh_type == 4 and sh_size:            # the first RELA section is .rela.text
            return sh_offset
    raise AssertionError("no relocations")


def _malformed_cases(data):
    rela = _rela_text_first_entry(data)
    r_info, = struct.unpack_from("<Q", data, rela + 8)
    return {
        "bad magic": b"\x7fELG" + data[4:],
        "32-bit class": _patched(data, 4, "B", 1),
        "big endian": _patched(data, 5, "B", 2),
        "shared object": _patched(data, 0x10, "<H", 3),
        "aarch64": _patched(data, 0x12, "<H", 183),
        "section table past the end": _patched(data, 0x28, "<Q", len(data)),
        "section entry size": _patched(data, 0x3A, "<H", 40),
        "name table index": _patched(data, 0x3E, "<H", 999),
        "section offset past the end": _patched(data, _section_header(data, 2) + 0x18, "<Q", 2**40),
        "section alignment": _patched(data, _section_header(data, 2) + 0x30, "<Q", 3),
        "unknown relocation": _patched(data, rela + 8, "<Q", (r_info >> 32 << 32) | 37),
        "relocation outside section": _patched(data, rela, "<Q", 2**32),
        "relocation symbol": _patched(data, rela + 8, "<Q", (10**6 << 32) | (r_info & 0xFFFFFFFF)),
        "empty": b"",
    }


@needs_elf_loader
@pytest.mark.parametrize("case", list(_malformed_cases(all_object())))
def test_malformed_object_raises(case):
    with pytest.raises(ObjectFormatError):
        objload.load_object(_malformed_cases(all_object())[case], EXTERNALS)


CORRUPTION_SCRIPT = """
import ctypes, importlib.util, json, random, sys, struct
spec = importlib.util.spec_from_file_location("objload", sys.argv[1])
objload = importlib.util.module_from_spec(spec); spec.loader.exec_module(objload)
data = open(sys.argv[2], "rb").read()
cb = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(lambda x: x)
symbols = {"ext_scale": ctypes.cast(cb, ctypes.c_void_p).value}
shoff, = struct.unpack_from("<Q", data, 0x28)
rng = random.Random(1234)
counts = {"raised": 0, "loaded": 0, "truncations_loaded": 0}
def attempt(blob, truncated=False):
    try:
        objload.load_object(blob, symbols).release()   # loading only: never run corrupt code
        counts["loaded"] += 1
        counts["truncations_loaded"] += truncated
    except objload.ObjectFormatError:
        counts["raised"] += 1
for cut in sorted(set(range(0, 64)) | set(range(0, len(data), 7))):
    attempt(data[:cut], truncated=True)
regions = [(0, 64), (shoff, len(data)), (0, len(data))]   # header, section table, anywhere
for start, end in regions:
    for _ in range(1500):
        blob = bytearray(data)
        for _ in range(rng.choice((1, 1, 2, 4))):
            blob[rng.randrange(start, end)] ^= 1 << rng.randrange(8)
        attempt(bytes(blob))
    for _ in range(300):                                   # whole random bytes, not bit flips
        blob = bytearray(data)
        blob[rng.randrange(start, end)] = rng.randrange(256)
        attempt(bytes(blob))
print(json.dumps(counts))
"""


@needs_elf_loader
def test_corrupt_objects_never_crash(tmp_path):
    """Truncated and bit-flipped objects raise ObjectFormatError or load; run in a
    subprocess so that a segfault fails the test instead of killing pytest."""
    path = tmp_path / "prog.o"
    path.write_bytes(all_object())
    result = subprocess.run([sys.executable, "-c", CORRUPTION_SCRIPT, objload.__file__, str(path)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    counts = json.loads(result.stdout)
    assert counts["truncations_loaded"] == 0   # the section table is at the end
    assert counts["raised"] > 1000 and counts["loaded"] > 100, counts


# --------------------------------------------------------------------------
# Speed
# --------------------------------------------------------------------------

def _typical_program_ir(copies=64):
    """A module the size of a real program's: vectorized loops with constants,
    some calling libm."""
    parts = ["declare float @expf(float)"]
    for k in range(copies):
        call = "%e = call float @expf(float %b)" if k % 4 == 0 else "%e = fmul float %b, %b"
        parts.append(_loop(f"region{k}", "i64 %n, float* noalias %x, float* noalias %y", f"""
            %px = getelementptr float, float* %x, i64 %i
            %vx = load float, float* %px
            %a = fmul float %vx, {1.0 + k / 8}
            %b = fadd float %a, {k / 4 - 3}
            {call}
            %s = fcmp ogt float %vx, 0.0
            %r = select i1 %s, float %e, float %a
            %py = getelementptr float, float* %y, i64 %i
            %vy = load float, float* %py
            %t = fadd float %r, %vy
            store float %t, float* %py"""))
    return "\n".join(parts)


@needs_elf_loader
def test_typical_object_loads_in_milliseconds():
    data = compile_o3(_typical_program_ir())[0]
    assert 20_000 <= len(data) <= 60_000, len(data)
    timings = []
    for _ in range(30):
        start = time.perf_counter()
        obj = objload.load_object(data)
        timings.append(time.perf_counter() - start)
        obj.release()
    best, median = min(timings) * 1e3, sorted(timings)[len(timings) // 2] * 1e3
    print(f"load {len(data)} bytes: best {best:.2f} ms, median {median:.2f} ms")
    assert best < 2.0, (best, median)
