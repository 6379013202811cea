#!/usr/bin/env python3
"""A mutation fuzzer for dyn-opt: takes the lit tests' inputs, mutates them (element types, dims, `?`
dims, attributes, array forms, operand and op swaps, constants) and runs dyn's pipelines on each mutant.

Every run ends in one of:
  ok           the pipeline succeeded (with MLIR's default -verify-each: every pass's output verified);
  rejected     dyn-opt refused the input with a located diagnostic (the parser, a verifier or a pass);
and, as findings (exit status 1):
  crash        a signal, an abort, "PLEASE submit a bug report", "LLVM ERROR";
  invalid-ir   a pass turned valid input into IR the verifier rejects: the run fails with -verify-each
               but its diagnostics differ (or it succeeds, or crashes) with -verify-each=0;
  silent       dyn-opt failed without an error diagnostic, or with one that has no source location;
  timeout      the run took longer than --timeout seconds.

Cases are deterministic: case i of --seed S always mutates the same input the same way, so a finding is
reproduced by `--case i` (and written to --save-dir with its command line). docs/fuzzing.md has the
long run and its results."""
import argparse
import collections
import concurrent.futures
import json
import os
import random
import re
import subprocess
import sys
import time

ELEMENT_TYPES = ["f16", "bf16", "f32", "f64", "i1", "i8", "i16", "i32", "i64", "ui8", "index"] * 3 + [
    "i3", "i128", "f80", "f128", "tf32", "f8E4M3FN", "ui16", "si8"]  # types no lowering handles, rarely
SIZES = [0, 1, 1, 2, 3, 4, 5, 7, 8, 8, 16, 31, 32, 33, 64, 100, 127, 128, 256, 1000, 1024, 4096, 65536]
ARRAY_ELEMENT_TYPES = ["i64", "i64", "i32", "i16", "i8", "i1", "index", "f32", "none", "i3", "ui64",
                       "si64", "tensor<2xi64>", "!llvm.ptr"]
SMALL_INTS = [-3, -1, 0, 1, 2, 3, 4, 7, 64, 1 << 31, (1 << 63) - 1]

# Pipelines by the level of IR they start from; each entry is one dyn-opt flag list.
PIPELINES = {
    "graph": [["-dyn-graph-to-prim"], ["-dyn-cpu"], ["-dyn-convert-graph-to-prim"],
              ["-dyn-graph-to-prim", "-dyn-prim-to-loop"],
              ["-dyn-graph-to-prim", "-dyn-prim-to-loop", "-dyn-loop-to-ptx"],
              # the compiler's CUDA pipeline, for the default target and another one
              ["-dyn-gpu"], ["-dyn-gpu=chip=sm_80 sm-count=108 threads-per-sm=2048"]],
    "prim": [["-dyn-prim-to-loop"], ["-dyn-fuse-prim-to-loop"],
             ["-dyn-prim-to-loop", "-dyn-loop-to-llvm-cpu"], ["-dyn-prim-to-loop", "-dyn-loop-to-ptx"],
             ["-dyn-prim-to-loop-gpu", "-dyn-loop-to-ptx"]],
    "loop": [["-dyn-loop-to-llvm-cpu"], ["-dyn-loop-to-ptx"], ["-dyn-convert-loop-to-scf"],
             ["-dyn-convert-loop-to-gpu"], ["-dyn-convert-loop-to-gpu=sm-count=8"], ["-dyn-approximate-math"]],
    "any": [["-canonicalize"], ["-dyn-cpu"], ["-dyn-loop-to-ptx"], ["-dyn-loop-to-llvm-cpu"]],
}

CRASH_MARKERS = ("PLEASE submit a bug report", "Stack dump:", "LLVM ERROR", "Assertion `",
                 "UNREACHABLE executed")


# -- seeds ------------------------------------------------------------------------------------------

def split_chunks(text):
    """The cases of a lit test file (split at `// -----`), without comment lines."""
    chunks = []
    for chunk in re.split(r"^// -----\s*$", text, flags=re.M):
        lines = [l for l in chunk.splitlines() if not l.lstrip().startswith("//")]
        body = "\n".join(lines).strip()
        if body:
            chunks.append(body + "\n")
    return chunks


