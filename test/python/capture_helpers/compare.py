"""Helpers of the test_capture_* files (Python features, guards, graph breaks, mutation, nn.Modules):
structural comparison with eager, cloning of arguments, the capture count, graphs of a compiled
function, strict xfail, and line numbers in a function's source."""
import pytest
import torch

import dyn


def same(got, want):
    """Structural equality with eager: same container types, tensors assert_close (default
    tolerances; dtype, shape and device included), everything else ==."""
    assert type(got) is type(want), f"{type(got).__name__} != {type(want).__name__}"
    if isinstance(want, torch.Tensor):
        torch.testing.assert_close(got, want)
        assert got.requires_grad == want.requires_grad
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
    elif isinstance(want, dict):
        assert list(got) == list(want)
        for k in want:
            same(got[k], want[k])
    else:
        assert got == want


def clone(v):
    if isinstance(v, torch.Tensor):
        return v.detach().clone().requires_grad_(v.requires_grad)
    if isinstance(v, tuple):
        return tuple(clone(x) for x in v)
    if isinstance(v, list):
        return [clone(x) for x in v]
    if isinstance(v, dict):
        return {k: clone(x) for k, x in v.items()}
    return v


def captures():
    return dyn._stats()["captures"]


def graphs_of(cf):
    return [g for g, k, e in cf.graphs if g is not None]


def xfail(reason):
    return pytest.mark.xfail(strict=True, reason=reason)


def line_of(fn, text):
    """Absolute line number of the first source line of fn containing text."""
    import inspect
    lines, start = inspect.getsourcelines(fn)
    for i, l in enumerate(lines):
        if text in l and not l.lstrip().startswith("def "):
            return start + i
    raise AssertionError(f"{text!r} not in {fn.__name__}")
