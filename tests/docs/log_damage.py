# SPDX-License-Identifier: Apache-2.0
"""What the damage tests of the tools that report one committed log share
(test_ci_report.py, test_soak_report.py): each case writes a copy of the
document, the log (damaged or not) and SOURCE into a folder of the run's own
name, runs TOOL --check on them and records a failure when the exit status
is not the one wanted or, for a refusal, the message lacks the words of the
check meant to refuse it."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class LogDamage:
    def __init__(self, tool, doc, run, log_name):
        self.tool = os.path.join(ROOT, "tools", tool + ".py")
        self.name, self.run_dir, self.log_name = tool, run, log_name
        with open(doc, encoding="utf-8") as f:
            self.text = f.read()
        with open(os.path.join(run, log_name), encoding="utf-8") as f:
            self.log = f.read()
        with open(os.path.join(run, "SOURCE"), encoding="utf-8") as f:
            self.source = f.read()
        self.tmp = tempfile.mkdtemp(prefix=tool + "_test")
        self.doc = os.path.join(self.tmp, os.path.basename(doc))
        self.failures = []

    def run(self, label, want_ok, doc_text=None, log_text=None, source_text=None, expect=None, extra=()):
        """`extra`: (option, file name, text) for more input files the tool reads."""
        # The block names the run's folder: keep its name.
        run_dir = os.path.join(self.tmp, "run-%d" % len(os.listdir(self.tmp)), os.path.basename(self.run_dir))
        os.makedirs(run_dir)
        with open(os.path.join(run_dir, self.log_name), "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(self.log if log_text is None else log_text)
        if source_text != "":
            with open(os.path.join(run_dir, "SOURCE"), "w", encoding="utf-8") as f:
                f.write(self.source if source_text is None else source_text)
        with open(self.doc, "w", encoding="utf-8") as f:
            f.write(self.text if doc_text is None else doc_text)
        args = [sys.executable, self.tool, "--check", "--doc", self.doc, "--run", run_dir]
        for option, file_name, content in extra:
            path = os.path.join(run_dir, file_name)
            with open(path, "w", encoding="utf-8") as f:
                f.write(content)
            args += [option, path]
        r = subprocess.run(args, capture_output=True, text=True)
        out = (r.stdout + r.stderr).strip()
        if (r.returncode == 0) != want_ok:
            self.failures.append("%s: exit status %d, expected %s\n%s" % (label, r.returncode,
                                                                         "0" if want_ok else "not 0", out))
        elif expect and expect not in out:
            self.failures.append("%s: refused, but not by the check that says %r\n%s" % (label, expect, out))
        else:
            print("ok: %s (%s)" % (label, out.splitlines()[-1][:140] if out else ""))

    def edited(self, label, text_now, pattern, repl):
        new, n = re.subn(pattern, repl, text_now, count=1, flags=re.M)
        if n != 1:
            self.failures.append("%s: no line matching %r to damage" % (label, pattern))
        return new

    def log_edit(self, label, pattern, repl, expect=None):
        self.run(label, False, log_text=self.edited(label, self.log, pattern, repl), expect=expect)

    def block_cases(self, begin, end, row_start, change_row):
        """The block missing, doubled, and one of its rows changed."""
        b, e = self.text.index(begin), self.text.index(end)
        self.run("block missing", False, self.text[:b] + self.text[e + len(end):], expect="must appear exactly once")
        self.run("block doubled", False, self.text + "\n" + self.text[b:e + len(end)] + "\n",
                 expect="must appear exactly once")
        row = next(line for line in self.text[b:e].splitlines() if line.startswith(row_start))
        self.run("a row changed", False, self.text.replace(row, change_row(row)), expect="differs from what")

    def finish(self):
        shutil.rmtree(self.tmp)
        for f in self.failures:
            print("FAIL: " + f)
        if self.failures:
            return 1
        print("%s: every damage was caught" % self.name)
        return 0
