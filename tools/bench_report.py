#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turns benchmark JSON into the tables of docs/benchmarks.md.

Reads the output of benchmarks/clzero_bench (Google Benchmark JSON) and of
benchmarks/cuda/cuda_zero_copy (the same shape), kept in docs/bench/:

    ci-pocl.json       clzero_bench with PoCL on the 2-core CI machine
    h200-nvidia.json   clzero_bench with NVIDIA's OpenCL on the H200 machine
    h200-pocl.json     clzero_bench with PoCL on the H200 machine's CPU
    h200-cuda.json     cuda_zero_copy on the H200

and rewrites every generated block of docs/benchmarks.md and docs/policies.md
(the numbers behind its advice): the text
between <!-- bench_report:begin NAME --> and <!-- bench_report:end NAME -->,
the same way every time for the same JSON. It refuses (exit status 1, naming
the document and the block) to write or pass a document in which an expected
block is missing, appears twice or has mismatched markers, or which would come
out implausibly large or repetitive; the text outside the markers is copied
byte for byte. It also draws docs/bench/h200.png (and
ci-pocl.png): time per inference against size, log-log, one line per strategy
(needs matplotlib). It prints the verdict on each of the project's targets.

    tools/bench_report.py                  regenerate docs/benchmarks.md and the plots
    tools/bench_report.py --import DIR     first copy bench-{nvidia,pocl,cuda}.json from
                                           a device-logs folder or its logs.tgz to docs/bench/h200-*.json
    tools/bench_report.py --check          exit 1 unless every document's blocks are what the JSON gives
    tools/bench_report.py --print F.json   print the tables of one file (no files written)

Every time is the median per inference: each benchmark repetition reports the
median of its own inferences (counter median_us), and the report takes the
median over the repetitions.
"""

import argparse
import io
import json
import os
import re
import shutil
import statistics
import sys
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
BENCH_DIR = os.path.join(ROOT, "docs", "bench")

SIZES = [4, 4096, 256 * 1024, 4 * 1024 * 1024, 64 * 1024 * 1024]

# Display order and names.
OPENCL_STRATEGIES = [
    ("clzero.Auto", "clzero Auto"),
    ("clzero.Persistent.alloc_host_ptr", "clzero Persistent (alloc_host_ptr)"),
    ("clzero.Persistent.use_host_ptr", "clzero Persistent (use_host_ptr)"),
    ("clzero.Persistent.nv_host_pinned", "clzero Persistent (nv_host_pinned)"),
    ("clzero.MapPerInference", "clzero MapPerInference"),
    ("clzero.CopyToPinned", "clzero CopyToPinned"),
    ("clzero.Svm.fine", "clzero Svm (fine)"),
    ("clzero.Svm.coarse", "clzero Svm (coarse)"),
    ("clzero.UnifiedHost", "clzero UnifiedHost"),
    ("raw.map_unmap", "raw map/read/unmap per inference (MNN 2019, TNN)"),
    ("raw.read_pinned", "raw ReadBuffer into pinned memory"),
    ("raw.read_pageable", "raw ReadBuffer into pageable memory (MNN today)"),
    ("floor.kernel_finish", "floor: kernel + clFinish"),
    ("floor.host_read", "floor: host read"),
]
CUDA_STRATEGIES = [
    ("cuda.zero_copy", "CUDA zero copy (cudaHostAllocMapped)"),
    ("cuda.memcpy_pinned", "CUDA cudaMemcpyAsync into pinned memory"),
    ("cuda.memcpy_pageable", "CUDA cudaMemcpyAsync into pageable memory"),
    ("floor.kernel_sync", "floor: kernel + stream sync"),
    ("floor.host_read", "floor: host read"),
]
BASELINES = [("raw.map_unmap", "map/unmap"), ("raw.read_pinned", "ReadBuffer pinned"),
             ("raw.read_pageable", "ReadBuffer pageable")]

RUNS = [
    # key, file, title, kind
    ("ci-pocl", "ci-pocl.json", "PoCL on the 2-core CI machine", "opencl"),
    ("h200-nvidia", "h200-nvidia.json", "NVIDIA H200, NVIDIA OpenCL", "opencl"),
    ("h200-pocl", "h200-pocl.json", "PoCL on the H200 machine's CPU", "opencl"),
    ("h200-cuda", "h200-cuda.json", "CUDA on the H200", "cuda"),
]

OVERHEAD_PERCENT = 2.0   # wrapper overhead target: <= 2 % ...
OVERHEAD_US = 0.3        # ... or <= 0.3 us, whichever is larger


# ---------------------------------------------------------------- reading

class Run:
    """One JSON file: per (group, strategy, bytes) the repetitions' counters."""

    def __init__(self, key, title, kind, data):
        self.key, self.title, self.kind = key, title, kind
        self.context = data.get("context", {})
        self.rows = {}      # (group, strategy, bytes) -> list of dicts (one per repetition)
        self.errors = {}    # (group, strategy, bytes) -> message
        aggregates = {}
        for b in data.get("benchmarks", []):
            name = b.get("run_name") or b.get("name", "")
            parts = name.split("/")
            if len(parts) < 3 or not parts[2].isdigit():
                continue
            k = (parts[0], parts[1], int(parts[2]))
            if b.get("error_occurred"):
                self.errors[k] = b.get("error_message", "error")
                continue
            if b.get("run_type", "iteration") == "iteration":
                self.rows.setdefault(k, []).append(b)
            elif b.get("aggregate_name") == "median":
                aggregates[k] = b
        for k, b in aggregates.items():   # --benchmark_report_aggregates_only
            self.rows.setdefault(k, [b])

    def values(self, group, strategy, size, counter="median_us"):
        """The counter of every repetition."""
        return [r[counter] for r in self.rows.get((group, strategy, size), []) if counter in r]

    def value(self, group, strategy, size, counter="median_us"):
        reps = self.values(group, strategy, size, counter)
        return statistics.median(reps) if reps else None

    def has(self, strategy):
        return any(k[1] == strategy for k in list(self.rows) + list(self.errors))

    def error(self, group, strategy, size):
        return self.errors.get((group, strategy, size))

    def sizes(self):
        return [s for s in SIZES if any(k[2] == s for k in self.rows)]

    def floor(self, size):
        kernel = self.value("infer", "floor.kernel_sync" if self.kind == "cuda" else "floor.kernel_finish", size)
        read = self.value("infer", "floor.host_read", size)
        return kernel + read if kernel is not None and read is not None else None

    def repetitions(self):
        counts = [len(v) for v in self.rows.values()]
        return max(counts) if counts else 0


