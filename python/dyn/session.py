"""The Session: everything dyn changes while it runs, in one object. Counters, the compiled functions (so
that reset can empty their caches), the last graphs captured, run-only mode, caches capture keeps across
calls, and the log switches. Constant tables stay in their modules; nothing else is mutable at module
level. `current()` is the default session the API uses; `dyn.reset()` resets it."""
import os
import sys
import weakref

from .ops.metacache import MetaCache


class Session:
    COUNTERS = ("captures", "graph_breaks", "eager_entries", "eager_calls", "backend_calls", "internal_failures",
                "graphs_compiled", "compile_seconds", "graphs", "compiled_graphs", "backward_graphs", "recompiles",
                "cuda_graphs", "cuda_graph_replays", "cuda_graph_misses", "dynamic_entries",
                "dynamic_graphs_compiled", "dynamic_fallbacks", "cuda_graphs_skipped_dynamic")
    EAGER_GRAPHS_KEPT = 256

    def __init__(self):
        self.counters = dict.fromkeys(self.COUNTERS, 0)
        self.counters["compile_seconds"] = 0.0
        self.compiled = weakref.WeakSet()  # compiled functions, each with its cache of entries
        self.last_graphs = []              # the last 16 graphs captured
        self.eager_graphs = []             # GraphRuns of graphs run eagerly (the last EAGER_GRAPHS_KEPT)
        self.eager_call_reasons = {}       # "fn (file:line): why" -> calls run eagerly without an entry
        self.dynamic_fallback_reasons = {}  # "fn (file:line): why" -> captures that specialized their sizes
        self.run_only = 0                  # depth of `with dyn.run():`
        self.eager_ok = {}                 # ops/core.py eager_accepts: eager's answers by dtypes and ranks
        self.metas = MetaCache()           # ops/metacache.py: meta functions' results by operand metadata
        self.autocast_plans = {}           # capture/autocast.py: the casts autocast makes, by op and arguments
        self.resume_origins = {}           # resume code -> (original code, prologue bytes) (capture/resume.py)
        self.code_info = weakref.WeakKeyDictionary()  # code -> its disassembly (capture/interpreter/frame.py)
        self.runners = {}                  # device type -> runner factory added by backends.register_runner
        self.dumped_graphs = 0             # DYN_COMPILE_DEBUG folders written
        self.logs = None                   # set of DYN_LOGS kinds; None: read DYN_LOGS at each event

    def reset(self):
        """Drops every compiled entry (the next call captures again) and zeroes the counters. Registered
        runners stay; resume_origins stays (it only maps resume code back to the code it came from)."""
        for cf in list(self.compiled):
            cf._clear()
        for k in self.counters:
            self.counters[k] = 0
        self.counters["compile_seconds"] = 0.0
        self.last_graphs.clear()
        self.eager_graphs.clear()
        self.eager_call_reasons.clear()
        self.dynamic_fallback_reasons.clear()
        self.eager_ok.clear()
        self.metas.clear()
        self.autocast_plans.clear()

    def count(self, key, n=1):
        self.counters[key] += n

    def add_graph(self, graph):
        self.last_graphs.append(graph)
        del self.last_graphs[:-16]

    def record(self, run):
        """A captured graph and the backend that runs it (capture/reports.py GraphRun)."""
        self.counters["graphs"] += 1
        if run.compiled:
            self.counters["compiled_graphs"] += 1
        if run.eager:
            self.eager_graphs.append(run)
            del self.eager_graphs[:-self.EAGER_GRAPHS_KEPT]
        if run.fallback:
            self.log("fallbacks", f"{run.where}: a graph ({len(run.graph.nodes)} ops) runs {run.backend}: "
                                  f"{run.reason}")

    # -- logs -----------------------------------------------------------------------------------------
    def log_enabled(self, kind):
        kinds = self.logs
        if kinds is None:
            kinds = {k.strip() for k in os.environ.get("DYN_LOGS", "").split(",")}
        return kind in kinds or "all" in kinds

    def log(self, kind, msg):
        """DYN_LOGS=graph_breaks,recompiles,guards,fallbacks,dynamic (or all): one line per event on stderr."""
        if self.log_enabled(kind):
            print(f"[dyn:{kind}] {msg}", file=sys.stderr)


_default = Session()


def current():
    """The session dyn.compile, dyn.reset and the stats use."""
    return _default
