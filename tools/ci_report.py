#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the test suite's times in docs/reliability.md from the committed
log of one run of the README's test command, or with --check verifies that
the block is what the log gives.

The log is the whole output of `.ci/run` on a clean clone, captured with
the command docs/reliability.md gives, whose last line is
    .ci/run: exit STATUS after SECONDS s
in docs/logs/ci/<run>/ci.log, with a SOURCE file saying which run. From it
the block takes every CTest entry's result line, CTest's own count
("N% tests passed, F tests failed out of T"), its "Label Time Summary" and
its "Total Test time (real)". A log that lacks any of them, names an entry
twice, skips a number, counts otherwise than its result lines, or did not
end with exit status 0 is refused, naming the file and what is wrong.

  tools/ci_report.py            rewrite the block in docs/reliability.md
  tools/ci_report.py --check    exit 1 when the block differs from the log
  options: --doc FILE, --run DIR
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from one_block import BlockError, OneBlock  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "reliability.md")
RUN = os.path.join(ROOT, "docs", "logs", "ci", "39-ci-times")
BLOCK = OneBlock("ci_report", "times", 8000)
# The README's command for work in progress leaves these labels out.
LEFT_OUT_WHILE_WORKING = ("sanitizers", "build_matrix", "consumption", "oclgrind")

RESULT = re.compile(r"^\s*(\d+)/(\d+) Test\s+#(\d+): (\S+) \.+\s*(?:\*\*\*)?(\S.*?)\s+([0-9.]+) sec\s*$")
COUNT = re.compile(r"^(\d+)% tests passed, (\d+) tests? failed out of (\d+)\s*$")
LABEL = re.compile(r"^(\S+)\s+=\s+([0-9.]+) sec\*proc \((\d+) tests?\)\s*$")
TOTAL = re.compile(r"^Total Test time \(real\) =\s+([0-9.]+) sec\s*$")
INSTALLED_NOTHING = re.compile(r"^install-deps: all \d+ packages present\s*$")
INSTALLED = re.compile(r"^install-deps: done\s*$")
END = re.compile(r"^\.ci/run: exit (\d+) after (\d+) s\s*$")


class Malformed(Exception):
    pass


def rel(path):
    return os.path.relpath(path, ROOT)


def parse(path):
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise Malformed("%s: %s" % (rel(path), e))
    where = rel(path)
    results, labels, count, total, end = {}, {}, None, None, None
    in_labels = False
    for n, line in enumerate(lines, 1):
        m = RESULT.match(line)
        if m:
            _, of, number, name, status, secs = m.groups()
            if name in results:
                raise Malformed("%s:%d: entry %s has a second result line" % (where, n, name))
            status = {"Passed": "passed", "Skipped": "skipped"}.get(status.strip("*"), "failed")
            results[name] = (int(number), status, float(secs), int(of))
            continue
        m = COUNT.match(line)
        if m:
            if count:
                raise Malformed("%s:%d: a second CTest count line (the log holds two runs)" % (where, n))
            count = tuple(int(x) for x in m.groups())
            continue
        if line.strip() == "Label Time Summary:":
            if labels:
                raise Malformed("%s:%d: a second Label Time Summary" % (where, n))
            in_labels = True
            continue
        if in_labels:
            m = LABEL.match(line)
            if m:
                label, secs, entries = m.groups()
                labels[label] = (float(secs), int(entries))
                continue
            if line.strip():
                raise Malformed("%s:%d: %r in the Label Time Summary is not 'label = S sec*proc (N tests)'" %
                                (where, n, line.strip()[:80]))
            in_labels = False
            continue
        m = TOTAL.match(line)
        if m:
            total = float(m.group(1))
            continue
        m = END.match(line)
        if m:
            end = (int(m.group(1)), int(m.group(2)))
    if any(INSTALLED_NOTHING.match(x) for x in lines):
        install = "the packages were all there"
    elif any(INSTALLED.match(x) for x in lines):
        install = "installing the packages it lacked"
    else:
        raise Malformed("%s: no line of .ci/install-deps saying what it installed" % where)
    if not results:
        raise Malformed("%s: no CTest result line ('N/T Test #K: name ... Passed S sec')" % where)
    if count is None:
        raise Malformed("%s: no 'N%% tests passed, F tests failed out of T' line" % where)
    if not labels:
        raise Malformed("%s: no Label Time Summary" % where)
    if total is None:
        raise Malformed("%s: no 'Total Test time (real)' line" % where)
    last = next((x for x in reversed(lines) if x.strip()), "")
    if end is None or not END.match(last):
        raise Malformed("%s: does not end with '.ci/run: exit STATUS after SECONDS s' (capture it with the "
                        "command docs/reliability.md gives)" % where)
    totals = {r[3] for r in results.values()}
    if totals != {count[2]}:
        raise Malformed("%s: result lines count %s entries, CTest's count line %d" %
                        (where, "/".join(str(t) for t in sorted(totals)), count[2]))
    if len(results) != count[2]:
        raise Malformed("%s: %d result lines for the %d entries CTest counted (the log is cut)" %
                        (where, len(results), count[2]))
    numbers = sorted(r[0] for r in results.values())
    if numbers != list(range(1, count[2] + 1)):
        raise Malformed("%s: entry numbers are not 1 to %d once each" % (where, count[2]))
    failed = sorted(name for name, r in results.items() if r[1] == "failed")
    if len(failed) != count[1]:
        raise Malformed("%s: %d result lines failed, CTest's count line says %d" % (where, len(failed), count[1]))
    if end[0] != 0 or failed:
        raise Malformed("%s: the run failed (exit status %d; failed: %s): only a passing run is reported" %
                        (where, end[0], ", ".join(failed) or "none"))
    for label, (secs, entries) in labels.items():
        if entries > count[2]:
            raise Malformed("%s: label %s counts %d entries of %d" % (where, label, entries, count[2]))
    return results, labels, total, end[1], install


