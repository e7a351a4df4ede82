# SPDX-License-Identifier: Apache-2.0
"""tools/paced_report.py refuses damaged runs and documents, each at the
check meant for it: every case copies docs/benchmarks.md and
docs/bench/paced/ into a folder of its own, damages one thing, runs
paced_report.py --check on the copies and wants a refusal naming what is
wrong (or, where the damage only changes what the table says, the block
found out of date)."""

import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "paced_report.py")
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
RUNS = os.path.join(ROOT, "docs", "bench", "paced")
SLEPT = "pocl31-2vcpu-sleep1000.json"
WAITED = "pocl31-2vcpu-sleep1000-wait.json"

failures = []
tmp = tempfile.mkdtemp(prefix="paced_report_test")
with open(DOC, encoding="utf-8") as f:
    TEXT = f.read()
RUN_DATA = {}
for p in sorted(glob.glob(os.path.join(RUNS, "*.json"))):
    with open(p, encoding="utf-8") as f:
        RUN_DATA[os.path.basename(p)] = f.read()


def case(label, want_ok, expect=None, damage=None, doc_text=None, rename=None, raw=None):
    """damage: (file, function changing its parsed JSON in place); rename:
    (old, new) file names; raw: (file, text) written as it is."""
    where = tempfile.mkdtemp(dir=tmp)
    runs = os.path.join(where, "paced")
    os.makedirs(runs)
    for name, text in RUN_DATA.items():
        if damage and name == damage[0]:
            d = json.loads(text)
            damage[1](d)
            text = json.dumps(d)
        if raw and name == raw[0]:
            text = raw[1]
        if rename and name == rename[0]:
            name = rename[1]
        with open(os.path.join(runs, name), "w", encoding="utf-8") as f:
            f.write(text)
    doc = os.path.join(where, "benchmarks.md")
    with open(doc, "w", encoding="utf-8") as f:
        f.write(TEXT if doc_text is None else doc_text)
    r = subprocess.run([sys.executable, TOOL, "--check", "--doc", doc, "--dir", runs], capture_output=True, text=True)
    out = (r.stdout + r.stderr).strip()
    if (r.returncode == 0) != want_ok:
        failures.append("%s: exit status %d, expected %s\n%s" % (label, r.returncode, "0" if want_ok else "not 0", out))
    elif expect and expect not in out:
        failures.append("%s: refused, but not by the check that says %r\n%s" % (label, expect, out))
    else:
        print("ok: %s (%s)" % (label, out.splitlines()[-1][:140] if out else ""))


def size(d, b):
    return next(s for s in d["serial"] if s["bytes"] == b)


def results(d, b, rep=0):
    return size(d, b)["reps"][rep]["results"]


def fastest_legal(d, b):
    """The legal sequence the table names fastest: the lowest median of the repetitions' medians."""
    kinds = {v["name"]: v["kind"] for v in d["variants"]}
    times = {}
    for rep in size(d, b)["reps"]:
        for n, r in rep["results"].items():
            if kinds[n] == "legal":
                times.setdefault(n, []).append(r["median_us"])
    return min(times, key=lambda n: statistics.median(times[n]))


def variant(d, name):
    return next(v for v in d["variants"] if v["name"] == name)


def every_rep(d, b, f):
    for r in size(d, b)["reps"]:
        f(r["results"])


def set_key(key, value):
    def f(d):
        d[key] = value
    return f


case("the committed runs", True, "matches")

# The file's name against what the run says.
case("named for another pace", False, "the file's name says sleep 2000 us",
     rename=(SLEPT, "pocl31-2vcpu-sleep2000.json"))
case("a paced run named back to back", False, "the file's name says back to back",
     rename=(SLEPT, "elsewhere-none.json"))
case("a spinning pace named as a sleep", False, "the file's name says sleep",
     damage=(SLEPT, lambda d: size(d, 4096).update(gap="spin")))
case("one size without its pace", False, "paced back to back, the file's name says sleep",
     damage=(SLEPT, lambda d: (size(d, 262144).pop("gap"), size(d, 262144).pop("gap_us"))))
case("a pace given as text", False, "the file's name says sleep",
     damage=(SLEPT, lambda d: size(d, 4096).update(gap_us="1000")))
case("a name outside the pattern", False, "not named MACHINE-PACE",
     rename=(SLEPT, "pocl31-2vcpu-sleepy.json"))
case("a pace of zero", False, "not named MACHINE-PACE", rename=(SLEPT, "pocl31-2vcpu-sleep0.json"))
case("a pace with a leading zero (a second spelling of one run)", False, "not named MACHINE-PACE",
     rename=(SLEPT, "pocl31-2vcpu-sleep01000.json"))
