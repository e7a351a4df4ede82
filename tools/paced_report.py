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
machine's runs must be of one platform, device, driver, clzero version, CPU,
repetition count and budget, with the same sizes (a machine's run of one
pace and host wait is one file: the name has one spelling). Every serial
variant must be timed, without error, in every repetition of every size;
times must be finite and at least 0.01 us.

Per size and run the table gives the fastest legal sequence (twins, the
catalogue's second copies of a sequence, only measure noise and are left
out), the fastest polled and the fastest blocking legal sequence, the host
wait clzero's views used, and Auto with its ratio to the fastest legal
sequence and that of the explicit policy that runs Auto's code: each time
the median of the repetitions' medians. A legal sequence that showed a stale
element at any size of the run is never named, as the benchmark itself
ranks them; a clzero policy that showed one refuses the run.

  tools/paced_report.py            rewrite the block in docs/benchmarks.md
  tools/paced_report.py --check    exit 1 when the block differs from the runs
  options: --doc FILE, --dir DIR
"""

import argparse
import glob
import json
import math
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
BLOCK = OneBlock("paced_report", "paced", 20000)

NAME = re.compile(r"^(?P<machine>[a-z0-9]+(?:-[a-z0-9]+)*?)-(?P<pace>none|sleep[1-9][0-9]*|spin[1-9][0-9]*)"
                  r"(?:-(?P<wait>wait|poll|map))?$")
# The legal sequences' waits (benchmarks/sequences/legal.hpp, Wait, and the
# fine-grained SVM and USM sequences' "finish"): polled, or blocking in a
# call; any other is refused.
POLLED = ("poll", "poll_both")
BLOCKING = ("blocking", "wait", "wait_both", "blocking_events", "blocking_flushed", "finish")
KINDS = ("legal", "twin", "clzero", "ub", "floor")
AUTO = "clzero.Auto"
# Auto's choice as the run's "auto" map gives it ("Svm (fine): why"), and the
# explicit policy's variant that runs the same code ("clzero.Svm.fine").
CHOICE = re.compile(r"^(?P<policy>[A-Za-z]+)(?: \((?P<arg>[a-z_]+)\))?: ")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
# The host wait as the context gives it: what the views did, then why.
HOST_WAIT = re.compile(r"^(?P<what>[^(]+?) \((?P<why>.*)\)$")
SAME_MACHINE = ("platform", "platform_version", "device", "device_version", "driver_version", "clzero_version", "cpu")


class Refused(Exception):
    pass


def need(obj, key, kind, where):
    if not isinstance(obj, dict) or key not in obj:
        raise Refused("%s: no '%s'" % (where, key))
    v = obj[key]
    if kind is float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise Refused("%s: '%s' is not a finite number" % (where, key))
    elif kind is int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise Refused("%s: '%s' is not a whole number" % (where, key))
    elif not isinstance(v, kind):
        raise Refused("%s: '%s' is not a %s" % (where, key, kind.__name__))
    return v


def no_doubles(pairs):
    seen = set()
    for k, _ in pairs:
        if k in seen:
            raise Refused("the key '%s' appears twice in one object" % k)
        seen.add(k)
    return dict(pairs)


def parse_name(path):
    stem = os.path.splitext(os.path.basename(path))[0]
    m = NAME.match(stem)
    if not m:
        raise Refused("%s: not named MACHINE-PACE[-WAIT].json (PACE none, sleepUS or spinUS with US a whole number "
                      "above 0 without leading zeros; WAIT wait, poll or map)" % os.path.relpath(path, ROOT))
    pace = m.group("pace")
    how = "none" if pace == "none" else pace.rstrip("0123456789")
    us = 0 if pace == "none" else int(pace[len(how):])
    return m.group("machine"), how, us, m.group("wait")


def load(path):
    where = os.path.relpath(path, ROOT)
    machine, how, us, wait = parse_name(path)
    try:
        with open(path, encoding="utf-8") as f:
            d = json.load(f, object_pairs_hook=no_doubles, parse_constant=lambda c: float(c))
    except (OSError, ValueError) as e:
        raise Refused("%s: %s" % (where, e))
    except Refused as e:
        raise Refused("%s: %s" % (where, e))
    if need(d, "schema", str, where) != "clzero.sequences/1":
        raise Refused("%s: schema '%s', not clzero.sequences/1" % (where, d["schema"]))
    ctx = need(d, "context", dict, where)
    info = {k: need(ctx, k, str, where + ": context") for k in SAME_MACHINE + ("host_wait", "date")}
    info["reps"] = need(ctx, "reps", int, where + ": context")
    info["budget_s"] = need(ctx, "budget_s", float, where + ": context")
    if not DATE.match(info["date"]):
        raise Refused("%s: context: the date '%s' is not YYYY-MM-DDTHH:MM:SSZ" % (where, info["date"][:40]))
    host = HOST_WAIT.match(info["host_wait"])
    if not host:
        raise Refused("%s: context: the host wait '%s' does not say what the views did and why" %
                      (where, info["host_wait"][:60]))
    set_by = re.match(r"^CLZERO_HOST_WAIT=(\w+)$", host.group("why"))
    if wait and (not set_by or set_by.group(1) != wait):
        raise Refused("%s: named for CLZERO_HOST_WAIT=%s, but its host wait was '%s'" %
                      (where, wait, info["host_wait"][:80]))
    if not wait and "CLZERO_HOST_WAIT" in info["host_wait"]:
        raise Refused("%s: its host wait was set by CLZERO_HOST_WAIT ('%s'): name the file for it" %
                      (where, info["host_wait"][:80]))
    info["views"] = host.group("what")
    # The wait after idle (clzero 3d586a2 and later) is in the reason only;
    # a measurement after sleeps whose verdict is not one of the library's
    # two is refused rather than shown as polling.
    why = host.group("why")
    learned = "then each tensor keeps the faster of its own waits after idle" in why
    if learned and "views block at once after the thread was idle" in why:
        info["views"] += "; after idle: each tensor's faster way (first clWaitForEvents)"
    elif learned and "views poll after idle too" in why:
        info["views"] += "; after idle: each tensor's faster way (first polling)"
    elif "views block at once after the thread was idle" in why:
        info["views"] += "; after idle: clWaitForEvents"
    elif "CLZERO_IDLE_WAIT=wait" in why:
        info["views"] += "; after idle: clWaitForEvents (CLZERO_IDLE_WAIT=wait)"
    elif "after a sleep of" in why and "views poll after idle too" not in why:
        raise Refused("%s: context: the host wait measured after sleeps but says neither how views wait after "
                      "idle ('%s')" % (where, why[why.index("after a sleep of"):][:80]))

    variants = {}
    for v in need(d, "variants", list, where):
        name = need(v, "name", str, where + ": a variant")
        w = "%s: %s" % (where, name)
        if need(v, "section", str, w) != "serial":
            continue
        if name in variants:
            raise Refused("%s: listed twice" % w)
        kind = need(v, "kind", str, w)
        if kind not in KINDS:
            raise Refused("%s: kind '%s' is none of %s" % (w, kind, ", ".join(KINDS)))
        if (name == AUTO or name.startswith("clzero.")) != (kind == "clzero"):
            raise Refused("%s: kind '%s' for a variant so named" % (w, kind))
        wait_kind = None
        if kind in ("legal", "twin"):
            wait_kind = need(v, "wait", str, w)
            if wait_kind not in POLLED + BLOCKING:
                raise Refused("%s: the wait '%s' is neither polled (%s) nor blocking (%s)" %
                              (w, wait_kind, ", ".join(POLLED), ", ".join(BLOCKING)))
        variants[name] = (kind, wait_kind)
    if AUTO not in variants:
        raise Refused("%s: %s is not among the serial variants" % (where, AUTO))

    sizes, stale = {}, set()
    for s in need(d, "serial", list, where):
        b = need(s, "bytes", int, where + ": a size")
        w = "%s: %d bytes" % (where, b)
        if b <= 0:
            raise Refused("%s: not a size" % w)
        if b in sizes:
            raise Refused("%s: measured twice" % w)
        gap, gap_us = s.get("gap"), s.get("gap_us")
        said = "back to back" if gap is None and gap_us is None else "%s %r us" % (gap, gap_us)
        if how == "none":
            if said != "back to back":
                raise Refused("%s: paced (%s), the file's name says back to back" % (w, said))
        elif gap != how or isinstance(gap_us, bool) or not isinstance(gap_us, (int, float)) or gap_us != us:
            raise Refused("%s: paced %s, the file's name says %s %d us" % (w, said, how, us))
        block = need(s, "block", int, w)
        apart = need(s, "first_apart", bool, w)
        if how != "none" and (block != 1 or apart):
            raise Refused("%s: paced turns are one inference each, not %d%s" % (w, block, " (first apart)" if apart
                                                                              else ""))
        reps = need(s, "reps", list, w)
        if len(reps) != info["reps"]:
            raise Refused("%s: %d repetition(s), the context says %d" % (w, len(reps), info["reps"]))
        if len(reps) < 2:
            raise Refused("%s: %d repetition(s); the table needs 2 or more" % (w, len(reps)))
        times = {}
        for i, rep in enumerate(reps, 1):
            wr = "%s, repetition %d" % (w, i)
            results = need(rep, "results", dict, wr)
            for name in results:
                if name not in variants:
                    raise Refused("%s: '%s' is not among the run's serial variants" % (wr, name))
            for name in variants:
                if name not in results:
                    raise Refused("%s: %s was not timed" % (wr, name))
                r, wv = results[name], "%s: %s" % (wr, name)
                if "error" in r:
                    raise Refused("%s: failed (%s); a run with a failed variant is not reported" %
                                  (wv, str(r["error"])[:60]))
                n = need(r, "stale_inferences", int, wv)
                if n < 0:
                    raise Refused("%s: a negative stale count" % wv)
                if n:
                    stale.add(name)
                t = need(r, "median_us", float, wv)
                if t < 0.01 or need(r, "samples", int, wv) <= 0:
                    raise Refused("%s: a median of %r us over %r samples" % (wv, t, r.get("samples")))
                times.setdefault(name, []).append(t)
        choice = CHOICE.match(need(need(d, "auto", dict, where), str(b), str, where + ": auto"))
        if not choice or choice.group("policy") == "Auto":
            raise Refused("%s: Auto's choice '%s' names no policy" % (w, d["auto"][str(b)][:60]))
        same = "clzero." + choice.group("policy") + ("." + choice.group("arg") if choice.group("arg") else "")
        if same not in variants:
            raise Refused("%s: Auto chose %s, which the run did not time" % (w, same))
        sizes[b] = ({n: statistics.median(v) for n, v in times.items()}, same, block, apart)
    if not sizes:
        raise Refused("%s: no serial size" % where)
    bad = sorted(n for n in stale if variants[n][0] == "clzero")
    if bad:
        raise Refused("%s: clzero showed stale data (%s); the run is not reported" % (where, ", ".join(bad)))
    return {"machine": machine, "how": how, "us": us, "wait": wait, "info": info, "sizes": sizes,
            "variants": variants, "stale": stale, "path": where}


def fastest(med, names):
    names = [n for n in names if n in med]
    if not names:
        return None
    return min(names, key=lambda n: (med[n], n))


def us(v):
    return "%.1f" % v if v < 1000 else "%.0f" % v


def pace_name(run, block, apart):
    if run["how"] == "none":
        p = "back to back" + (" (inferences 2 to %d of turns of %d)" % (block, block) if apart else
                              " (turns of %d)" % block if block > 1 else "")
    else:
        p = "%s %d µs, then one inference" % ("sleeps" if run["how"] == "sleep" else "spins", run["us"])
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
        # One run per machine, pace and host wait: the file name says all
        # three, and it has one spelling (no leading zeros).
        for r in runs:
            for k in SAME_MACHINE + ("reps", "budget_s"):
                if r["info"][k] != first["info"][k]:
                    raise Refused("%s and %s: one machine's runs, but %s '%s' and '%s'" %
                                  (first["path"], r["path"], k, first["info"][k], r["info"][k]))
            if sorted(r["sizes"]) != sorted(first["sizes"]):
                raise Refused("%s and %s: one machine's runs, but different sizes" % (first["path"], r["path"]))
        i = first["info"]
        dates = sorted(r["info"]["date"][:10] for r in runs)
        lines += ["### %s, %s (%s), driver %s (`%s`)" % (i["device"], i["platform"], i["platform_version"],
                                                          i["driver_version"], machine), "",
                  "%d runs of %s, each of %d repetitions and a budget of %s s; median µs per inference, the median "
                  "of the repetitions' medians:" %
                  (len(runs), dates[0] if dates[0] == dates[-1] else dates[0] + " to " + dates[-1], i["reps"],
                   "%g" % i["budget_s"]), "",
                  "| size | the host before each timed inference | fastest legal sequence | µs | fastest polled | "
                  "fastest blocking | clzero's views | clzero `Auto` | `Auto` ÷ fastest | Auto's policy named "
                  "explicitly ÷ fastest |",
                  "|---|---|---|--:|--:|--:|---|--:|--:|--:|"]
        for b in sorted(first["sizes"]):
            for r in runs:
                med, same, block, apart = r["sizes"][b]
                fresh = [n for n, (kind, _) in r["variants"].items() if kind == "legal" and n not in r["stale"]]
                best = fastest(med, fresh)
                if best is None:
                    raise Refused("%s: %d bytes: no legal sequence fresh at every size" % (r["path"], b))
                polled = fastest(med, [n for n in fresh if r["variants"][n][1] in POLLED])
                blocked = fastest(med, [n for n in fresh if r["variants"][n][1] in BLOCKING])
                lines.append("| %s | %s | `%s` | %s | %s | %s | %s | %s | %.2f | %.2f (`%s`) |" % (
                    size_name(b), pace_name(r, block, apart), best, us(med[best]),
                    us(med[polled]) if polled else "–", us(med[blocked]) if blocked else "–", r["info"]["views"],
                    us(med[AUTO]), med[AUTO] / med[best], med[same] / med[best], same[len("clzero."):]))
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
