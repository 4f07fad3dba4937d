"""Load compiled object code into this process without LLVM.

The CPU backend compiles each program to one relocatable object (llvmlite's
``TargetMachine.emit_object``) and keeps those bytes in the disk cache.  A later
process must run them without importing llvmlite: loading libllvmlite alone
costs about 25 ms, more than the whole warm-start budget.  This module is a
small linker for x86-64 ELF relocatable objects, written in Python and ctypes:

1. *parse and validate* the whole object (headers, section and symbol tables,
   relocation entries) before any memory is mapped; whatever is malformed or
   unsupported raises ``ObjectFormatError``, so the caller recompiles instead of
   crashing;
2. *resolve external symbols now*, from the caller's ``symbols``, those given to
   ``define_symbol`` and then from the process (dlsym: libc, libm, the running
   interpreter's C API), so the object itself holds no address of the process
   that wrote it;
3. *lay out* the allocatable sections in one anonymous mapping, in three
   page-aligned segments: code (+ jump stubs) read/execute, constants (+ GOT)
   read-only, data and bss read/write.  One mapping keeps every PC-relative
   reference within +-2 GiB;
4. *relocate* a private image of the mapping, copy it in, and mprotect.

``mcjit_load`` does the same job through llvmlite's MCJIT for platforms whose
objects this loader does not read; ``load`` picks one.

Public API: ``load``, ``load_object``, ``mcjit_load``, ``supported``,
``define_symbol``, ``LoadedObject``, ``ObjectFormatError``.
"""
import ctypes
import os
import struct
import sys
import weakref
from typing import NamedTuple

__all__ = ["ObjectFormatError", "LoadedObject", "define_symbol", "load", "load_object", "mcjit_load",
           "supported"]


class ObjectFormatError(ValueError):
    """The object is malformed or uses something this loader does not support.

    Never fatal: the caller drops the cached object and compiles again."""


# --------------------------------------------------------------------------
# ELF constants (System V gABI and the x86-64 psABI)
# --------------------------------------------------------------------------

_ELF_MAGIC = b"\x7fELF"
_ELFCLASS64, _ELFDATA2LSB, _ET_REL, _EM_X86_64 = 2, 1, 1, 62
_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_SYM = struct.Struct("<IBBHQQ")
_RELA = struct.Struct("<QQq")

_SHT_PROGBITS, _SHT_SYMTAB, _SHT_STRTAB, _SHT_RELA = 1, 2, 3, 4
_SHT_NOTE, _SHT_NOBITS, _SHT_REL = 7, 8, 9
_SHT_INIT_ARRAY, _SHT_FINI_ARRAY, _SHT_PREINIT_ARRAY = 14, 15, 16
_SHT_X86_64_UNWIND = 0x70000001                 # .eh_frame as LLVM types it
_SHF_WRITE, _SHF_ALLOC, _SHF_EXECINSTR, _SHF_TLS = 0x1, 0x2, 0x4, 0x400

_SHN_UNDEF, _SHN_LORESERVE, _SHN_ABS, _SHN_COMMON = 0, 0xFF00, 0xFFF1, 0xFFF2
_STB_LOCAL, _STB_GLOBAL, _STB_WEAK = 0, 1, 2
_STT_FUNC, _STT_GNU_IFUNC = 2, 10

# relocation type -> bytes patched
_R_NONE, _R_64, _R_PC32, _R_PLT32, _R_GOTPCREL = 0, 1, 2, 4, 9
_R_32, _R_32S, _R_PC64, _R_GOTPCRELX, _R_REX_GOTPCRELX = 10, 11, 24, 41, 42
_RELOC_WIDTH = {_R_NONE: 0, _R_64: 8, _R_PC32: 4, _R_PLT32: 4, _R_GOTPCREL: 4,
                _R_32: 4, _R_32S: 4, _R_PC64: 8, _R_GOTPCRELX: 4, _R_REX_GOTPCRELX: 4}
