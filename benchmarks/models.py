"""The model corpus run (benchmarks/corpus.py): per model and mode, what dyn captures and how fast it runs.

For each model, in eval (no_grad forward) and train mode (forward + loss.backward()):
  graphs, breaks and their reasons (dyn.explain), the graphs TorchDynamo makes of the same call,
  whether every graph ran dyn's compiled code (dyn.stats(), where it exists: "yes", "graphs" when
  every graph did but Python ran code at graph breaks, "no"),
  the largest |difference| from eager of the outputs and, in train mode, of the parameters' gradients,
  for backend="eager" and backend="dyn",
  median step times of eager, dyn and torch.compile (inductor), first-call (compile) times, and the
  capture time of dyn beside TorchDynamo's (both with a backend that runs the captured graph as it is:
  first call minus a steady call).
One table on stdout, everything in --json.

Run:  PYTHONPATH=python .venv/bin/python benchmarks/models.py --device cpu --size small --no-inductor
      PYTHONPATH=python python benchmarks/models.py --device cuda --size full --json out.json   (GPU machine)
      OMP_NUM_THREADS=1 PYTHONPATH=python .venv/bin/python benchmarks/models.py --device cpu --cpu-time ...
      (a loaded machine: single-threaded, timed in CPU time)
"""
import argparse
import copy
import gc
import json
import os
import platform
import statistics
import sys
import time
import traceback
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

import dyn  # noqa: E402


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


def seed(k=0):
    torch.manual_seed(k)  # dropout and stochastic depth draw the same numbers in every run


def step(case, fn, mode):
    """One eval forward or train forward + backward of fn (the model or a compiled wrapper of it)."""
    args, kwargs = case.inputs(mode)
    if mode == "eval":
        with torch.no_grad():
            return fn(*args, **kwargs)
    out = fn(*args, **kwargs)
    case.loss(out, mode).backward()
    return out


def result(case, model, out, mode):
    """Outputs (and gradients in train mode) as {name: tensor}, detached."""
    r = {p: t.detach().clone() for p, t in corpus.tensors(out)}
    if mode == "train":
        r.update({f"grad:{n}": p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None})
    return r


def max_diff(ref, got):
    """(max |out diff|, max |grad diff|); inf when a value is missing or has another shape."""
    d = {"out": 0.0, "grad": 0.0}
    for k, a in ref.items():
        kind = "grad" if k.startswith("grad:") else "out"
        b = got.get(k)
        if b is None or b.shape != a.shape or b.dtype != a.dtype:
            d[kind] = float("inf")
            continue
        if a.numel():
            if a.dtype == torch.bool or not a.is_floating_point():
                diff = float((a != b).any())
            else:
                diff = float((a.double() - b.double()).abs().nan_to_num(float("inf")).max())
            d[kind] = max(d[kind], diff)
    if len(got) != len(ref):
        d["out"] = float("inf")
    return d


CLOCK = time.perf_counter  # --cpu-time: time.thread_time


def timed(fn, reps, device):
    times = []
    for _ in range(reps):
        sync(device)
        t = CLOCK()
        fn()
        sync(device)
        times.append(CLOCK() - t)
    return statistics.median(times)


def peak_memory(fn, device, prepare=None):
    """CUDA: the most bytes one call allocated at once above what was allocated before it (its outputs,
    temporaries and workspaces; in train mode the gradients too: `prepare` drops the previous call's
    before the base is read)."""
    if not str(device).startswith("cuda"):
        return {}
    if prepare is not None:
        prepare()
    sync(device)
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    fn()
    sync(device)
    return {"peak_bytes": torch.cuda.max_memory_allocated() - base}


def first_and_steady(case, model, fn, mode, device, reps, memory=None):
    """(first call seconds, result of the first call, median steady seconds, a steady call to time
    again: --rounds). memory: a dict given the steady call's peak (peak_memory) and, on CUDA, the bytes
    the first call and warm-up left allocated beyond the model (compiled constants, caches, gradients)."""
    for p in model.parameters():
        p.grad = None
    seed()
    sync(device)
    before = torch.cuda.memory_allocated() if str(device).startswith("cuda") else None
    t = time.perf_counter()
    out = step(case, fn, mode)
    sync(device)
    first = time.perf_counter() - t
    res = result(case, model, out, mode)
    del out

    def clear():
        for p in model.parameters():
            p.grad = None

    def again():
        clear()
        step(case, fn, mode)
    again()  # warm-up
    if memory is not None:
        memory.update(peak_memory(again, device, clear))
        if before is not None:
            memory["resident_bytes"] = torch.cuda.memory_allocated() - before
    return first, res, timed(again, reps, device), again


def dyn_stats():
    f = getattr(dyn, "stats", None)  # absent before dyn.stats() existed: reported as "?"
    return f() if callable(f) else None


