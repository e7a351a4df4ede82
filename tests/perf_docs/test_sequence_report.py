#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tools/sequence_report.py --check passes on the committed document and
fails on every kind of damage: a missing, doubled, reversed or unknown block,
a malformed marker, a changed generated line, malformed or incomplete JSON."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "sequence_report.py")
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
JSON_DIR = os.path.join(ROOT, "docs", "bench", "sequences")
BEGIN = "<!-- sequence_report:begin sequences -->"
END = "<!-- sequence_report:end sequences -->"


def check(doc, json_dir):
    r = subprocess.run([sys.executable, TOOL, "--check", "--doc", doc, "--json-dir", json_dir],
                       capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def main():
    failures = []
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    tmp = tempfile.mkdtemp(prefix="sequence_report_test")
    try:
        json_copy = os.path.join(tmp, "json")
        shutil.copytree(JSON_DIR, json_copy)
        doc = os.path.join(tmp, "benchmarks.md")

        def expect(label, doc_text, want_ok, json_dir=json_copy):
            with open(doc, "w", encoding="utf-8") as f:
                f.write(doc_text)
            rc, out = check(doc, json_dir)
            if (rc == 0) != want_ok:
                failures.append("%s: exit status %d, expected %s\n%s" % (label, rc, "0" if want_ok else "1", out))
            else:
                print("ok: %s%s" % (label, "" if want_ok else " (" + out.strip().splitlines()[-1][:100] + ")"))

        expect("the committed document", text, True)
        assert BEGIN in text and END in text, "the document has no sequences block"
        b, e = text.index(BEGIN), text.index(END)
        block = text[b + len(BEGIN):e]
        expect("block missing", text[:b] + text[e + len(END):], False)
        expect("begin marker missing", text.replace(BEGIN + "\n", ""), False)
        expect("end marker missing", text.replace(END + "\n", ""), False)
        expect("block doubled", text + "\n" + BEGIN + block + END + "\n", False)
        expect("markers reversed", text.replace(BEGIN, "@@").replace(END, BEGIN).replace("@@", END), False)
        expect("unknown block", text + "\n<!-- sequence_report:begin other -->\n<!-- sequence_report:end other -->\n",
               False)
        expect("malformed marker", text.replace(BEGIN, BEGIN + " trailing"), False)
        lines = block.splitlines(keepends=True)
        table_line = next(i for i, line in enumerate(lines) if line.startswith("| **fastest"))
        lines[table_line] = lines[table_line].replace("|", "| 1.00 ", 1)
        expect("a generated line changed", text[:b + len(BEGIN)] + "".join(lines) + text[e:], False)
        expect("hand-written text changed is allowed", text.replace("# Benchmarks", "# Benchmarks ", 1), True)

        name = sorted(n for n in os.listdir(json_copy) if n.endswith(".json"))[0]
        path = os.path.join(json_copy, name)
        with open(path, encoding="utf-8") as f:
            original = f.read()
        with open(path, "w", encoding="utf-8") as f:
            f.write(original[: len(original) // 2])
        expect("truncated JSON", text, False)
        data = json.loads(original)
        del data["serial"][0]["reps"][0]["results"][next(iter(data["serial"][0]["reps"][0]["results"]))][
            "median_us"]
        with open(path, "w", encoding="utf-8") as f:
            json.dump(data, f)
        expect("a result without its median", text, False)
        data = json.loads(original)
        data["schema"] = "something else"
        with open(path, "w", encoding="utf-8") as f:
            json.dump(data, f)
        expect("another schema", text, False)
    finally:
        shutil.rmtree(tmp)
    if failures:
        print("\n".join(failures))
        return 1
    print("sequence_report: every damaged copy was rejected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
