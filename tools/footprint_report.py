#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The host's footprint of one inference: Callgrind's counts into JSON, and
the JSON into a block of docs/benchmarks.md.

tools/footprint.sh runs `clzero_sequences --sections footprint` under
Callgrind's cache simulator: every serial sequence, hand-written and clzero,
on the null device, each counted inference after 4 MiB were written. The
last level of the simulated cache then misses once for every cache line the
inference touches, code (the level-1 instruction cache is simulated tiny, so
that all code reaches the last level) and data. These counts do not depend
on the machine's load or clock: they say how much of the host's caches an
inference needs, which is what it pays for when the engine's own work
between two inferences has evicted it.

    tools/footprint_report.py --import DIR --name NAME   DIR (tools/footprint.sh's output)
                                                          into docs/bench/footprint/NAME.json
    tools/footprint_report.py                            rewrite the block of docs/benchmarks.md
    tools/footprint_report.py --check                    exit 1 unless the block is what the JSON gives

The block is the text between the lines
    <!-- footprint_report:begin footprint -->
    <!-- footprint_report:end footprint -->
of docs/benchmarks.md, each exactly once and in that order; the text outside
them is copied byte for byte. A malformed profile, a variant counted twice
or not at all, an unknown marker or malformed JSON fails (exit status 1,
naming the file).
"""

import argparse
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from one_block import BlockError, OneBlock  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
JSON_DIR = os.path.join(ROOT, "docs", "bench", "footprint")
BLOCK = "footprint"
TOOL = "footprint_report"
SCHEMA = "clzero.footprint/1"
VARIANTS_SCHEMA = "clzero.footprint-variants/1"
TRIGGER = re.compile(r"^desc: Trigger: Client Request: (cold|warm) ([0-9]+) (\S+)$")
NEEDED_EVENTS = ("Ir", "ILmr", "DLmr", "DLmw")
MAX_BLOCK_BYTES = 40 * 1024


ReportError = BlockError


def rel(path):
    return os.path.relpath(path, ROOT) if os.path.abspath(path).startswith(ROOT) else path


# ---------------------------------------------------------------- import

def read_profile(path):
    """(mode, inferences, variant, {event: total}) of one Callgrind dump, or
    None for a dump no footprint request made (the one at exit)."""
    where = rel(path)
    events, totals, trigger = None, None, None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("totals:"):
                totals = line.split()[1:]
            elif line.startswith("desc: Trigger:"):
                trigger = line
    if trigger is None:
        raise ReportError("%s: no 'desc: Trigger:' line; not a Callgrind profile" % where)
    if "Client Request" not in trigger:
        return None
    m = TRIGGER.match(trigger)
    if not m:
        raise ReportError("%s: trigger %r is not 'cold|warm <count> <variant>'" % (where, trigger[:100]))
    mode, count, variant = m.group(1), int(m.group(2)), m.group(3)
    if count <= 0:
        raise ReportError("%s: %s counted over %d inferences" % (where, variant, count))
    if events is None or totals is None:
        raise ReportError("%s: no 'events:' or 'totals:' line" % where)
    # Callgrind leaves out trailing zero counts (its format's rule: a missing
    # count is zero); more counts than events is damage.
    if len(totals) > len(events) or not totals:
        raise ReportError("%s: %d events but %d totals" % (where, len(events), len(totals)))
    totals = totals + ["0"] * (len(events) - len(totals))
    missing = [e for e in NEEDED_EVENTS if e not in events]
    if missing:
        raise ReportError("%s: events %s missing (run through tools/footprint.sh, which simulates the caches)" %
                          (where, ", ".join(missing)))
    try:
        values = {e: int(t) for e, t in zip(events, totals)}
    except ValueError:
        raise ReportError("%s: a total is not an integer: %s" % (where, " ".join(totals)))
    return mode, count, variant, values


def import_dir(directory, name, json_dir):
    where = rel(directory)
    vpath = os.path.join(directory, "variants.json")
    try:
        with open(vpath, encoding="utf-8") as f:
            described = json.load(f)
    except (OSError, ValueError) as e:
        raise ReportError("%s: %s" % (rel(vpath), e))
    if described.get("schema") != VARIANTS_SCHEMA:
        raise ReportError("%s: schema is %r, expected %r" % (rel(vpath), described.get("schema"), VARIANTS_SCHEMA))
    counted = {}
    profiles = sorted(glob.glob(os.path.join(directory, "callgrind.out.*")))
    if not profiles:
        raise ReportError("%s: no callgrind.out.* profiles" % where)
    for p in profiles:
        got = read_profile(p)
        if got is None:
            continue
        mode, count, variant, values = got
        if (variant, mode) in counted:
            raise ReportError("%s: %s counted twice (%s)" % (where, variant, mode))
        counted[(variant, mode)] = {
            "inferences": count,
            "instructions": round(values["Ir"] / count, 1),
            "code_lines": round(values["ILmr"] / count, 1),
            "data_lines": round((values["DLmr"] + values["DLmw"]) / count, 1),
        }
    variants = []
    for v in described.get("variants", []):
        if v.get("kind") not in ("legal", "clzero") or v.get("slots") != 1:
            continue
        modes = {m: counted.pop((v["name"], m), None) for m in ("cold", "warm")}
        if None in modes.values():
            raise ReportError("%s: %s has no %s profile" %
                              (where, v["name"], " or ".join(m for m, c in modes.items() if c is None)))
        entry = {k: v[k] for k in ("name", "kind", "family", "allocation", "wait")}
        entry.update(modes)
        variants.append(entry)
    if counted:
        raise ReportError("%s: profiles of variants not described in variants.json: %s" %
                          (where, ", ".join(sorted({k[0] for k in counted}))))
    if not any(v["kind"] == "clzero" for v in variants) or not any(v["kind"] == "legal" for v in variants):
        raise ReportError("%s: a footprint needs clzero and hand-written sequences alike" % where)
    context = dict(described.get("context", {}))
    for extra in ("COMMAND", "COMMIT"):
        path = os.path.join(directory, extra)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                context[extra.lower()] = f.read().strip()
    if "commit" not in context:
        raise ReportError("%s: no COMMIT file (the commit whose clzero was counted)" % where)
    wait = re.search(r"CLZERO_HOST_WAIT=(\S*)", context.get("command", ""))
    context["host_wait"] = wait.group(1) if wait else ""
    data = {"schema": SCHEMA, "context": context, "variants": variants}
    os.makedirs(json_dir, exist_ok=True)
    out = os.path.join(json_dir, name + ".json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    print("%s: %d variants" % (rel(out), len(variants)))


# ---------------------------------------------------------------- report

def need(obj, key, where, kind):
    if not isinstance(obj, dict) or key not in obj:
        raise ReportError("%s: '%s' missing" % (where, key))
    if not isinstance(obj[key], kind):
        raise ReportError("%s: '%s' is not a %s" % (where, key, kind.__name__))
    return obj[key]


def load(path):
    where = rel(path)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise ReportError("%s: not readable JSON: %s" % (where, e))
    if data.get("schema") != SCHEMA:
        raise ReportError("%s: schema is %r, expected %r" % (where, data.get("schema"), SCHEMA))
    context = need(data, "context", where, dict)
    for key in ("commit", "platform", "cpu"):
        need(context, key, where + " context", str)
    variants = need(data, "variants", where, list)
    names = set()
    for v in variants:
        name = need(v, "name", where + " variant", str)
        if name in names:
            raise ReportError("%s: %s listed twice" % (where, name))
        names.add(name)
        for key in ("kind", "family", "allocation"):
            need(v, key, where + " " + name, str)
        for mode in ("cold", "warm"):
            m = need(v, mode, where + " " + name, dict)
            for key in ("instructions", "code_lines", "data_lines"):
                value = need(m, key, "%s %s %s" % (where, name, mode), (int, float))
                if value < 0:
                    raise ReportError("%s: %s %s %s is negative" % (where, name, mode, key))
    if not any(v["kind"] == "clzero" for v in variants):
        raise ReportError("%s: no clzero variant" % where)
    return data


def lines(v):
    return v["cold"]["code_lines"] + v["cold"]["data_lines"]


def own_kind(v, legal):
    """The hand-written sequences a clzero policy is held against: those of
    its family and allocation (every one for Auto), as in the timed tables."""
    if not v["family"]:
        return legal
    return [w for w in legal if w["family"] == v["family"] and (not v["allocation"] or w["allocation"] == v["allocation"])]


def num(x):
    return ("%.1f" % x).rstrip("0").rstrip(".")


def run_block(data, name):
    c = data["context"]
    legal = [v for v in data["variants"] if v["kind"] == "legal"]
    if not c.get("host_wait"):
        raise ReportError("docs/bench/footprint/%s.json: no host_wait in its context; count with CLZERO_HOST_WAIT "
                          "set (map, poll or wait), since the method clzero measures for a device under "
                          "Callgrind changes from run to run" % name)
    wait = "views waiting by `CLZERO_HOST_WAIT=%s`" % c["host_wait"]
    ran = (" `Auto` ran %s." % c["auto"]) if c.get("auto") else ""
    out = ["### %s, clzero at %s, %s\n" % (c["platform"], c["commit"], wait),
           "`docs/bench/footprint/%s.json`; CPU: %s. Per inference: cache lines of code and of data touched "
           "with the caches cold, and instructions.%s\n" % (name, c["cpu"], ran)]
    rows = []
    for v in data["variants"]:
        if v["kind"] != "clzero":
            continue
        kind = own_kind(v, legal)
        row = [v["name"], num(v["cold"]["code_lines"]), num(v["cold"]["data_lines"]), num(v["cold"]["instructions"])]
        if kind:
            ref = min(kind, key=lambda w: (lines(w), w["name"]))
            row += ["`%s`" % ref["name"].replace("legal.", ""), num(ref["cold"]["code_lines"]),
                    num(ref["cold"]["data_lines"]), num(ref["cold"]["instructions"]), "%+.0f" % (lines(v) - lines(ref))]
        else:
            row += ["–"] * 5
        rows.append(row)
    header = ["clzero", "code lines", "data lines", "instructions",
              "fewest lines of its kind, hand-written", "its code lines", "its data lines", "its instructions",
              "clzero − it, lines"]
    out.append("| " + " | ".join(header) + " |\n|:--|" + "--:|" * 3 + ":--|" + "--:|" * 4 + "\n" +
               "".join("| " + " | ".join(r) + " |\n" for r in rows))
    if legal:
        fewest, most = min(legal, key=lines), max(legal, key=lines)
        out.append("The hand-written sequences range from %s lines (`%s`) to %s (`%s`).\n" %
                   (num(lines(fewest)), fewest["name"].replace("legal.", ""), num(lines(most)),
                    most["name"].replace("legal.", "")))
    return "\n".join(out)


def generate(runs):
    intro = ("Generated by `tools/footprint_report.py` from `docs/bench/footprint/*.json` (`tools/footprint.sh`: "
             "`clzero_sequences --sections footprint` under Callgrind's cache simulator, the null device "
             "answering the OpenCL calls, 4 MiB written before each counted inference). Counts, not times: "
             "they do not change with the machine's load.\n")
    if not runs:
        return intro + "\nNo footprint committed yet.\n"
    return intro + "\n" + "\n".join(run_block(d, n) for n, d in runs)


def load_runs(json_dir):
    paths = sorted(glob.glob(os.path.join(json_dir, "*.json")))
    return [(os.path.splitext(os.path.basename(p))[0], load(p)) for p in paths]


# ---------------------------------------------------------------- the document

BLOCK_IN_DOC = OneBlock(TOOL, BLOCK, MAX_BLOCK_BYTES)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--import", dest="import_dir", metavar="DIR", help="tools/footprint.sh's output to import")
    ap.add_argument("--name", help="with --import: the JSON's name in docs/bench/footprint")
    ap.add_argument("--check", action="store_true", help="fail unless the document's block is what the JSON gives")
    ap.add_argument("--doc", default=DOC, help="the document (default docs/benchmarks.md)")
    ap.add_argument("--json-dir", default=JSON_DIR, help="the footprints (default docs/bench/footprint)")
    args = ap.parse_args(argv)
    try:
        if args.import_dir:
            if not args.name or not re.match(r"^[A-Za-z0-9_.-]+$", args.name):
                raise ReportError("--import needs --name NAME (letters, digits, '_', '.', '-')")
            import_dir(args.import_dir, args.name, args.json_dir)
            return 0
        generated = generate(load_runs(args.json_dir))
        BLOCK_IN_DOC.write_or_check(args.doc, rel(args.doc), generated, args.check, rel(args.json_dir))
        return 0
    except ReportError as e:
        print("footprint_report: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
