import sys, torch
sys.path.insert(0, "python"); sys.path.insert(0, "benchmarks")
import dyn, corpus
from torch.profiler import profile, ProfilerActivity
case = corpus.build(sys.argv[1], "full").to("cuda"); m = case.model.eval()
args, kw = case.inputs("eval")
with torch.no_grad():
    c = dyn.compile(m)
    for f, name in ((m, "eager"), (c, "dyn")):
        for _ in range(5): f(*args, **kw)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU]) as p:
            for _ in range(10): f(*args, **kw)
            torch.cuda.synchronize()
        print(name, p.key_averages().table(sort_by="self_cpu_time_total", row_limit=22), flush=True)
