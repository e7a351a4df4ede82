#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tools/soak_report.py --check passes on the committed document and log and
fails, at the check meant for it, on every kind of damage: the block
missing, doubled or with a number changed; a wrong element (in the summary
alone, or in a thread and the summary alike); a thread or subject line lost,
repeated or out of order; a subject the soak has not; a refusal the summary
does not count; the summary or device line gone; a second run in front or
after; a FAIL or second exit line; junk after the closing line; no PASS; a
non-zero exit; SOURCE or the page naming another command; no SOURCE."""

import os
import re
import sys

from log_damage import ROOT, LogDamage

RUN = os.path.join(ROOT, "docs", "logs", "ci", "39-soak")
BEGIN = "<!-- soak_report:begin soak -->"


def main():
    d = LogDamage("soak_report", os.path.join(ROOT, "docs", "reliability.md"), RUN, "soak.log")
    log, text = d.log, d.text
    d.run("the committed document and log", True)
    d.block_cases(BEGIN, "<!-- soak_report:end soak -->", "| `Auto`",
                  lambda row: row.replace("| `Auto` | ", "| `Auto` | 1", 1))
    d.log_edit("a wrong element in the summary alone", r"^(soak: .*elements checked, )0 wrong", r"\g<1>1 wrong",
               expect="the threads' wrong add up to 0")
    both = d.edited("wrong", log, r"^(thread 0: .*) 0 wrong$", r"\1 1 wrong")
    both = d.edited("wrong", both, r"^(soak: .*elements checked), 0 wrong", r"\1, 1 wrong")
    d.run("a wrong element, in a thread and the summary alike", False, log_text=both, expect="the soak failed")
    d.log_edit("a thread line lost", r"^thread 1: .*\n", "", expect="thread lines for the summary's")
    d.log_edit("a thread line twice", r"^(thread 0: .*)$", r"\1\n\1", expect="out of order")
    d.log_edit("thread lines out of order", r"^thread 0:", "thread 5:", expect="out of order")
    d.log_edit("a subject line lost", r"^  Auto u32 .*\n", "", expect="the subjects' inferences add up")
    d.log_edit("a subject line twice", r"^(  Auto u32 .*)$", r"\1\n\1", expect="twice")
    d.log_edit("a subject the soak has not", r"^  Auto u32", "  Magic u32", expect="no subject of the soak")
    d.log_edit("a refusal the summary does not count", r"^(thread 0: .*)$",
               r"\1\n  2 refused allocation(s) made when asked again after clFinish and 10 ms; the first: x",
               expect="refused allocations")
    d.log_edit("no summary", r"^soak: .*$", "", expect="no summary line")
    d.log_edit("no device line", r"^clzero tests on: .*$", "", expect="no device line")
    d.log_edit("a second summary", r"^(soak: .*)$", r"\1\n\1", expect="the log holds two runs")
    d.run("a failed run in front", False, expect="none the soak writes",
          log_text=log.splitlines(True)[0] + "Segmentation fault\nexit status 139\n" + log)
    d.run("a run's device line in front", False, expect="a device line other than the first",
          log_text=log.splitlines(True)[0] + log)
    d.run("junk after the closing line", False, log_text=log + "more\n", expect="does not end with")
    d.log_edit("FAIL before PASS", r"^PASS$", "FAIL\nPASS", expect="none the soak writes")
    d.log_edit("a second exit line", r"^PASS$", "exit status 1\nPASS", expect="none the soak writes")
    d.log_edit("no PASS", r"^PASS$", "", expect="does not end with")
    d.log_edit("a non-zero exit", r"^exit status 0$", "exit status 1", expect="the soak failed")
    d.run("SOURCE names another command", False, source_text=re.sub(r"--seed \d+", "--seed 7", d.source),
          expect="SOURCE: does not name")
    seed = re.search(r"--seed (\d+)", d.source).group(1)
    b = text.index(BEGIN)
    d.run("the page shows another command", False, doc_text=text[:b].replace("--seed " + seed, "--seed 7") + text[b:],
          expect="the page does not show")
    d.run("no SOURCE", False, source_text="", expect="no SOURCE file")
    return d.finish()


if __name__ == "__main__":
    sys.exit(main())