_GOT_RELOCS = frozenset((_R_GOTPCREL, _R_GOTPCRELX, _R_REX_GOTPCRELX))
_ABS32_RELOCS = frozenset((_R_32, _R_32S))      # need the mapping below 2 GiB

_PAGE = os.sysconf("SC_PAGESIZE") if hasattr(os, "sysconf") else 4096
_MAX_MAPPING = 1 << 30          # far below 2 GiB, so internal PC32 cannot overflow
_GOT_ENTRY = 8
_STUB = 16                      # jmp *0(%rip); .quad target; 2 bytes padding
_STUB_JMP = b"\xff\x25\x00\x00\x00\x00"
_U64 = (1 << 64) - 1


def supported() -> bool:
    """True when this process can run the objects that llvmlite emits here
    through ``load_object`` (Linux on x86-64)."""
    return (sys.platform.startswith("linux") and sys.maxsize > 2**32
            and os.uname().machine in ("x86_64", "amd64"))


# --------------------------------------------------------------------------
# Parsing and validation (no memory is mapped here)
# --------------------------------------------------------------------------

class _Section(NamedTuple):
    index: int
    name: int          # offset into the section-name table
    type: int
    flags: int
    address: int       # always 0 in relocatable objects
    offset: int
    size: int
    link: int
    info: int
    align: int
    entsize: int


class _Symbol(NamedTuple):
    name: str          # "" for local symbols (never looked up by name)
    bind: int
    type: int
    shndx: int
    value: int


class _Reloc(NamedTuple):
    offset: int
    type: int
    symbol: int
    addend: int


class _Parsed(NamedTuple):
    sections: list      # of _Section
    loaded: list        # the _Sections to map
    symbols: list       # of _Symbol
    relocs: dict        # loaded section index -> list of _Reloc
    externals: dict     # symbol index -> name, for undefined symbols that are used


def _fail(message):
    raise ObjectFormatError(message)


def _check_header(data):
    if len(data) < _EHDR.size:
        _fail(f"object too short ({len(data)} bytes) for an ELF header")
    (ident, e_type, e_machine, _version, _entry, _phoff, e_shoff, _flags,
     _ehsize, _phentsize, _phnum, e_shentsize, e_shnum, e_shstrndx) = _EHDR.unpack_from(data)
    if ident[:4] != _ELF_MAGIC:
        _fail("not an ELF object (bad magic)")
    if ident[4] != _ELFCLASS64 or ident[5] != _ELFDATA2LSB:
        _fail("not a 64-bit little-endian ELF object")
    if e_type != _ET_REL or e_machine != _EM_X86_64:
        _fail(f"not an x86-64 relocatable object (type {e_type}, machine {e_machine})")
    if e_shentsize != _SHDR.size or not 0 < e_shnum < _SHN_LORESERVE:
        _fail(f"unsupported section table (entry size {e_shentsize}, count {e_shnum})")
    if e_shoff > len(data) or e_shnum * _SHDR.size > len(data) - e_shoff:
        _fail("section table lies outside the object")
    if e_shstrndx >= e_shnum:
        _fail(f"section-name table index {e_shstrndx} out of range")
    return e_shoff, e_shnum, e_shstrndx


def _read_sections(data, shoff, shnum):
    view = memoryview(data)[shoff:shoff + shnum * _SHDR.size]
    sections = [_Section(i, *fields) for i, fields in enumerate(_SHDR.iter_unpack(view))]
    for s in sections:
        if s.type != _SHT_NOBITS and (s.offset > len(data) or s.size > len(data) - s.offset):
            _fail(f"section {s.index} lies outside the object")
    return sections


def _c_string(data, table, offset):
    """The NUL-terminated string at ``offset`` of string-table section ``table``."""
    if offset >= table.size:
        _fail(f"string offset {offset} outside section {table.index}")
    start = table.offset + offset
    end = data.find(b"\0", start, table.offset + table.size)
    if end < 0:
        _fail(f"unterminated string in section {table.index}")
    try:
        return data[start:end].decode()
    except UnicodeDecodeError:
        _fail(f"symbol or section name is not UTF-8 in section {table.index}")