def seconds(secs):
    return "%.1f" % secs if secs < 10 else "%.0f" % secs


def generate(run):
    try:
        with open(os.path.join(run, "SOURCE"), encoding="utf-8") as f:
            source = f.read().strip()
    except OSError as e:
        raise Malformed("%s: no SOURCE file saying which run the log is of (%s)" % (rel(run), e))
    if not source or "\n" in source:
        raise Malformed("%s/SOURCE: needs one line saying which run the log is of" % rel(run))
    log = os.path.join(run, "ci.log")
    results, labels, total, wall, install = parse(log)
    # Named as it lies in the repository, wherever --run found it.
    shown = "docs/logs/ci/%s/ci.log" % os.path.basename(os.path.normpath(run))
    skipped = sorted(name for name, r in results.items() if r[1] == "skipped")
    summed = sum(r[2] for r in results.values())
    rows = ["| label | entries | their times summed (s) |", "|---|--:|--:|"]
    for label in sorted(labels):
        secs, entries = labels[label]
        rows.append("| `%s` | %d | %s |" % (label, entries, seconds(secs)))
    out_secs = sum(labels[lb][0] for lb in LEFT_OUT_WHILE_WORKING if lb in labels)
    missing = [lb for lb in LEFT_OUT_WHILE_WORKING if lb not in labels]
    if missing:
        raise Malformed("%s: no label %s, which the README's command for work in progress leaves out" %
                        (rel(log), ", ".join(missing)))
    return "\n".join([
        "<!-- generated by tools/ci_report.py from %s; do not edit by hand -->" % shown,
        "",
        "From [`%s`](%s): %s. `.ci/run` took %d s in all (%s); CTest ran %d entries two at a time in %.0f s "
        "(their own times sum to %.0f s): %d passed, %d skipped%s, none failed." %
        (shown, os.path.relpath(os.path.join(ROOT, shown), os.path.dirname(DOC)), source, wall, install, len(results), total,
         summed, len(results) - len(skipped), len(skipped),
         " (%s; the log says why)" % ", ".join("`%s`" % s for s in skipped) if skipped else ""),
        "The labels the README's command for work in progress leaves out (`%s`) account for %.0f s of the "
        "%.0f s the entries took. An entry with several labels counts under each." %
        ("|".join(LEFT_OUT_WHILE_WORKING), out_secs, summed),
        "",
    ] + rows) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--doc", default=DOC)
    ap.add_argument("--run", default=RUN)
    args = ap.parse_args(argv)
    doc = os.path.relpath(args.doc)
    try:
        with open(args.doc, encoding="utf-8") as f:
            text = f.read()
        new = BLOCK.render(text, generate(args.run), doc)
    except (Malformed, BlockError, OSError) as e:
        print("ci_report: %s" % e, file=sys.stderr)
        return 1
    if args.check:
        if new != text:
            print("ci_report: %s differs from what %s gives; run tools/ci_report.py" %
                  (doc, os.path.relpath(args.run)), file=sys.stderr)
            return 1
        print("ci_report: %s matches the log" % doc)
        return 0
    if new != text:
        with open(args.doc, "w", encoding="utf-8") as f:
            f.write(new)
    print("ci_report: wrote %s" % doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
