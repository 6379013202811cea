"""The PEP 523 hook on its own (no torch): hits call the entry, eager entries and misses run the
frame, callback exceptions propagate, frames are cleared and popped at every stack depth (3.12),
references are balanced, generators are not intercepted."""
import gc
import sys

import pytest

import dyn

_C = dyn._C
pytestmark = pytest.mark.skipif(_C is None or not _C.HOOK_SUPPORTED, reason="frame hook needs CPython 3.11/3.12")


def test_hook():

    def f(a, b, *rest, k=3, **kw):
        x = [a]
        def inner():  # makes `a` a cell var: MAKE_CELL must not have run when we read args
            return a
        return ('eager', a, b, rest, k, kw)

    calls = []
    def cb(code, args):
        calls.append(args)
        if args[1] == 'eager':
            entry = ((None, (2, str, 'eager'), None, None, None), None)
        elif args[1] == 'raise':
            raise KeyError('from callback')
        else:
            entry = ((None, (2, type(args[1]), args[1]), None, None, None), lambda *a: ('compiled',) + a)
        cache[cb].append(entry)
        return entry

    cache = _C.code_cache(f.__code__)
    cache[cb] = []

    def run(*a, **k):
        prev = _C.set_eval_frame(cb)
        try:
            return f(*a, **k)
        finally:
            _C.set_eval_frame(prev)

    assert run(1, 2) == ('compiled', 1, 2, 3, (), {}), run(1, 2)
    assert run(5, 2, 7, k=4, z=1) == ('compiled', 5, 2, 4, (7,), {'z': 1})
    assert run(1, 'eager') == ('eager', 1, 'eager', (), 3, {})
    assert run(1, 'eager') == ('eager', 1, 'eager', (), 3, {})
    try:
        run(1, 'raise'); raise SystemExit('no raise')
    except KeyError:
        pass
    assert len(calls) == 3, calls
    # unrelated code under the hook
    assert run(2, 2)[0] == 'compiled'

    def deep(n):
        if n == 0:
            return run(n, 2)
        return deep(n - 1)

    obj = object()
    before = sys.getrefcount(obj)
    for depth in range(0, 900, 7):
        for i in range(20):
            r = deep(depth)
            assert r[0] == 'compiled'
            r = run(obj, 2)
            assert r[1] is obj
        assert run(depth, 'eager')[0] == 'eager'
    del r
    gc.collect()
    assert sys.getrefcount(obj) == before, (sys.getrefcount(obj), before)
    # generator is not intercepted
    def g(a, b):
        yield a
    gc_ = _C.code_cache(g.__code__); gc_[cb] = []
    prev = _C.set_eval_frame(cb)
    assert list(g(1, 2)) == [1]
    _C.set_eval_frame(prev)