class ReportError(Exception):
    """A JSON file or a document the report cannot be trusted with; the message names which and why."""


def parse_json(path):
    """The benchmark JSON of one run, or ReportError naming the file and what is wrong with it."""
    rel = os.path.relpath(path, ROOT)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except json.JSONDecodeError as e:
        raise ReportError("%s is not valid JSON (line %d, column %d: %s)" % (rel, e.lineno, e.colno, e.msg))
    except (OSError, UnicodeDecodeError) as e:
        raise ReportError("%s cannot be read: %s" % (rel, e))
    if not isinstance(data, dict) or not isinstance(data.get("context"), dict) or \
            not isinstance(data.get("benchmarks"), list):
        raise ReportError("%s is not Google Benchmark JSON: expected an object with \"context\" (an object) and "
                          "\"benchmarks\" (a list)" % rel)
    usable = 0
    for i, b in enumerate(data["benchmarks"]):
        if not isinstance(b, dict) or not isinstance(b.get("name"), str):
            raise ReportError("%s: benchmarks[%d] has no \"name\"" % (rel, i))
        parts = (b.get("run_name") or b["name"]).split("/")
        if len(parts) < 3 or not parts[2].isdigit():
            continue
        usable += 1
        if b.get("error_occurred") or b.get("run_type", "iteration") != "iteration":
            continue
        if parts[0] == "infer" and not isinstance(b.get("median_us"), (int, float)):
            raise ReportError("%s: %s has no numeric counter \"median_us\"" % (rel, b["name"]))
    if usable == 0:
        raise ReportError("%s holds no benchmark named GROUP/STRATEGY/BYTES" % rel)
    return data


def load(key, path, title, kind):
    return Run(key, title, kind, parse_json(path))


def load_all(bench_dir):
    runs = {}
    for key, file, title, kind in RUNS:
        path = os.path.join(bench_dir, file)
        if os.path.exists(path):
            runs[key] = load(key, path, title, kind)
    return runs


# ---------------------------------------------------------------- formatting

def size_name(b):
    if b >= 1 << 20:
        return "%d MiB" % (b >> 20)
    if b >= 1 << 10:
        return "%d KiB" % (b >> 10)
    return "%d B" % b


def us(v):
    if v is None:
        return "–"
    if v < 10:
        return "%.2f" % v
    if v < 100:
        return "%.1f" % v
    return "%.0f" % v


def ratio(v):
    return "–" if v is None else "%.2f×" % v


def table(header, rows, numbers=True):
    """A markdown table; columns after the first are right-aligned when they hold numbers."""
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join(["---"] + ["--:" if numbers else "---"] * (len(header) - 1)) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def strategies_of(run):
    catalogue = CUDA_STRATEGIES if run.kind == "cuda" else OPENCL_STRATEGIES
    return [(s, label) for s, label in catalogue if run.has(s)]


def cell(run, strategy, size, fn):
    err = run.error("infer", strategy, size)
    if err:
        return "**failed**"
    return fn(run.value("infer", strategy, size))


def context_lines(run):
    c = run.context
    lines = []
    if run.kind == "cuda":
        lines.append("Device: %s, %s; CPU: %s." % (c.get("clzero.device", "?"), c.get("clzero.driver_version", "?"),
                                                    c.get("clzero.cpu", "?")))
    else:
        lines.append("Device: %s (%s), driver %s; platform %s; CPU: %s, %s logical CPUs." % (
            c.get("clzero.device", "?"), c.get("clzero.device_version", "?"), c.get("clzero.driver_version", "?"),
            c.get("clzero.platform_version", "?").strip(), c.get("clzero.cpu", "?"), c.get("num_cpus", "?")))
    date = c.get("date", "")[:10]
    load_avg = c.get("load_avg")
    lines.append("Run %s; %d repetitions per benchmark%s." % (
        date or "(undated)", run.repetitions(),
        "; load average at start %.2f" % load_avg[0] if load_avg else ""))
    if run.kind != "cuda":
        picks = {}
        for s in SIZES:
            v = c.get("clzero.auto/%d" % s)
            if v:
                picks.setdefault(v.split(":")[0], []).append(size_name(s))
        if picks:
            lines.append("Auto picks " + "; ".join(
                "%s at %s" % (label, ", ".join(sizes)) for label, sizes in sorted(picks.items())) + ".")
        skipped = c.get("clzero.skipped")
        if skipped and skipped != "none":
            lines.append("Not offered by this device, so not measured: " + skipped + ".")
    return lines


