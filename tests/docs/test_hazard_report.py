#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tools/hazard_report.py --check passes on the committed document and
reports and fails on every kind of damage: a block missing or doubled, a
generated row changed, a report missing, extra, cut short, holding a value
that is not a whole number, a key twice or an unknown key, no SOURCE, and an
entry in CMake without its report."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "hazard_report.py")
DOC = os.path.join(ROOT, "docs", "reliability.md")
REPORTS = os.path.join(ROOT, "docs", "logs", "ci", "hazard")
CMAKE = os.path.join(ROOT, "tests", "fault_injection", "CMakeLists.txt")
BEGIN = "<!-- hazard_report:begin hazards -->"
END = "<!-- hazard_report:end hazards -->"


def main():
    failures = []
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    with open(CMAKE, encoding="utf-8") as f:
        cmake_text = f.read()
    tmp = tempfile.mkdtemp(prefix="hazard_report_test")
    try:
        doc = os.path.join(tmp, "reliability.md")
        cmake = os.path.join(tmp, "CMakeLists.txt")

        def run(label, want_ok, doc_text=text, reports=REPORTS, cmake_now=cmake_text):
            with open(doc, "w", encoding="utf-8") as f:
                f.write(doc_text)
            with open(cmake, "w", encoding="utf-8") as f:
                f.write(cmake_now)
            r = subprocess.run([sys.executable, TOOL, "--check", "--doc", doc, "--reports", reports, "--cmake", cmake],
                               capture_output=True, text=True)
            out = (r.stdout + r.stderr).strip()
            if (r.returncode == 0) != want_ok:
                failures.append("%s: exit status %d, expected %s\n%s" % (label, r.returncode,
                                                                        "0" if want_ok else "not 0", out))
            else:
                print("ok: %s (%s)" % (label, out.splitlines()[-1][:120] if out else ""))

        def damaged(label, change):
            # The document names the reports' folder, so a copy elsewhere
            # gives another block: the tool writes the one of this copy first,
            # and the undamaged copy must pass against it (without this, any
            # copy failed, damaged or not).
            reports = os.path.join(tmp, "reports-%d" % len(os.listdir(tmp)))
            shutil.copytree(REPORTS, reports)
            with open(doc, "w", encoding="utf-8") as f:
                f.write(text)
            with open(cmake, "w", encoding="utf-8") as f:
                f.write(cmake_text)
            subprocess.run([sys.executable, TOOL, "--doc", doc, "--reports", reports, "--cmake", cmake],
                           capture_output=True, text=True, check=True)
            with open(doc, encoding="utf-8") as f:
                doc_for_copy = f.read()
            run(label + ": control, the copy undamaged", True, doc_text=doc_for_copy, reports=reports)
            change(reports)
            run(label, False, doc_text=doc_for_copy, reports=reports)

        def rewrite(name, edit):
            def change(reports):
                path = os.path.join(reports, name)
                with open(path, encoding="utf-8") as f:
                    raw = f.read()
                with open(path, "w", encoding="utf-8") as f:
                    f.write(edit(raw))
            return change

        run("the committed document and reports", True)
        b, e = text.index(BEGIN), text.index(END)
        run("block missing", False, text[:b] + text[e + len(END):])
        run("block doubled", False, text + "\n" + text[b:e + len(END)] + "\n")
        block = text[b:e]
        row = next(line for line in block.splitlines() if line.startswith("| `hazard.main_suite`"))
        run("a row changed", False, text.replace(row, row.replace("| 0 |", "| 1 |", 1)))
        damaged("a report missing", lambda r: os.remove(os.path.join(r, "hazard-ring.txt")))
        damaged("a report of no entry", lambda r: shutil.copy(os.path.join(r, "hazard-ring.txt"),
                                                              os.path.join(r, "hazard-gone.txt")))
        damaged("a report cut short", rewrite("hazard-arena.txt", lambda raw: raw[:raw.index("hazards")]))
        damaged("a value that is not a number", rewrite("hazard-queues.txt",
                                                        lambda raw: raw.replace("pairs: ", "pairs: many", 1)))
        damaged("a key twice", rewrite("hazard-soak.txt", lambda raw: raw + "hazards: 0\n"))
        damaged("an unknown key", rewrite("hazard-soak.txt", lambda raw: raw + "warnings: 0\n"))
        damaged("no SOURCE", lambda r: os.remove(os.path.join(r, "SOURCE")))
        damaged("history dropped", rewrite("hazard-ring.txt", lambda raw: re.sub(r"dropped: \d+", "dropped: 3", raw)))
        damaged("no command checked", rewrite("hazard-ring.txt",
                                              lambda raw: re.sub(r"commands: \d+", "commands: 0", raw)))
        run("an entry without its report", False,
            cmake_now=cmake_text + "\nclzero_hazard_test(new_suite clzero_tests \"\")\n")
        run("no entry at all", False, cmake_now="# nothing\n")
    finally:
        shutil.rmtree(tmp)
    for f in failures:
        print("FAIL: " + f)
    if failures:
        return 1
    print("hazard_report: every damage was caught")
    return 0


if __name__ == "__main__":
    sys.exit(main())
