"""Resume functions: the rest of a frame after a graph break, as a real Python function.

A graph break at instruction offset T leaves an operand stack and live locals. `resume_code` builds a
code object `__resume_at_T` whose parameters are those stack slots and live locals; its prologue
pushes the stack back (NULL slots with PUSH_NULL, iterators from a tuple of their remaining items with
GET_ITER) and jumps to T in an unchanged copy of the original bytecode. The interpreter can therefore
always run it; dyn.compile wraps it like any other function, so it is captured on its own (and breaks
again where needed) or runs eagerly when capture fails. The same idea as TorchDynamo's resume_at
functions, for CPython 3.11 and 3.12."""
import contextlib
import functools
import dis
import sys
import types

import torch

from ..errors import Unsupported

_OP = dis.opmap
_LOCAL_OPS = set(dis.haslocal) | set(dis.hasfree)
_RETURNS = {_OP[n] for n in ("RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE") if n in _OP}
_UNCONDITIONAL = {_OP[n] for n in ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT")
                  if n in _OP}
_LOADS = {_OP[n] for n in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "DELETE_FAST",
                            "LOAD_DEREF", "LOAD_CLOSURE", "DELETE_DEREF", "LOAD_CLASSDEREF",
                            "LOAD_FROM_DICT_OR_DEREF") if n in _OP}
CO_VARARGS, CO_VARKEYWORDS = 0x04, 0x08

# a stack slot at the resume point: a value, NULL (3.11+ call protocol), an iterator (passed as the
# tuple of its remaining items), or the __exit__ of a `with torch.no_grad()` / `torch.enable_grad()`
# block (or of a `with contextlib.nullcontext()`) the resume point is inside (the prologue enters a new
# such block: nothing is passed)
VALUE, NULL_SLOT, ITER_SLOT = "v", "n", "i"
WITH_SLOTS = {"g0": torch.no_grad, "g1": torch.enable_grad, "nc": contextlib.nullcontext, "im": torch.inference_mode}


def with_factory(slot):
    """The context manager factory (called with no arguments) of a with-block slot, else None: a grad-mode
    block, nullcontext, or ("ac", device type, enabled, dtype, cache enabled): torch.autocast."""
    if type(slot) is tuple and slot[0] == "ac":
        return functools.partial(torch.autocast, slot[1], dtype=slot[3], enabled=slot[2], cache_enabled=slot[4])
    return WITH_SLOTS.get(slot) if type(slot) is str else None


def _instructions(co):
    return [i for i in dis.get_instructions(co) if i.opname != "CACHE"]


def _parse_exception_table(co):
    """[(start, end, target, depth, lasti)] in code units, as in CPython's Objects/exception_handling_notes.txt."""
    data = co.co_exceptiontable
    out, i = [], 0

    def varint():
        nonlocal i
        b = data[i]
        i += 1
        v = b & 63
        while b & 64:
            b = data[i]
            i += 1
            v = (v << 6) | (b & 63)
        return v
    while i < len(data):
        start = varint()
        length = varint()
        target = varint()
        dl = varint()
        out.append((start, start + length, target, dl >> 1, dl & 1))
    return out


def _encode_exception_table(entries):
    out = bytearray()

    def varint(v, first):
        chunks = [v & 63]
        v >>= 6
        while v:
            chunks.append(v & 63)
            v >>= 6
        chunks.reverse()
        for k, c in enumerate(chunks):
            b = c | (64 if k < len(chunks) - 1 else 0)
            if first and k == 0:
                b |= 128
            out.append(b)
    for start, end, target, depth, lasti in entries:
        varint(start, True)
        varint(end - start, False)
        varint(target, False)
        varint((depth << 1) | lasti, False)
    return bytes(out)


def _successors(inst, insts, k):
    op = inst.opcode
    out = []
    if op not in _RETURNS and op not in _UNCONDITIONAL and k + 1 < len(insts):
        out.append(insts[k + 1].offset)
    if op in dis.hasjrel or op in dis.hasjabs:
        out.append(inst.argval)
    return out


def reachable(co, target):
    """Offsets of instructions reachable from `target` (jumps and exception handlers included)."""
    insts = _instructions(co)
    at = {inst.offset: k for k, inst in enumerate(insts)}
    handlers = _parse_exception_table(co)
    seen, work = set(), [target]
    while work:
        off = work.pop()
        if off in seen or off not in at:
            continue
        seen.add(off)
        k = at[off]
        work.extend(_successors(insts[k], insts, k))
        unit = off // 2
        work.extend(2 * t for s, e, t, d, l in handlers if s <= unit < e)
    return seen, insts


def analyze(co, target, here):
    """(live local names at `target`, whether the break at offset `here` sits inside a loop)."""
    seen, insts = reachable(co, target)
    live = set()
    in_loop = False
    for inst in insts:
        if inst.offset not in seen:
            continue
        if inst.opcode in _LOADS:
            live.add(inst.argval)
        if (inst.opcode in dis.hasjrel or inst.opcode in dis.hasjabs) and inst.argval <= here:
            in_loop = True
    return live, in_loop


def _ext(arg):
    """EXTENDED_ARG prefix units + the final byte for arg."""
    units = []
    shifts = []
    v = arg >> 8
    while v:
        shifts.append(v & 0xFF)
        v >>= 8
    for b in reversed(shifts):
        units.append((_OP["EXTENDED_ARG"], b))
    return units, arg & 0xFF