def time_table(run, counter="median_us", title="median µs per inference"):
    sizes = run.sizes()
    rows = []
    for s, label in strategies_of(run):
        rows.append([label] + [cell(run, s, b, lambda v, s=s, b=b: us(run.value("infer", s, b, counter)))
                               for b in sizes])
    if counter == "median_us":
        rows.append(["**floor: kernel + sync + host read**"] + ["**%s**" % us(run.floor(b)) for b in sizes])
    return table([title] + [size_name(b) for b in sizes], rows)


def floor_ratio_table(run):
    sizes = run.sizes()
    rows = []
    for s, label in strategies_of(run):
        if s.startswith("floor."):
            continue
        cells = []
        for b in sizes:
            v, floor = run.value("infer", s, b), run.floor(b)
            cells.append("**failed**" if run.error("infer", s, b) else ratio(v / floor if v and floor else None))
        rows.append([label] + cells)
    return table(["× the floor"] + [size_name(b) for b in sizes], rows)


def speedup_table(run):
    sizes = run.sizes()
    present = [(s, name) for s, name in BASELINES if run.has(s)]
    rows = []
    for s, label in strategies_of(run):
        if not s.startswith("clzero."):
            continue
        cells = []
        for b in sizes:
            mine = run.value("infer", s, b)
            parts = []
            for base, _ in present:
                other = run.value("infer", base, b)
                parts.append(ratio(other / mine) if mine and other else "–")
            cells.append(" / ".join(parts))
        rows.append([label] + cells)
    legend = " / ".join(name for _, name in present)
    return table(["speed-up over " + legend] + [size_name(b) for b in sizes], rows)


def overhead_ok(diff_us, raw_us):
    return diff_us <= max(OVERHEAD_PERCENT / 100.0 * raw_us, OVERHEAD_US)


def overhead_of(run, s, b):
    """(clzero median, raw median, paired shift) in µs, or None."""
    c = run.value("overhead", s, b, "clzero_us")
    r = run.value("overhead", s, b, "raw_us")
    d = run.value("overhead", s, b, "diff_us")
    if c is None or r is None or d is None or r <= 0:
        return None
    return c, r, d


def overhead_table(run):
    sizes = [b for b in run.sizes() if any(k[0] == "overhead" and k[2] == b for k in run.rows)]
    rows = []
    for s, label in strategies_of(run):
        if not any(k[0] == "overhead" and k[1] == s for k in list(run.rows) + list(run.errors)):
            continue
        cells = []
        for b in sizes:
            if run.error("overhead", s, b):
                cells.append("**failed**")
                continue
            o = overhead_of(run, s, b)
            if o is None:
                cells.append("–")
                continue
            c, r, d = o
            cells.append("%+.2f µs (%s)%s" % (d, ratio((r + d) / r), "" if overhead_ok(d, r) else " ✗"))
        rows.append([label] + cells)
    return table(["clzero − raw, paired median"] + [size_name(b) for b in sizes], rows)


def memory_table(run):
    sizes = run.sizes()
    big = [b for b in sizes if b >= 4 << 20]
    rows = []
    for s, label in strategies_of(run):
        news = [run.value("infer", s, b, "new_per_inference") for b in sizes]
        mallocs = [run.value("infer", s, b, "malloc_per_inference") for b in sizes]
        news = [v for v in news if v is not None]
        mallocs = [v for v in mallocs if v is not None]
        faults = [v for v in (run.value("infer", s, b, "faults_per_inference") for b in sizes) if v is not None]

        def span(vals):
            if not vals:
                return "–"
            lo, hi = min(vals), max(vals)
            return "%.1f" % lo if abs(hi - lo) < 0.05 else "%.1f–%.1f" % (lo, hi)

        rss = []
        for b in big:
            v = run.value("infer", s, b, "rss_peak_per_byte")
            rss.append("–" if v is None else "%.2f" % v)
        rows.append([label, span(news), span(mallocs), span(faults)] + rss)
    return table(["strategy", "C++ allocations per inference", "all heap allocations per inference",
                  "page faults per inference"] +
                 ["peak RSS growth ÷ tensor bytes, %s" % size_name(b) for b in big], rows)


# ---------------------------------------------------------------- targets

class Verdict:
    """met, missed (by `shortfall`), or, where the repetitions disagree on it,
    unresolved (`shortfall` then says how far they spread)."""

    def __init__(self, where, target, measured, met, shortfall, unresolved=False):
        self.where, self.target, self.measured, self.met, self.shortfall = where, target, measured, met, shortfall
        self.unresolved = unresolved and not met

    def state(self):
        return "MET" if self.met else "UNRESOLVED" if self.unresolved else "MISSED"

    def text(self):
        if self.met:
            return "met"
        if self.unresolved:
            return "not resolved: %s" % self.shortfall
        return "missed by %s" % self.shortfall


