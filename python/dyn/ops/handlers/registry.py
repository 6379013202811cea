"""Where capture's handlers register themselves. A handler module claims its targets where it defines
its handlers, with one of the registrars below used as a decorator, or called on a handler made by a
factory, or `.all({...})` on a table of them:

    @functional("nll_loss")                        # torch.nn.functional.nll_loss
    def _nll_loss(o, input, target, ...): ...

    torch_name("unsqueeze")(lambda o, x, dim: ...)  # torch.unsqueeze and Tensor.unsqueeze, by name
    torch_function(torch.constant_pad_nd)(...)      # a callable itself
    method.all({"cuda": _cuda, "cpu": _cpu})        # Tensor methods by name

tables.py imports the handler modules (running their registrations) and builds the tables capture looks
handlers up in (TORCH_FUNCS, METHODS, TENSOR_ATTRS, TORCH_OPS) with `build()`.

Precedence is declared, never the order modules are imported in. A target claimed twice with one handler
is one claim. Otherwise the claim of the higher rank wins: WEAK (a torch.special / torch.linalg function
named like a `torch_name`, which takes that handler unless it has its own), PLAIN (every registrar's
default), OVERRIDE (`override=True`: a handler that replaces another module's claim on purpose). Two
claims of one rank with different handlers are an error (`build()` raises `ClaimConflict`).

This module imports no handler module: they import it."""
import sys
from collections import namedtuple

import torch
import torch.nn.functional as F

WEAK, PLAIN, OVERRIDE = 0, 1, 2

# the tables build() makes
TORCH_FUNCS = "TORCH_FUNCS"    # torch callables (functions, dispatcher ops) -> handler
METHODS = "METHODS"            # Tensor method names -> handler
TENSOR_ATTRS = "TENSOR_ATTRS"  # Tensor attribute names -> handler(o, x)
TORCH_OPS = "TORCH_OPS"        # custom ops by their packet's name ("namespace.name") -> handler
NAMES = "NAMES"                # torch_name's names -> handler (the op registry's aliases: tables.py)

Claim = namedtuple("Claim", "table key handler rank module what")

_CLAIMS = []


class ClaimConflict(Exception):
    pass


def _caller():
    """The module a registrar was called from (for messages)."""
    f = sys._getframe(1)
    while f is not None and f.f_globals.get("__name__") == __name__:
        f = f.f_back
    return f.f_globals.get("__name__", "?") if f is not None else "?"


def _add(table, key, handler, rank, what):
    if not callable(handler):
        raise TypeError(f"{what}: the handler {handler!r} is not callable")
    _CLAIMS.append(Claim(table, key, handler, rank, _caller(), what))


class _Registrar:
    """registrar(*targets, override=False): a decorator claiming the targets for the handler it is given
    (returned unchanged); registrar.all({target: handler}) claims a table of them."""

    def __init__(self, name, claim):
        self.name = name
        self._claim = claim  # (target, handler, rank, **options) -> None

    def __call__(self, *targets, override=False, **options):
        rank = OVERRIDE if override else PLAIN

        def register(handler):
            for t in targets:
                self._claim(t, handler, rank, **options)
            return handler
        return register

    def all(self, handlers, override=False, **options):
        for t, h in handlers.items():
            self(t, override=override, **options)(h)
        return handlers

    def __repr__(self):
        return f"<registrar {self.name}>"


def _torch_function(f, h, rank):
    if f is None or not callable(f):
        raise TypeError(f"torch_function: {f!r} is not a callable")
    _add(TORCH_FUNCS, f, h, rank, f"torch_function({_label(f)})")


def _in(namespace, prefix):
    def claim(name, h, rank):
        f = getattr(namespace, name, None)
        if f is None:
            raise AttributeError(f"{prefix}.{name} does not exist")
        _add(TORCH_FUNCS, f, h, rank, f"{prefix}.{name}")
    return claim


def _torch_name(name, h, rank, methods=True):
    """torch.<name> (where torch has it), torch.special.<name> and torch.linalg.<name> (WEAK), and the
    Tensor method <name> unless methods=False (torch.zeros is no method)."""
    for mod, r in ((torch, rank), (torch.special, WEAK), (torch.linalg, WEAK)):
        f = getattr(mod, name, None)
        if f is not None and callable(f) and not isinstance(f, type):
            _add(TORCH_FUNCS, f, h, r, f"{mod.__name__}.{name}")
    if methods:
        _add(METHODS, name, h, rank, f"Tensor.{name}")
    _add(NAMES, name, h, rank, f"name {name}")


