"""Capture breadth on PyTorch's own TorchDynamo function tests (issue 35): the `@make_test` units of
PyTorch's test/dynamo/test_functions.py, run eagerly and under dyn.compile with each backend.

PyTorch's file is read from the path given, never copied into this repository: the harness parses it,
drops its own `make_test` and runs the module with one that records each unit's function instead of
building a unittest. Each unit gets what torch._dynamo.testing.standard_test gives it (one
`torch.randn(10, 10)` per parameter, two argument sets, each called twice), and counts:

- one graph: no graph break, nothing run eagerly, no internal failure, at most one graph captured;
- breaks: each graph break's reason (DYN_LOGS=graph_breaks' lines);
- wrong: a result that differs from eager's (container types, keys, dtypes, shapes and values), or an
  exception eager does not raise of the same type;
- error: dyn failed (an internal failure, or dyn raised where eager did not).

Units that PyTorch skips here (no GPU, `unittest.skip*`) or expects to fail are skipped and listed.

Run: PYTHONPATH=python .venv/bin/python benchmarks/dynamo_functions.py PATH/test_functions.py \
         [--backend dyn|eager ...] [-k SUBSTRING] [--json OUT.json] [-v]
"""
import argparse
import ast
import collections
import copy
import inspect
import json
import math
import sys
import types
import unittest
import warnings

import numpy as np
import torch

import dyn
from dyn.session import Session

BACKENDS = ("dyn", "eager")
UNIT_ATTR = "_dyn_unit"


# -- loading PyTorch's file ----------------------------------------------------------------------------
def _recording_make_test(fn=None, expected_frame_count=1):
    """Stands in for the file's make_test: keeps the raw function (test methods stay functions so that
    unittest's skip decorators wrap them as they would the real test)."""
    if fn is None:
        return lambda f: _recording_make_test(f, expected_frame_count=expected_frame_count)

    def test_fn(self):
        raise unittest.SkipTest("recorded by benchmarks/dynamo_functions.py")
    setattr(test_fn, UNIT_ATTR, (fn, expected_frame_count))
    test_fn.__name__ = fn.__name__
    return test_fn


def load_units(path):
    """[(name, fn, expected_frame_count, skip_reason or None)] in the file's order."""
    with open(path) as f:
        source = f.read()
    tree = ast.parse(source, filename=path)
    # the file defines make_test itself (older ones import torch._dynamo.testing's): drop it
    tree.body = [n for n in tree.body if not (isinstance(n, ast.FunctionDef) and n.name == "make_test")]
    mod = types.ModuleType("dynamo_test_functions")
    mod.__file__ = path
    mod.make_test = _recording_make_test
    sys.modules[mod.__name__] = mod
    import torch._dynamo.testing as dt
    saved = getattr(dt, "make_test", None)
    dt.make_test = _recording_make_test
    try:
        exec(compile(tree, path, "exec"), mod.__dict__)
    finally:
        if saved is None:
            del dt.make_test
        else:
            dt.make_test = saved
    units = []
    for cls in list(vars(mod).values()):
        if not (isinstance(cls, type) and issubclass(cls, unittest.TestCase)):
            continue
        for name, attr in vars(cls).items():
            rec = getattr(attr, UNIT_ATTR, None)
            if not name.startswith("test") or rec is None:
                continue
            skip = None
            if getattr(attr, "__unittest_skip__", False):
                skip = "skipped by PyTorch: " + str(getattr(attr, "__unittest_skip_why__", ""))
            elif getattr(attr, "__unittest_expecting_failure__", False):
                skip = "TorchDynamo expects it to fail"
            units.append((f"{cls.__name__}.{name}", rec[0], rec[1], skip))
    return units


# -- comparing results ---------------------------------------------------------------------------------
class Mismatch(Exception):
    pass


def _same_namedtuple_class(a, b):
    """Classes that a unit makes at each call (collections.namedtuple inside it): the same by name and fields."""
    return issubclass(a, tuple) and issubclass(b, tuple) and hasattr(a, "_fields") and \
        a.__qualname__ == b.__qualname__ and a._fields == getattr(b, "_fields", None)


