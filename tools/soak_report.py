#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the long soak's result in docs/reliability.md from the committed
output of one run of clzero_soak, or with --check verifies that the block
is what the output gives.

The run is docs/logs/ci/<run>/soak.log, clzero_soak's whole output followed
by the line "exit status N" (the command in the folder's SOURCE file, which
says which commit and machine). The block takes the device line, every
thread's line, every subject's line and the closing summary; a log that
lacks any of them, whose threads or subjects do not add up to the summary,
that found a wrong element, or that did not end with PASS and exit status 0
is refused, naming the file and what is wrong.

  tools/soak_report.py            rewrite the block in docs/reliability.md
  tools/soak_report.py --check    exit 1 when the block differs from the log
  options: --doc FILE, --run DIR
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from one_block import LogRefused as Malformed, OneBlock, log_block_main, log_lines, read_source  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "reliability.md")
RUN = os.path.join(ROOT, "docs", "logs", "ci", "39-soak")
BLOCK = OneBlock("soak_report", "soak", 6000)

DEVICE = re.compile(r"^clzero tests on: (.+?) \| (.+?) \| (.+?) \| driver (\S+)\s*$")
THREAD = re.compile(r"^thread (\d+): (\d+) inferences, (\d+) tensors, (\d+) elements checked, (\d+) wrong\s*$")
SUBJECT = re.compile(r"^  (\S+) (u32|u8)\s+(\d+) inferences\s*$")
SUMMARY = re.compile(r"^soak: (\d+) inferences on (\d+) threads with a queue each, (\d+) tensors, (\d+) elements "
                     r"checked, (\d+) wrong, (\d+) refused allocation\(s\) made when asked again, ([0-9.]+) s "
                     r"\(seed (\d+)\)\s*$")
EXIT = re.compile(r"^exit status (\d+)\s*$")
REFUSED = re.compile(r"^  (\d+) refused allocation\(s\) made when asked again after clFinish and 10 ms; the first: ")
TYPES = ("u32", "u8")
# The soak's subjects (tests/soak/soak.cpp): on every device, and where the
# device offers the memory.
SUBJECTS = ("MapPerInference(alloc_host_ptr)", "MapPerInference(use_host_ptr)", "Persistent(alloc_host_ptr)",
            "Persistent(use_host_ptr)", "CopyToPinned", "Auto")
SUBJECTS_WHERE_OFFERED = ("Svm(fine)", "Svm(coarse)")