def _is_loaded(data, section, names):
    """Whether an allocatable section is mapped; raises for what cannot be run."""
    if not section.flags & _SHF_ALLOC or section.size == 0:
        return False
    if section.type in (_SHT_X86_64_UNWIND, _SHT_NOTE):
        return False    # unwind tables: nothing unwinds through our code
    name = _c_string(data, names, section.name)
    if name == ".eh_frame":
        return False
    if section.flags & _SHF_TLS:
        _fail(f"thread-local section {name} is not supported")
    if section.type in (_SHT_INIT_ARRAY, _SHT_FINI_ARRAY, _SHT_PREINIT_ARRAY):
        _fail(f"static constructors or destructors ({name}) are not supported")
    if section.type not in (_SHT_PROGBITS, _SHT_NOBITS):
        _fail(f"allocatable section {name} has unsupported type {section.type:#x}")
    if section.flags & _SHF_EXECINSTR and section.flags & _SHF_WRITE:
        _fail(f"section {name} is both writable and executable")
    if section.align & (section.align - 1) or section.align > _PAGE:
        _fail(f"section {name} has unsupported alignment {section.align}")
    return True


def _segment_of(section):
    """0: code, 1: read-only data, 2: writable data (file bytes), 3: bss."""
    if section.flags & _SHF_EXECINSTR:
        return 0
    if not section.flags & _SHF_WRITE:
        return 1
    return 3 if section.type == _SHT_NOBITS else 2


def _read_symbols(data, sections):
    tables = [s for s in sections if s.type == _SHT_SYMTAB]
    if not tables:
        return None, []
    if len(tables) > 1:
        _fail("more than one symbol table")
    table = tables[0]
    if table.entsize != _SYM.size or table.size % _SYM.size:
        _fail("malformed symbol table entries")
    if table.link >= len(sections) or sections[table.link].type != _SHT_STRTAB:
        _fail("symbol table has no string table")
    strings = sections[table.link]
    symbols = []
    view = memoryview(data)[table.offset:table.offset + table.size]
    for name_offset, info, _other, shndx, value, size in _SYM.iter_unpack(view):
        bind, kind = info >> 4, info & 0xF
        if shndx == _SHN_COMMON or (_SHN_LORESERVE <= shndx and shndx != _SHN_ABS):
            _fail(f"unsupported symbol section index {shndx:#x}")
        if _SHN_UNDEF < shndx < _SHN_LORESERVE:
            if shndx >= len(sections):
                _fail(f"symbol section index {shndx} out of range")
            home = sections[shndx]
            if value > home.size or size > home.size - value:
                _fail(f"symbol lies outside its section {shndx}")
            if kind == _STT_GNU_IFUNC:
                _fail("indirect functions (IFUNC) are not supported")
        named = bind != _STB_LOCAL or shndx == _SHN_UNDEF
        name = _c_string(data, strings, name_offset) if named and name_offset else ""
        symbols.append(_Symbol(name, bind, kind, shndx, value))
    return table.index, symbols


def _read_relocations(data, sections, symtab_index, symbols, loaded_indices):
    relocs = {}
    for s in sections:
        if s.type not in (_SHT_RELA, _SHT_REL) or s.info not in loaded_indices:
            continue        # e.g. .rela.eh_frame: its target is not mapped
        if s.type == _SHT_REL:
            _fail("REL relocations (without addend) are not used on x86-64")
        if s.link != symtab_index or s.entsize != _RELA.size or s.size % _RELA.size:
            _fail(f"malformed relocation section {s.index}")
        target = sections[s.info]
        if target.type == _SHT_NOBITS:
            _fail(f"relocations against bss section {target.index}")
        entries = relocs.setdefault(target.index, [])
        view = memoryview(data)[s.offset:s.offset + s.size]
        for offset, info, addend in _RELA.iter_unpack(view):
            kind, symbol = info & 0xFFFFFFFF, info >> 32
            width = _RELOC_WIDTH.get(kind)
            if width is None:
                _fail(f"unsupported relocation type {kind} in section {target.index}")
            if symbol >= len(symbols) and kind != _R_NONE:
                _fail(f"relocation refers to symbol {symbol} of {len(symbols)}")
            if offset > target.size or width > target.size - offset:
                _fail(f"relocation at {offset:#x} outside section {target.index}")
            if kind != _R_NONE:
                entries.append(_Reloc(offset, kind, symbol, addend))
    return relocs


