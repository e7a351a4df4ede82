#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the generated block of docs/engines.md from the MNN readback logs
(examples/engines/mnn/run_bench.sh's JSON files), or with --check verifies
that the block is what the logs give.

Every file is validated before a number is taken from it: the format, the
variant, every model and size present, as many samples as iterations, no
CPU-backend disagreement, no output left unchanged between inferences, and
the outputs' hashes identical for every inference of every model in every
file of a device (patched and unpatched alike). Anything else is an error
that names the file and what is wrong; nothing is skipped.

  tools/engines_report.py            rewrite the block in docs/engines.md
  tools/engines_report.py --check    exit 1 when the block differs from the logs
  options: --doc FILE, --logs DIR (the root of the logs, default docs/logs)

A second block, caller-memory, comes from tools/device/host_tensor_readback's
output (PROBE): four ways to get a kernel's output into memory the caller
owns, per process. Its lines are checked as strictly: the header, every way
at every size with a median between its p10 and p90, and the closing line
that the program prints only when every element of every call was right.

A folder may hold device.json, {"strings_from": FILE, "evidence": TEXT,
"why": TEXT}, when the benchmark named another device than the one MNN ran
on: the device's strings are then read from FILE (the header of a benchmark
JSON, possibly cut short), and TEXT must occur in the folder's run.log.
"""

import argparse
import json
import math
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "engines.md")
LOGS = os.path.join(ROOT, "docs", "logs")
BEGIN = "<!-- engines_report:begin mnn -->"
END = "<!-- engines_report:end mnn -->"
FORMAT = "clzero-mnn-readback-1"
VARIANTS = ("unpatched", "patched")
MODELS = [("elementwise", 4096), ("elementwise", 262144), ("elementwise", 4194304),
          ("conv1x1", 4096), ("conv1x1", 262144), ("conv1x1", 4194304)]
SERIES = ("wait_us", "copy_us", "copy_run_us", "copy_readback_us", "copy_read_us",
          "map_us", "map_run_us", "map_map_us", "map_read_us", "map_unmap_us")
# Read again right after the first read, and a read of the benchmark's own
# memory read just before: outside every total; in logs of benchmarks that
# time them (all three in every file of a folder, or none).
REREAD = ("copy_reread_us", "map_reread_us", "own_read_us")
# The devices, each a folder under the logs' root: (folder, how MNN reached it)
# (folder, how MNN reached it, the models it holds: None for all of MODELS).
DEVICES = (("h200/43-final-758d14b/call1-nvidia-mnn/mnn/nvidia", "NVIDIA's OpenCL, H200 machine", None),
           ("h200/43-final-758d14b/call1-nvidia-mnn/mnn/pocl",
            "PoCL 5 through the CPU-as-GPU shim, the only platform MNN saw, H200 machine", ("elementwise",)),
           ("ci/45-mnn-pocl", "PoCL 3.1 through the CPU-as-GPU shim, 2-vCPU CI machine", None))
STRINGS = ("platform", "device", "device_version", "driver")
# tools/device/host_tensor_readback's output: (folder, file prefix, device)
PROBE = (("h200/26-reads-ceda9bb-d029495/call2-d029495", "nvidia-run", "NVIDIA H200, NVIDIA's OpenCL"),
         ("h200/26-reads-ceda9bb-d029495/call2-d029495", "pocl-run", "PoCL 5 on the H200 machine's 16-core Xeon"))
PROBE_BEGIN = "<!-- engines_report:begin caller-memory -->"
PROBE_END = "<!-- engines_report:end caller-memory -->"
PROBE_SIZES = (4096, 262144, 4194304)
# (way, what it is, what it is for): "copy" a way into your memory that needs
# no promise about it, "kept" one that does, "place" a read in place of the
# mapped output (what map gives; no copy). Ways after the first four run only
# where the platform offers them (cl_nv_create_buffer), and then in every
# process of the device.
PROBE_WAYS = (("read_pageable", "device buffer, blocking `clEnqueueReadBuffer` into your memory (MNN today)", "copy"),
              ("map_memcpy", "`ALLOC_HOST_PTR` buffer mapped at rest, blocking map, `memcpy` into your memory "
               "(the patch's `copyToHostTensor` where `Auto` takes that memory)", "copy"),
              ("use_host_ptr_new", "`USE_HOST_PTR` buffer over your memory made for the call, written by the "
               "kernel, blocking map, unmap, `clFinish`, release", "copy"),
              ("use_host_ptr_kept", "the same buffer kept from call to call", "kept"),
              ("nv_memcpy", "as `map_memcpy` over a host-located pinned buffer (`cl_nv_create_buffer`; the "
               "kernel writes host memory): the patch's `copyToHostTensor` on NVIDIA, where `Auto` takes it",
               "copy"),
              ("nv_in_place", "no copy: your read in place of that host-located buffer, mapped", "place"),
              ("ahp_in_place", "no copy: your read in place of an `ALLOC_HOST_PTR` buffer, mapped", "place"))
PROBE_REQUIRED = 4
PROBE_ROW = re.compile(r"^(\d+) +(\w+) +([0-9.]+) +([0-9.]+) +([0-9.]+)$")
PROBE_LAST = re.compile(r"^every element of every call checked; medians of (\d+) rounds$")
# The line before it: the timed reads' sum, printed so that no compiler can
# drop a read from the timed part (a program whose sum nothing used timed
# no read at all).
PROBE_SUM = re.compile(r"^the timed reads summed to \d+$")
GOAL = 0.5


class Malformed(Exception):
    pass


def need(condition, where, what):
    if not condition:
        raise Malformed("%s: %s" % (where, what))


def read_json(path, where):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise Malformed("%s: not readable JSON (%s)" % (where, e))


def expected_models(names):
    return [m for m in MODELS if names is None or m[0] in names]


def load(path, expected=None):
    """One process's JSON; `expected` (default: all of MODELS) is what it must hold, in order."""
    expected = MODELS if expected is None else expected
    where = os.path.relpath(path, ROOT)
    data = read_json(path, where)
    need(isinstance(data, dict), where, "not a JSON object")
    need(data.get("format") == FORMAT, where, "format is %r, expected %r" % (data.get("format"), FORMAT))
    need(data.get("variant") in VARIANTS, where, "variant %r is none of %s" % (data.get("variant"), VARIANTS))
    for key in ("platform", "device", "driver", "device_version"):
        need(isinstance(data.get(key), str) and data[key].strip(), where, "no %s" % key)
    n = data.get("iterations")
    need(isinstance(n, int) and n >= 300, where, "iterations %r; at least 300 are needed" % n)
    need(isinstance(data.get("round"), int), where, "no round number")
    # The tables are of outputs read in their stored layout (logs from before
    # the benchmark could read another have no read_layout).
    need(data.get("read_layout", "stored") == "stored", where,
         "read_layout %r: the tables take outputs read in their stored layout" % data.get("read_layout"))
    models = data.get("models")
    need(isinstance(models, list), where, "no models list")
    seen = [(m.get("model"), m.get("output_bytes")) for m in models if isinstance(m, dict)]
    need(seen == expected, where, "models %s, expected %s" % (seen, expected))
    for m in models:
        at = "%s: %s %d B" % (where, m["model"], m["output_bytes"])
        need(m.get("cpu_bad") == 0, at, "%r outputs disagree with the CPU backend" % m.get("cpu_bad"))
        need(m.get("unchanged") == 0, at, "%r outputs did not change from one inference to the next"
             % m.get("unchanged"))
        present = [key for key in REREAD if key in m]
        need(not present or len(present) == len(REREAD), at, "has %s but not %s" %
             (", ".join(present), ", ".join(k for k in REREAD if k not in present)))
        for key in SERIES + tuple(present):
            v = m.get(key)
            need(isinstance(v, list) and len(v) == n, at, "%s has %s samples, expected %d"
                 % (key, len(v) if isinstance(v, list) else "no", n))
            need(all(isinstance(x, (int, float)) and math.isfinite(x) and x >= 0 for x in v), at,
                 "%s holds a value that is not a finite time" % key)
        for key in ("copy_hash", "map_hash"):
            v = m.get(key)
            need(isinstance(v, list) and len(v) == n and all(isinstance(h, str) and re.fullmatch("[0-9a-f]{16}", h)
                                                              for h in v), at, "%s is not %d hashes" % (key, n))
    data["_where"] = where
    return data


