"""Markdown tables from the JSON records in benchmarks/results/, as docs/performance.md shows them.

Two kinds of record: train_step.py's (a list of rows, one per model, with an entry per backend: eager,
dyn, inductor) and ddp_train.py's / generate.py's ({"argv", "torch", "results": [rows]}). Each table
prints the record's own command where it holds one.

Run:  python benchmarks/report.py benchmarks/results/2026-11-29-h200-train.json [more files]
"""
import json
import math
import sys

BACKENDS = ("eager", "dyn", "inductor")


def _ms(v):
    return f"{1e3 * v:.1f}" if isinstance(v, (int, float)) else ""


def _gib(v):
    return f"{v / 2**30:.2f}" if isinstance(v, (int, float)) else ""


def train_table(rows):
    backends = [b for b in BACKENDS if any(b in r for r in rows)]
    head = ["model"] + [f"{b} ms" for b in backends] + [f"{b} x eager" for b in backends[1:]] + \
        [f"{b} peak GiB" for b in backends] + [f"{b} 1st s" for b in backends]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    speedups = {b: [] for b in backends[1:]}
    for r in rows:
        cells = [r["model"]] + [_ms(r.get(b, {}).get("time_s")) for b in backends]
        for b in backends[1:]:
            e, t = r.get("eager", {}).get("time_s"), r.get(b, {}).get("time_s")
            if e and t:
                speedups[b].append(e / t)
                cells.append(f"{e / t:.2f}x")
            else:
                cells.append("")
        cells += [_gib(r.get(b, {}).get("peak_bytes")) for b in backends]
        cells += [f"{r[b]['first_s']:.1f}" if b in r else "" for b in backends]
        out.append("| " + " | ".join(cells) + " |")
    for b, s in speedups.items():
        if s:
            out.append(f"\nGeomean speedup over eager, {b}: {math.exp(sum(map(math.log, s)) / len(s)):.2f}x "
                       f"({len(s)} rows)")
    return "\n".join(out)


def rows_table(record):
    rows = record["results"]
    keys = [k for k in rows[0] if not isinstance(rows[0][k], (list, dict))]
    out = [f"`{' '.join(record.get('argv', []))}` (torch {record.get('torch', '?')})", "",
           "| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for r in rows:
        out.append("| " + " | ".join(f"{r[k]:.3g}" if isinstance(r[k], float) else str(r[k]) for k in keys) + " |")
    return "\n".join(out)


def main(paths):
    for p in paths:
        with open(p) as f:
            record = json.load(f)
        print(f"### {p}\n")
        print(train_table(record) if isinstance(record, list) else rows_table(record))
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
