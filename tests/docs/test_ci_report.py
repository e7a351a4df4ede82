#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tools/ci_report.py --check passes on the committed document and log and
fails, at the check meant for it, on every kind of damage: the block
missing, doubled or with a number changed; the log cut short, a result line
lost or repeated, an entry failed (counted so or not), a skipped entry
turned passed, a label or the total twice, a label longer than every entry,
the label summary, total, count line or closing line gone, a second run in
front, inside or after, install-deps' outcome twice, a count line's
percentage off, less time in all than CTest's, a non-zero exit, bad UTF-8;
the README leaving out a label the log lacks; no SOURCE."""

import os
import re
import sys

from log_damage import ROOT, LogDamage

RUN = os.path.join(ROOT, "docs", "logs", "ci", "45-ci-times")
RESULT_LINE = r"(\d+/\d+ Test\s+#\d+: \S+ \.+\s*)"


def main():
    d = LogDamage("ci_report", os.path.join(ROOT, "docs", "reliability.md"), RUN, "ci.log")
    log = d.log
    d.run("the committed document and log", True)
    d.block_cases("<!-- ci_report:begin times -->", "<!-- ci_report:end times -->", "| `sanitizers`",
                  lambda row: re.sub(r"\| (\d+) \|$", lambda m: "| %d |" % (int(m.group(1)) + 1), row))
    d.run("the log cut before the label summary", False, log_text=log[:log.index("Label Time Summary:")],
          expect="no Label Time Summary")
    d.log_edit("a result line lost", r"^.*\d+/\d+ Test\s+#\d+: .*sec\n", "", expect="the log is cut")
    first = re.search(r"^.*\d+/\d+ Test\s+#\d+: .*sec$", log, re.M).group(0)
    d.run("a result line twice", False, log_text=log.replace(first, first + "\n" + first, 1),
          expect="a second result line")
    failed = d.edited("an entry failed", log, RESULT_LINE + "Passed", r"\1***Failed")
    failed = d.edited("an entry failed", failed, r"^100% tests passed, 0 tests failed", "99% tests passed, 1 tests failed")
    d.run("an entry failed, counted so", False, log_text=failed, expect="only a passing run")
    d.log_edit("an entry failed, counted otherwise", RESULT_LINE + "Passed", r"\1***Failed",
               expect="CTest's count line says 0")
    d.log_edit("a skipped entry turned passed", RESULT_LINE + r"\*\*\*Skipped", r"\1Passed", expect="did not run")
    d.log_edit("a label twice", r"^(sanitizers\s+=.*)$", r"\1\n\1", expect="twice in the Label Time Summary")
    d.log_edit("a label garbled", r"^(sanitizers\s+=\s+)[0-9.]+ sec\*proc", r"\1many sec*proc",
               expect="is not 'label = S sec*proc")
    d.log_edit("a label longer than every entry", r"^(pocl\s+=\s+)[0-9.]+", r"\g<1>99999.72", expect="label pocl")
    d.log_edit("the total twice", r"^(Total Test time \(real\).*)$", r"\1\n\1", expect="second 'Total Test time'")
    d.log_edit("no total test time", r"^Total Test time \(real\).*$", "", expect="no 'Total Test time")
    d.log_edit("no CTest count line", r"^\d+% tests passed.*$", "", expect="tests passed, F tests failed")
    d.log_edit("a count line's percentage off", r"^100% tests passed", "3% tests passed", expect="% passed")
    d.log_edit("a second count line", r"^(Total Test time \(real\).*)$",
               r"\1\n100% tests passed, 0 tests failed out of 3", expect="the log holds two runs")
    d.run("a failed capture in front", False, log_text="install-deps: all 19 packages present\nCMake Error: x\n"
          ".ci/run: exit 2 after 30 s\n" + log, expect="the log holds two runs")
    d.log_edit("a second closing line inside", r"^(Total Test time \(real\).*)$", r"\1\n.ci/run: exit 1 after 3 s",
               expect="the log holds two runs")
    d.run("install-deps twice", False, log_text="install-deps: installing clang\ninstall-deps: done\n" + log,
          expect="outcome appear once")
    d.log_edit("the closing line missing", r"^\.ci/run: exit .*$", "", expect="does not end with")
    d.log_edit("a non-zero exit", r"^\.ci/run: exit 0 after", ".ci/run: exit 8 after", expect="only a passing run")
    d.log_edit("less time in all than in CTest", r"^(\.ci/run: exit 0 after )\d+", r"\g<1>5", expect="less than")
    d.run("bad UTF-8", False, log_text="\udcff" + log, expect="ci.log")
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    d.run("the README leaves out a label the log lacks", False, expect="no label nosuchlabel",
          extra=[("--readme", "README.md", readme.replace('-LE "sanitizers|', '-LE "nosuchlabel|sanitizers|', 1))])
    d.run("no SOURCE", False, source_text="", expect="no SOURCE file")
    return d.finish()


if __name__ == "__main__":
    sys.exit(main())