def _torch_if_any(name, h, rank):
    """torch.<name> where torch has it (in-place ops: torch.relu_, not torch.addbmm_), and Tensor.<name>."""
    f = getattr(torch, name, None)
    if f is not None and callable(f):
        _add(TORCH_FUNCS, f, h, rank, f"torch.{name}")
    _add(METHODS, name, h, rank, f"Tensor.{name}")


def _reflected(name, h, rank):
    """Tensor.__rsub__ and the like: the method by name and torch.Tensor's function object."""
    _add(METHODS, name, h, rank, f"Tensor.{name}")
    _add(TORCH_FUNCS, getattr(torch.Tensor, name), h, rank, f"torch.Tensor.{name}")


# torch.<name>, its torch.special / torch.linalg namesakes (WEAK) and Tensor.<name> (methods=False: not)
torch_name = _Registrar("torch_name", _torch_name)
# torch.<name> where it exists, and Tensor.<name> (the in-place ops: torch.relu_, not torch.addbmm_)
torch_inplace = _Registrar("torch_inplace", _torch_if_any)
in_torch = _Registrar("in_torch", _in(torch, "torch"))  # torch.<name> only
torch_function = _Registrar("torch_function", _torch_function)  # callables themselves
functional = _Registrar("functional", _in(F, "torch.nn.functional"))
linalg = _Registrar("linalg", _in(torch.linalg, "torch.linalg"))
fft = _Registrar("fft", _in(torch.fft, "torch.fft"))
method = _Registrar("method", lambda n, h, r: _add(METHODS, n, h, r, f"Tensor.{n}"))
reflected = _Registrar("reflected", _reflected)
tensor_attr = _Registrar("tensor_attr", lambda n, h, r: _add(TENSOR_ATTRS, n, h, r, f"Tensor.{n} (attribute)"))
custom_op = _Registrar("custom_op", lambda n, h, r: _add(TORCH_OPS, n, h, r, f"custom op {n}"))


def _label(f):
    if isinstance(f, (torch._ops.OpOverloadPacket, torch._ops.OpOverload)):
        return str(f)
    return f"{getattr(f, '__module__', None) or '?'}.{getattr(f, '__qualname__', None) or f}"


def claims():
    return list(_CLAIMS)


def names():
    """{name: handler} of the torch_name claims: what the op registry's ops without a signature map their
    other names to (tables.py)."""
    return build()[NAMES]


def conflicts(all_claims=None):
    """[(table, key, [claims])]: targets with two different handlers at their highest rank."""
    by_target = {}
    for c in _CLAIMS if all_claims is None else all_claims:
        by_target.setdefault((c.table, c.key), []).append(c)
    out = []
    for (table, key), cs in by_target.items():
        top = max(c.rank for c in cs)
        winners = [c for c in cs if c.rank == top]
        if len({id(c.handler) for c in winners}) > 1:
            out.append((table, key, winners))
    return out


def build(all_claims=None):
    """{table name: {target: handler}}, each target's handler its claim of the highest rank (of the claims
    so far: tables.py builds once every handler module is imported). Raises ClaimConflict where two
    claims of one rank give a target different handlers."""
    all_claims = _CLAIMS if all_claims is None else all_claims
    bad = conflicts(all_claims)
    if bad:
        raise ClaimConflict("; ".join(
            f"{table} {key if isinstance(key, str) else _label(key)}: " +
            ", ".join(f"{c.module} ({c.what}, {getattr(c.handler, '__qualname__', c.handler)})" for c in cs)
            for table, key, cs in bad) + " (declare the one that wins override=True)")
    tables = {TORCH_FUNCS: {}, METHODS: {}, TENSOR_ATTRS: {}, TORCH_OPS: {}, NAMES: {}}
    ranks = {}
    for c in all_claims:
        if c.rank > ranks.get((c.table, c.key), -1):
            tables[c.table][c.key] = c.handler
            ranks[(c.table, c.key)] = c.rank
    return tables