def at_most(where, target, value, limit, fmt=ratio):
    if value is None:
        return Verdict(where, target, "not measured", False, "(no data)")
    return Verdict(where, target, fmt(value), value <= limit, "%.1f%%" % (100.0 * (value / limit - 1)))


def at_least(where, target, value, limit):
    if value is None:
        return Verdict(where, target, "not measured", False, "(no data)")
    return Verdict(where, target, ratio(value), value >= limit, "%.1f%%" % (100.0 * (1 - value / limit)))


def verdicts(runs):
    out = []
    nv = runs.get("h200-nvidia")
    if nv:
        auto, floor, mu = (nv.value("infer", "clzero.Auto", 4096), nv.floor(4096),
                           nv.value("infer", "raw.map_unmap", 4096))
        out.append(at_most("H200, 4 KiB", "Auto ≤ 1.10× the floor (kernel + finish + host read)",
                           auto / floor if auto and floor else None, 1.10))
        out.append(at_least("H200, 4 KiB", "Auto ≥ 1.3× faster than map/unmap per inference",
                            mu / auto if auto and mu else None, 1.3))
        for b in (4 << 20, 64 << 20):
            auto, mu = nv.value("infer", "clzero.Auto", b), nv.value("infer", "raw.map_unmap", b)
            out.append(at_least("H200, %s" % size_name(b), "Auto ≥ 1.3× faster than map/unmap per inference",
                                mu / auto if auto and mu else None, 1.3))
            raws = [v for v in (nv.value("infer", s, b) for s, _ in BASELINES) if v]
            out.append(at_most("H200, %s" % size_name(b), "Auto no slower than the fastest raw baseline",
                               auto / min(raws) if auto and raws else None, 1.0))
        b = 4 << 20
        if engine_sizes(nv, "pipeline"):
            serial, ring = nv.value("pipeline", "serial.Auto", b), nv.value("pipeline", "ring2.Auto", b)
            out.append(at_least("H200, 4 MiB", "TensorRing of 2 ≥ 1.5× the serialized loop's throughput",
                                serial / ring if serial and ring else None, 1.5))
    for key in ("ci-pocl", "h200-pocl"):
        run = runs.get(key)
        if not run:
            continue
        for b in run.sizes():
            auto, floor = run.value("infer", "clzero.Auto", b), run.floor(b)
            out.append(at_most("%s, %s" % (run.title, size_name(b)), "Auto ≤ 1.05× the floor",
                               auto / floor if auto and floor else None, 1.05))
    for key, run in sorted(runs.items()):
        if run.kind == "cuda":
            continue
        pair_target = "%s wrapper overhead ≤ 2%% or ≤ 0.3 µs"
        # A pair that failed, or that lacks its counters, counts as missed:
        # dropped, it would leave "n of n pairs within the target" true.
        for (group, s, b), message in sorted(run.errors.items()):
            if group == "overhead" and (group, s, b) not in run.rows:
                out.append(Verdict("%s, %s" % (run.title, size_name(b)), pair_target % s.replace("clzero.", ""),
                                   "failed: %s" % message, False, "a failed run"))
        for (group, s, b) in sorted(run.rows):
            if group != "overhead":
                continue
            o = overhead_of(run, s, b)
            if o is None:
                out.append(Verdict("%s, %s" % (run.title, size_name(b)), pair_target % s.replace("clzero.", ""),
                                   "no counters", False, "a run without its counters"))
                continue
            c, r, d = o
            allowed = max(OVERHEAD_PERCENT / 100.0 * r, OVERHEAD_US)
            reps = run.values(group, s, b, "diff_us")
            # Some repetitions within the target, the median outside it: the
            # run cannot tell (typically few, long inferences on a busy machine).
            unresolved = min(reps) <= allowed
            spread = ("repetitions range from %+.2f to %+.2f µs against %.2f µs allowed" %
                      (min(reps), max(reps), allowed)) if unresolved else "%.2f µs" % (d - allowed)
            out.append(Verdict("%s, %s" % (run.title, size_name(b)), pair_target % s.replace("clzero.", ""),
                               "%+.2f µs (%s)" % (d, ratio((r + d) / r)), d <= allowed, spread, unresolved))
    return out


def verdict_table(vs):
    rows = [[v.where, v.target, v.measured, v.text()] for v in vs]
    return table(["where", "target", "measured", "verdict"], rows, numbers=False) if rows else "_No measurements yet._"


def verdict_summary(vs):
    """The targets of the issue in full; the overhead pairs summed up per run."""
    main = [v for v in vs if "wrapper overhead" not in v.target]
    overhead = [v for v in vs if "wrapper overhead" in v.target]
    text = verdict_table(main)
    if overhead:
        by_run = {}
        for v in overhead:
            run = v.where.rsplit(",", 1)[0]
            by_run.setdefault(run, []).append(v)
        lines = []
        for run, items in by_run.items():
            def named(vs):
                return ", ".join("%s at %s (%s)" % (v.target.split(" wrapper")[0], v.where.rsplit(", ", 1)[1],
                                                    v.measured) for v in vs)
            missed = [v for v in items if v.state() == "MISSED"]
            unresolved = [v for v in items if v.state() == "UNRESOLVED"]
            lines.append("- Wrapper overhead on %s: %d of %d pairs within the target%s%s." % (
                run, len([v for v in items if v.met]), len(items),
                "; missed: " + named(missed) if missed else "",
                "; not resolved (some repetitions within the target, the median outside): " + named(unresolved)
                if unresolved else ""))
        text += "\n\n" + "\n".join(lines)
    return text


