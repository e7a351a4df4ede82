#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tools/ci_report.py --check passes on the committed document and log and
fails on every kind of damage: the block missing, doubled or with a number
changed, the log cut short, a result line lost or repeated, a failed entry,
a non-zero exit, the label summary or the total gone, a label line garbled,
the closing line missing, and no SOURCE."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "ci_report.py")
DOC = os.path.join(ROOT, "docs", "reliability.md")
RUN = os.path.join(ROOT, "docs", "logs", "ci", "39-ci-times")
BEGIN = "<!-- ci_report:begin times -->"
END = "<!-- ci_report:end times -->"


def main():
    failures = []
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    with open(os.path.join(RUN, "ci.log"), encoding="utf-8") as f:
        log = f.read()
    tmp = tempfile.mkdtemp(prefix="ci_report_test")
    try:
        doc = os.path.join(tmp, "reliability.md")

        def run(label, want_ok, doc_text=text, log_text=log, source=True):
            # The block names the run's folder: keep its name.
            run_dir = os.path.join(tmp, "run-%d" % len(os.listdir(tmp)), os.path.basename(RUN))
            os.makedirs(run_dir)
            with open(os.path.join(run_dir, "ci.log"), "w", encoding="utf-8") as f:
                f.write(log_text)
            if source:
                shutil.copy(os.path.join(RUN, "SOURCE"), run_dir)
            with open(doc, "w", encoding="utf-8") as f:
                f.write(doc_text)
            r = subprocess.run([sys.executable, TOOL, "--check", "--doc", doc, "--run", run_dir],
                               capture_output=True, text=True)
            out = (r.stdout + r.stderr).strip()
            if (r.returncode == 0) != want_ok:
                failures.append("%s: exit status %d, expected %s\n%s" % (label, r.returncode,
                                                                        "0" if want_ok else "not 0", out))
            else:
                print("ok: %s (%s)" % (label, out.splitlines()[-1][:140] if out else ""))

        def log_edit(label, pattern, repl, count=1):
            new, n = re.subn(pattern, repl, log, count=count, flags=re.M)
            if n == 0:
                failures.append("%s: the committed log has no line matching %r to damage" % (label, pattern))
                return
            run(label, False, log_text=new)

        run("the committed document and log", True)
        b, e = text.index(BEGIN), text.index(END)
        run("block missing", False, text[:b] + text[e + len(END):])
        run("block doubled", False, text + "\n" + text[b:e + len(END)] + "\n")
        row = next(line for line in text[b:e].splitlines() if line.startswith("| `sanitizers`"))
        run("a row changed", False, text.replace(row, re.sub(r"\| (\d+) \|$", lambda m: "| %d |" %
                                                             (int(m.group(1)) + 1), row)))
        cut = log.index("Label Time Summary:")
        run("the log cut before the label summary", False, log_text=log[:cut])
        log_edit("a result line lost", r"^.*\d+/\d+ Test\s+#\d+: .*sec\n", "")
        first = re.search(r"^.*\d+/\d+ Test\s+#\d+: .*sec$", log, re.M).group(0)
        run("a result line twice", False, log_text=log.replace(first, first + "\n" + first, 1))
        log_edit("an entry failed", r"(\d+/\d+ Test\s+#\d+: \S+ \.+\s*)Passed", r"\1***Failed")
        log_edit("a non-zero exit", r"^\.ci/run: exit 0 after", ".ci/run: exit 8 after")
        log_edit("the closing line missing", r"^\.ci/run: exit .*$", "")
        log_edit("no total test time", r"^Total Test time \(real\).*$", "")
        log_edit("a label line garbled", r"^(sanitizers\s+=\s+)[0-9.]+ sec\*proc", r"\1many sec*proc")
        log_edit("no CTest count line", r"^\d+% tests passed.*$", "")
        log_edit("a second run appended", r"^(Total Test time \(real\).*)$", r"\1\n100% tests passed, 0 tests failed "
                 r"out of 3")
        run("no SOURCE", False, source=False)
    finally:
        shutil.rmtree(tmp)
    for f in failures:
        print("FAIL: " + f)
    if failures:
        return 1
    print("ci_report: every damage was caught")
    return 0


if __name__ == "__main__":
    sys.exit(main())
