#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the paced table of docs/benchmarks.md from the committed runs of
clzero_sequences' serial section in docs/bench/paced/, or with --check
verifies that the block is what they give.

A file is one run, named MACHINE-PACE.json or MACHINE-PACE-WAIT.json:
  PACE  none      back to back (no --gap-us)
        sleepUS   --gap-us US: the host thread slept US us before each inference
        spinUS    --gap-us US --gap-spin: it spun them instead
  WAIT  the run's CLZERO_HOST_WAIT (wait, poll or map), where it was set.
Every size of the run must say the pace its name gives, the run's host wait
must be the one its name gives (CLZERO_HOST_WAIT, or measured), and one
machine's runs must be of one platform, device and driver with the same
sizes. Per size and run the table gives the fastest legal sequence, the
fastest polled and the fastest blocking legal sequence, and clzero's Auto
with its ratio to the fastest legal one: each the median of the
repetitions' medians. A legal sequence that showed a stale element is never
the fastest; a clzero policy that showed one refuses the run.

  tools/paced_report.py            rewrite the block in docs/benchmarks.md
  tools/paced_report.py --check    exit 1 when the block differs from the runs
  options: --doc FILE, --dir DIR
"""

import argparse
import glob
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from one_block import BlockError, OneBlock  # noqa: E402
from sequence_report import size_name  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
DIR = os.path.join(ROOT, "docs", "bench", "paced")
BLOCK = OneBlock("paced_report", "paced", 16000)

NAME = re.compile(r"^(?P<machine>[a-z0-9]+(?:-[a-z0-9]+)*?)-(?P<pace>none|sleep\d+|spin\d+)(?:-(?P<wait>wait|poll|map))?$")
# The legal sequences' waits (benchmarks/sequences/catalogue.hpp): polled,
# or blocking in one call.
POLLED = ("poll", "poll_both")
BLOCKING = ("wait", "wait_both", "blocking", "finish")
AUTO = "clzero.Auto"
# Auto's choice as the run's "auto" map gives it ("Svm (fine): why"), and the
# explicit policy's variant that runs the same code ("clzero.Svm.fine"):
# the spread between the two is the run's noise on one sequence.
CHOICE = re.compile(r"^(?P<policy>[A-Za-z]+)(?: \((?P<arg>[a-z_]+)\))?: ")


class Refused(Exception):
    pass


def need(obj, key, kind, where):
    if not isinstance(obj, dict) or key not in obj:
        raise Refused("%s: no '%s'" % (where, key))
    v = obj[key]
    if kind is float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise Refused("%s: '%s' is not a number" % (where, key))
    elif not isinstance(v, kind):
        raise Refused("%s: '%s' is not a %s" % (where, key, kind.__name__))
    return v


def parse_name(path):
    stem = os.path.splitext(os.path.basename(path))[0]
    m = NAME.match(stem)
    if not m:
        raise Refused("%s: not named MACHINE-PACE[-WAIT].json (PACE none, sleepUS or spinUS; WAIT wait, poll or map)"
                      % os.path.relpath(path, ROOT))
    pace = m.group("pace")
    how = "none" if pace == "none" else pace.rstrip("0123456789")
    us = 0 if pace == "none" else int(pace[len(how):])
    if how != "none" and us <= 0:
        raise Refused("%s: a pace of 0 us is back to back: name it 'none'" % os.path.relpath(path, ROOT))
    return m.group("machine"), how, us, m.group("wait")


def medians(results, where):
    """{variant: median_us} of one repetition, and the variants that showed a stale element."""
    out, stale = {}, set()
    for name, r in results.items():
        w = "%s: %s" % (where, name)
        n = need(r, "stale_inferences", int, w)
        if n < 0:
            raise Refused("%s: a negative stale count" % w)
        if n:
            stale.add(name)
        if "error" in r:
            continue
        us = need(r, "median_us", float, w)
        if not us > 0 or need(r, "samples", int, w) <= 0:
            raise Refused("%s: a median of %r us over %r samples" % (w, us, r.get("samples")))
        out[name] = us
    return out, stale


def load(path):
    where = os.path.relpath(path, ROOT)
    machine, how, us, wait = parse_name(path)
    try:
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        raise Refused("%s: %s" % (where, e))
    if need(d, "schema", str, where) != "clzero.sequences/1":
        raise Refused("%s: schema '%s', not clzero.sequences/1" % (where, d["schema"]))
    ctx = need(d, "context", dict, where)
    info = {k: need(ctx, k, str, where + ": context") for k in ("platform", "platform_version", "device",
                                                                 "driver_version", "host_wait", "date")}
    set_by = re.match(r"^\S+ \(CLZERO_HOST_WAIT=(\w+)\)$", info["host_wait"])
    if wait and (not set_by or set_by.group(1) != wait):
        raise Refused("%s: named for CLZERO_HOST_WAIT=%s, but its host wait was '%s'" %
                      (where, wait, info["host_wait"][:80]))
    if not wait and "CLZERO_HOST_WAIT" in info["host_wait"]:
        raise Refused("%s: its host wait was set by CLZERO_HOST_WAIT ('%s'): name the file for it" %
                      (where, info["host_wait"][:80]))
    kinds = {}
    for v in need(d, "variants", list, where):
        kinds[need(v, "name", str, where + ": a variant")] = need(v, "kind", str, where + ": a variant")
        if v["kind"] in ("legal", "twin"):
            need(v, "wait", str, where + ": " + v["name"])
    sizes = {}
    for s in need(d, "serial", list, where):
        b = need(s, "bytes", int, where + ": a size")
        w = "%s: %d bytes" % (where, b)
        if b in sizes:
            raise Refused("%s: measured twice" % w)
        gap, gap_us = s.get("gap"), s.get("gap_us")
        said = "back to back" if gap is None and gap_us is None else "%s %r us" % (gap, gap_us)
        if how == "none":
            if said != "back to back":
                raise Refused("%s: paced (%s), the file's name says back to back" % (w, said))
        elif gap != how or isinstance(gap_us, bool) or not isinstance(gap_us, (int, float)) or gap_us != us:
            raise Refused("%s: paced %s, the file's name says %s %d us" % (w, said, how, us))
        reps = need(s, "reps", list, w)
        if len(reps) < 2:
            raise Refused("%s: %d repetition(s); the table needs 2 or more" % (w, len(reps)))
        per_variant, stale = {}, set()
        for i, rep in enumerate(reps, 1):
            m, st = medians(need(rep, "results", dict, "%s, repetition %d" % (w, i)), "%s, repetition %d" % (w, i))
            stale |= st
            for name, v in m.items():
                if name not in kinds:
                    raise Refused("%s: '%s' is not among the run's variants" % (w, name))
                per_variant.setdefault(name, []).append(v)
            if AUTO not in m:
                raise Refused("%s, repetition %d: no time of %s" % (w, i, AUTO))
        choice = CHOICE.match(need(need(d, "auto", dict, where), str(b), str, where + ": auto"))
        if not choice:
            raise Refused("%s: Auto's choice '%s' names no policy" % (w, d["auto"][str(b)][:60]))
        same = "clzero." + choice.group("policy") + ("." + choice.group("arg") if choice.group("arg") else "")
        if same not in per_variant or len(per_variant[same]) != len(reps):
            raise Refused("%s: Auto chose %s, which the run did not time in every repetition" % (w, same))
        bad = sorted(n for n in stale if kinds.get(n) == "clzero")
        if bad:
            raise Refused("%s: clzero showed stale data (%s); the run is not reported" % (w, ", ".join(bad)))
        med = {n: statistics.median(v) for n, v in per_variant.items() if n not in stale}
        sizes[b] = (med, same)
    if not sizes:
        raise Refused("%s: no serial size" % where)
    waits = {}
    for v in d["variants"]:
        if v["kind"] in ("legal", "twin"):
            waits[v["name"]] = v["wait"]
    return {"machine": machine, "how": how, "us": us, "wait": wait, "info": info, "sizes": sizes, "waits": waits,
            "path": where}


def fastest(med, names):
    names = [n for n in names if n in med]
    if not names:
        return None
    return min(names, key=lambda n: (med[n], n))


def us(v):
    return "%.1f" % v if v < 1000 else "%.0f" % v


def pace_name(run):
    p = {"none": "back to back", "sleep": "sleeps %d µs" % run["us"], "spin": "spins %d µs" % run["us"]}[run["how"]]
    return p + (" (`CLZERO_HOST_WAIT=%s`)" % run["wait"] if run["wait"] else "")


def generate(directory):
    paths = sorted(glob.glob(os.path.join(directory, "*.json")))
    if not paths:
        raise Refused("%s: no run" % os.path.relpath(directory, ROOT))
    machines = {}
    for p in paths:
        r = load(p)
        machines.setdefault(r["machine"], []).append(r)
    order = {"none": 0, "spin": 1, "sleep": 2}
    lines = ["<!-- generated by tools/paced_report.py from docs/bench/paced/*.json; do not edit by hand -->", ""]
    for machine in sorted(machines):
        runs = sorted(machines[machine], key=lambda r: (order[r["how"]], r["us"], r["wait"] or ""))
        first = runs[0]
        for r in runs[1:]:
            for k in ("platform", "platform_version", "device", "driver_version"):
                if r["info"][k] != first["info"][k]:
                    raise Refused("%s and %s: one machine's runs, but %s '%s' and '%s'" %
                                  (first["path"], r["path"], k, first["info"][k], r["info"][k]))
            if sorted(r["sizes"]) != sorted(first["sizes"]):
                raise Refused("%s and %s: one machine's runs, but different sizes" % (first["path"], r["path"]))
        i = first["info"]
        dates = sorted(r["info"]["date"][:10] for r in runs)
        lines += ["### %s, %s (%s), driver %s (`%s`)" % (i["device"], i["platform"], i["platform_version"],
                                                          i["driver_version"], machine), "",
                  "Runs of %s; median µs per inference, the median of the repetitions' medians:" %
                  (dates[0] if dates[0] == dates[-1] else dates[0] + " to " + dates[-1]), "",
                  "| size | the host before each inference | fastest legal sequence | µs | fastest polled | "
                  "fastest blocking | clzero `Auto` | `Auto` ÷ fastest | Auto's policy named explicitly ÷ fastest |",
                  "|---|---|---|--:|--:|--:|--:|--:|--:|"]
        for b in sorted(first["sizes"]):
            for r in runs:
                med, same = r["sizes"][b]
                legal = [n for n in med if n in r["waits"]]
                best = fastest(med, legal)
                if best is None:
                    raise Refused("%s: %d bytes: no fresh legal sequence" % (r["path"], b))
                polled = fastest(med, [n for n in legal if r["waits"][n] in POLLED])
                blocked = fastest(med, [n for n in legal if r["waits"][n] in BLOCKING])
                lines.append("| %s | %s | `%s` | %s | %s | %s | %s | %.2f | %.2f (`%s`) |" % (
                    size_name(b), pace_name(r), best, us(med[best]), us(med[polled]) if polled else "–",
                    us(med[blocked]) if blocked else "–", us(med[AUTO]), med[AUTO] / med[best], med[same] / med[best],
                    same[len("clzero."):]))
        lines.append("")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--doc", default=DOC)
    ap.add_argument("--dir", default=DIR)
    args = ap.parse_args(argv)
    try:
        BLOCK.write_or_check(args.doc, os.path.relpath(args.doc), generate(args.dir), args.check,
                             os.path.relpath(args.dir))
    except (Refused, BlockError) as e:
        print("paced_report: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