# ---------------------------------------------------------------- engine-shaped

ENGINE_ROWS = {
    "arena": [("one_map.Auto.4_outputs", "separate.Auto.4_outputs", "Auto: 4 outputs in one TensorArena",
               "Auto: 4 separate tensors"),
              ("one_map.MapPerInference.4_outputs", "separate.MapPerInference.4_outputs",
               "MapPerInference: 4 outputs in one TensorArena (1 map)", "MapPerInference: 4 separate tensors (4 maps)")],
    "pipeline": [("ring2.Auto", "serial.Auto", "Auto: TensorRing of 2 (reads i while i+1 runs)", "Auto: serialized"),
                 ("ring3.Auto", "serial.Auto", "Auto: TensorRing of 3", "Auto: serialized"),
                 ("ring2.CopyToPinned", "serial.CopyToPinned", "CopyToPinned: TensorRing of 2",
                  "CopyToPinned: serialized")],
}


def engine_sizes(run, group):
    return sorted({k[2] for k in list(run.rows) + list(run.errors) if k[0] == group})


def engine_table(run, group):
    """Median µs per inference of each pair and the speed-up (pair's baseline ÷ it)."""
    sizes = engine_sizes(run, group)
    if not sizes:
        return None
    rows, seen = [], set()
    for mine, base, mine_label, base_label in ENGINE_ROWS[group]:
        for s, label in ((base, base_label), (mine, mine_label)):
            if s in seen:
                continue
            seen.add(s)
            rows.append([label] + ["**failed**" if run.error(group, s, b) else us(run.value(group, s, b))
                                   for b in sizes])
        cells = []
        for b in sizes:
            m, o = run.value(group, mine, b), run.value(group, base, b)
            cells.append(ratio(o / m) if m and o else "–")
        rows.append(["speed-up: " + mine_label.split(":")[1].strip()] + cells)
    return table(["µs per inference (median)"] + [size_name(b) for b in sizes], rows)


# ---------------------------------------------------------------- blocks

def run_block(run):
    parts = [" ".join(context_lines(run)), "", "Median time per inference, µs:", "", time_table(run),
             "", "The fastest tenth of the inferences (10th percentile), µs: what a strategy costs when nothing "
                 "else gets in its way:", "", time_table(run, "p10_us", "p10 µs per inference")]
    if run.kind == "cuda":
        return "\n".join(parts)
    parts += ["", "Each strategy's time divided by the floor's:", "", floor_ratio_table(run),
              "", "Speed-up of each clzero policy over the ways engines do it (their time ÷ clzero's; above 1 is "
                  "faster):", "", speedup_table(run),
              "", "Wrapper overhead: each policy against its own call sequence in raw OpenCL, alternated inference "
                  "by inference; the median of the paired differences, and the ratio it gives to the raw median "
                  "(✗ where clzero is more than 2% and more than 0.3 µs slower):", "", overhead_table(run),
              "", "Memory, counted over the timed inferences after the warm-up:", "", memory_table(run)]
    arena, pipeline = engine_table(run, "arena"), engine_table(run, "pipeline")
    if arena:
        parts += ["", "Several outputs: one TensorArena (one map or copy for all) against separate tensors; "
                      "4 outputs of a quarter of the size each:", "", arena]
    if pipeline:
        parts += ["", "Pipelining: a TensorRing reads inference i while inference i+1 runs; time per inference "
                      "in steady state (throughput) against the serialized loop:", "", pipeline]
    return "\n".join(parts)


def cuda_comparison(nv, cu):
    sizes = [b for b in SIZES if b in nv.sizes() and b in cu.sizes()]
    rows = []
    pairs = [("clzero.Auto", "cuda.zero_copy", "clzero Auto ÷ CUDA zero copy"),
             ("raw.read_pinned", "cuda.memcpy_pinned", "raw ReadBuffer pinned ÷ CUDA cudaMemcpyAsync pinned")]
    for ocl, cuda, label in pairs:
        cells = []
        for b in sizes:
            a, c = nv.value("infer", ocl, b), cu.value("infer", cuda, b)
            cells.append(ratio(a / c) if a and c else "–")
        rows.append([label] + cells)
    rows.append(["OpenCL floor ÷ CUDA floor"] + [
        ratio(nv.floor(b) / cu.floor(b)) if nv.floor(b) and cu.floor(b) else "–" for b in sizes])
    return table(["OpenCL ÷ CUDA, same GPU"] + [size_name(b) for b in sizes], rows)


