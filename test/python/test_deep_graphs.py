"""Graphs deeper than Python's recursion limit: capture walks its graph without recursion. On Python 3.12
(the GPU machine) a recursive walk over a 12-layer BERT's graph in train mode (whether a node requires
grad, asked by F.dropout's generic node) raised RecursionError, so every Dropout broke the graph."""
import sys

import torch
import torch.nn.functional as F

import dyn

DEPTH = sys.getrecursionlimit() + 200  # ops in a chain, each on the one before


def chain(x):
    for _ in range(DEPTH):
        x = x * 1.0001 + 0.5
    return F.dropout(x, 0.25, training=True)  # asks whether its operand requires grad (the whole chain)


def test_chain_deeper_than_the_recursion_limit_is_one_graph():
    x = torch.randn(16, requires_grad=True)
    ex = dyn.explain(chain, backend="eager")(x)
    assert (ex.graph_count, ex.break_reasons) == (1, [])
    assert len(ex.ops_per_graph[0]) >= 2 * DEPTH


def test_chain_deeper_than_the_recursion_limit_matches_eager():
    x = torch.randn(16, requires_grad=True)
    cf = dyn.compile(chain, backend="eager")
    torch.manual_seed(0)
    got = cf(x)
    got.sum().backward()
    g, x.grad = x.grad, None
    torch.manual_seed(0)
    want = chain(x)
    want.sum().backward()
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(g, x.grad)
    assert got.requires_grad