def compare(ref, res, where="result"):
    """Raises Mismatch unless res equals ref structurally: same types (containers included), keys,
    lengths, tensor dtypes/shapes/devices and values (torch.testing.assert_close's tolerances)."""
    if type(ref) is not type(res) and not _same_namedtuple_class(type(ref), type(res)):
        raise Mismatch(f"{where}: type {type(res).__name__}, eager's is {type(ref).__name__}")
    if isinstance(ref, torch.Tensor):
        try:
            torch.testing.assert_close(res, ref, equal_nan=True)
        except AssertionError as e:
            raise Mismatch(f"{where}: {str(e).splitlines()[0]}") from None
        if ref.requires_grad != res.requires_grad:
            raise Mismatch(f"{where}: requires_grad {res.requires_grad}, eager's {ref.requires_grad}")
        return
    if isinstance(ref, np.ndarray):
        if ref.dtype != res.dtype or ref.shape != res.shape:
            raise Mismatch(f"{where}: array {res.dtype}{res.shape}, eager's {ref.dtype}{ref.shape}")
        np.testing.assert_allclose(res, ref, rtol=1.3e-6, atol=1e-5, equal_nan=True)
        return
    if isinstance(ref, dict):
        if list(ref.keys()) != list(res.keys()):
            raise Mismatch(f"{where}: keys {list(res.keys())}, eager's {list(ref.keys())}")
        if isinstance(ref, collections.defaultdict) and ref.default_factory is not res.default_factory:
            raise Mismatch(f"{where}: default_factory {res.default_factory}, eager's {ref.default_factory}")
        for k in ref:
            compare(ref[k], res[k], f"{where}[{k!r}]")
        return
    if isinstance(ref, (tuple, list, collections.deque)):
        if len(ref) != len(res):
            raise Mismatch(f"{where}: length {len(res)}, eager's {len(ref)}")
        if isinstance(ref, collections.deque) and ref.maxlen != res.maxlen:
            raise Mismatch(f"{where}: maxlen {res.maxlen}, eager's {ref.maxlen}")
        for i, (a, b) in enumerate(zip(ref, res)):
            compare(a, b, f"{where}[{i}]")
        return
    if isinstance(ref, float) and math.isnan(ref) and math.isnan(res):
        return
    if isinstance(ref, (np.generic, float)):
        if not np.isclose(ref, res, rtol=1.3e-6, atol=1e-5):
            raise Mismatch(f"{where}: {res!r}, eager's {ref!r}")
        return
    try:
        equal = ref == res
        if not isinstance(equal, bool):
            equal = bool(np.all(equal))
    except Exception:
        equal = vars(ref) == vars(res) if hasattr(ref, "__dict__") else repr(ref) == repr(res)
    if not equal:
        raise Mismatch(f"{where}: {res!r}, eager's {ref!r}")


# -- running -------------------------------------------------------------------------------------------
class _BreakLog:
    """Records every graph break dyn reports (the lines DYN_LOGS=graph_breaks prints), in any frame."""

    def __init__(self):
        self.lines = []
        self._log = Session.log

    def __enter__(self):
        log, lines = self._log, self.lines

        def recording(session, kind, msg):
            if kind == "graph_breaks":
                lines.append(msg)
            return log(session, kind, msg)
        Session.log = recording
        return self

    def __exit__(self, *exc):
        Session.log = self._log


def _reason(line):
    """'graph break in f at file:12: why' / 'f runs eagerly: why at file:12' -> why."""
    if line.startswith("graph break in "):
        return line.split(": ", 1)[1] if ": " in line else line
    if " runs eagerly: " in line:
        why = line.split(" runs eagerly: ", 1)[1]
        return why.rsplit(" at ", 1)[0]
    return line


def _args(nargs, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(10, 10, generator=g) for _ in range(nargs)]


def _call(fn, args):
    """(result, None) or (None, exception); the arguments are copies, so in-place units see fresh ones."""
    try:
        return fn(*copy.deepcopy(args)), None
    except Exception as e:  # a unit may raise: compiled must raise the same way
        return None, e


