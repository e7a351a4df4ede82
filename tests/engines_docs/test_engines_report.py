#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tools/engines_report.py --check passes on the committed document and logs
and fails on every kind of damage: a missing or doubled block, a changed
generated line, and logs that are malformed, incomplete, from mixed devices,
not bit-identical between MNN with and without the patch, disagreeing with
the CPU backend, or with an output that did not change between inferences;
and likewise for the caller-memory block and the probe output it comes from
(tools/device/host_tensor_readback)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "engines_report.py")
DOC = os.path.join(ROOT, "docs", "engines.md")
LOGS = os.path.join(ROOT, "docs", "logs")

# The folders the tool reads, from the tool itself: damage applied anywhere
# else would prove nothing.
def _tool_devices():
    import importlib.util
    spec = importlib.util.spec_from_file_location("engines_report", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    folders = [folder for folder, _, _ in module.DEVICES]
    subsets = [folder for folder, _, names in module.DEVICES if names is not None]
    if len(folders) != 3 or not folders[0].startswith("h200/") or not folders[2].startswith("ci/") or \
            subsets != [folders[1]]:
        raise SystemExit("test_engines_report: expected in DEVICES an H200 folder, an H200 folder of some models "
                         "and a CI folder, got %r" % folders)
    return [os.path.join(*folder.split("/")) for folder in folders]


NVIDIA, POCL5, POCL = _tool_devices()


def _probe_folder():
    import importlib.util
    spec = importlib.util.spec_from_file_location("engines_report", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return os.path.join(*module.PROBE[0][0].split("/")), module.PROBE[0][1]


PROBE, PROBE_PREFIX = _probe_folder()
PROBE_BEGIN = "<!-- engines_report:begin caller-memory -->"
PROBE_END = "<!-- engines_report:end caller-memory -->"
BEGIN = "<!-- engines_report:begin mnn -->"
END = "<!-- engines_report:end mnn -->"


def main():
    failures = []
    tmp = tempfile.mkdtemp(prefix="engines_report_test")
    try:
        doc = os.path.join(tmp, "engines.md")
        with open(DOC, encoding="utf-8") as f:
            text = f.read()

        def run(label, want_ok, doc_text=text, logs=LOGS, expect=None):
            with open(doc, "w", encoding="utf-8") as f:
                f.write(doc_text)
            r = subprocess.run([sys.executable, TOOL, "--check", "--doc", doc, "--logs", logs],
                               capture_output=True, text=True)
            out = (r.stdout + r.stderr).strip()
            if (r.returncode == 0) != want_ok:
                failures.append("%s: exit status %d, expected %s\n%s" % (label, r.returncode,
                                                                        "0" if want_ok else "not 0", out))
            elif expect is not None and expect not in out:
                # Caught, but not by the check meant for this damage.
                failures.append("%s: the message does not say %r\n%s" % (label, expect, out))
            else:
                print("ok: %s (%s)" % (label, out.splitlines()[-1][:140] if out else ""))

        run("the committed document and logs", True)
        b, e = text.index(BEGIN), text.index(END)
        run("block missing", False, text[:b] + text[e + len(END):])
        run("block doubled", False, text + "\n" + text[b:e + len(END)] + "\n")
        lines = text[b:e].splitlines(keepends=True)
        row = next(i for i, line in enumerate(lines) if line.startswith("| conv1x1"))
        damaged = lines[:]
        damaged[row] = damaged[row].replace("|", "| 1", 2)
        run("a table row changed", False, text[:b] + "".join(damaged) + text[e:])

        def damaged_logs(label, damage, folder=NVIDIA, name=None, expect=None):
            logs = os.path.join(tmp, "logs-" + str(len(os.listdir(tmp))))
            shutil.copytree(LOGS, logs)
            names = sorted(n for n in os.listdir(os.path.join(logs, folder))
                           if n.endswith(".json") and n != "device.json")
            path = os.path.join(logs, folder, name or names[-1])
            with open(path, encoding="utf-8") as f:
                raw = f.read()
            result = damage(raw)
            if result is None:
                os.remove(path)
            else:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(result)
            run(label, False, logs=logs, expect=expect)

        def edit(change):
            def apply(raw):
                data = json.loads(raw)
                change(data)
                return json.dumps(data)
            return apply

        damaged_logs("a log cut short (not JSON)", lambda raw: raw[:len(raw) // 2])
        damaged_logs("a log removed (a variant short of a round)", lambda raw: None)
        damaged_logs("another format", edit(lambda d: d.update(format="other")))
        damaged_logs("an unknown variant", edit(lambda d: d.update(variant="patched-twice")))
        damaged_logs("fewer than 300 iterations", edit(lambda d: d.update(iterations=299)))
        damaged_logs("a model missing", edit(lambda d: d["models"].pop()))
        damaged_logs("a sample missing", edit(lambda d: d["models"][0]["copy_us"].pop()))
        damaged_logs("a time that is not a number", edit(lambda d: d["models"][1]["map_us"].__setitem__(3, "fast")))
        damaged_logs("a negative time", edit(lambda d: d["models"][2]["wait_us"].__setitem__(0, -1.0)))
        damaged_logs("an output that differs (hash)",
                     edit(lambda d: d["models"][4]["copy_hash"].__setitem__(7, "0123456789abcdef")))
        damaged_logs("a malformed hash", edit(lambda d: d["models"][4]["map_hash"].__setitem__(7, "xyz")))
        damaged_logs("outputs off the CPU backend", edit(lambda d: d["models"][5].update(cpu_bad=1)))
        damaged_logs("an output unchanged between inferences", edit(lambda d: d["models"][3].update(unchanged=2)))
        damaged_logs("another driver", edit(lambda d: d.update(driver="1.0")))
        damaged_logs("outputs read in another layout (NC4HW4)", edit(lambda d: d.update(read_layout="c4")))
        damaged_logs("no device name", edit(lambda d: d.update(device="")), folder=POCL)
        damaged_logs("a PoCL log cut short", lambda raw: raw[:100], folder=POCL)
        # A device whose entry names the models it holds: a file with
        # another model, or without one of them, is refused.
        damaged_logs("a model its device's entry leaves out",
                     edit(lambda d: d["models"].append(dict(d["models"][0], model="conv1x1"))), folder=POCL5,
                     expect="expected")
        damaged_logs("a model of its device's entry missing", edit(lambda d: d["models"].pop()), folder=POCL5,
                     expect="expected")

        # The second reads (copy_reread_us, map_reread_us, own_read_us):
        # all three in a file or none, and in every file of a folder or in
        # none, whichever the committed folder has.
        def rereads(d, keep):
            for m in d["models"]:
                for key, like in (("copy_reread_us", "copy_read_us"), ("map_reread_us", "map_read_us"),
                                  ("own_read_us", "wait_us")):
                    if key in keep:
                        m[key] = list(m.get(key, m[like]))
                    else:
                        m.pop(key, None)
        for folder in (NVIDIA, POCL):
            name = sorted(n for n in os.listdir(os.path.join(LOGS, folder))
                          if n.endswith(".json") and n != "device.json")[-1]
            with open(os.path.join(LOGS, folder, name), encoding="utf-8") as f:
                timed = "copy_reread_us" in json.load(f)["models"][0]
            damaged_logs("second reads in part (%s)" % folder,
                         edit(lambda d: rereads(d, ("copy_reread_us", "map_reread_us"))), folder=folder,
                         expect="but not own_read_us")
            damaged_logs("second reads in one file of a folder %s them (%s)" % (
                "whose other files lack" if not timed else "whose other files have", folder),
                edit(lambda d, t=timed: rereads(d, () if t else ("copy_reread_us", "map_reread_us", "own_read_us"))),
                folder=folder, expect="the second reads are timed in")
        # A device.json (the strings of another run, for a run that named the
        # wrong device) is trusted only with its evidence in the run's log.
        def device_json(label, content):
            def add(raw):
                with open(os.path.join(os.path.dirname(raw), "device.json"), "w", encoding="utf-8") as f:
                    json.dump(content, f)
                return None
            logs = os.path.join(tmp, "logs-" + str(len(os.listdir(tmp))))
            shutil.copytree(LOGS, logs)
            add(os.path.join(logs, NVIDIA, "run.log"))
            run(label, False, logs=logs)

        device_json("a device.json whose evidence is not in the log",
                    {"strings_from": "unpatched-0.json", "evidence": "Auto -> Svm", "why": "a test"})
        device_json("a device.json pointing at no file",
                    {"strings_from": "nothing.json", "evidence": "round 0", "why": "a test"})
        # The caller-memory block, from tools/device/host_tensor_readback's output.
        pb, pe = text.index(PROBE_BEGIN), text.index(PROBE_END)
        run("caller-memory block missing", False, text[:pb] + text[pe + len(PROBE_END):])
        plines = text[pb:pe].splitlines(keepends=True)
        prow = next(i for i, line in enumerate(plines) if line.startswith("| `map_memcpy`"))
        pdamaged = plines[:]
        pdamaged[prow] = pdamaged[prow].replace(" | ", " | 9", 1)
        run("a caller-memory row changed", False, text[:pb] + "".join(pdamaged) + text[pe:])

        def damaged_probe(label, damage, expect):
            logs = os.path.join(tmp, "logs-" + str(len(os.listdir(tmp))))
            shutil.copytree(LOGS, logs)
            names = sorted(n for n in os.listdir(os.path.join(logs, PROBE)) if n.startswith(PROBE_PREFIX))
            path = os.path.join(logs, PROBE, names[-1])
            with open(path, encoding="utf-8") as f:
                raw = f.read()
            with open(path, "w", encoding="utf-8") as f:
                f.write(damage(raw))
            run(label, False, logs=logs, expect=expect)

        def drop_line(start):
            return lambda raw: "".join(l for l in raw.splitlines(keepends=True) if not l.startswith(start))

        damaged_probe("a probe that found a wrong element (no closing line)", drop_line("every element"),
                      "does not end with the line")
        damaged_probe("a probe row missing", drop_line("4194304    use_host_ptr_kept"),
                      "use_host_ptr_kept has no row at")
        damaged_probe("a probe row twice",
                      lambda raw: raw.replace("the timed reads summed",
                                              "4096       map_memcpy 1.0 1.0 1.0\nthe timed reads summed"),
                      "twice")
        # A program that does not use its reads' sum may time no read (the
        # compiler drops it): its output has no sum line and is refused.
        damaged_probe("a probe without the timed reads' sum", drop_line("the timed reads summed"),
                      "has no line with the timed reads' sum")
        damaged_probe("a probe time that is not a number",
                      lambda raw: raw.replace("4194304    map_memcpy", "4194304    map_memcpy  fast", 1),
                      "not a row of the table")
        def p10_above_median(raw):
            # The median stays as it was (the table shows medians only), so
            # only the tool's own check of the row can catch it.
            out = []
            for line in raw.splitlines(keepends=True):
                if line.startswith("262144     read_pageable"):
                    size, way, med, _, p90 = line.split()
                    line = "%s %s %s %s %s\n" % (size, way, med, "%.1f" % (float(med) * 2), p90)
                out.append(line)
            return "".join(out)

        damaged_probe("a probe median below its p10", p10_above_median, "not 0 < p10 <= median <= p90")
        damaged_probe("a way of the platform's in some processes only", drop_line("262144     nv_in_place"),
                      "nv_in_place has no row at")
        damaged_probe("a way of the platform's dropped from one process", lambda raw: "".join(
            l for l in raw.splitlines(keepends=True) if " nv_in_place " not in l),
                      "in some of the nvidia-run*.txt files only")
        damaged_probe("a probe of too few rounds", lambda raw: raw.replace("medians of 300", "medians of 30"),
                      "at least 100 are needed")
        damaged_probe("a probe cut short", lambda raw: raw[:len(raw) // 2], "does not end with the line")
        damaged_logs("the device strings' header damaged", lambda raw: raw.replace('"driver"', '"drive"'),
                     folder=NVIDIA, name="unpatched-0.json")
    finally:
        shutil.rmtree(tmp)
    for f in failures:
        print("FAIL: " + f)
    if failures:
        return 1
    print("engines_report: every damage was caught")
    return 0


if __name__ == "__main__":
    sys.exit(main())