def blocks(runs, plots):
    out = {}
    vs = verdicts(runs)
    out["targets"] = verdict_summary(vs)
    out["ci-pocl"] = run_block(runs["ci-pocl"]) if "ci-pocl" in runs else \
        "_No CI run yet: run the commands above and then this script._"
    h200 = []
    for key in ("h200-nvidia", "h200-cuda", "h200-pocl"):
        if key in runs:
            h200 += ["### " + runs[key].title, "", run_block(runs[key]), ""]
    if "h200-nvidia" in runs and "h200-cuda" in runs:
        h200 += ["### OpenCL against CUDA on the H200", "",
                 "From the two runs above: two programs, run minutes apart on a shared machine, whose load moves "
                 "a time by more than OpenCL and CUDA differ. The comparison timed in one process, round by round, "
                 "is under \"OpenCL against CUDA, in the same process\" in the interleaved sequences below.", "",
                 cuda_comparison(runs["h200-nvidia"], runs["h200-cuda"]), ""]
    if "h200" in plots:
        h200 += ["![Time per inference against size on the H200, log-log](bench/h200.png)", ""]
    out["h200"] = "\n".join(h200).strip() if h200 else (
        "_Not measured yet. Once docs/bench/h200-nvidia.json, h200-pocl.json and h200-cuda.json exist "
        "(`tools/bench_report.py --import device-logs`), this section holds, for NVIDIA's OpenCL, PoCL on the "
        "machine's CPU and CUDA: the median time per inference of every strategy at every size, the ratios to the "
        "floor and to each baseline, the wrapper overhead, the memory counters, the comparison with CUDA and a "
        "log-log plot._")
    if "ci-pocl" in plots:
        out["ci-pocl"] += ("\n\n![Time per inference against size with PoCL on the CI machine, log-log]"
                           "(bench/ci-pocl.png)")
    out["policy-evidence"] = policy_evidence(runs)
    return out, vs


def auto_picks(run):
    """'Svm (fine)' or 'Persistent (nv_host_pinned) at 4 B, ...; CopyToPinned at ...': what Auto chose per size."""
    picks = {}
    for b in run.sizes():
        v = run.context.get("clzero.auto/%d" % b)
        if v:
            picks.setdefault(v.split(":")[0], []).append(size_name(b))
    if len(picks) == 1:
        return next(iter(picks))
    return "; ".join("%s at %s" % (label, ", ".join(sizes)) for label, sizes in sorted(picks.items()))


def run_date(run):
    return run.context.get("date", "")[:10] or "undated"


POLICY_ROWS = [s for s, _ in OPENCL_STRATEGIES if s.startswith("clzero.")] + ["raw.map_unmap", "raw.read_pinned"]


def policy_evidence(runs):
    """docs/policies.md's numbers: each policy per device at 4 KiB and 4 MiB, arenas and rings."""
    text = []
    for key in ("h200-nvidia", "h200-pocl", "ci-pocl"):
        run = runs.get(key)
        if not run:
            continue
        sizes = [b for b in (4096, 4 << 20) if b in run.sizes()]
        labels = dict(OPENCL_STRATEGIES)
        rows = [[labels[s]] + [cell(run, s, b, us) for b in sizes] for s in POLICY_ROWS if run.has(s)]
        rows.append(["floor: kernel + clFinish + host read"] + [us(run.floor(b)) for b in sizes])
        text += ["**%s** (run of %s; Auto picks %s), median µs per inference:" % (run.title, run_date(run),
                                                                                 auto_picks(run)),
                 "", table(["policy"] + [size_name(b) for b in sizes], rows), ""]
        for group, what in (("arena", "Several outputs (4 outputs of a quarter of the size each)"),
                            ("pipeline", "Overlapping inferences (time per inference in steady state)")):
            t = engine_table(run, group)
            if t:
                text += ["%s, %s:" % (what, run.title), "", t, ""]
    return "\n".join(text).strip() or "_No committed runs: see [benchmarks.md](benchmarks.md)._"


# Every document with generated blocks, and the blocks each must hold. A block
# is the text between <!-- bench_report:begin NAME --> and
# <!-- bench_report:end NAME -->, each marker on a line of its own; everything
# outside the markers is written by hand and the tool copies it byte for byte.
DOCUMENTS = [
    ("docs/benchmarks.md", ["targets", "ci-pocl", "h200"]),
    ("docs/policies.md", ["policy-evidence"]),
]

# A generated document larger than this, or with a line repeated more often,
# has been damaged (the largest today is benchmarks.md, about 46 KB; its most
# repeated lines are table rules, which are not counted).
MAX_DOCUMENT_BYTES = 512 * 1024
MAX_LINE_REPEATS = 64
TABLE_RULE = re.compile(r"^\|[-:| ]+\|$")

MARKER_LINE = re.compile(r"^<!-- bench_report:(begin|end) ([A-Za-z0-9_.-]+) -->$")


