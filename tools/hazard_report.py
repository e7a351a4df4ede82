#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the hazard checker's table in docs/reliability.md from committed
reports, or with --check verifies that the table is what they give.

The reports are the files the `hazard.*` CTest entries write
(CLZERO_HAZARD_REPORT, tests/fault_injection/run_hazard_checked.cmake),
copied from one run of the README's test command into docs/logs/ci/hazard/,
with a SOURCE file saying which run. Every entry that
tests/fault_injection/CMakeLists.txt defines with clzero_hazard_test() must
have its report, and no report may lack its entry; every report must hold
exactly the keys the checker writes, each a whole number. Anything else is an
error naming the file and what is wrong.

  tools/hazard_report.py            rewrite the block in docs/reliability.md
  tools/hazard_report.py --check    exit 1 when the block differs from the reports
  options: --doc FILE, --reports DIR, --cmake FILE
"""

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "reliability.md")
REPORTS = os.path.join(ROOT, "docs", "logs", "ci", "hazard")
CMAKE = os.path.join(ROOT, "tests", "fault_injection", "CMakeLists.txt")
BEGIN = "<!-- hazard_report:begin hazards -->"
END = "<!-- hazard_report:end hazards -->"
KEYS = ("commands", "accesses", "pairs", "hazards", "unflushed_waits", "dropped")
# What an entry runs, where its name does not say it.
WHAT = {
    "main_suite": "all of `clzero_tests`",
    "main_suite.map_at_view": "all of `clzero_tests`, every view mapping as it opens",
    "queues": "out-of-order, two queues",
    "soak": "3000 inferences, 2 threads",
}


class Malformed(Exception):
    pass


def rel(path):
    return os.path.relpath(path, ROOT)


def entries(cmake):
    try:
        with open(cmake, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise Malformed("%s: %s" % (rel(cmake), e))
    names = re.findall(r"^\s*clzero_hazard_test\(([A-Za-z0-9_.]+)\s", text, re.M)
    if not names:
        raise Malformed("%s: defines no clzero_hazard_test() entry" % rel(cmake))
    return names


def read_report(path):
    try:
        with open(path, encoding="utf-8") as f:
            lines = [line.rstrip("\n") for line in f if line.strip()]
    except OSError as e:
        raise Malformed("%s: %s" % (rel(path), e))
    values = {}
    for line in lines:
        m = re.fullmatch(r"([a-z_]+): (\S+)", line)
        if not m:
            raise Malformed("%s: line %r is not 'key: value'" % (rel(path), line))
        key, value = m.groups()
        if key not in KEYS:
            raise Malformed("%s: unknown key %r (the checker writes %s)" % (rel(path), key, ", ".join(KEYS)))
        if key in values:
            raise Malformed("%s: key %r twice" % (rel(path), key))
        if not re.fullmatch(r"[0-9]+", value):
            raise Malformed("%s: %s is %r, not a whole number" % (rel(path), key, value))
        values[key] = int(value)
    missing = [k for k in KEYS if k not in values]
    if missing:
        raise Malformed("%s: missing %s" % (rel(path), ", ".join(missing)))
    # Such a report cannot stand for "no hazard" (the CTest entry fails on it too).
    if values["commands"] == 0:
        raise Malformed("%s: the checker checked no command" % rel(path))
    if values["dropped"] != 0:
        raise Malformed("%s: the checker dropped %d accesses of its history, so it may have missed a pair" %
                        (rel(path), values["dropped"]))
    return values


def generate(reports, cmake):
    names = entries(cmake)
    try:
        with open(os.path.join(reports, "SOURCE"), encoding="utf-8") as f:
            source = f.read().strip()
    except OSError as e:
        raise Malformed("%s: no SOURCE file saying which run the reports are from (%s)" % (rel(reports), e))
    if not source or "\n" in source:
        raise Malformed("%s/SOURCE: needs one line saying which run the reports are from" % rel(reports))
    files = sorted(n for n in os.listdir(reports) if n != "SOURCE")
    stray = [n for n in files if not (n.startswith("hazard-") and n.endswith(".txt")) or
             n[len("hazard-"):-len(".txt")] not in names]
    if stray:
        raise Malformed("%s: %s is no report of an entry that %s defines" % (rel(reports), ", ".join(stray),
                                                                         rel(cmake)))
    rows = ["| entry | commands checked | pairs checked | hazards | unflushed cross-queue waits |",
            "|---|--:|--:|--:|--:|"]
    total = {"commands": 0, "pairs": 0, "hazards": 0, "unflushed_waits": 0}
    for name in names:
        path = os.path.join(reports, "hazard-%s.txt" % name)
        if not os.path.exists(path):
            raise Malformed("%s: no report for hazard.%s (copy %s from the build)" %
                            (rel(reports), name, os.path.basename(path)))
        v = read_report(path)
        label = "`hazard.%s`" % name + (" (%s)" % WHAT[name] if name in WHAT else "")
        rows.append("| %s | %d | %d | %d | %d |" % (label, v["commands"], v["pairs"], v["hazards"],
                                                    v["unflushed_waits"]))
        for k in total:
            total[k] += v[k]
    verdict = ("no hazard and no unflushed cross-queue wait in any entry" if total["hazards"] == 0 and
               total["unflushed_waits"] == 0 else "**%d hazards and %d unflushed cross-queue waits**" %
               (total["hazards"], total["unflushed_waits"]))
    return "\n".join([
        "<!-- generated by tools/hazard_report.py from docs/logs/ci/hazard; do not edit by hand -->",
        "",
        "From `%s`: %s. %s commands and %s pairs checked in %d entries; %s." %
        (rel(reports), source, total["commands"], total["pairs"], len(names), verdict),
        "",
    ] + rows) + "\n"


def split(text, doc):
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        raise Malformed("%s: needs exactly one %s and one %s line" % (doc, BEGIN, END))
    b, e = text.index(BEGIN), text.index(END)
    if e < b:
        raise Malformed("%s: the end marker comes before the begin marker" % doc)
    return text[:b + len(BEGIN)] + "\n", text[e:]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--doc", default=DOC)
    ap.add_argument("--reports", default=REPORTS)
    ap.add_argument("--cmake", default=CMAKE)
    args = ap.parse_args(argv)
    doc = os.path.relpath(args.doc)
    try:
        with open(args.doc, encoding="utf-8") as f:
            text = f.read()
        head, tail = split(text, doc)
        new = head + generate(args.reports, args.cmake) + tail
    except (Malformed, OSError) as e:
        print("hazard_report: %s" % e, file=sys.stderr)
        return 1
    if args.check:
        if new != text:
            print("hazard_report: %s differs from what %s gives; run tools/hazard_report.py" %
                  (doc, os.path.relpath(args.reports)), file=sys.stderr)
            return 1
        print("hazard_report: %s matches the reports" % doc)
        return 0
    if new != text:
        with open(args.doc, "w", encoding="utf-8") as f:
            f.write(new)
    print("hazard_report: wrote %s" % doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