def run_dyn(case, mode, device, backend, reps, ref, compile_mode=None, keep=False):
    m = copy.deepcopy(case.model)
    dyn.reset()  # dyn.stats() counts from here
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = dyn.compile(m, backend=backend, mode=compile_mode)
        mem = {}
        first, res, steady, again = first_and_steady(case, m, compiled, mode, device, reps, mem)
    r = {"first_s": first, "time_s": steady, "diff": max_diff(ref, res), **mem,
         "warnings": sorted({str(w.message)[:300] for w in caught if "dyn" in str(w.message)})}
    st = dyn_stats()
    if st is not None and isinstance(st.get("eager_graphs"), list):
        eager = [f"{g.get('reason')} at {_short(str(g.get('where')))}" if isinstance(g, dict) else str(g)
                 for g in st["eager_graphs"]]
        r.update(graphs=st.get("graphs"), compiled_graphs=st.get("compiled_graphs"), eager_graphs=eager,
                 eager_entries=st.get("eager_entries"), graph_breaks=st.get("graph_breaks"))
        # True: one or more graphs, all run by dyn's compiled code, no frame run eagerly, no break (at a
        # break Python runs the call, and a library function called there runs eagerly uncounted);
        # "graphs": every graph compiled but there were breaks
        every = bool(st.get("graphs")) and not eager and not st.get("eager_entries") and \
            st.get("compiled_graphs") == st.get("graphs")
        r["all_compiled"] = (True if not st.get("graph_breaks") else "graphs") if every else False
    else:
        r["all_compiled"] = "?"
    if keep:  # timed again in rounds (run_case): its compiled entries stay
        r["_again"] = again
    else:
        dyn.reset()
    return r