def split_document(text, doc_name, expected):
    """The document as [hand-written text, (name, generated text), hand-written text, ...].

    Raises ReportError unless every expected block appears exactly once, each
    begin marker is followed by its own end marker before any other marker,
    and no other block or malformed marker is present."""
    pieces, hand, block, name = [], [], None, None
    seen = set()
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        bare = line.rstrip("\n")
        m = MARKER_LINE.match(bare)
        if not m:
            if "bench_report:" in bare:
                raise ReportError("%s:%d: malformed marker %r (expected a line of its own: "
                                  "<!-- bench_report:begin NAME --> or <!-- bench_report:end NAME -->)" %
                                  (doc_name, number, bare.strip()[:80]))
            (hand if block is None else block).append(line)
            continue
        kind, marker_name = m.groups()
        if kind == "begin":
            if block is not None:
                raise ReportError("%s:%d: block '%s' begins before block '%s' ends" %
                                  (doc_name, number, marker_name, name))
            if marker_name not in expected:
                raise ReportError("%s:%d: unknown block '%s' (this document holds %s)" %
                                  (doc_name, number, marker_name, ", ".join(expected)))
            if marker_name in seen:
                raise ReportError("%s:%d: block '%s' appears twice" % (doc_name, number, marker_name))
            seen.add(marker_name)
            hand.append(line)
            pieces.append("".join(hand))
            hand, block, name = [], [], marker_name
        else:
            if block is None or marker_name != name:
                raise ReportError("%s:%d: end marker of block '%s' without its begin marker%s" %
                                  (doc_name, number, marker_name, " (block '%s' is open)" % name if name else ""))
            pieces.append((name, "".join(block)))
            hand, block, name = [line], None, None
    if block is not None:
        raise ReportError("%s: block '%s' has no end marker" % (doc_name, name))
    pieces.append("".join(hand))
    missing = [n for n in expected if n not in seen]
    if missing:
        raise ReportError("%s: missing block%s %s (every one of %s must appear exactly once, between "
                          "<!-- bench_report:begin NAME --> and <!-- bench_report:end NAME -->)" %
                          (doc_name, "s" if len(missing) > 1 else "", ", ".join("'%s'" % n for n in missing),
                           ", ".join(expected)))
    return pieces


def sanity_check(text, doc_name):
    """Raises ReportError on a document no generator should produce."""
    size = len(text.encode("utf-8"))
    if size > MAX_DOCUMENT_BYTES:
        raise ReportError("%s would be %d bytes, more than the %d a generated document may have" %
                          (doc_name, size, MAX_DOCUMENT_BYTES))
    counts = {}
    for line in text.split("\n"):
        if line.strip() and not TABLE_RULE.match(line):
            counts[line] = counts.get(line, 0) + 1
    line, most = max(counts.items(), key=lambda kv: kv[1], default=("", 0))
    if most > MAX_LINE_REPEATS:
        raise ReportError("%s would repeat the line %r %d times (at most %d allowed)" %
                          (doc_name, line[:60], most, MAX_LINE_REPEATS))


def render(doc_text, generated, doc_name="docs/benchmarks.md", expected=None):
    """The document with every block replaced by its generated text.

    The hand-written text outside the markers is copied unchanged; the
    generated text is put in by position between the markers, never by
    searching the document for text to replace."""
    expected = list(generated) if expected is None else expected
    for name in expected:
        if name not in generated:
            raise ReportError("%s: no generator for block '%s'" % (doc_name, name))
        if not generated[name].strip():
            raise ReportError("%s: block '%s' would be empty" % (doc_name, name))
    pieces = split_document(doc_text, doc_name, expected)
    out = []
    for piece in pieces:
        if isinstance(piece, tuple):
            out.append(generated[piece[0]].rstrip("\n") + "\n")
        else:
            out.append(piece)
    text = "".join(out)
    # What went in by hand comes out unchanged.
    again = split_document(text, doc_name, expected)
    if [p for p in again if not isinstance(p, tuple)] != [p for p in pieces if not isinstance(p, tuple)]:
        raise ReportError("%s: the hand-written text would change; refusing to write" % doc_name)
    sanity_check(text, doc_name)
    return text


# ---------------------------------------------------------------- plots

def plot(path, series, title):
    """series: list of (label, [(bytes, us)]). Returns False without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench_report: matplotlib not found (pip install matplotlib): %s not drawn" % path, file=sys.stderr)
        return False
    fig, ax = plt.subplots(figsize=(9, 6), dpi=100)
    colours = plt.get_cmap("tab20").colors
    floors = 0
    for i, (label, style, points) in enumerate(series):
        if not points:
            continue
        xs, ys = zip(*points)
        if style == "floor":
            ax.plot(xs, ys, ":", color=("black", "grey")[floors % 2], marker="s", markersize=3, label=label,
                    linewidth=2)
            floors += 1
        else:
            ax.plot(xs, ys, style, color=colours[i % len(colours)], marker="o", markersize=3, label=label,
                    linewidth=1.2)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(SIZES)
    ax.set_xticklabels([size_name(b) for b in SIZES])
    ax.set_xlabel("bytes written by the kernel and read by the host")
    ax.set_ylabel("median time per inference (µs)")
    ax.set_title(title)
    ax.grid(True, which="both", linewidth=0.3)
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)
    return True


def series_of(run, prefix=""):
    """(label, line style, points): clzero solid, raw OpenCL dashed, CUDA
    dash-dotted, the floor dotted black; the floor's two parts are left out."""
    out = []
    for s, label in strategies_of(run):
        if s.startswith("floor."):
            continue
        style = "-" if s.startswith("clzero.") else "-." if s.startswith("cuda.") else "--"
        pts = [(b, run.value("infer", s, b)) for b in run.sizes() if run.value("infer", s, b)]
        out.append((prefix + label, style, pts))
    floor = [(b, run.floor(b)) for b in run.sizes() if run.floor(b)]
    out.append(("CUDA floor: kernel + stream sync + host read" if run.kind == "cuda" else
                prefix + "floor: kernel + clFinish + host read", "floor", floor))
    return out