def parse(path):
    where = os.path.relpath(path, ROOT)
    lines = [x for x in log_lines(path, ROOT) if x.strip()]
    if len(lines) < 2 or not EXIT.match(lines[-1]) or lines[-2] != "PASS":
        raise Malformed("%s: does not end with 'PASS' and 'exit status N' (the soak's last line, then the "
                        "capture's)" % where)
    device, summary, status = None, None, int(EXIT.match(lines[-1]).group(1))
    threads, subjects, refused = [], {}, 0
    for n, line in enumerate(lines[:-2], 1):
        m = DEVICE.match(line)
        if m:
            if device or n != 1:
                raise Malformed("%s: a device line other than the first line (the log holds two runs)" % where)
            device = m.groups()
            continue
        if line.startswith("clzero tests: host views wait: "):
            continue
        m = THREAD.match(line)
        if m:
            if summary or subjects or int(m.group(1)) != len(threads):
                raise Malformed("%s: thread line %r out of order (threads 0, 1, ... before the subjects)" %
                                (where, line[:40]))
            threads.append(tuple(int(x) for x in m.groups()[1:]))
            continue
        m = REFUSED.match(line)
        if m and threads and not subjects:
            refused += int(m.group(1))
            continue
        m = SUBJECT.match(line)
        if m:
            key = (m.group(1), m.group(2))
            if key in subjects or summary:
                raise Malformed("%s: subject %s %s twice, or after the summary" % (where, key[0], key[1]))
            if key[0] not in SUBJECTS + SUBJECTS_WHERE_OFFERED:
                raise Malformed("%s: %s is no subject of the soak (tests/soak/soak.cpp)" % (where, key[0]))
            subjects[key] = int(m.group(3))
            continue
        m = SUMMARY.match(line)
        if m:
            if summary:
                raise Malformed("%s: a second summary line (the log holds two runs)" % where)
            g = m.groups()
            summary = dict(inferences=int(g[0]), threads=int(g[1]), tensors=int(g[2]), elements=int(g[3]),
                           wrong=int(g[4]), refused=int(g[5]), seconds=float(g[6]), seed=g[7])
            continue
        raise Malformed("%s: line %r is none the soak writes when it passes" % (where, line[:80]))
    for what, value in (("device line ('clzero tests on: ...')", device), ("thread line", threads),
                        ("subject line", subjects), ("summary line ('soak: N inferences on ...')", summary)):
        if not value:
            raise Malformed("%s: no %s" % (where, what))
    if len(threads) != summary["threads"]:
        raise Malformed("%s: %d thread lines for the summary's %d threads" % (where, len(threads), summary["threads"]))
    for i, key in enumerate(("inferences", "tensors", "elements", "wrong")):
        total = sum(t[i] for t in threads)
        if total != summary[key]:
            raise Malformed("%s: the threads' %s add up to %d, the summary says %d" % (where, key, total,
                                                                                      summary[key]))
    if refused != summary["refused"]:
        raise Malformed("%s: the threads met %d refused allocations, the summary says %d" %
                        (where, refused, summary["refused"]))
    if sum(subjects.values()) != summary["inferences"]:
        raise Malformed("%s: the subjects' inferences add up to %d, the summary says %d" %
                        (where, sum(subjects.values()), summary["inferences"]))
    missing = [s for s in SUBJECTS if not any(name == s for name, _ in subjects)]
    if missing:
        raise Malformed("%s: no inference of %s" % (where, ", ".join(missing)))
    if summary["wrong"] or status != 0:
        raise Malformed("%s: the soak failed (%d wrong, exit status %d): only a passing run is reported" %
                        (where, summary["wrong"], status))
    return device, summary, subjects


def grouped(n):
    return "{:,}".format(n)


def plural(n, word):
    return "%s %s%s" % (grouped(n), word, "" if n == 1 else "s")


def generate(run, doc_text):
    source = read_source(run, ROOT)
    device, s, subjects = parse(os.path.join(run, "soak.log"))
    # The command that ran must be the one SOURCE names and the one the page shows.
    command = "build/tests/soak/clzero_soak --inferences %d --threads %d --seed %s" % (s["inferences"], s["threads"],
                                                                                    s["seed"])
    if "`%s`" % command not in source:
        raise Malformed("%s/SOURCE: does not name the command the log's summary implies (`%s`)" %
                        (os.path.relpath(run, ROOT), command))
    before, _, after = BLOCK.split(doc_text, "the page")
    if command not in before + after:
        raise Malformed("the page does not show the command the log's summary implies (%s)" % command)
    shown = "docs/logs/ci/%s/soak.log" % os.path.basename(os.path.normpath(run))
    names = sorted({name for name, _ in subjects})
    rows = ["| subject | `uint32` | `uint8` | both |", "|---|--:|--:|--:|"]
    for name in names:
        counts = [subjects.get((name, t), 0) for t in TYPES]
        rows.append("| `%s` | %s | %s | %s |" % (name, grouped(counts[0]), grouped(counts[1]), grouped(sum(counts))))
    return "\n".join([
        "<!-- generated by tools/soak_report.py from %s; do not edit by hand -->" % shown,
        "",
        "From [`%s`](%s): %s. %s (%s, driver %s): **%s on %s, %s, %s checked, %d wrong**, in %.1f s "
        "(%.1f min); %s made when asked again. Inferences per subject:" %
        (shown, os.path.relpath(os.path.join(ROOT, shown), os.path.dirname(DOC)), source, device[1], device[0],
         device[3], plural(s["inferences"], "inference"), plural(s["threads"], "thread"),
         plural(s["tensors"], "tensor"), plural(s["elements"], "element"), s["wrong"], s["seconds"],
         s["seconds"] / 60, plural(s["refused"], "refused allocation")),
        "",
    ] + rows) + "\n"


def main(argv=None):
    return log_block_main(__doc__, BLOCK, {"doc": DOC, "run": RUN},
                          lambda args, text: generate(args.run, text), argv)


if __name__ == "__main__":
    sys.exit(main())