def _parse(data: bytes) -> _Parsed:
    """Read and check everything ``load_object`` needs; map nothing."""
    shoff, shnum, shstrndx = _check_header(data)
    sections = _read_sections(data, shoff, shnum)
    names = sections[shstrndx]
    if names.type != _SHT_STRTAB:
        _fail("section-name table is not a string table")
    loaded = [s for s in sections if _is_loaded(data, s, names)]
    if sum(s.size + s.align for s in loaded) > _MAX_MAPPING:
        _fail("object needs more memory than any compiled program should")
    symtab_index, symbols = _read_symbols(data, sections)
    loaded_indices = {s.index for s in loaded}
    relocs = _read_relocations(data, sections, symtab_index, symbols, loaded_indices)
    externals = _used_externals(symbols, relocs, loaded_indices)
    return _Parsed(sections, loaded, symbols, relocs, externals)


def _used_externals(symbols, relocs, loaded_indices):
    """symbol index -> name of each undefined symbol a relocation uses; also
    checks that no relocation points into a section that is not mapped."""
    externals = {}
    for entries in relocs.values():
        for r in entries:
            sym = symbols[r.symbol]
            if r.symbol == 0:
                continue        # the null symbol: the value is the addend alone
            if sym.shndx == _SHN_UNDEF:
                if not sym.name:
                    _fail(f"relocation against unnamed undefined symbol {r.symbol}")
                externals[r.symbol] = sym.name
            elif sym.shndx < _SHN_LORESERVE and sym.shndx not in loaded_indices:
                _fail(f"relocation against section {sym.shndx}, which is not loaded")
    return externals


def _exported(parsed):
    """symbol name -> symbol, for the defined global functions."""
    functions = {s.name: s for s in parsed.symbols
                 if s.type == _STT_FUNC and s.bind in (_STB_GLOBAL, _STB_WEAK)
                 and _SHN_UNDEF < s.shndx < _SHN_LORESERVE and s.name}
    loaded = {s.index for s in parsed.loaded}
    for name, s in functions.items():
        if s.shndx not in loaded:
            _fail(f"function {name!r} lies in section {s.shndx}, which is not loaded")
    return functions


# --------------------------------------------------------------------------
# External symbols: the caller's table, then the process (dlsym)
# --------------------------------------------------------------------------

class _Libc:
    """ctypes bindings of mmap/mprotect/munmap/dlsym, made on first use."""
    _instance = None

    def __init__(self):
        libc = ctypes.CDLL(None, use_errno=True)
        self.mmap = libc.mmap
        self.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                              ctypes.c_int, ctypes.c_int, ctypes.c_long]
        self.mmap.restype = ctypes.c_void_p
        self.mprotect = libc.mprotect
        self.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        self.munmap = libc.munmap
        self.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        self.dlsym = libc.dlsym
        self.dlsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        self.dlsym.restype = ctypes.c_void_p
        self.handles = [libc._handle]
        if ctypes.pythonapi._handle not in self.handles:   # the C API of the running interpreter
            self.handles.append(ctypes.pythonapi._handle)   # (a libpython loaded RTLD_LOCAL)
        for soname in ("libm.so.6", "libc.so.6"):   # libm may be loaded RTLD_LOCAL only
            try:
                self.handles.append(ctypes.CDLL(soname)._handle)
            except OSError:
                pass
        self.found = {}     # name -> address; process symbols do not move

    @classmethod
    def get(cls):
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    def lookup(self, name):
        address = self.found.get(name)
        if address is None:
            encoded = name.encode()
            for handle in self.handles:
                address = self.dlsym(handle, encoded)
                if address:
                    self.found[name] = address
                    break
        return address