def collect_seeds(test_dir):
    seeds = []
    for root, dirs, files in os.walk(test_dir):
        dirs[:] = sorted(d for d in dirs if d not in ("python", "Inputs", "Plugin", "fuzz"))
        for name in sorted(files):
            if name.endswith(".mlir"):
                with open(os.path.join(root, name)) as f:
                    seeds += split_chunks(f.read())
    return seeds


def generic_forms(dyn_opt, seeds, timeout):
    """The valid seeds printed in generic form: attributes appear as `array<i64: ...>`, enums and
    segment sizes as attributes, so mutations reach the attribute parser and the ops' builders."""
    out = []
    for s in seeds:
        try:
            r = subprocess.run([dyn_opt, "-", "-mlir-print-op-generic", "-o", "-"], input=s, text=True,
                               capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            continue
        if r.returncode == 0 and r.stdout.strip():
            out.append(r.stdout)
    return out


def op_families(src_root):
    """Op mnemonics grouped by TableGen family class (Graph_UnaryOp, Prim_ReduceOp, ...), read from the
    dialects' .td files so that ops added later are swapped too."""
    families = collections.defaultdict(set)
    inc = os.path.join(src_root, "include", "dyn", "Dialect")
    for dialect in sorted(os.listdir(inc)) if os.path.isdir(inc) else []:
        ir = os.path.join(inc, dialect, "IR")
        for name in sorted(os.listdir(ir)) if os.path.isdir(ir) else []:
            if not name.endswith(".td"):
                continue
            with open(os.path.join(ir, name)) as f:
                td = f.read()
            prefix = dialect.lower()
            for cls, mnemonic in re.findall(r"def \w+\s*:\s*(\w+)<\"([a-z_0-9]+)\"", td):
                families[cls].add(f"{prefix}.{mnemonic}")
            for body, cls in re.findall(r"foreach op = \[(.*?)\] in\s*def \w+ # op\[0\] # Op\s*:\s*(\w+)<",
                                        td, flags=re.S):
                for mnemonic in re.findall(r"\[\"\w+\",\s*\"([a-z_0-9]+)\"", body):
                    families[cls].add(f"{prefix}.{mnemonic}")
    # Upstream ops that appear in the loop-level seeds.
    families["arith_float"] = {"arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.maximumf",
                               "arith.minimumf", "arith.remf"}
    families["arith_int"] = {"arith.addi", "arith.subi", "arith.muli", "arith.divsi", "arith.maxsi",
                             "arith.minsi", "arith.remsi", "arith.andi", "arith.ori"}
    families["math_unary"] = {"math.exp", "math.log", "math.sin", "math.cos", "math.tanh", "math.sqrt",
                              "math.rsqrt", "math.erf", "math.absf", "math.floor", "math.ceil"}
    families["reduce_kind"] = {"loop.reduce add", "loop.reduce mul", "loop.reduce max", "loop.reduce min"}
    # Ops whose custom syntax matches another family's (`$input : type -> type`, `$input : type`).
    families["Graph_UnaryOp"] |= {"graph.reshape", "graph.expand", "graph.convert"}
    families["Prim_UnaryOp"] |= {"prim.convert_element_type", "prim.reshape"}
    # The base classes (Graph_Op, ...) hold ops of unrelated syntax: swapping them only tests the parser.
    return {k: sorted(v) for k, v in families.items() if len(v) > 1 and not re.fullmatch(r"[A-Z][a-z]+_(Op|IterOp)", k)}


# -- mutations --------------------------------------------------------------------------------------

SHAPED = re.compile(r"\b(tensor|memref|vector)<((?:(?:\d+|\?)x)*)([a-z][a-z0-9]*)")
ELT = re.compile(r"(?<![\w.%#@^!])(" + "|".join(sorted(set(ELEMENT_TYPES), key=len, reverse=True))
                 + r")(?![\w.])")
INT = re.compile(r"(?<![\w.%#@^!\-])(\d+)(?![\w.])")
SSA_PAIR = re.compile(r"(%[\w.#]+), (%[\w.#]+)")
ARRAY = re.compile(r"array<([^:>]+)(:?)")
LIST_ATTR = re.compile(r"\b(dims|permutation|start|stride|batch|contract|domain)( )(\[[-\d, ]*\])")
SCALAR_ATTR = re.compile(r"\b(dim|start|end|step)( )(-?\d+)\b")
FLOAT_LIT = re.compile(r"(?<![\w.])-?\d+\.\d+(?:e[-+]?\d+)?")


def replace_match(text, m, group, new):
    return text[:m.start(group)] + new + text[m.end(group):]


def pick(rng, pattern, text):
    ms = list(pattern.finditer(text))
    return rng.choice(ms) if ms else None


def mut_elt_one(rng, text, fam):
    m = pick(rng, ELT, text)
    return m and replace_match(text, m, 1, rng.choice(ELEMENT_TYPES))


def mut_elt_all(rng, text, fam):
    present = sorted(set(ELT.findall(text)))
    if not present:
        return None
    old, new = rng.choice(present), rng.choice(ELEMENT_TYPES)
    return ELT.sub(lambda m: new if m.group(1) == old else m.group(1), text)


def _shape_dims(text):
    """(start, end) of every dim of a tensor/memref/vector shape."""
    spans = []
    for m in SHAPED.finditer(text):
        pos = m.start(2)
        for d in m.group(2).split("x")[:-1]:
            spans.append((pos, pos + len(d)))
            pos += len(d) + 1
    return spans


def mut_dim_one(rng, text, fam):
    spans = _shape_dims(text)
    if not spans:
        return None
    a, b = rng.choice(spans)
    return text[:a] + str(rng.choice(SIZES + ["?"])) + text[b:]


def mut_dim_all(rng, text, fam):
    """One size replaced everywhere it is a number (shapes, domains, attributes): keeps shapes
    consistent, so the mutant often verifies and reaches the passes with another geometry."""
    values = sorted({text[a:b] for a, b in _shape_dims(text) if text[a:b] != "?"})
    if not values:
        return None
    old, new = rng.choice(values), str(rng.choice(SIZES))
    return INT.sub(lambda m: new if m.group(1) == old else m.group(1), text)


def mut_dynamic(rng, text, fam):
    """A `?` dim: one, or one size everywhere in shapes."""
    spans = _shape_dims(text)
    if not spans:
        return None
    if rng.random() < 0.3:
        a, b = rng.choice(spans)
        return text[:a] + "?" + text[b:]
    old = text[slice(*rng.choice(spans))]
    out, last = [], 0
    for a, b in spans:
        if text[a:b] == old:
            out += [text[last:a], "?"]
            last = b
    return "".join(out) + text[last:]


def mut_type_all(rng, text, fam):
    """One shaped type changed everywhere it is written (element type, a size, a `?`, the rank): the
    mutant's values keep one type, so it parses and reaches the verifiers and passes."""
    types = sorted({m.group(0) for m in re.finditer(r"\b(?:tensor|memref|vector)<[^<>]*>", text)})
    if not types:
        return None
    old = rng.choice(types)
    m = SHAPED.match(old)
    if not m:
        return None
    dims, elt = m.group(2).split("x")[:-1], m.group(3)
    r = rng.random()
    if r < 0.3:
        elt = rng.choice(ELEMENT_TYPES)
    elif r < 0.55 and dims:
        dims[rng.randrange(len(dims))] = "?"
    elif r < 0.8 and dims:
        dims[rng.randrange(len(dims))] = str(rng.choice(SIZES))
    elif dims and rng.random() < 0.5:
        dims.pop(rng.randrange(len(dims)))
    else:
        dims.insert(rng.randrange(len(dims) + 1), str(rng.choice([1, 1, 2, 3])))
    new = old[:m.start(2)] + "".join(d + "x" for d in dims) + elt + old[m.end(3):]
    return text.replace(old, new)


def mut_rank(rng, text, fam):
    m = pick(rng, SHAPED, text)
    if not m:
        return None
    dims = m.group(2).split("x")[:-1]
    if dims and rng.random() < 0.5:
        dims.pop(rng.randrange(len(dims)))
    else:
        dims.insert(rng.randrange(len(dims) + 1), str(rng.choice([1, 1, 2, 3])))
    return replace_match(text, m, 2, "".join(d + "x" for d in dims))


def mut_list_attr(rng, text, fam):
    m = pick(rng, LIST_ATTR, text)
    if not m:
        return None
    nums = re.findall(r"-?\d+", m.group(3))
    choice = rng.random()
    if choice < 0.3 and nums:
        nums[rng.randrange(len(nums))] = str(rng.choice(SMALL_INTS))
    elif choice < 0.5:
        nums.append(str(rng.choice(SMALL_INTS[:6])))
    elif choice < 0.65 and nums:
        nums.pop(rng.randrange(len(nums)))
    elif choice < 0.8:
        rng.shuffle(nums)
    else:  # the same list as a dense array of another element type
        t = rng.choice(ARRAY_ELEMENT_TYPES)
        return replace_match(text, m, 3, f"array<{t}: {', '.join(nums)}>" if nums else f"array<{t}>")
    return replace_match(text, m, 3, "[" + ", ".join(nums) + "]")


def mut_scalar_attr(rng, text, fam):
    m = pick(rng, SCALAR_ATTR, text)
    return m and replace_match(text, m, 3, str(rng.choice(SMALL_INTS)))


def mut_array(rng, text, fam):
    """`array<T: ...>` (generic form) with another element type or other values."""
    m = pick(rng, ARRAY, text)
    if not m:
        return None
    if rng.random() < 0.6:
        return replace_match(text, m, 1, rng.choice(ARRAY_ELEMENT_TYPES))
    end = text.find(">", m.end())
    vals = [str(rng.choice(SMALL_INTS)) for _ in range(rng.randrange(4))]
    return text[:m.start()] + f"array<{m.group(1)}" + (": " + ", ".join(vals) if vals else "") + text[end:]


def mut_operand_swap(rng, text, fam):
    m = pick(rng, SSA_PAIR, text)
    return m and text[:m.start()] + f"{m.group(2)}, {m.group(1)}" + text[m.end():]


def mut_operand_replace(rng, text, fam):
    """One use of a value replaced by another value defined in the case (often of another type)."""
    names = sorted(set(re.findall(r"(%[\w.]+)(?=\s*[=:,)\]])", text)))
    uses = [m for m in re.finditer(r"(?<=[ \[(])%[\w.]+(?=[,\]) ])", text)]
    if len(names) < 2 or not uses:
        return None
    m = rng.choice(uses)
    return text[:m.start()] + rng.choice(names) + text[m.end():]


def mut_op_swap(rng, text, fam):
    names = [n for ns in fam.values() for n in ns]
    found = [m for m in re.finditer(r"\b(" + "|".join(re.escape(n) for n in names) + r")\b", text)]
    if not found:
        return None
    m = rng.choice(found)
    family = [ns for ns in fam.values() if m.group(1) in ns]
    return replace_match(text, m, 1, rng.choice(rng.choice(family)))


def mut_constant(rng, text, fam):
    ms = list(FLOAT_LIT.finditer(text)) + list(re.finditer(r"(?<=dense<)(-?\d+)(?=>)", text))
    if not ms:
        return None
    m = rng.choice(ms)
    new = rng.choice(["0.0", "-0.0", "1.0", "-1.0", "2.0", "0.5", "-0.5", "3.0", "1.0e+38", "0", "-1", "7",
                      "0x7FC00000", "true"])
    return text[:m.start()] + new + text[m.end():]


def mut_keepdim(rng, text, fam):
    if " keepdim" in text and rng.random() < 0.6:
        return text.replace(" keepdim", "", 1)
    m = pick(rng, re.compile(r"dims \[[-\d, ]*\]()"), text)
    return m and replace_match(text, m, 1, " keepdim")


def mut_line(rng, text, fam):
    lines = text.splitlines(True)
    body = [i for i, l in enumerate(lines) if "=" in l or l.strip().startswith(("loop.", "graph.", "prim."))]
    if not body:
        return None
    i = rng.choice(body)
    if rng.random() < 0.5:
        del lines[i]
    else:
        lines.insert(i, lines[i])
    return "".join(lines)


MUTATIONS = [  # (weight, mutation)
    (3, mut_elt_one), (6, mut_elt_all), (2, mut_dim_one), (10, mut_dim_all), (4, mut_dynamic),
    (16, mut_type_all), (2, mut_rank), (6, mut_list_attr), (4, mut_scalar_attr), (6, mut_array), (4, mut_operand_swap),
    (3, mut_operand_replace), (10, mut_op_swap), (4, mut_constant), (3, mut_keepdim), (2, mut_line),
]


def level(text):
    if re.search(r"\bgraph\.", text):
        return "graph"
    if re.search(r"\bprim\.", text):
        return "prim"
    return "loop"


def make_case(index, seed, seeds, fam):
    """Case `index`: a seed input, 1-3 mutations, a pipeline; all from one RNG seeded by (seed, index)."""
    rng = random.Random(f"{seed}:{index}")
    text = rng.choice(seeds)
    applied = []
    total = sum(w for w, _ in MUTATIONS)
    for _ in range(rng.choice([1, 1, 2, 2, 3])):
        for _attempt in range(8):
            r, acc = rng.uniform(0, total), 0
            for w, mut in MUTATIONS:
                acc += w
                if r <= acc:
                    break
            new = mut(rng, text, fam)
            if new and new != text:
                text = new
                applied.append(mut.__name__[4:])
                break
    lvl = "any" if rng.random() < 0.1 else level(text)
    return text, applied, rng.choice(PIPELINES[lvl])


# -- running ----------------------------------------------------------------------------------------

def run_opt(dyn_opt, text, flags, timeout, extra=()):
    cmd = [dyn_opt, "-", "-o", "/dev/null", "--mlir-disable-threading", *flags, *extra]
    try:
        r = subprocess.run(cmd, input=text, text=True, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, ""
    return r.returncode, r.stderr


def crashed(rc, err):
    return rc is not None and (rc < 0 or rc >= 128 or any(m in err for m in CRASH_MARKERS))


ERROR_LINE = re.compile(r"^(.*?):?(\d+:\d+)?:? ?error: (.*)$", re.M)


def errors(err):
    return [m.group(0) for m in ERROR_LINE.finditer(err)]


def classify(dyn_opt, text, flags, timeout):
    """(outcome, detail) of one run; see the module docstring."""
    rc, err = run_opt(dyn_opt, text, flags, timeout)
    if rc is None:
        return "timeout", f"over {timeout}s"
    if crashed(rc, err):
        return "crash", err
    if rc == 0:
        return "ok", ""
    errs = errors(err)
    if not errs:
        return "silent", err or f"exit status {rc}, no diagnostic"
    # Did a pass leave invalid IR? Without verification between passes the same input either passes,
    # crashes, or fails with other diagnostics (a later pass tripping over it).
    rc2, err2 = run_opt(dyn_opt, text, flags, timeout, ("-verify-each=0",))
    if rc2 is not None and (rc2 == 0 or crashed(rc2, err2) or errors(err2) != errs):
        return "invalid-ir", err
    if any(re.match(r"^(<unknown>|loc\(unknown\))", e) or ":" not in e.split("error:")[0] for e in errs):
        return "silent", "diagnostic without a location: " + errs[0]
    return "rejected", errs[0]


def signature(outcome, detail):
    """What identifies a finding across cases: the first error message or the innermost dyn frame."""
    if outcome == "crash":
        frames = re.findall(r"#\d+ 0x[0-9a-f]+ (\S.*?)(?: \(|$)", detail, flags=re.M)
        frames = [f for f in frames if not f.startswith(("llvm::sys::", "(/lib", "/lib", "0x"))]
        msg = re.search(r"(LLVM ERROR: .*|Assertion `.*|UNREACHABLE.*)", detail)
        return "crash: " + (msg.group(1) if msg else " < ".join(f[:80] for f in frames[:3]) or "signal")
    first = errors(detail)[0] if errors(detail) else detail.strip().splitlines()[0] if detail.strip() else ""
    msg = first.split("error: ", 1)[-1]
    msg = re.sub(r"%[\w.#]+", "%v", msg)
    msg = re.sub(r"\b(tensor|memref|vector)<[^']*>", r"\1<..>", msg)
    msg = re.sub(r"\d+", "N", msg)
    return f"{outcome}: {msg[:160]}"


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    src_root = os.path.dirname(os.path.dirname(here))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--opt", default=os.path.join(src_root, "build", "bin", "dyn-opt"))
    p.add_argument("--src-root", default=src_root, help="where test/ and include/ are")
    p.add_argument("--runs", type=int, default=3000, help="number of cases")
    p.add_argument("--max-time", type=float, default=0, help="stop starting cases after this many s")
    p.add_argument("--seed", default="dyn", help="the RNG seed (cases are deterministic per seed)")
    p.add_argument("--case", type=int, action="append", help="run only this case (repeatable)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--timeout", type=float, default=60, help="seconds per dyn-opt run")
    p.add_argument("--save-dir", help="write each finding's input and command here")
    p.add_argument("--json", help="write the summary as JSON here")
    p.add_argument("--print-case", type=int, help="print case N's input and command, run nothing")
    args = p.parse_args(argv)

    seeds = collect_seeds(os.path.join(args.src_root, "test"))
    seeds += generic_forms(args.opt, seeds, args.timeout)
    fam = op_families(args.src_root)
    if args.print_case is not None:
        text, applied, flags = make_case(args.print_case, args.seed, seeds, fam)
        print(f"// mutations: {' '.join(applied)}\n// RUN: dyn-opt %s {' '.join(flags)}\n{text}")
        return 0

    indices = args.case or range(args.runs)
    start = time.monotonic()
    counts = collections.Counter()
    findings = collections.OrderedDict()  # signature -> [case indices]
    done = 0

    def one(i):
        if args.max_time and time.monotonic() - start > args.max_time:
            return i, None, None, None, None
        text, applied, flags = make_case(i, args.seed, seeds, fam)
        outcome, detail = classify(args.opt, text, flags, args.timeout)
        return i, text, applied, flags, (outcome, detail)

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for i, text, applied, flags, res in pool.map(one, indices):
            if res is None:
                continue
            done += 1
            outcome, detail = res
            counts[outcome] += 1
            if outcome in ("ok", "rejected"):
                continue
            sig = signature(outcome, detail)
            first = sig not in findings
            findings.setdefault(sig, []).append(i)
            if first:
                print(f"case {i}: {sig}\n  mutations: {' '.join(applied)}\n  dyn-opt {' '.join(flags)}",
                      file=sys.stderr)
            if args.save_dir:
                os.makedirs(args.save_dir, exist_ok=True)
                with open(os.path.join(args.save_dir, f"case-{i}.mlir"), "w") as f:
                    f.write(f"// {sig}\n// mutations: {' '.join(applied)}\n"
                            f"// RUN: dyn-opt %s {' '.join(flags)}\n{text}")
                    f.write("\n// " + "\n// ".join(detail.strip().splitlines()[:40]) + "\n")

    elapsed = time.monotonic() - start
    nfind = sum(len(v) for v in findings.values())
    print(f"{done} runs in {elapsed:.0f}s (seed {args.seed!r}, {len(seeds)} seed inputs): "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for sig, cases in findings.items():
        print(f"  {len(cases):4d}x {sig}   (cases {', '.join(map(str, cases[:5]))})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": done, "seconds": round(elapsed, 1), "seed": args.seed, "counts": counts,
                       "findings": findings}, f, indent=1)
    return 1 if nfind else 0


if __name__ == "__main__":
    sys.exit(main())