def draw(runs, bench_dir):
    drawn = set()
    if "h200-nvidia" in runs:
        series = series_of(runs["h200-nvidia"], "OpenCL: ")
        if "h200-cuda" in runs:
            series += series_of(runs["h200-cuda"], "")
        if plot(os.path.join(bench_dir, "h200.png"), series, "NVIDIA H200: one inference (kernel writes, host reads)"):
            drawn.add("h200")
    if "ci-pocl" in runs:
        if plot(os.path.join(bench_dir, "ci-pocl.png"), series_of(runs["ci-pocl"]),
                "PoCL on the 2-core CI machine: one inference (kernel writes, host reads)"):
            drawn.add("ci-pocl")
    return drawn


# ---------------------------------------------------------------- main

def import_device_logs(source, bench_dir):
    names = {"bench-nvidia.json": "h200-nvidia.json", "bench-pocl.json": "h200-pocl.json",
             "bench-cuda.json": "h200-cuda.json"}
    found = 0
    if os.path.isdir(source):
        for src, dst in names.items():
            p = os.path.join(source, src)
            if os.path.exists(p):
                shutil.copyfile(p, os.path.join(bench_dir, dst))
                found += 1
    else:
        with tarfile.open(source) as tar:
            for member in tar.getmembers():
                base = os.path.basename(member.name)
                if base in names and member.isfile():
                    with open(os.path.join(bench_dir, names[base]), "wb") as f:
                        f.write(tar.extractfile(member).read())
                    found += 1
    if found == 0:
        sys.exit("bench_report: no bench-*.json in %s" % source)
    print("bench_report: imported %d file(s) from %s" % (found, source))


def print_file(path):
    data = parse_json(path)
    kind = "cuda" if data.get("context", {}).get("clzero.platform") == "CUDA" else "opencl"
    run = Run("file", os.path.basename(path), kind, data)
    print("## " + run.title + "\n\n" + run_block(run))
    if run.errors:
        for k, msg in sorted(run.errors.items()):
            print("FAILED %s: %s" % ("/".join(map(str, k)), msg))
        return 1
    return 0


def rendered_documents(root, generated):
    """[(relative path, absolute path, current text, wanted text)] for every document, or ReportError."""
    out = []
    for rel, expected in DOCUMENTS:
        path = os.path.join(root, rel)
        try:
            with open(path, encoding="utf-8") as f:
                current = f.read()
        except OSError as e:
            raise ReportError("%s cannot be read: %s" % (rel, e))
        out.append((rel, path, current, render(current, generated, rel, expected)))
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="only compare the generated blocks of every document with the JSON")
    ap.add_argument("--import", dest="import_from", metavar="DIR_OR_TGZ",
                    help="copy bench-*.json from a device-logs folder or logs.tgz into docs/bench first")
    ap.add_argument("--print", dest="print_file", metavar="FILE", help="print the tables of one JSON file")
    ap.add_argument("--no-plot", action="store_true", help="do not draw the PNG plots")
    ap.add_argument("--bench-dir", default=None, help="the JSON (default: ROOT/docs/bench)")
    ap.add_argument("--root", default=ROOT, help="where the documents are (default: this repository)")
    args = ap.parse_args(argv)
    bench_dir = args.bench_dir or os.path.join(args.root, "docs", "bench")

    try:
        if args.print_file:
            return print_file(args.print_file)
        if args.import_from:
            os.makedirs(bench_dir, exist_ok=True)
            import_device_logs(args.import_from, bench_dir)

        runs = load_all(bench_dir)
        # Whether a plot is linked depends only on the JSON, never on matplotlib
        # being installed, so that --check gives the same text everywhere.
        linked = set()
        if "h200-nvidia" in runs:
            linked.add("h200")
        if "ci-pocl" in runs:
            linked.add("ci-pocl")
        generated, vs = blocks(runs, linked)
        documents = rendered_documents(args.root, generated)
    except ReportError as e:
        print("bench_report: error: %s" % e, file=sys.stderr)
        return 1

    names = ", ".join(rel for rel, _, _, _ in documents)
    if args.check:
        stale = [rel for rel, _, current, wanted in documents if wanted != current]
        if stale:
            print("bench_report: %s: the generated blocks are not what the JSON in %s gives; "
                  "run tools/bench_report.py" % (", ".join(stale), os.path.relpath(bench_dir, args.root)))
            return 1
        print("bench_report: %s: every generated block matches the JSON" % names)
        return 0

    for rel, path, current, wanted in documents:
        if wanted != current:
            with open(path, "w", encoding="utf-8") as f:
                f.write(wanted)
    if not args.no_plot:
        draw(runs, bench_dir)
    print("bench_report: wrote %s from %s" % (names, ", ".join(sorted(runs)) or "no JSON"))
    for v in vs:
        print("  %-10s %s | %s | %s" % (v.state(), v.where, v.target,
                                        v.measured + ("" if v.met else " — " + v.text())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
