"""Capture's handler registrations (python/dyn/ops/handlers/registry.py): no two registrations claim one
target with different handlers unless one declares precedence (override=True, or a WEAK namesake claim),
and the tables tables.py exposes are what the registrations say."""
import ast
import os

import pytest
import torch
import torch.nn.functional as F

from dyn.ops.handlers import registry, tables
from dyn.ops.handlers.registry import OVERRIDE, PLAIN, WEAK, Claim, ClaimConflict

HANDLERS_DIR = os.path.dirname(os.path.abspath(registry.__file__))


def test_no_undeclared_double_claims():
    bad = registry.conflicts()
    assert not bad, "targets claimed with different handlers at one rank: " + "; ".join(
        f"{t} {k}: {[(c.module, c.what) for c in cs]}" for t, k, cs in bad)


def test_every_target_decided_by_rank():
    """Where several handlers claim one target, exactly one claim has the highest rank, and the table
    holds its handler."""
    by_target = {}
    for c in registry.claims():
        by_target.setdefault((c.table, c.key), []).append(c)
    built = {registry.TORCH_FUNCS: tables.TORCH_FUNCS, registry.METHODS: tables.METHODS,
             registry.TENSOR_ATTRS: tables.TENSOR_ATTRS, registry.TORCH_OPS: tables.TORCH_OPS}
    contested = 0
    for (table, key), cs in by_target.items():
        if table not in built:
            continue
        top = max(c.rank for c in cs)
        winners = {id(c.handler) for c in cs if c.rank == top}
        assert len(winners) == 1, (table, key)
        assert id(built[table][key]) in winners, (table, key)
        contested += len({id(c.handler) for c in cs}) > 1
    assert contested  # torch.linalg.cross & co.: a namesake's WEAK claim and torch.linalg's own
    assert set(built[registry.METHODS]) == {c.key for c in registry.claims() if c.table == registry.METHODS}


def test_precedence_rules():
    def h1(o, x):
        return x

    def h2(o, x):
        return x

    def claim(handler, rank, key=torch.sinh, module="a"):
        return Claim(registry.TORCH_FUNCS, key, handler, rank, module, "test")

    with pytest.raises(ClaimConflict):
        registry.build([claim(h1, PLAIN), claim(h2, PLAIN, module="b")])
    with pytest.raises(ClaimConflict):
        registry.build([claim(h1, OVERRIDE), claim(h2, OVERRIDE, module="b")])
    assert registry.build([claim(h1, PLAIN), claim(h1, PLAIN, module="b")])[registry.TORCH_FUNCS][torch.sinh] is h1
    for order in ((claim(h1, WEAK), claim(h2, PLAIN)), (claim(h2, PLAIN), claim(h1, WEAK)),
                  (claim(h1, PLAIN), claim(h2, OVERRIDE)), (claim(h2, OVERRIDE), claim(h1, PLAIN))):
        assert registry.build(list(order))[registry.TORCH_FUNCS][torch.sinh] is h2  # the order decides nothing


def test_known_precedence():
    from dyn.ops.handlers import compositions, matrix
    assert tables.TORCH_FUNCS[torch.linalg.cross] is compositions._linalg_cross
    assert tables.TORCH_FUNCS[torch.cross] is compositions._cross
    assert tables.TORCH_FUNCS[torch.linalg.diagonal] is matrix._linalg_diagonal
    assert tables.TORCH_FUNCS[torch.diagonal] is matrix._diagonal
    assert torch.zeros in tables.TORCH_FUNCS and "zeros" not in tables.METHODS
    assert tables.METHODS["where"] is not tables.TORCH_FUNCS[torch.where]  # x.where(cond, y): its own
    assert F.relu in tables.TORCH_FUNCS and "__getitem__" in tables.METHODS


def test_registry_imports_no_handler_module():
    with open(os.path.join(HANDLERS_DIR, "registry.py")) as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"registry.py imports .{node.module}: handler modules import it, not it them"