def run_explain(case, mode):
    m = copy.deepcopy(case.model)
    args, kwargs = case.inputs(mode)
    seed()
    with torch.set_grad_enabled(mode == "train"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # graphs as captured, each run as it is (as run_dynamo counts TorchDynamo's): with backend "dyn" a
        # graph whose inputs require grad runs its whole frame in Python, so later breaks go unseen
        ex = dyn.explain(m, backend="eager")(*args, **kwargs)
    return {"graphs": ex.graph_count, "breaks": ex.graph_break_count,
            "ops_per_graph": [len(o) for o in ex.ops_per_graph],
            "reasons": [{"reason": r["reason"], "where": f"{r['filename']}:{r['lineno']}"} for r in ex.break_reasons]}


def run_dynamo(case, mode, device, reps):
    """TorchDynamo with a backend that runs its FX graphs as they are: graphs and capture time."""
    import torch._dynamo
    torch._dynamo.reset()
    count = [0]

    def counting(gm, example_inputs):
        count[0] += 1
        return gm.forward
    m = copy.deepcopy(case.model)
    compiled = torch.compile(m, backend=counting)
    first, _, steady, _ = first_and_steady(case, m, compiled, mode, device, reps)
    torch._dynamo.reset()
    return {"graphs": count[0], "first_s": first, "time_s": steady, "capture_s": max(first - steady, 0.0)}


def run_inductor(case, mode, device, reps, ref, keep=False, compile_mode=None):
    import torch._dynamo
    torch._dynamo.reset()
    m = copy.deepcopy(case.model)
    compiled = torch.compile(m, mode=compile_mode)
    mem = {}
    first, res, steady, again = first_and_steady(case, m, compiled, mode, device, reps, mem)
    r = {"first_s": first, "time_s": steady, "diff": max_diff(ref, res), **mem}
    if keep:
        r["_again"] = again
    else:
        torch._dynamo.reset()
    return r


def interleave(rec, device, reps, rounds):
    """Times every kept backend of a record again in `rounds` rounds, each backend's calls in turn (the
    first backend of a round rotating), and keeps the median of the rounds' medians: a machine whose
    speed drifts during a run (the lent H200's host) moves every column alike. Each backend's first call
    in a round is an untimed warm-up (a dyn model whose entries a later stage's dyn.reset() dropped is
    captured again there)."""
    timers = [(k, v.pop("_again")) for k, v in rec.items() if isinstance(v, dict) and "_again" in v]
    per = {k: [] for k, _ in timers}
    for r in range(rounds if timers else 0):
        k0 = r % len(timers)
        for k, again in timers[k0:] + timers[:k0]:
            again()  # warm-up after the other backends ran
            per[k].append(timed(again, reps, device))
    for k, ts in per.items():
        rec[k].update(time_s=statistics.median(ts), round_times_s=ts)


def guarded(what, fn, *args):
    try:
        return fn(*args)
    except Exception as e:  # one failing stage must not stop the corpus
        return {"error": f"{type(e).__name__}: {str(e)[:400]}", "traceback": traceback.format_exc()[-2000:],
                "stage": what}
    finally:  # the stage's model copy (GBs for the full LLaMA) goes before the next one is made
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def run_case(name, mode, device, size, backends, inductor, reps, rounds=1, dtype=None, inductor_graphs=False):
    """Every measurement of one model in one mode; backends: [(record key, dyn backend)]. With rounds > 1
    the steady times are measured again, interleaved (interleave). `dtype`: the parameters' and floating
    inputs' (None: as built, float32)."""
    case = corpus.build(name, size, device, dtype=dtype)
    case.model.train(mode == "train")
    rec = {"model": name, "family": case.family, "mode": mode, "device": device, "size": size,
           "dtype": str(dtype).replace("torch.", "") if dtype is not None else "float32",
           "params": sum(p.numel() for p in case.model.parameters())}
    keep = rounds > 1
    m = copy.deepcopy(case.model)
    mem = {}
    first, ref, steady, again = first_and_steady(case, m, m, mode, device, reps, mem)
    rec["eager"] = {"time_s": steady, **mem, **({"_again": again} if keep else {})}
    del m, again
    rec["explain"] = guarded("explain", run_explain, case, mode)
    for key, backend, compile_mode in backends:
        rec[key] = guarded(key, run_dyn, case, mode, device, backend, reps, ref, compile_mode, keep)
    rec["dynamo"] = guarded("dynamo", run_dynamo, case, mode, device, reps)
    if inductor:
        rec["inductor"] = guarded("inductor", run_inductor, case, mode, device, reps, ref, keep)
    if inductor_graphs:  # torch.compile(mode="reduce-overhead"): inductor's kernels replayed as CUDA graphs
        rec["inductor_graphs"] = guarded("inductor_graphs", run_inductor, case, mode, device, reps, ref, keep,
                                         "reduce-overhead")
    if keep:
        try:
            guarded("rounds", interleave, rec, device, reps, rounds)
        finally:
            for v in rec.values():
                if isinstance(v, dict):
                    v.pop("_again", None)
            import torch._dynamo
            torch._dynamo.reset()
            dyn.reset()
    return rec


def _fmt_t(s):
    if s is None:
        return "-"
    return f"{s * 1e3:.1f}" if s < 10 else f"{s * 1e3:.0f}"


def _fmt_d(d):
    if not isinstance(d, dict):
        return "-"
    g = d.get("grad")
    out = f"{d['out']:.1e}"
    return out if not g and g != 0.0 else f"{out}/{g:.1e}"


def _fmt_m(b):
    return "-" if b is None else f"{b / 2**20:.0f}"


def row(rec):
    ex = rec.get("explain", {})
    eb, db, dy, ind, dg, ig = (rec.get(k) or {} for k in ("eager_backend", "dyn", "dynamo", "inductor", "dyn_graphs",
                                                        "inductor_graphs"))
    cap = max(eb["first_s"] - eb["time_s"], 0.0) if "first_s" in eb else None
    comp = db.get("all_compiled", "-") if "error" not in db else "err"
    return [rec["model"], rec["mode"],
            "err" if "error" in ex else str(ex.get("graphs")), "err" if "error" in ex else str(ex.get("breaks")),
            "err" if "error" in dy else str(dy.get("graphs", "-")),
            {True: "yes", False: "no"}.get(comp, str(comp)) if isinstance(comp, bool) else str(comp),
            "err" if "error" in eb else _fmt_d(eb.get("diff")), "err" if "error" in db else _fmt_d(db.get("diff")),
            _fmt_t(rec["eager"].get("time_s")), _fmt_t(db.get("time_s")), _fmt_t(dg.get("time_s")),
            _fmt_t(ind.get("time_s")), _fmt_t(ig.get("time_s")),
            f"{db['first_s']:.2f}" if "first_s" in db else "-", f"{ind['first_s']:.1f}" if "first_s" in ind else "-",
            f"{cap:.2f}" if cap is not None else "-", f"{dy['capture_s']:.2f}" if "capture_s" in dy else "-",
            " / ".join(_fmt_m(r.get("peak_bytes")) for r in (rec["eager"], db, ind))]


HEAD = ["model", "mode", "graphs", "breaks", "dynamo graphs", "compiled", "diff eager-be (out/grad)",
        "diff dyn (out/grad)", "eager ms", "dyn ms", "dyn graphs ms", "inductor ms", "inductor graphs ms", "dyn 1st s", "inductor 1st s",
        "dyn capture s", "dynamo capture s", "peak MiB eager / dyn / inductor"]


def table(records):
    rows = [HEAD] + [row(r) for r in records]
    w = [max(len(r[c]) for r in rows) for c in range(len(HEAD))]
    lines = ["| " + " | ".join(r[c].ljust(w[c]) for c in range(len(HEAD))) + " |" for r in rows]
    lines.insert(1, "|" + "|".join("-" * (x + 2) for x in w) + "|")
    return "\n".join(lines)


def _short(path):
    return path.split("site-packages/")[-1]


def reasons(records):
    """Break reasons, one line per (model, mode): reason x count @ first location."""
    lines = []
    for r in records:
        ex = r.get("explain", {})
        if "error" in ex:
            lines.append(f"{r['model']} {r['mode']}: explain failed: {ex['error']}")
            continue
        seen = {}
        for b in ex.get("reasons", []):
            k = b["reason"]
            seen.setdefault(k, [0, _short(b["where"])])[0] += 1
        for k, (n, where) in seen.items():
            lines.append(f"{r['model']} {r['mode']}: {k} (x{n}) at {where}")
        for k in ("eager_backend", "dyn", "dyn_graphs", "dynamo", "inductor", "inductor_graphs"):
            if "error" in (r.get(k) or {}):
                lines.append(f"{r['model']} {r['mode']}: {k} failed: {r[k]['error']}")
    return "\n".join(lines)


# --backends name -> (record key, dyn backend, dyn.compile mode)
_BACKENDS = {"eager": ("eager_backend", "eager", None), "dyn": ("dyn", "dyn", None),
             "dyn-graphs": ("dyn_graphs", "dyn", "reduce-overhead")}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--size", default="small", choices=["small", "full"])
    ap.add_argument("--models", default="all", help="comma-separated names (default: all): " + ",".join(corpus.NAMES))
    ap.add_argument("--modes", default="eval,train")
    ap.add_argument("--backends", default="eager,dyn",
                    help="dyn backends to run (eager,dyn,dyn-graphs: dyn with mode='reduce-overhead', CUDA graphs)")
    ap.add_argument("--no-inductor", action="store_true", help="skip torch.compile's default backend")
    ap.add_argument("--inductor-graphs", action="store_true",
                    help="also torch.compile(mode='reduce-overhead') (CUDA graphs), beside --backends dyn-graphs")
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"],
                    help="the parameters' and floating inputs' dtype (bfloat16: inference as deployed)")
    ap.add_argument("--reps", type=int, default=None, help="timed calls per measurement (default 10 small, 5 full)")
    ap.add_argument("--json", default=None, help="write every record here")
    ap.add_argument("--rounds", type=int, default=1,
                    help="time eager, dyn and inductor again in this many interleaved rounds (median of the "
                         "rounds' medians): comparisons on a machine whose speed drifts")
    ap.add_argument("--cpu-time", action="store_true",
                    help="steady calls timed in the calling thread's CPU time (time.thread_time), not wall time: "
                         "CPU with OMP_NUM_THREADS=1 only, where every kernel runs on the calling thread; on a "
                         "loaded machine it leaves out the waits for a core")
    a = ap.parse_args(argv)
    if a.cpu_time:
        if a.device != "cpu" or torch.get_num_threads() != 1:
            ap.error("--cpu-time needs --device cpu and OMP_NUM_THREADS=1")
        global CLOCK
        CLOCK = time.thread_time
    names = corpus.NAMES if a.models == "all" else a.models.split(",")
    unknown = [n for n in names if n not in corpus.BUILDERS]
    if unknown:
        ap.error(f"unknown models {unknown}; known: {corpus.NAMES}")
    reps = a.reps or (10 if a.size == "small" else 5)
    backends = [b for b in a.backends.split(",") if b]
    records = []
    print(f"# torch {torch.__version__}, {platform.python_version()}, device {a.device}"
          f"{' (' + torch.cuda.get_device_name() + ')' if a.device == 'cuda' else ''}, size {a.size}, "
          f"{a.dtype}, {torch.get_num_threads()} threads, {'thread CPU time' if a.cpu_time else 'wall time'}, "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)
    for name in names:
        for mode in a.modes.split(","):
            t = time.perf_counter()
            rec = guarded("case", run_case, name, mode, a.device, a.size,
                          [_BACKENDS[b] for b in backends],
                          not a.no_inductor, reps, a.rounds,
                          None if a.dtype == "float32" else getattr(torch, a.dtype), a.inductor_graphs)
            if "stage" in rec:
                rec.update(model=name, mode=mode, eager={})
            rec["wall_s"] = time.perf_counter() - t
            records.append(rec)
            print(f"  {name} {mode}: {rec['wall_s']:.1f}s", flush=True)
            if a.json:
                with open(a.json, "w") as f:
                    json.dump(records, f, indent=1, default=str)
    print(table(records))
    print("\nbreaks:\n" + reasons(records))
    return records


if __name__ == "__main__":
    main()