def load_device(folder, models=None):
    models = MODELS if models is None else models
    path = os.path.join(LOGS_DIR, folder)
    where = os.path.relpath(path, ROOT)
    need(os.path.isdir(path), where, "no such folder")
    names = sorted(f for f in os.listdir(path) if f.endswith(".json") and f != "device.json")
    need(names, where, "no JSON files")
    runs = [load(os.path.join(path, name), models) for name in names]
    for variant in VARIANTS:
        need(any(r["variant"] == variant for r in runs), where, "no %s run" % variant)
    rounds = {v: sorted(r["round"] for r in runs if r["variant"] == v) for v in VARIANTS}
    need(rounds["patched"] == rounds["unpatched"], where, "rounds differ between variants: %s" % rounds)
    need(len(set(rounds["patched"])) == len(rounds["patched"]), where, "a round appears twice")
    first = runs[0]
    rereads = {r["_where"]: REREAD[0] in r["models"][0] for r in runs}
    need(len(set(rereads.values())) == 1, where, "the second reads are timed in %s but not in %s" %
         (", ".join(w for w, has in rereads.items() if has), ", ".join(w for w, has in rereads.items() if not has)))
    for r in runs[1:]:
        for key in STRINGS + ("iterations",):
            need(r[key] == first[key], r["_where"], "%s %r differs from %r in %s" % (key, r[key], first[key],
                                                                                  first["_where"]))
    # Same inputs in every process: every output must be identical, patched or not.
    for i, (model, size) in enumerate(models):
        for key in ("copy_hash", "map_hash"):
            want = first["models"][i][key]
            for r in runs[1:]:
                got = r["models"][i][key]
                if got != want:
                    k = next(j for j in range(len(want)) if got[j] != want[j])
                    raise Malformed("%s: %s %d B: %s of inference %d is %s in %s but %s in %s: outputs are not "
                                    "bit-identical" % (where, model, size, key, k, got[k], r["_where"], want[k],
                                                       first["_where"]))
    note = None
    fix_path = os.path.join(path, "device.json")
    if os.path.exists(fix_path):
        fix_where = os.path.relpath(fix_path, ROOT)
        fix = read_json(fix_path, fix_where)
        need(isinstance(fix, dict) and all(isinstance(fix.get(k), str) and fix[k].strip()
                                           for k in ("strings_from", "evidence", "why")),
             fix_where, "needs strings_from, evidence and why")
        source = os.path.normpath(os.path.join(path, fix["strings_from"]))
        source_where = os.path.relpath(source, ROOT)
        try:
            with open(source, encoding="utf-8") as f:
                header = f.read()
        except OSError as e:
            raise Malformed("%s: strings_from: %s" % (fix_where, e))
        strings = {}
        for key in STRINGS:
            found = re.findall(r'^  "%s": "([^"\n]+)",$' % key, header, re.M)
            need(len(found) == 1, source_where, "no single %s line in the header" % key)
            strings[key] = found[0]
        try:
            with open(os.path.join(path, "run.log"), encoding="utf-8") as f:
                log = f.read()
        except OSError as e:
            raise Malformed("%s: device.json needs the folder's run.log (%s)" % (fix_where, e))
        need(fix["evidence"] in log, fix_where, "its evidence %r is not in run.log" % fix["evidence"])
        for r in runs:
            r.update(strings)
        note = (fix["why"], "docs/logs/" + os.path.relpath(source, LOGS_DIR).replace(os.sep, "/"), fix["evidence"])
    return runs, note