_defined = {}       # name -> address: define_symbol's process-wide table


def define_symbol(name: str, address: int) -> None:
    """Make ``name`` resolve to ``address`` in every object this process loads (after the
    caller's ``symbols``, before the process's own): for an address no library exports,
    such as a Python type object's."""
    _defined[name] = int(address)


def _resolve_externals(parsed, symbols):
    """symbol index -> address for every used undefined symbol."""
    libc = _Libc.get()
    resolved = {}
    for index, name in parsed.externals.items():
        address = symbols.get(name) if symbols else None
        if address is None:
            address = _defined.get(name)
        if address is None:
            address = libc.lookup(name)
        if address is None:
            if parsed.symbols[index].bind != _STB_WEAK:
                _fail(f"unresolved external symbol {name!r}")
            address = 0     # an absent weak symbol is null by definition
        resolved[index] = int(address)
    return resolved


# --------------------------------------------------------------------------
# Layout: code + stubs | constants + GOT | data | bss, one mapping
# --------------------------------------------------------------------------

class _Layout(NamedTuple):
    offsets: dict       # section index -> offset in the mapping
    got: dict           # symbol index -> offset of its GOT entry
    stubs: dict         # symbol index -> offset of its jump stub
    code_end: int       # end of the read/execute pages
    rodata_end: int     # end of the read-only pages
    image_end: int      # end of the bytes that are not zero (bss follows)
    size: int           # bytes mapped


def _align(value, alignment):
    return -(-value // alignment) * alignment


def _plan_layout(parsed):
    got, stubs = {}, {}
    for entries in parsed.relocs.values():
        for r in entries:
            if r.type in _GOT_RELOCS:
                got.setdefault(r.symbol, None)
            elif r.type == _R_PLT32 and r.symbol in parsed.externals:
                stubs.setdefault(r.symbol, None)    # used only when the callee is far
    by_segment = ([], [], [], [])
    for s in parsed.loaded:
        by_segment[_segment_of(s)].append(s)
    offsets = {}
    end = _place_sections(by_segment[0], 0, offsets)
    end = _place_table(stubs, _align(end, _STUB), _STUB)
    code_end = _align(end, _PAGE)
    end = _place_sections(by_segment[1], code_end, offsets)
    end = _place_table(got, _align(end, _GOT_ENTRY), _GOT_ENTRY)
    rodata_end = _align(end, _PAGE)
    image_end = _place_sections(by_segment[2], rodata_end, offsets)
    end = _place_sections(by_segment[3], image_end, offsets)
    return _Layout(offsets, got, stubs, code_end, rodata_end, image_end, max(_align(end, _PAGE), _PAGE))


def _place_sections(sections, start, offsets):
    for s in sections:
        start = _align(start, max(s.align, 1))
        offsets[s.index] = start
        start += s.size
    return start


def _place_table(table, start, entry_size):
    for index, key in enumerate(table):
        table[key] = start + index * entry_size
    return start + len(table) * entry_size


# --------------------------------------------------------------------------
# Mapping and relocation
# --------------------------------------------------------------------------

_PROT_READ, _PROT_WRITE, _PROT_EXEC = 1, 2, 4
_MAP_PRIVATE, _MAP_ANONYMOUS, _MAP_32BIT = 0x02, 0x20, 0x40
_MAP_FAILED = _U64


def _map(size, below_2gib):
    """An anonymous read/write mapping; below 2 GiB when the code holds
    absolute 32-bit addresses (non-PIC jump tables)."""
    flags = _MAP_PRIVATE | _MAP_ANONYMOUS | (_MAP_32BIT if below_2gib else 0)
    libc = _Libc.get()
    base = libc.mmap(None, size, _PROT_READ | _PROT_WRITE, flags, -1, 0)
    if base is None or base == _MAP_FAILED:
        if below_2gib:
            _fail("no room below 2 GiB for an object with absolute 32-bit relocations "
                  "(compile with reloc='pic')")
        raise MemoryError(f"mmap of {size} bytes failed (errno {ctypes.get_errno()})")
    return base


def _unmap(base, size):
    _Libc.get().munmap(base, size)


def _protect(base, layout):
    """Code read/execute, constants and GOT read-only; data stays writable."""
    libc = _Libc.get()
    for start, end, prot in ((0, layout.code_end, _PROT_READ | _PROT_EXEC),
                             (layout.code_end, layout.rodata_end, _PROT_READ)):
        if end > start and libc.mprotect(base + start, end - start, prot) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"mprotect failed: {os.strerror(errno)}")


