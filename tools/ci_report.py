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
  options: --doc FILE, --run DIR, --readme FILE (where the labels left out
  while working are read)
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from one_block import LogRefused as Malformed, OneBlock, log_block_main, log_lines, read_source  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "reliability.md")
RUN = os.path.join(ROOT, "docs", "logs", "ci", "45-ci-times")
BLOCK = OneBlock("ci_report", "times", 8000)
README = os.path.join(ROOT, "README.md")

RESULT = re.compile(r"^\s*(\d+)/(\d+) Test\s+#(\d+): (\S+) \.+\s*(?:\*\*\*)?(\S.*?)\s+([0-9.]+) sec\s*$")
COUNT = re.compile(r"^(\d+)% tests passed, (\d+) tests? failed out of (\d+)\s*$")
LABEL = re.compile(r"^(\S+)\s+=\s+([0-9.]+) sec\*proc \((\d+) tests?\)\s*$")
TOTAL = re.compile(r"^Total Test time \(real\) =\s+([0-9.]+) sec\s*$")
INSTALLED_NOTHING = re.compile(r"^install-deps: all \d+ packages present\s*$")
INSTALLED = re.compile(r"^install-deps: done\s*$")
INSTALLED_ONE = re.compile(r"^install-deps: installing \S")
NOT_RUN = re.compile(r"^\s+\d+ - (\S+) \((?:Skipped|Disabled)\)\s*$")
END = re.compile(r"^\.ci/run: exit (\d+) after (\d+) s\s*$")



def rel(path):
    return os.path.relpath(path, ROOT)


def parse(path):
    lines = log_lines(path, ROOT)
    where = rel(path)
    results, labels, count, total, end, did_not_run = {}, {}, None, None, None, set()
    in_labels = seen_labels = in_not_run = False
    for n, line in enumerate(lines, 1):
        m = RESULT.match(line)
        if m:
            done, of, number, name, status, secs = m.groups()
            if name in results:
                raise Malformed("%s:%d: entry %s has a second result line" % (where, n, name))
            if not 1 <= int(done) <= int(of):
                raise Malformed("%s:%d: progress %s/%s is out of range" % (where, n, done, of))
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
            if seen_labels:
                raise Malformed("%s:%d: a second Label Time Summary" % (where, n))
            in_labels = seen_labels = True
            continue
        if in_labels:
            m = LABEL.match(line)
            if m:
                label, secs, entries = m.groups()
                if label in labels:
                    raise Malformed("%s:%d: label %s twice in the Label Time Summary" % (where, n, label))
                labels[label] = (float(secs), int(entries))
                continue
            if line.strip():
                raise Malformed("%s:%d: %r in the Label Time Summary is not 'label = S sec*proc (N tests)'" %
                                (where, n, line.strip()[:80]))
            in_labels = False
            continue
        if line.strip() == "The following tests did not run:":
            in_not_run = True
            continue
        if in_not_run:
            m = NOT_RUN.match(line)
            if m:
                did_not_run.add(m.group(1))
                continue
            in_not_run = False
        m = TOTAL.match(line)
        if m:
            if total is not None:
                raise Malformed("%s:%d: a second 'Total Test time' line (the log holds two runs)" % (where, n))
            total = float(m.group(1))
            continue
        m = END.match(line)
        if m:
            if end is not None:
                raise Malformed("%s:%d: a second '.ci/run: exit' line (the log holds two runs)" % (where, n))
            end = (int(m.group(1)), int(m.group(2)))
    first = next((x for x in lines if x.strip()), "")
    outcomes = [x for x in lines if INSTALLED_NOTHING.match(x) or INSTALLED.match(x)]
    if len(outcomes) != 1 or not (INSTALLED_NOTHING.match(first) or INSTALLED_ONE.match(first)):
        raise Malformed("%s: .ci/install-deps' first line must open the log and its outcome appear once (found "
                        "%d outcome lines)" % (where, len(outcomes)))
    install = ("the packages were all there" if INSTALLED_NOTHING.match(outcomes[0]) else
               "installing the packages it lacked")
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
    if count[0] != int(100 * (count[2] - count[1]) / count[2]):
        raise Malformed("%s: CTest's count line says %d%% passed, which %d failed of %d is not" %
                        (where, count[0], count[1], count[2]))
    skipped = {name for name, r in results.items() if r[1] == "skipped"}
    if skipped != did_not_run:
        raise Malformed("%s: the skipped result lines (%s) are not the list of tests that did not run (%s)" %
                        (where, ", ".join(sorted(skipped)) or "none", ", ".join(sorted(did_not_run)) or "none"))
    if end[0] != 0 or failed:
        raise Malformed("%s: the run failed (exit status %d; failed: %s): only a passing run is reported" %
                        (where, end[0], ", ".join(failed) or "none"))
    summed = sum(r[2] for r in results.values())
    for label, (secs, entries) in labels.items():
        if entries > count[2] or secs > summed + 0.01 * count[2]:
            raise Malformed("%s: label %s counts %d entries and %.2f s, of %d entries and %.2f s in all" %
                            (where, label, entries, secs, count[2], summed))
    if end[1] < total:
        raise Malformed("%s: .ci/run took %d s in all, less than CTest's %.0f s" % (where, end[1], total))
    return results, labels, total, end[1], install


def left_out_while_working(readme):
    """The labels the README's command for work in progress leaves out."""
    lines = log_lines(readme, ROOT)
    found = [m.group(1) for m in (re.search(r'^ctest --test-dir build -LE "([^"]+)"', x) for x in lines) if m]
    if len(found) != 1:
        raise Malformed("%s: needs one line 'ctest --test-dir build -LE \"...\"' (found %d)" %
                        (rel(readme), len(found)))
    return tuple(found[0].split("|"))


def seconds(secs):
    return "%.1f" % secs if secs < 10 else "%.0f" % secs


def generate(run, readme=README):
    source = read_source(run, ROOT)
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
    left_out = left_out_while_working(readme)
    missing = [lb for lb in left_out if lb not in labels]
    if missing:
        raise Malformed("%s: no label %s, which the README's command for work in progress leaves out" %
                        (rel(log), ", ".join(missing)))
    out_secs = sum(labels[lb][0] for lb in left_out)
    if out_secs > summed:
        raise Malformed("%s: the labels %s sum to %.0f s, more than the %.0f s of every entry (an entry in "
                        "several of them)" % (rel(log), "|".join(left_out), out_secs, summed))
    return "\n".join([
        "<!-- generated by tools/ci_report.py from %s; do not edit by hand -->" % shown,
        "",
        "From [`%s`](%s): %s. `.ci/run` took %d s in all (%s); CTest ran %d entries with `-j2` in %.0f s "
        "(their own times sum to %.0f s): %d passed, %d skipped%s, none failed." %
        (shown, os.path.relpath(os.path.join(ROOT, shown), os.path.dirname(DOC)), source, wall, install,
         len(results), total, summed, len(results) - len(skipped), len(skipped),
         " (%s)" % ", ".join("`%s`" % s for s in skipped) if skipped else ""),
        "The label times of the groups the README's command for work in progress leaves out (`%s`) sum to "
        "%.0f s of the %.0f s the entries took. An entry with several labels counts under each." %
        ("|".join(left_out), out_secs, summed),
        "",
    ] + rows) + "\n"


def main(argv=None):
    return log_block_main(__doc__, BLOCK, {"doc": DOC, "run": RUN, "readme": README},
                          lambda args, text: generate(args.run, args.readme), argv)


if __name__ == "__main__":
    sys.exit(main())
