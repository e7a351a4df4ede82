#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""make_mutant.py must refuse every mutant that would build the headers
unchanged (its text gone, repeated, or left as it was; no edit at all) and
every malformed file, and must apply a good one to a copy only; and
expect_killed.cmake must count as killed only a test that failed at the
named check, never one that passed, failed elsewhere or ended by a signal.

    check_make_mutant.py REPOSITORY_ROOT CMAKE
"""

import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
TOOL = HERE / "make_mutant.py"
HEADER = "int a = 1;\nint b = 2;\nint b = 2;\nif (x) foo();\n"

REFUSED = {
    "text absent": "file: include/clzero/x.hpp\n<<<<\nint c = 3;\n====\nint c = 4;\n>>>>\n",
    "text twice": "file: include/clzero/x.hpp\n<<<<\nint b = 2;\n====\nint b = 0;\n>>>>\n",
    "changes nothing": "file: include/clzero/x.hpp\n<<<<\nint a = 1;\n====\nint a = 1;\n>>>>\n",
    "no edit": "# only a comment\n",
    "no file named": "<<<<\nint a = 1;\n====\nint a = 0;\n>>>>\n",
    "unterminated": "file: include/clzero/x.hpp\n<<<<\nint a = 1;\n====\nint a = 0;\n",
    "outside include/": "file: tests/x.hpp\n<<<<\nint a = 1;\n====\nint a = 0;\n>>>>\n",
    "missing file": "file: include/clzero/y.hpp\n<<<<\nint a = 1;\n====\nint a = 0;\n>>>>\n",
    "stray line": "file: include/clzero/x.hpp\nint a = 1;\n",
    "empty find": "file: include/clzero/x.hpp\n<<<<\n====\nint a = 0;\n>>>>\n",
    "an edit undone by the next": "file: include/clzero/x.hpp\n<<<<\nint a = 1;\n====\nint a = 0;\n>>>>\n"
                                  "<<<<\nint a = 0;\n====\nint a = 1;\n>>>>\n",
    "one header named two ways": "file: include/clzero/x.hpp\n<<<<\nint a = 1;\n====\nint a = 0;\n>>>>\n"
                                 "file: include/clzero/./x.hpp\n<<<<\nint a = 1;\n====\nint a = 2;\n>>>>\n",
    "a path leaving include/": "file: include/../x.hpp\n<<<<\nint a = 1;\n====\nint a = 0;\n>>>>\n",
    "whitespace only": "file: include/clzero/x.hpp\n<<<<\nint a = 1;\n====\nint a =  1; \n>>>>\n",
    "not whole lines": "file: include/clzero/x.hpp\n<<<<\nfoo();\n====\nbar();\n>>>>\n",
}
GOOD = "# a good one\nfile: include/clzero/x.hpp\n<<<<\nint a = 1;\n====\nint a = 0;\n>>>>\n"


def run(mutant_text, root, out):
    mutant = root / "m.mutant"
    mutant.write_text(mutant_text)
    return subprocess.run([sys.executable, str(TOOL), str(mutant), str(root), str(out)], capture_output=True, text=True)


def main(argv):
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp) / "repo"
        (root / "include" / "clzero").mkdir(parents=True)
        (root / "include" / "clzero" / "x.hpp").write_text(HEADER)
        (root / "include" / "clzero" / "z.hpp").write_text("// untouched\n")
        for case, text in REFUSED.items():
            out = pathlib.Path(tmp) / ("out-" + case.replace(" ", "_").replace("/", ""))
            result = run(text, root, out)
            if result.returncode != 1 or "make_mutant.py:" not in result.stderr:
                failures.append(f"{case}: status {result.returncode}, stderr {result.stderr.strip()!r}")
            elif out.exists():
                failures.append(f"{case}: refused, but wrote {out}")
            else:
                print(f"refused as it should be: {case}: {result.stderr.strip()}")
        out = pathlib.Path(tmp) / "out-good"
        result = run(GOOD, root, out)
        mutated = out / "include" / "clzero" / "x.hpp"
        if result.returncode != 0 or not mutated.is_file():
            failures.append(f"a good mutant: status {result.returncode}, stderr {result.stderr.strip()!r}")
        elif mutated.read_text() != HEADER.replace("int a = 1;", "int a = 0;"):
            failures.append(f"a good mutant: wrote {mutated.read_text()!r}")
        elif (root / "include" / "clzero" / "x.hpp").read_text() != HEADER:
            failures.append("a good mutant changed the original header")
        elif not (out / "include" / "clzero" / "z.hpp").is_file():
            failures.append("a good mutant did not copy the other headers")
        else:
            print("applied to a copy only: a good mutant")
    # Every mutant of the suite applies to this repository's headers.
    repository = pathlib.Path(argv[1])
    for mutant in sorted(HERE.glob("*.mutant")):
        with tempfile.TemporaryDirectory() as tmp:
            result = subprocess.run([sys.executable, str(TOOL), str(mutant), str(repository), tmp],
                                    capture_output=True, text=True)
            if result.returncode != 0:
                failures.append(f"{mutant.name}: {result.stderr.strip()}")
            else:
                print(f"applies to the headers: {mutant.name}")
    # expect_killed.cmake, with shell one-liners standing for the mutant's
    # test (no semicolons: the runner passes ARG on as one argument); then
    # with a hazard report as the judge, which the one-liner writes.
    with tempfile.TemporaryDirectory() as tmp:
        report = ["-DHAZARD_LAYER=none", f"-DHAZARD_REPORT={tmp}/report.txt"]
        cases = [
            ("a test that passed", "echo CHECK named && exit 0", [], False),
            ("a test that failed elsewhere", "echo CHECK other && exit 1", [], False),
            ("a test ended by a signal", "echo CHECK named && kill -9 $$", [], False),
            ("a test that said it did not run", "echo not run here && exit 1", [], True),
            ("a test that failed at the check", "echo CHECK named && exit 1", [], True),
            ("a report with no hazard", "echo hazards: 0 > $CLZERO_HAZARD_REPORT", report, False),
            ("no report", "exit 0", report, False),
            ("a report with hazards, the program passing", "echo hazards: 3 > $CLZERO_HAZARD_REPORT", report, True),
        ]
        for case, script, extra, passes in cases:
            killed = "hazards: [1-9]" if extra else "CHECK named"
            result = subprocess.run([argv[2], "-DRUNNER=/bin/sh", "-DPROGRAM=-c", f"-DARG={script}",
                                     f"-DKILLED={killed}", "-DSKIP=not run here", *extra,
                                     "-P", str(HERE / "expect_killed.cmake")], capture_output=True, text=True)
            if (result.returncode == 0) != passes:
                failures.append(f"expect_killed.cmake, {case}: status {result.returncode}, {result.stderr.strip()!r}")
            else:
                print(f"expect_killed.cmake: {case}: {'passes' if passes else 'fails'}, as it should")
    for failure in failures:
        print("FAILED:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv))