def run_unit(fn, backend):
    nargs = len(inspect.signature(fn).parameters)
    sets = [_args(nargs, 0), _args(nargs, 1)]
    np.random.seed(0)
    refs = [_call(fn, a) for a in sets]
    dyn.reset()
    out = dict(status="one_graph", breaks=[], detail="")
    with _BreakLog() as log, warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        cf = dyn.compile(fn, backend=backend)
        problems = []
        for i in (0, 1, 0, 1):
            np.random.seed(0)
            res, err = _call(cf, sets[i])
            ref, ref_err = refs[i]
            if ref_err is not None:
                if err is None or type(err) is not type(ref_err):
                    problems.append(("wrong", f"eager raised {type(ref_err).__name__}: {ref_err}; dyn "
                                              + ("returned" if err is None else f"raised {type(err).__name__}: {err}")))
            elif err is not None:
                problems.append(("error", f"{type(err).__name__}: {err}"))
            else:
                try:
                    compare(ref, res)
                except Mismatch as e:
                    problems.append(("wrong", str(e)))
                except AssertionError as e:
                    problems.append(("wrong", str(e).strip().splitlines()[0]))
    s = dyn.stats()
    out["stats"] = {k: s[k] for k in ("captures", "graphs", "graph_breaks", "eager_entries", "eager_calls",
                                      "internal_failures", "recompiles")}
    out["breaks"] = [_reason(line) for line in log.lines]
    failures = [str(w.message) for w in warned if "internal" in str(w.message).lower()]
    if problems:
        out["status"], out["detail"] = problems[0]
    elif s["internal_failures"]:
        out["status"], out["detail"] = "error", (failures[0] if failures else "internal failure")
    elif s["graph_breaks"] or s["eager_entries"] or s["eager_calls"] or s["graphs"] > 1:
        out["status"] = "breaks"
        if not out["breaks"]:
            out["breaks"] = [f"{s['graphs']} graphs" if s["graphs"] > 1 else "ran eagerly"]
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("path", help="PyTorch's test/dynamo/test_functions.py")
    p.add_argument("--backend", action="append", choices=BACKENDS)
    p.add_argument("-k", default=None, help="only units whose name contains this")
    p.add_argument("--json", default=None, help="write the per-unit results here")
    p.add_argument("-v", action="store_true", help="print every unit that is not one graph")
    a = p.parse_args(argv)
    backends = a.backend or list(BACKENDS)
    units = load_units(a.path)
    if a.k:
        units = [u for u in units if a.k in u[0]]
    results = {"torch": torch.__version__, "path": a.path, "units": len(units), "backends": {}}
    skipped = [(name, why) for name, _, _, why in units if why]
    results["skipped"] = dict(skipped)
    for backend in backends:
        per = {}
        for name, fn, _, why in units:
            if why:
                continue
            per[name] = run_unit(fn, backend)
            if a.v and per[name]["status"] != "one_graph":
                r = per[name]
                print(f"[{backend}] {name}: {r['status']} {r['detail']} {r['breaks']}")
        ran = len(per)
        count = collections.Counter(r["status"] for r in per.values())
        reasons = collections.Counter(b for r in per.values() for b in dict.fromkeys(r["breaks"]))
        summary = {"run": ran, "one_graph": count["one_graph"], "breaks": count["breaks"],
                   "wrong": count["wrong"], "error": count["error"],
                   "one_graph_pct": round(100.0 * count["one_graph"] / max(ran, 1), 1),
                   "break_reasons": reasons.most_common()}
        results["backends"][backend] = {"summary": summary, "units": per}
        print(f"backend={backend}: {ran} units run, {len(skipped)} skipped; one graph {count['one_graph']} "
              f"({summary['one_graph_pct']}%), with breaks {count['breaks']}, wrong {count['wrong']}, "
              f"errors {count['error']}")
        for name, r in per.items():
            if r["status"] in ("wrong", "error"):
                print(f"  {r['status']}: {name}: {r['detail']}")
        print("  break reasons (units):")
        for why, n in reasons.most_common():
            print(f"    {n:3d}  {why}")
    print("skipped:")
    for name, why in skipped:
        print(f"  {name}: {why}")
    if a.json:
        for b in results["backends"].values():  # one-graph units: their status alone
            b["units"] = {n: r if r["status"] != "one_graph" else {"status": "one_graph"}
                          for n, r in b["units"].items()}
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1, default=str)
    return results


if __name__ == "__main__":
    main()