case("named for CLZERO_HOST_WAIT but measured", False, "named for CLZERO_HOST_WAIT=wait",
     damage=(WAITED, lambda d: d["context"].update(host_wait="poll (measured on a small kernel)")))
case("named for another CLZERO_HOST_WAIT", False, "named for CLZERO_HOST_WAIT=poll",
     rename=(WAITED, "pocl31-2vcpu-sleep1000-poll.json"))
case("set by CLZERO_HOST_WAIT but not named for it", False, "name the file for it",
     damage=(SLEPT, lambda d: d["context"].update(host_wait="clWaitForEvents (CLZERO_HOST_WAIT=wait)")))

# What a run must hold.
case("not JSON", False, SLEPT, raw=(SLEPT, "{\"schema\": "))
case("another schema", False, "not clzero.sequences/1", damage=(SLEPT, set_key("schema", "clzero.bench/1")))
case("no context", False, "no 'context'", damage=(SLEPT, lambda d: d.pop("context")))
case("one repetition", False, "1 repetition(s), the context says 2",
     damage=(SLEPT, lambda d: size(d, 4096).update(reps=size(d, 4096)["reps"][:1])))
case("a size measured twice", False, "measured twice",
     damage=(SLEPT, lambda d: d["serial"].append(json.loads(json.dumps(d["serial"][0])))))
case("no serial size", False, "no serial size", damage=(SLEPT, set_key("serial", [])))
case("Auto missing from a repetition", False, "clzero.Auto was not timed",
     damage=(SLEPT, lambda d: results(d, 4096, 1).pop("clzero.Auto")))
case("Auto's policy not in the run", False, "which the run did not time",
     damage=(SLEPT, lambda d: (d.update(variants=[v for v in d["variants"] if v["name"] != "clzero.Svm.fine"]),
                               [r["results"].pop("clzero.Svm.fine") for s in d["serial"] for r in s["reps"]])))
case("Auto's choice naming no policy", False, "names no policy",
     damage=(SLEPT, lambda d: d["auto"].update({"4096": "(Auto failed: no device)"})))
case("a clzero policy stale", False, "clzero showed stale data",
     damage=(SLEPT, lambda d: results(d, 4096)["clzero.Persistent.alloc_host_ptr"].update(stale_inferences=3)))
case("a negative stale count", False, "a negative stale count",
     damage=(SLEPT, lambda d: results(d, 4096)["clzero.Auto"].update(stale_inferences=-1)))
case("a median of zero", False, "a median of 0",
     damage=(SLEPT, lambda d: results(d, 4096)["clzero.Auto"].update(median_us=0)))
case("a median given as text", False, "'median_us' is not a finite number",
     damage=(SLEPT, lambda d: results(d, 4096)["clzero.Auto"].update(median_us="27.6")))
case("no samples", False, "over 0 samples",
     damage=(SLEPT, lambda d: results(d, 4096)["clzero.Auto"].update(samples=0)))
case("a result of no variant", False, "is not among the run's serial variants",
     damage=(SLEPT, lambda d: results(d, 4096).update({"legal.made_up": dict(results(d, 4096)["clzero.Auto"])})))
case("another machine's driver among the runs", False, "one machine's runs, but driver_version",
     damage=(SLEPT, lambda d: d["context"].update(driver_version="3.2+debian")))
case("another size among one machine's runs", False, "different sizes",
     damage=(SLEPT, lambda d: d.update(serial=[s for s in d["serial"] if s["bytes"] != 4194304])))
# A stale legal sequence is never the fastest: marking the fastest stale
# changes the table, and the block is found out of date; so does marking it
# stale at another size only (the benchmark ranks a sequence stale anywhere
# in its section as stale everywhere).
case("the fastest legal sequence stale", False, "differs from what",
     damage=(SLEPT, lambda d: results(d, 4096)[fastest_legal(d, 4096)].update(stale_inferences=1)))
case("the fastest legal sequence stale at another size only", False, "differs from what",
     damage=(SLEPT, lambda d: results(d, 4194304)[fastest_legal(d, 4096)].update(stale_inferences=1)))
# A twin is the same code as a legal sequence, timed again for noise: never
# named, however fast, so the table does not change.
case("a twin fastest", True, "matches",
     damage=(SLEPT, lambda d: every_rep(d, 4096, lambda r: r["twin.svm_fine.poll"].update(median_us=1.0))))

# What the review of the first version found accepted.
case("a wait neither polled nor blocking", False, "is neither polled",
     damage=(SLEPT, lambda d: variant(d, fastest_legal(d, 4096)).update(wait="nothing")))
case("a variant timed in one repetition only", False, "was not timed",
     damage=(SLEPT, lambda d: results(d, 4096, 1).pop("legal.svm_fine.poll")))