def _symbol_addresses(parsed, layout, base, externals):
    """Address of each symbol index (None: in a section that is not mapped)."""
    addresses = []
    for index, sym in enumerate(parsed.symbols):
        if sym.shndx == _SHN_UNDEF:
            addresses.append(externals.get(index, 0))
        elif sym.shndx == _SHN_ABS:
            addresses.append(sym.value)
        elif sym.shndx in layout.offsets:
            addresses.append(base + layout.offsets[sym.shndx] + sym.value)
        else:
            addresses.append(None)
    return addresses


def _build_image(data, parsed, layout, base, addresses):
    """The bytes of the mapping up to the bss, relocated for ``base``."""
    image = bytearray(layout.image_end)
    source = memoryview(data)
    for s in parsed.loaded:
        if s.type != _SHT_NOBITS:
            start = layout.offsets[s.index]
            image[start:start + s.size] = source[s.offset:s.offset + s.size]
    for index, where in layout.got.items():
        struct.pack_into("<Q", image, where, addresses[index] & _U64)
    for index, where in layout.stubs.items():
        image[where:where + len(_STUB_JMP)] = _STUB_JMP
        struct.pack_into("<Q", image, where + len(_STUB_JMP), addresses[index] & _U64)
    try:
        for section_index, entries in parsed.relocs.items():
            _relocate_section(image, layout, base, layout.offsets[section_index], entries, addresses)
    except struct.error as error:   # a 32-bit field overflowed: a corrupt addend
        _fail(f"relocation value out of range ({error})")
    return image


def _relocate_section(image, layout, base, start, entries, addresses):
    pack_into, got, stubs = struct.pack_into, layout.got, layout.stubs
    for offset, kind, symbol, addend in entries:
        where = start + offset
        here = base + where
        target = addresses[symbol]
        if kind == _R_PC32 or kind == _R_PLT32:
            value = target + addend - here
            if not -2**31 <= value < 2**31:
                if symbol not in stubs:
                    _fail(f"PC-relative reference at {offset:#x} out of +-2 GiB "
                          "(compile with reloc='pic')")
                value = base + stubs[symbol] + addend - here
            pack_into("<i", image, where, value)
        elif kind in _GOT_RELOCS:
            pack_into("<i", image, where, base + got[symbol] + addend - here)
        elif kind == _R_64:
            pack_into("<Q", image, where, (target + addend) & _U64)
        elif kind == _R_PC64:
            pack_into("<Q", image, where, (target + addend - here) & _U64)
        else:
            value = target + addend
            low, high = (0, 2**32) if kind == _R_32 else (-2**31, 2**31)
            if not low <= value < high:
                _fail(f"absolute 32-bit reference at {offset:#x} out of range")
            pack_into("<I" if kind == _R_32 else "<i", image, where, value)


# --------------------------------------------------------------------------
# The loaded object
# --------------------------------------------------------------------------

class LoadedObject:
    """Code loaded into this process.  Function addresses stay valid while this
    object is alive and not released; keep a reference next to every user."""

    def __init__(self, addresses, size, release, *release_args, base=None):
        self._addresses = dict(addresses)
        self.names = frozenset(self._addresses)
        self.size = size
        self.base = base
        self._finalizer = weakref.finalize(self, release, *release_args)
        self._finalizer.atexit = False   # code may still run during shutdown

    def address(self, name: str) -> int:
        """Address of the defined global function ``name``; KeyError if absent."""
        if not self._finalizer.alive:
            raise ValueError("the object was released")
        return self._addresses[name]

    def release(self) -> None:
        """Unmap the code now; later calls do nothing."""
        self._finalizer()

    @property
    def released(self) -> bool:
        return not self._finalizer.alive

    def __repr__(self):
        state = "released" if self.released else f"{self.size} bytes"
        return f"<LoadedObject {sorted(self.names)} {state}>"


