#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tools/bench_report.py --check must fail on every damaged document.

Each case copies the generated documents (docs/benchmarks.md,
docs/policies.md) and the JSON into a temporary tree, damages one thing, runs
the tool on that tree and expects exit status 1 with a message naming what is
wrong. docs/benchmarks.md was once 35 MB of one repeated paragraph with no
marker left, and the old --check compared it with itself and passed: the
first cases are that document and its smaller cousins.

    python3 tests/docs/test_bench_report.py [-v]
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "bench_report.py")
DOCS = ["docs/benchmarks.md", "docs/policies.md"]


def run_tool(root, *args):
    p = subprocess.run([sys.executable, TOOL, "--root", root, "--no-plot"] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    return p.returncode, p.stdout


class Tree:
    """A copy of the documents and the JSON that a case may damage."""

    def __init__(self):
        self.root = tempfile.mkdtemp(prefix="clzero-docs-")
        for rel in DOCS:
            os.makedirs(os.path.dirname(os.path.join(self.root, rel)), exist_ok=True)
            shutil.copyfile(os.path.join(ROOT, rel), os.path.join(self.root, rel))
        shutil.copytree(os.path.join(ROOT, "docs", "bench"), os.path.join(self.root, "docs", "bench"))

    def read(self, rel):
        with open(os.path.join(self.root, rel), encoding="utf-8") as f:
            return f.read()

    def write(self, rel, text):
        with open(os.path.join(self.root, rel), "w", encoding="utf-8") as f:
            f.write(text)

    def edit(self, rel, old, new, count=1):
        text = self.read(rel)
        if old not in text:
            raise AssertionError("%s: %r not found; the test needs updating" % (rel, old))
        self.write(rel, text.replace(old, new, count))

    def remove(self):
        shutil.rmtree(self.root, ignore_errors=True)


def block(text, name):
    """The block NAME with its markers."""
    begin, end = "<!-- bench_report:begin %s -->\n" % name, "<!-- bench_report:end %s -->\n" % name
    a = text.index(begin)
    return text[a:text.index(end, a) + len(end)]


class Check(unittest.TestCase):
    def setUp(self):
        self.tree = Tree()

    def tearDown(self):
        self.tree.remove()

    def assertFails(self, *names):
        rc, out = run_tool(self.tree.root, "--check")
        self.assertEqual(rc, 1, "--check passed a damaged document:\n" + out)
        for n in names:
            self.assertIn(n, out, "the message does not name %r:\n%s" % (n, out))
        return out

    def test_the_committed_documents_match_their_json(self):
        rc, out = run_tool(self.tree.root, "--check")
        self.assertEqual(rc, 0, out)
        self.assertIn("matches", out)

    def test_a_document_without_any_marker_fails(self):
        # What text.replace("", paragraph) made of benchmarks.md: the paragraph
        # between every character, so no marker survives whole.
        text = self.tree.read("docs/benchmarks.md")
        bullet = "- **PoCL.** A paragraph.\n"
        self.tree.write("docs/benchmarks.md", bullet + bullet.join(text[:3000]) + bullet)
        self.assertFails("docs/benchmarks.md", "missing block", "targets")

    def test_a_missing_block_fails_and_is_named(self):
        text = self.tree.read("docs/benchmarks.md")
        self.tree.write("docs/benchmarks.md", text.replace(block(text, "ci-pocl"), ""))
        self.assertFails("docs/benchmarks.md", "'ci-pocl'")

    def test_a_missing_block_of_policies_fails(self):
        text = self.tree.read("docs/policies.md")
        self.tree.write("docs/policies.md", text.replace(block(text, "policy-evidence"), ""))
        self.assertFails("docs/policies.md", "'policy-evidence'")

    def test_a_duplicated_block_fails(self):
        text = self.tree.read("docs/policies.md")
        self.tree.write("docs/policies.md", text + "\n" + block(text, "policy-evidence"))
        self.assertFails("docs/policies.md", "'policy-evidence'", "twice")

    def test_an_end_marker_naming_another_block_fails(self):
        self.tree.edit("docs/benchmarks.md", "<!-- bench_report:end ci-pocl -->",
                       "<!-- bench_report:end h200 -->")
        self.assertFails("docs/benchmarks.md", "'h200'")

    def test_a_begin_marker_without_its_end_fails(self):
        self.tree.edit("docs/benchmarks.md", "<!-- bench_report:end h200 -->\n", "")
        self.assertFails("docs/benchmarks.md", "'h200'", "no end marker")

    def test_an_end_marker_without_its_begin_fails(self):
        self.tree.edit("docs/benchmarks.md", "<!-- bench_report:begin targets -->\n", "")
        self.assertFails("docs/benchmarks.md", "'targets'")

    def test_a_block_inside_another_fails(self):
        self.tree.edit("docs/benchmarks.md", "<!-- bench_report:end targets -->\n", "")
        self.tree.edit("docs/benchmarks.md", "<!-- bench_report:end ci-pocl -->\n",
                       "<!-- bench_report:end ci-pocl -->\n<!-- bench_report:end targets -->\n")
        self.assertFails("docs/benchmarks.md", "'ci-pocl'", "'targets'")

    def test_a_marker_not_on_a_line_of_its_own_fails(self):
        self.tree.edit("docs/policies.md", "<!-- bench_report:begin policy-evidence -->\n",
                       "Table: <!-- bench_report:begin policy-evidence -->\n")
        self.assertFails("docs/policies.md", "malformed marker")

    def test_an_unknown_block_fails(self):
        self.tree.edit("docs/policies.md", "## The measurements\n",
                       "## The measurements\n\n<!-- bench_report:begin numbers -->\n"
                       "<!-- bench_report:end numbers -->\n")
        self.assertFails("docs/policies.md", "unknown block 'numbers'")

    def test_a_hand_edited_number_in_a_block_fails(self):
        text = self.tree.read("docs/policies.md")
        old = block(text, "policy-evidence")
        self.tree.write("docs/policies.md", text.replace(old, old.replace("|", "| 1.0 |", 3)))
        self.assertFails("docs/policies.md", "not what the JSON")

    def test_a_document_repeating_one_line_absurdly_fails(self):
        self.tree.edit("docs/benchmarks.md", "# Benchmarks\n", "# Benchmarks\n" + "- **PoCL.** Again.\n" * 200)
        self.assertFails("docs/benchmarks.md", "repeat")

    def test_an_oversized_document_fails(self):
        self.tree.edit("docs/policies.md", "# Which policy",
                       "".join("line %d of filler\n" % i for i in range(40000)) + "# Which policy")
        self.assertFails("docs/policies.md", "bytes")

    def test_malformed_json_fails_naming_the_file(self):
        path = os.path.join(self.tree.root, "docs", "bench", "h200-nvidia.json")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        with open(path, "w", encoding="utf-8") as f:
            f.write(text[:len(text) // 2])
        self.assertFails("h200-nvidia.json", "not valid JSON")

    def test_json_of_another_shape_fails_naming_the_file(self):
        with open(os.path.join(self.tree.root, "docs", "bench", "ci-pocl.json"), "w") as f:
            f.write('{"benchmarks": {"infer/clzero.Auto/4096": 1}}')
        self.assertFails("ci-pocl.json", "not Google Benchmark JSON")


class Write(unittest.TestCase):
    def setUp(self):
        self.tree = Tree()

    def tearDown(self):
        self.tree.remove()

    def test_regenerating_leaves_hand_written_text_byte_identical(self):
        # Stale blocks everywhere, and hand-written text that an ad-hoc search
        # and replace would be tempted to touch: an empty line, the block's own
        # first words, a marker-like phrase in prose.
        originals = {rel: self.tree.read(rel) for rel in DOCS}
        for rel in DOCS:
            text = self.tree.read(rel)
            for name in ("targets", "ci-pocl", "h200", "why", "policy-evidence"):
                marker = "<!-- bench_report:begin %s -->\n" % name
                if marker in text:
                    old = block(text, name)
                    text = text.replace(old, marker + "stale\n\n" + "<!-- bench_report:end %s -->\n" % name)
            text = text.replace("\n\n", "\n\nMedian µs per inference and bench_report in prose.\n\n", 1)
            self.tree.write(rel, text)
        damaged = {rel: self.tree.read(rel) for rel in DOCS}
        rc, out = run_tool(self.tree.root)
        self.assertEqual(rc, 0, out)
        for rel in DOCS:
            # The prose line put in above is the only difference from the committed document.
            expected = originals[rel].replace("\n\n", "\n\nMedian µs per inference and bench_report in prose.\n\n", 1)
            self.assertEqual(self.tree.read(rel), expected, rel)
            self.assertNotEqual(damaged[rel], expected)
        rc, out = run_tool(self.tree.root, "--check")
        self.assertEqual(rc, 0, out)

    def test_a_damaged_document_is_never_written(self):
        text = self.tree.read("docs/benchmarks.md")
        self.tree.write("docs/benchmarks.md", text.replace(block(text, "h200"), ""))
        before = {rel: self.tree.read(rel) for rel in DOCS}
        rc, out = run_tool(self.tree.root)
        self.assertEqual(rc, 1, out)
        for rel in DOCS:
            self.assertEqual(self.tree.read(rel), before[rel], rel)


if __name__ == "__main__":
    unittest.main()