case("a variant that failed", False, "failed (",
     damage=(SLEPT, lambda d: results(d, 4096, 1)["legal.svm_fine.poll"].update(error="construction failed")))
case("an infinite median", False, "'median_us' is not a finite number",
     raw=(SLEPT, RUN_DATA[SLEPT].replace('"median_us": ', '"median_us": Infinity, "was": ', 1)))
case("a median of 1e-300", False, "a median of 1e-300",
     damage=(SLEPT, lambda d: results(d, 4096)["clzero.Auto"].update(median_us=1e-300)))
case("a key twice in one object", False, "appears twice",
     raw=(SLEPT, RUN_DATA[SLEPT].replace('"median_us": ', '"median_us": 1.0, "median_us": ', 1)))
case("another clzero version among one machine's runs", False, "but clzero_version",
     damage=(SLEPT, lambda d: d["context"].update(clzero_version="0.2.0")))
case("another CPU among one machine's runs", False, "but cpu",
     damage=(SLEPT, lambda d: d["context"].update(cpu="another CPU")))
case("another budget among one machine's runs", False, "but budget_s",
     damage=(SLEPT, lambda d: d["context"].update(budget_s=50.0)))
case("a date that is not one", False, "is not YYYY-MM-DDTHH:MM:SSZ",
     damage=(SLEPT, lambda d: d["context"].update(date="not a date at all")))
case("a host wait that does not say why", False, "does not say what the views did",
     damage=(SLEPT, lambda d: d["context"].update(host_wait="poll")))
case("a wait after idle whose verdict is unreadable", False, "says neither how views wait after idle",
     damage=(SLEPT, lambda d: d["context"].update(
         host_wait=d["context"]["host_wait"].replace("views poll after idle too", "views do something else")
         .replace("views block at once after the thread was idle", "views do something else"))))
case("the measured host wait changed", False, "differs from what",
     damage=(SLEPT, lambda d: d["context"].update(host_wait="clWaitForEvents (measured on a small kernel)")))
case("Auto listed as a legal sequence", False, "for a variant so named",
     damage=(SLEPT, lambda d: variant(d, "clzero.Auto").update(kind="legal", wait="poll")))
case("a legal sequence listed as clzero", False, "for a variant so named",
     damage=(SLEPT, lambda d: variant(d, "legal.svm_fine.poll").update(kind="clzero")))
case("an unknown kind", False, "is none of",
     damage=(SLEPT, lambda d: variant(d, "legal.svm_fine.poll").update(kind="fast")))
case("a variant listed twice", False, "listed twice",
     damage=(SLEPT, lambda d: d["variants"].append(dict(variant(d, "legal.svm_fine.poll")))))
case("a pipelined variant among the serial results", False, "is not among the run's serial variants",
     damage=(SLEPT, lambda d: results(d, 4096).update({"ring2.clzero.Auto": dict(results(d, 4096)["clzero.Auto"])})))
case("Auto's choice naming Auto", False, "names no policy",
     damage=(SLEPT, lambda d: d["auto"].update({"4096": "Auto: itself"})))
case("a negative size", False, "not a size", damage=(SLEPT, lambda d: size(d, 4096).update(bytes=-4096)))
case("a count given as true", False, "'samples' is not a whole number",
     damage=(SLEPT, lambda d: results(d, 4096)["clzero.Auto"].update(samples=True)))
case("Auto's policy stale", False, "clzero showed stale data (clzero.Svm.fine)",
     damage=(SLEPT, lambda d: results(d, 262144)["clzero.Svm.fine"].update(stale_inferences=2)))
case("paced turns of four inferences", False, "paced turns are one inference each",
     damage=(SLEPT, lambda d: size(d, 4096).update(block=4)))
case("a time changed", False, "differs from what",
     damage=(SLEPT, lambda d: results(d, 4096)["clzero.Auto"].update(median_us=12.5)))

# The document.
b, e = TEXT.index("<!-- paced_report:begin paced -->"), TEXT.index("<!-- paced_report:end paced -->")
end = "<!-- paced_report:end paced -->"
case("block missing", False, "must appear exactly once", doc_text=TEXT[:b] + TEXT[e + len(end):])
case("block doubled", False, "must appear exactly once", doc_text=TEXT + "\n" + TEXT[b:e + len(end)] + "\n")
row = next(x for x in TEXT[b:e].splitlines() if x.startswith("| 4 KiB | sleeps"))
case("a row changed", False, "differs from what", doc_text=TEXT.replace(row, row.replace("|", "| 1.00 |", 1)))
case("a row deleted", False, "differs from what", doc_text=TEXT.replace(row + "\n", ""))

shutil.rmtree(tmp)
if failures:
    print("\n\n".join(failures))
    sys.exit(1)
print("paced_report: every damaged input refused at its check")