def load_object(data: bytes, symbols: dict | None = None) -> LoadedObject:
    """Load an x86-64 ELF relocatable object without LLVM.

    ``symbols`` maps external names to addresses and wins over the process's own
    symbols (libc, libm, anything loaded globally).  Raises ObjectFormatError for
    malformed or unsupported objects and for unresolved symbols."""
    if not supported():
        _fail("load_object reads x86-64 ELF objects on Linux only; use mcjit_load")
    data = data if isinstance(data, (bytes, bytearray)) else bytes(data)
    parsed = _parse(data)
    functions = _exported(parsed)
    externals = _resolve_externals(parsed, symbols)
    layout = _plan_layout(parsed)
    below_2gib = any(r.type in _ABS32_RELOCS for rs in parsed.relocs.values() for r in rs)
    base = _map(layout.size, below_2gib)
    try:
        addresses = _symbol_addresses(parsed, layout, base, externals)
        image = _build_image(data, parsed, layout, base, addresses)
        if image:
            ctypes.memmove(base, (ctypes.c_char * len(image)).from_buffer(image), len(image))
        _protect(base, layout)
    except BaseException:
        _unmap(base, layout.size)
        raise
    exported = {name: base + layout.offsets[s.shndx] + s.value
                for name, s in functions.items()}
    return LoadedObject(exported, layout.size, _unmap, base, layout.size, base=base)


# --------------------------------------------------------------------------
# Fallback through llvmlite's MCJIT, and the choice between the two
# --------------------------------------------------------------------------

_mcjit_target_machine = None


def mcjit_load(data: bytes, symbols: dict | None = None) -> LoadedObject:
    """Load ``data`` with llvmlite's MCJIT (imports llvmlite; any object format
    LLVM reads).  Where ``load_object`` could read the object, its checks run
    first, since LLVM aborts the process on an unresolved symbol.  Elsewhere
    ``names`` is empty, though ``address`` still finds the functions."""
    data = bytes(data)
    bindings, names, size = {**_defined, **(symbols or {})}, (), len(data)
    if supported() and data[:4] == _ELF_MAGIC:
        parsed = _parse(data)
        names = tuple(_exported(parsed))
        size = sum(s.size for s in parsed.loaded)
        for index, address in _resolve_externals(parsed, symbols).items():
            bindings[parsed.externals[index]] = address
    llvm = _mcjit_llvm()
    for name, address in bindings.items():
        if address:         # LLVM's symbol table is process-wide: leave absent weak ones
            llvm.add_symbol(name, int(address))
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), _mcjit_target_machine)
    engine.add_object_file(llvm.ObjectFileRef.from_data(data))
    engine.finalize_object()
    addresses = {name: engine.get_function_address(name) for name in names}
    return _MCJITObject(engine, addresses, size)


def _mcjit_llvm():
    import llvmlite.binding as llvm
    global _mcjit_target_machine
    if _mcjit_target_machine is None:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        _mcjit_target_machine = llvm.Target.from_default_triple().create_target_machine()
    return llvm


class _MCJITObject(LoadedObject):
    def __init__(self, engine, addresses, size):
        super().__init__(addresses, size, engine.close)
        self._engine = weakref.ref(engine)   # the finalizer holds the engine

    def address(self, name: str) -> int:
        try:
            return super().address(name)
        except KeyError:
            address = self._engine().get_function_address(name)
            if not address:
                raise
            return address


def load(data: bytes, symbols: dict | None = None) -> LoadedObject:
    """``load_object`` where this platform's objects can be read without LLVM,
    ``mcjit_load`` elsewhere."""
    return load_object(data, symbols) if supported() else mcjit_load(data, symbols)