def quantile(values, q):
    s = sorted(values)
    pos = (len(s) - 1) * q
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def fmt(x):
    if x >= 100:
        return "%.0f" % x
    if x >= 10:
        return "%.1f" % x
    return "%.2f" % x


def size_name(b):
    return "%d KiB" % (b // 1024) if b < 1048576 else "%d MiB" % (b // 1048576)


def pooled(runs, variant, i, key):
    out = []
    for r in runs:
        if r["variant"] == variant:
            out.extend(r["models"][i][key])
    return out


def device_block(folder, how, names=None):
    models = expected_models(names)
    runs, note = load_device(folder, models)
    first = runs[0]
    n_rounds = len([r for r in runs if r["variant"] == "patched"])
    lines = []
    lines.append("### %s (%s)" % (first["device"], how))
    lines.append("")
    lines.append("%s, %s, driver %s (%s); %d processes per variant alternating, %d inferences per way of reading, "
                 "model and process; every output bit-identical between patched and unpatched MNN; logs in "
                 "[%s](%s)." % (first["device"], first["platform"], first["driver"], first["device_version"],
                                n_rounds, first["iterations"], "docs/logs/" + folder, "logs/" + folder))
    lines.append("")
    if note is not None:
        lines.append("Device strings from `%s`: %s. Evidence, in the folder's run.log: `%s`." % (note[1], note[0],
                                                                                              note[2]))
        lines.append("")
    if names is not None:
        left_out = [m for m in dict.fromkeys(m for m, _ in MODELS) if m not in names]
        lines.append("Only the %s model ran here, not the %s one; the text below the tables says why." % (
            " and ".join(names), " and ".join(left_out)))
        lines.append("")
    lines.append("Median µs per inference (p10–p90), pooled over the processes. *Readback* is run + readback + "
                 "read of every element, less run + wait of the same variant.")
    lines.append("")
    lines.append("| model | output | run + wait | `copyToHostTensor`: unpatched | patched | readback: unpatched "
                 "| patched | patched / unpatched | `map(READ)`: unpatched | patched | readback: unpatched "
                 "| patched | patched / unpatched |")
    lines.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    verdicts = []
    for i, (model, size) in enumerate(models):
        cells = [model, size_name(size)]
        wait = {v: quantile(pooled(runs, v, i, "wait_us"), 0.5) for v in VARIANTS}
        wait_all = pooled(runs, "unpatched", i, "wait_us") + pooled(runs, "patched", i, "wait_us")
        cells.append("%s (%s–%s)" % (fmt(quantile(wait_all, 0.5)), fmt(quantile(wait_all, 0.1)),
                                     fmt(quantile(wait_all, 0.9))))
        for way in ("copy_us", "map_us"):
            readback = {}
            for v in VARIANTS:
                s = pooled(runs, v, i, way)
                med = quantile(s, 0.5)
                readback[v] = med - wait[v]
                cells.append("%s (%s–%s)" % (fmt(med), fmt(quantile(s, 0.1)), fmt(quantile(s, 0.9))))
            for v in VARIANTS:
                cells.append(fmt(readback[v]))
            if readback["unpatched"] > 0:
                # A patched readback at or below zero: reading cost nothing
                # the run's own wait did not (within its noise); shown as 0.
                ratio = max(0.0, readback["patched"]) / readback["unpatched"]
                cells.append("**%.2f**" % ratio)
            else:  # the unpatched readback is lost in the noise of the run itself: no ratio
                ratio = None
                cells.append("—")
            verdicts.append((model, size, way, ratio))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    copy_ok = [v for v in verdicts if v[2] == "copy_us"]
    met = [v for v in copy_ok if v[3] is not None and v[3] <= GOAL]
    if any(v[3] == 0.0 for v in verdicts):
        lines.append("A ratio of 0.00: the patched readback was at or below zero, reading cost nothing beyond "
                     "the run's own wait, within its noise.")
        lines.append("")
    lines.append("Goal (readback through `copyToHostTensor`, patched ≤ %.1f× unpatched at every size): %s (%d of %d "
                 "model sizes). Through `map(MAP_TENSOR_READ)`: %d of %d." % (
                     GOAL, "**met**" if len(met) == len(copy_ok) else "**not met**", len(met), len(copy_ok),
                     len([v for v in verdicts if v[2] == "map_us" and v[3] is not None and v[3] <= GOAL]),
                     len(copy_ok)))
    lines.append("")
    for way, name in (("copy_us", "`copyToHostTensor`"), ("map_us", "`map(MAP_TENSOR_READ)`")):
        faster = ["%s %s" % (m, size_name(b)) for m, b, w, r in verdicts if w == way and r is not None and r < 1]
        slower = ["%s %s" % (m, size_name(b)) for m, b, w, r in verdicts if w == way and r is not None and r >= 1]
        noise = ["%s %s" % (m, size_name(b)) for m, b, w, r in verdicts if w == way and r is None]
        lines.append("Through %s the patched readback is shorter at %s; not shorter at %s%s." % (
            name, ", ".join(faster) or "no size", ", ".join(slower) or "no size",
            "; no ratio (the unpatched readback is below the noise of the run) at " + ", ".join(noise)
            if noise else ""))
        lines.append("")
    lines.append("Where the time goes, medians in µs (copy: run, `copyToHostTensor`, read; map: run, `map`, read, "
                 "`unmap`):")
    lines.append("")
    lines.append("| model | output | copy, unpatched | copy, patched | map, unpatched | map, patched |")
    lines.append("|---|--:|--:|--:|--:|--:|")
    for i, (model, size) in enumerate(models):
        cells = [model, size_name(size)]
        for keys in (("copy_run_us", "copy_readback_us", "copy_read_us"),
                     ("map_run_us", "map_map_us", "map_read_us", "map_unmap_us")):
            for v in VARIANTS:
                cells.append(" + ".join(fmt(quantile(pooled(runs, v, i, k), 0.5)) for k in keys))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    if REREAD[0] in first["models"][0]:
        lines.append("The same read again right after the first, and a read of memory of the output's size that "
                     "the benchmark owns and read just before (own memory, in the run + wait turns), medians in "
                     "µs; none of these is part of any time above:")
        lines.append("")
        lines.append("| model | output | copy, read: unpatched | again | patched | again | map, read: unpatched "
                     "| again | patched | again | own memory |")
        lines.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
        for i, (model, size) in enumerate(models):
            cells = [model, size_name(size)]
            for first_key, again_key in (("copy_read_us", "copy_reread_us"), ("map_read_us", "map_reread_us")):
                for v in VARIANTS:
                    cells += [fmt(quantile(pooled(runs, v, i, first_key), 0.5)),
                              fmt(quantile(pooled(runs, v, i, again_key), 0.5))]
            own = pooled(runs, "unpatched", i, "own_read_us") + pooled(runs, "patched", i, "own_read_us")
            cells.append(fmt(quantile(own, 0.5)))
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def block():
    lines = ["<!-- generated by tools/engines_report.py from the logs; do not edit by hand -->", ""]
    for folder, how, names in DEVICES:
        lines.extend(device_block(folder, how, names))
    return "\n".join(lines)


def load_probe(folder, prefix):
    """{way: {bytes: [median per process]}} and the p10-p90 range pooled
    over the processes, from every PREFIX*.txt of the folder."""
    path = os.path.join(LOGS_DIR, folder)
    where = os.path.relpath(path, ROOT)
    need(os.path.isdir(path), where, "no such folder")
    names = sorted(f for f in os.listdir(path) if f.startswith(prefix) and f.endswith(".txt"))
    need(names, where, "no %s*.txt files" % prefix)
    medians, lows, highs = {}, {}, {}
    for name in names:
        at = "%s/%s" % (where, name)
        with open(os.path.join(path, name), encoding="utf-8") as f:
            lines = [line.rstrip("\n") for line in f]
        heads = [i for i, line in enumerate(lines) if line.split()[:2] == ["bytes", "way"]]
        need(len(heads) == 1, at, "needs exactly one header line 'bytes way ...' (found %d)" % len(heads))
        rows, last = lines[heads[0] + 1:-2], lines[-1] if lines else ""
        m = PROBE_LAST.match(last)
        need(m is not None, at, "does not end with the line that every element of every call was checked "
             "(last line: %r)" % last)
        summed = lines[-2] if len(lines) > heads[0] + 2 else ""
        need(PROBE_SUM.match(summed) is not None, at, "has no line with the timed reads' sum before its last "
             "(a program that does not use the sum may have timed no read): %r" % summed)
        need(int(m.group(1)) >= 100, at, "%s rounds; at least 100 are needed" % m.group(1))
        seen = set()
        for line in rows:
            r = PROBE_ROW.match(line)
            need(r is not None, at, "not a row of the table: %r" % line)
            size, way = int(r.group(1)), r.group(2)
            need(size in PROBE_SIZES, at, "size %d is none of %s" % (size, PROBE_SIZES))
            need(way in [w for w, _, _ in PROBE_WAYS], at, "unknown way %r" % way)
            need((size, way) not in seen, at, "%s at %d bytes twice" % (way, size))
            seen.add((size, way))
            med, p10, p90 = (float(r.group(k)) for k in (3, 4, 5))
            need(0 < p10 <= med <= p90, at, "%s at %d bytes: not 0 < p10 <= median <= p90" % (way, size))
            medians.setdefault(way, {}).setdefault(size, []).append(med)
            lows.setdefault(way, {}).setdefault(size, []).append(p10)
            highs.setdefault(way, {}).setdefault(size, []).append(p90)
        ways = {w for _, w in seen}
        for w, _, _ in PROBE_WAYS[:PROBE_REQUIRED]:
            need(w in ways, at, "no %s rows" % w)
        for w in ways:
            missing = [b for b in PROBE_SIZES if (b, w) not in seen]
            need(not missing, at, "%s has no row at %s bytes" % (w, missing))
    for w in medians:
        for b in PROBE_SIZES:
            need(len(medians[w][b]) == len(names), where, "%s is in some of the %s*.txt files only" % (w, prefix))
    return names, medians, lows, highs


def probe_block():
    lines = ["<!-- generated by tools/engines_report.py from the logs; do not edit by hand -->", ""]
    for folder, prefix, device in PROBE:
        names, medians, lows, highs = load_probe(folder, prefix)
        lines.append("%s: median µs per call, kernel to the end of your read of every element, per process "
                     "(%d process%s; logs in `docs/logs/%s/%s*.txt`)"
                     % (device, len(names), "" if len(names) == 1 else "es", folder, prefix))
        lines.append("")
        lines.append("| way | " + " | ".join(size_name(b) for b in PROBE_SIZES) + " |")
        lines.append("|---|" + "--:|" * len(PROBE_SIZES))
        for way, what, _ in PROBE_WAYS:
            if way in medians:
                cells = [", ".join(fmt(x) for x in medians[way][b]) for b in PROBE_SIZES]
                lines.append("| `%s`: %s | %s |" % (way, what, " | ".join(cells)))
        big = PROBE_SIZES[-1]
        best, best_way = min((max(medians[w][big]), w) for w, _, use in PROBE_WAYS if use == "copy" and w in medians)
        kept = max(medians["use_host_ptr_kept"][big])
        lines.append("")
        text = ("At %s the fastest way into your memory that needs no promise about its lifetime is `%s` (%s µs "
                "in its slowest process); a buffer kept over your memory takes %s µs at most, %.2f× that"
                % (size_name(big), best_way, fmt(best), fmt(kept), kept / best))
        place = [(max(medians[w][big]), w) for w, _, use in PROBE_WAYS if use == "place" and w in medians]
        if place:
            text += ("; a read in place of a mapped output, %s µs at most (`%s`)"
                     % (fmt(max(p for p, _ in place)), max(place)[1]))
        lines.append(text + ".")
        lines.append("")
    return "\n".join(lines)


def replace_block(text, new, begin=BEGIN, end=END):
    where = os.path.relpath(DOC_PATH, ROOT)
    need(text.count(begin) == 1, where, "needs exactly one %s line (found %d)" % (begin, text.count(begin)))
    need(text.count(end) == 1, where, "needs exactly one %s line (found %d)" % (end, text.count(end)))
    b, e = text.index(begin), text.index(end)
    need(b < e, where, "the end marker comes before the begin marker")
    need(text[b + len(begin):b + len(begin) + 1] == "\n", where, "text after the begin marker on its line")
    stray = [m for m in re.findall(r"<!-- engines_report:\w+ \S+ -->", text)
             if m not in (BEGIN, END, PROBE_BEGIN, PROBE_END)]
    need(not stray, where, "unknown engines_report markers: %s" % stray)
    return text[:b + len(begin)] + "\n" + new + "\n" + text[e:]


def main():
    global LOGS_DIR, DOC_PATH
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--doc", default=DOC)
    parser.add_argument("--logs", default=LOGS)
    args = parser.parse_args()
    LOGS_DIR = os.path.abspath(args.logs)
    DOC_PATH = os.path.abspath(args.doc)
    try:
        new = block()
        with open(DOC_PATH, encoding="utf-8") as f:
            text = f.read()
        updated = replace_block(text, new)
        updated = replace_block(updated, probe_block(), PROBE_BEGIN, PROBE_END)
    except (Malformed, OSError) as e:
        print("engines_report: %s" % e, file=sys.stderr)
        return 1
    if args.check:
        if updated != text:
            print("engines_report: %s differs from what the logs give; run tools/engines_report.py"
                  % os.path.relpath(DOC_PATH, ROOT), file=sys.stderr)
            return 1
        print("engines_report: %s matches the logs" % os.path.relpath(DOC_PATH, ROOT))
        return 0
    with open(DOC_PATH, "w", encoding="utf-8") as f:
        f.write(updated)
    print("engines_report: wrote %s" % os.path.relpath(DOC_PATH, ROOT))
    return 0


LOGS_DIR = LOGS
DOC_PATH = DOC
if __name__ == "__main__":
    sys.exit(main())