def _emit(out, opname, arg=0):
    pre, low = _ext(arg)
    for op, b in pre:
        out += bytes((op, b))
    out += bytes((_OP[opname], low))


def _emit_call(out, argc):
    """A call of the callable under the NULL on the stack (3.11: PRECALL + CALL), with the inline cache
    units the interpreter expects after each (3.11: 1 and 4; 3.12: CALL's 3)."""
    names = ("PRECALL", "CALL") if "PRECALL" in _OP else ("CALL",)
    for n in names:
        _emit(out, n, argc)
        out += bytes((_OP["CACHE"], 0)) * dis._inline_cache_entries[_OP[n]]


def _localsplus(co):
    names, i = [], 0
    while True:
        try:
            names.append(co._varname_from_oparg(i))
        except IndexError:
            return names
        i += 1


def resume_code(co, target, slots, live_names, origins=None):
    """The code object of __resume_at_<target>: parameters ___stack<i> for each VALUE/ITER slot, then
    `live_names` (cell variables among them are passed by value and put in fresh cells); `slots` lists
    the stack at `target`, bottom to top. origins (the session's): resume code -> (original code, prologue
    bytes), filled here, so that a break in a resume function resumes the original code."""
    if origins is None:
        origins = {}
    if co.co_flags & (0x20 | 0x80 | 0x100 | 0x200):
        raise Unsupported("graph break in a generator or coroutine")
    if co in origins:  # a break in a resume function: resume the original code (no prologue pile-up)
        co, shift = origins[co]
        target -= shift
    stack_names = [f"___stack{i}" for i, s in enumerate(slots) if s in (VALUE, ITER_SLOT)]
    rest = [n for n in co.co_varnames if n not in live_names]
    varnames = tuple(stack_names + list(live_names) + rest)
    if len(set(varnames)) != len(varnames):
        raise Unsupported("graph break: local names clash with resume parameters")
    consts = co.co_consts
    with_const = {}
    for s in slots:
        if with_factory(s) is not None and s not in with_const:
            with_const[s] = len(consts)
            consts = consts + (with_factory(s),)
    shaped = co.replace(co_varnames=varnames, co_nlocals=len(varnames),
                        co_argcount=len(stack_names) + len(live_names), co_posonlyargcount=0,
                        co_kwonlyargcount=0, co_flags=co.co_flags & ~(CO_VARARGS | CO_VARKEYWORDS),
                        co_consts=consts, co_stacksize=co.co_stacksize + 2)
    new_names = _localsplus(shaped)
    new_index = {n: i for i, n in enumerate(new_names)}
    remap = {i: new_index[n] for i, n in enumerate(_localsplus(co))}

    # prologue
    pro = bytearray()
    for name in co.co_cellvars:  # a passed value becomes the cell's content, else an empty cell
        _emit(pro, "MAKE_CELL", new_index[name])
    if co.co_freevars:
        _emit(pro, "COPY_FREE_VARS", len(co.co_freevars))
    _emit(pro, "RESUME", 0)
    k = 0
    for s in slots:
        if s == NULL_SLOT:
            _emit(pro, "PUSH_NULL")
            continue
        if s in with_const:  # with torch.no_grad(): entered again; its __exit__ stays on the stack
            _emit(pro, "PUSH_NULL")
            _emit(pro, "LOAD_CONST", with_const[s])
            _emit_call(pro, 0)
            _emit(pro, "BEFORE_WITH")
            _emit(pro, "POP_TOP")
            continue
        _emit(pro, "LOAD_FAST", k)
        if s == ITER_SLOT:
            _emit(pro, "GET_ITER")
        k += 1
    # relative to the instruction after the jump, which is where the original code starts
    _emit(pro, "JUMP_FORWARD", target // 2)
    shift = len(pro) // 2

    # body: the original bytecode with local indices remapped (same instruction sizes)
    code = bytearray(co.co_code)
    ext_start, ext = None, 0
    for i in range(0, len(code), 2):
        op, arg = code[i], code[i + 1]
        if op == _OP["EXTENDED_ARG"]:
            if ext_start is None:
                ext_start = i
            ext = (ext << 8) | arg
            continue
        if op in _LOCAL_OPS:
            full = (ext << 8) | arg
            new = remap.get(full, full)
            nbytes = 1 + (0 if ext_start is None else (i - ext_start) // 2)
            if new >= 1 << (8 * nbytes):
                raise Unsupported("graph break: too many locals to build a resume function")
            start = i if ext_start is None else ext_start
            for j, pos in enumerate(range(start, i + 2, 2)):
                code[pos + 1] = (new >> (8 * (nbytes - 1 - j))) & 0xFF
        ext_start, ext = None, 0

    table = [(s + shift, e + shift, t + shift, d, l) for s, e, t, d, l in _parse_exception_table(co)]
    lines = bytearray()
    n = shift
    while n:  # "no location" entries for the prologue keep the original line numbers valid
        c = min(n, 8)
        lines.append(0x80 | (15 << 3) | (c - 1))
        n -= c
    name = f"__resume_at_{target}"
    kw = dict(co_code=bytes(pro + code), co_linetable=bytes(lines) + co.co_linetable, co_exceptiontable=_encode_exception_table(table),
              co_name=name)
    if sys.version_info >= (3, 11):
        kw["co_qualname"] = f"{co.co_qualname}.{name}"
    out = shaped.replace(**kw)
    origins[out] = (co, 2 * shift)
    return out



def resume_function(func, code):
    return types.FunctionType(code, func.__globals__, code.co_name, None, func.__closure__)
