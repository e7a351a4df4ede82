#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tools/footprint_report.py --check passes on the committed document and
fails on every kind of damage to its block; --import turns Callgrind
profiles into the per-inference counts they hold, and refuses profiles that
are malformed, doubled, missing or not described."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "footprint_report.py")
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
JSON_DIR = os.path.join(ROOT, "docs", "bench", "footprint")
BEGIN = "<!-- footprint_report:begin footprint -->"
END = "<!-- footprint_report:end footprint -->"
EVENTS = "events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw"


def tool(*args):
    r = subprocess.run([sys.executable, TOOL] + list(args), capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def profile(trigger, totals=(800, 0, 0, 0, 0, 0, 400, 160, 80), events=EVENTS):
    text = "version: 1\ncreator: callgrind-3.19.0\n"
    text += "desc: Trigger: %s\n" % trigger
    if events:
        text += events + "\n"
    if totals is not None:
        text += "summary: " + " ".join(str(t) for t in totals) + "\ntotals: " + " ".join(str(t) for t in totals) + "\n"
    return text


VARIANTS = {"schema": "clzero.footprint-variants/1",
            "context": {"platform": "Test platform", "cpu": "test cpu", "clzero_version": "0"},
            "variants": [
                {"name": "legal.at_rest.alloc_host_ptr.blocking", "section": "serial", "kind": "legal",
                 "family": "mapped_at_rest", "allocation": "alloc_host_ptr", "wait": "blocking", "slots": 1},
                {"name": "clzero.Persistent.alloc_host_ptr", "section": "serial", "kind": "clzero",
                 "family": "mapped_at_rest", "allocation": "alloc_host_ptr", "wait": "", "slots": 1},
                {"name": "ub.kept_mapped.alloc_host_ptr", "section": "serial", "kind": "ub",
                 "family": "", "allocation": "", "wait": "", "slots": 1}]}


def make_dir(base, profiles, variants=VARIANTS, commit=True):
    d = tempfile.mkdtemp(dir=base)
    with open(os.path.join(d, "variants.json"), "w") as f:
        json.dump(variants, f)
    if commit:
        with open(os.path.join(d, "COMMIT"), "w") as f:
            f.write("abc1234\n")
    with open(os.path.join(d, "COMMAND"), "w") as f:
        f.write("CLZERO_HOST_WAIT=map valgrind --tool=callgrind clzero_sequences --sections footprint\n")
    with open(os.path.join(d, "callgrind.out.1"), "w") as f:
        f.write(profile("Program termination"))
    for i, text in enumerate(profiles, start=2):
        with open(os.path.join(d, "callgrind.out.1.%d" % i), "w") as f:
            f.write(text)
    return d


# The warm profiles leave out trailing zero counts, as Callgrind writes them.
GOOD = [profile("Client Request: cold 8 legal.at_rest.alloc_host_ptr.blocking"),
        profile("Client Request: warm 8 legal.at_rest.alloc_host_ptr.blocking", (640,)),
        profile("Client Request: cold 8 clzero.Persistent.alloc_host_ptr", (1600, 0, 0, 0, 0, 0, 800, 240, 160)),
        profile("Client Request: warm 8 clzero.Persistent.alloc_host_ptr", (1440, 0, 0, 0, 0, 0, 8))]


def main():
    failures = []
    tmp = tempfile.mkdtemp(prefix="footprint_report_test")
    try:
        # --import: the numbers are the profiles' totals per inference.
        out = os.path.join(tmp, "json")
        rc, text = tool("--import", make_dir(tmp, GOOD), "--name", "t", "--json-dir", out)
        if rc != 0:
            failures.append("a good import failed: " + text)
        else:
            with open(os.path.join(out, "t.json")) as f:
                data = json.load(f)
            got = {v["name"]: v for v in data["variants"]}
            want = {"legal.at_rest.alloc_host_ptr.blocking": (100, 50, 30, 80),
                    "clzero.Persistent.alloc_host_ptr": (200, 100, 50, 180)}
            for name, (ir, code, data_lines, warm) in want.items():
                v = got.get(name)
                if v is None or (v["cold"]["instructions"], v["cold"]["code_lines"], v["cold"]["data_lines"],
                                 v["warm"]["instructions"]) != (ir, code, data_lines, warm):
                    failures.append("import of %s gave %r" % (name, v))
            if "ub.kept_mapped.alloc_host_ptr" in got or data["context"].get("host_wait") != "map" or \
                    data["context"].get("commit") != "abc1234":
                failures.append("import kept an undefined-behaviour variant or lost the context: %r" % data["context"])
            print("ok: import" if not failures else "FAILED: import")
            # The report made from it names the reference and the difference.
            doc = os.path.join(tmp, "doc.md")
            with open(doc, "w") as f:
                f.write("# t\n\n%s\n%s\n\nafter\n" % (BEGIN, END))
            rc, text = tool("--doc", doc, "--json-dir", out)
            with open(doc) as f:
                body = f.read()
            row = "| clzero.Persistent.alloc_host_ptr | 100 | 50 | 200 | `at_rest.alloc_host_ptr.blocking` | 50 | 30 | 100 | +70 |"
            if rc != 0 or row not in body or not body.endswith("after\n"):
                failures.append("the report of the good import lacks its row:\n" + body + text)
            else:
                print("ok: report row")

        def refused(label, profiles, **kw):
            rc, text = tool("--import", make_dir(tmp, profiles, **kw), "--name", "x", "--json-dir",
                            os.path.join(tmp, "refused"))
            if rc == 0 or "footprint_report:" not in text:
                failures.append("%s: accepted (exit %d)\n%s" % (label, rc, text))
            else:
                print("ok: refused %s (%s)" % (label, text.strip().splitlines()[-1][:90]))

        refused("no totals", GOOD[:1] + [profile("Client Request: warm 8 legal.at_rest.alloc_host_ptr.blocking",
                                                 None)] + GOOD[2:])
        refused("more totals than events",
                [profile("Client Request: cold 8 legal.at_rest.alloc_host_ptr.blocking", (1,) * 10)] + GOOD[1:])
        refused("no cache simulation", [profile("Client Request: cold 8 legal.at_rest.alloc_host_ptr.blocking",
                                                (800,), "events: Ir")] + GOOD[1:])
        refused("a total not a number", [profile("Client Request: cold 8 legal.at_rest.alloc_host_ptr.blocking",
                                                 (800, 0, 0, 0, 0, 0, "x", 1, 1))] + GOOD[1:])
        refused("a profile counted twice", GOOD + GOOD[:1])
        refused("a warm profile missing", GOOD[:3])
        refused("an undescribed variant", GOOD + [profile("Client Request: cold 8 clzero.Other")])
        refused("a malformed request name", GOOD + [profile("Client Request: cold clzero.Other")])
        refused("zero inferences", [profile("Client Request: cold 0 legal.at_rest.alloc_host_ptr.blocking")] + GOOD[1:])
        refused("no commit", GOOD, commit=False)
        refused("no clzero variant", GOOD[:2], variants=dict(VARIANTS, variants=VARIANTS["variants"][:1]))

        # --check on the committed document, and on damaged copies of it.
        with open(DOC, encoding="utf-8") as f:
            text = f.read()
        doc = os.path.join(tmp, "benchmarks.md")

        def expect(label, doc_text, want_ok, json_dir=JSON_DIR):
            with open(doc, "w", encoding="utf-8") as f:
                f.write(doc_text)
            rc, out_text = tool("--check", "--doc", doc, "--json-dir", json_dir)
            if (rc == 0) != want_ok:
                failures.append("%s: exit status %d, expected %s\n%s" % (label, rc, "0" if want_ok else "1", out_text))
            else:
                print("ok: %s" % label)

        expect("the committed document", text, True)
        assert BEGIN in text and END in text, "the document has no footprint block"
        b, e = text.index(BEGIN), text.index(END)
        block = text[b + len(BEGIN):e]
        expect("block missing", text[:b] + text[e + len(END):], False)
        expect("block doubled", text + "\n" + BEGIN + block + END + "\n", False)
        expect("markers reversed", text.replace(BEGIN, "@@").replace(END, BEGIN).replace("@@", END), False)
        expect("malformed marker", text.replace(BEGIN, BEGIN + " trailing"), False)
        expect("unknown block", text + "\n<!-- footprint_report:begin other -->\n"
               "<!-- footprint_report:end other -->\n", False)
        changed = block.replace("| clzero.Auto |", "| clzero.Auto (edited) |", 1)
        if changed == block:
            failures.append("the committed block has no clzero.Auto row to change")
        expect("a generated line changed", text[:b + len(BEGIN)] + changed + text[e:], False)
        unnamed = os.path.join(tmp, "unnamed")
        shutil.copytree(JSON_DIR, unnamed)
        first = sorted(os.listdir(unnamed))[0]
        with open(os.path.join(unnamed, first)) as f:
            data = json.load(f)
        data["context"]["host_wait"] = ""
        with open(os.path.join(unnamed, first), "w") as f:
            json.dump(data, f)
        expect("a footprint that does not say how the views waited", text, False, unnamed)
        data["context"]["host_wait"] = "map"
        data["variants"][0]["cold"]["code_lines"] = -1
        with open(os.path.join(unnamed, first), "w") as f:
            json.dump(data, f)
        # Rewriting (not only checking) refuses it: the block would differ
        # from the document's anyway, so only a rewrite shows the refusal.
        with open(doc, "w", encoding="utf-8") as f:
            f.write(text)
        rc, out_text = tool("--doc", doc, "--json-dir", unnamed)
        if rc == 0 or "negative" not in out_text:
            failures.append("a negative count was written into the block (exit %d)\n%s" % (rc, out_text))
        else:
            print("ok: a negative count is refused")
        broken = os.path.join(tmp, "broken")
        shutil.copytree(JSON_DIR, broken)
        first = sorted(os.listdir(broken))[0]
        with open(os.path.join(broken, first), "w") as f:
            f.write("{ not json")
        expect("malformed JSON", text, False, broken)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAILED: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
