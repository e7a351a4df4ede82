#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turns the JSON of benchmarks/clzero_sequences into a block of docs/benchmarks.md.

clzero_sequences measures, interleaved in one process, every legal
hand-written way the device offers to make a kernel's output visible on the
host and every clzero policy (benchmarks/sequences/main.cpp). Its runs are
kept in docs/bench/sequences/*.json, one file per device and run. This tool
writes, per run: the fastest legal sequence at each size and every clzero
policy's ratio to it (and to the fastest legal sequence of its own kind), the
fastest wait method of each family, the stale sequences, the pipelined
section (TensorRing against the best hand-written ring), the OpenCL calls
per inference, and the host's own cost per inference with the device's
calls made free (runs made before that measurement existed have none).

The block is the text between the lines
    <!-- sequence_report:begin sequences -->
    <!-- sequence_report:end sequences -->
of docs/benchmarks.md, which must appear exactly once each, in that order;
the text outside them is copied byte for byte. Any other or malformed
sequence_report marker, a missing or doubled block, or malformed JSON fails
(exit status 1, naming the file).

    tools/sequence_report.py                 rewrite the block of docs/benchmarks.md
    tools/sequence_report.py --check         exit 1 unless the block is what the JSON gives
    tools/sequence_report.py --print F.json  print the tables of the given runs

Times are medians per inference. Each run has several repetitions, each with
its sequences created anew; a run's time for a sequence is the median of its
repetitions' medians, and every ratio is also given as the range over the
repetitions (a claim holds only where it holds in every repetition).
"""

import argparse
import glob
import json
import math
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from one_block import BlockError, OneBlock  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
README = os.path.join(ROOT, "README.md")
JSON_DIR = os.path.join(ROOT, "docs", "bench", "sequences")
BLOCK = "sequences"
SCHEMA = "clzero.sequences/1"
# The target of issue 11: Auto and each explicit policy within 2% of the
# fastest legal sequence (of its own kind).
TARGET = 1.02
# The target of issue 15: TensorRing within 5% of the best hand-written ring.
RING_TARGET = 1.05
# A generated block larger than this has been damaged.
MAX_BLOCK_BYTES = 120 * 1024


ReportError = BlockError


# ---------------------------------------------------------------- loading

def need(obj, key, where, kind=None):
    if not isinstance(obj, dict) or key not in obj:
        raise ReportError("%s: missing key '%s'" % (where, key))
    value = obj[key]
    if kind is not None and not isinstance(value, kind):
        raise ReportError("%s: '%s' should be %s, is %s" % (where, key, kind.__name__ if isinstance(kind, type)
                                                             else "/".join(k.__name__ for k in kind),
                                                             type(value).__name__))
    return value


RUN_FILE = re.compile(r"^(?P<base>.+)-run(?P<n>[0-9]+)$")


class Run:
    """One clzero_sequences JSON file, or several whole runs of one device
    (NAME-run1.json, NAME-run2.json, ...) merged: their repetitions are
    pooled, so that a range, and every claim made over it, covers every run."""

    def __init__(self, path, more=()):
        paths = [path] + list(more)
        self.path = path
        self.whole_runs = len(paths)
        stem = os.path.splitext(os.path.basename(path))[0]
        m = RUN_FILE.match(stem)
        self.name = m.group("base") if m else stem
        self.files = [os.path.splitext(os.path.basename(p))[0] for p in paths]
        self._load(path)
        for index, other in enumerate(more, 1):
            self._merge(Run(other), index)

    def _merge(self, other, index):
        for key in ("platform", "device", "driver_version", "platform_version"):
            if other.context[key] != self.context[key]:
                raise ReportError("%s: %s '%s' differs from %s's '%s': whole runs of one name must be of one device"
                                  % (other.where, key, other.context[key], self.where, self.context[key]))
        if set(other.variants) != set(self.variants):
            raise ReportError("%s: its variants differ from %s's: whole runs must run the same catalogue"
                              % (other.where, self.where))
        for key, block in other.blocks.items():
            if self.blocks.get(key, block) != block:
                raise ReportError("%s: turns of %s at %d bytes differ from %s's: whole runs must measure alike"
                                  % (other.where, key[0], key[1], self.where))
        for section, sizes in other.sections.items():
            for b, reps in sizes.items():
                for rep in reps:
                    rep["whole_run"] = index
                self.sections[section].setdefault(b, []).extend(reps)
        for section, sizes in other.confirm.items():
            for b, entries in sizes.items():
                for entry in entries:
                    entry["whole_run"] = index
                self.confirm.setdefault(section, {}).setdefault(b, []).extend(entries)
        if set(other.host) != set(self.host):
            raise ReportError("%s: its host_ns variants differ from %s's: whole runs must measure the same"
                              % (other.where, self.where))
        for name, medians in other.host.items():
            self.host[name].extend(medians)
        if set(other.host_cold) != set(self.host_cold):
            raise ReportError("%s: its host_cold_ns variants differ from %s's: whole runs must measure the same"
                              % (other.where, self.where))
        for name, medians in other.host_cold.items():
            self.host_cold[name].extend(medians)
        self.autos.append(other.auto)
        self.dates.append(other.context["date"])
        self.rep_counts.append(other.context.get("reps", "?"))
        self.host_waits.append(other.context.get("host_wait"))

    def _load(self, path):
        where = os.path.relpath(path, ROOT) if path.startswith(ROOT) else path
        self.where = where
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            raise ReportError("%s: not readable JSON: %s" % (where, e))
        if need(data, "schema", where, str) != SCHEMA:
            raise ReportError("%s: schema '%s', expected '%s'" % (where, data["schema"], SCHEMA))
        self.context = need(data, "context", where, dict)
        for key in ("platform", "platform_version", "device", "driver_version", "date", "cpu"):
            need(self.context, key, where + " context", str)
        self.auto = need(data, "auto", where, dict)
        self.autos = [self.auto]  # each whole run's, in order (auto is the first's)
        self.variants = {}
        for v in need(data, "variants", where, list):
            for key in ("name", "section", "kind", "family", "allocation", "wait"):
                need(v, key, where + " variant", str)
            need(v, "slots", where + " variant", int)
            self.variants[v["name"]] = v
        self.skipped = need(data, "skipped", where, dict)
        self.lacking = need(data, "lacking", where, list)
        self.calls = need(data, "calls", where, dict)
        # The host's own cost on the null device (runs from before it have
        # none), and the same with the caches evicted (later runs only).
        self.host = self._host_costs(data, "host_ns", where)
        self.host_cold = self._host_costs(data, "host_cold_ns", where)
        self.cuda = None  # {bytes: µs} of CUDA zero copy on the same machine, when committed
        self.cuda_runs = None  # [{bytes: µs}] per whole run, where CUDA alternated with the runs
        self.host_source = None  # a host-only run whose host costs replace the runs' own
        self.coexist = []  # [(n, with CUDA, Run)]: shorter processes with and without CUDA beside OpenCL
        self.coexist_run = None  # the name they carry: <machine>-<commit>
        self.sections = {}
        self.blocks = {}  # (section, bytes) -> (inferences per turn, whether the first was timed apart)
        for section in ("serial", "pipelined"):
            sizes = {}
            for entry in need(data, section, where, list):
                w = "%s %s" % (where, section)
                b = need(entry, "bytes", w, int)
                reps = need(entry, "reps", w, list)
                block = entry.get("block", 1)
                first_apart = entry.get("first_apart", False)
                if not isinstance(block, int) or block < 1 or not isinstance(first_apart, bool):
                    raise ReportError("%s at %d bytes: 'block' must be a positive integer and 'first_apart' a boolean"
                                      % (w, b))
                self.blocks[(section, b)] = (block, first_apart)
                if not reps:
                    raise ReportError("%s at %d bytes: no repetitions" % (w, b))
                for rep in reps:
                    rep["whole_run"] = 0  # which whole run it came from (set again when runs are pooled)
                    results = need(rep, "results", w, dict)
                    for name, r in results.items():
                        if name not in self.variants:
                            raise ReportError("%s: result for unknown variant '%s'" % (w, name))
                        for key in ("median_us", "samples", "stale_inferences"):
                            need(r, key, "%s %s" % (w, name), (int, float))
                        if r["samples"] > 0 and "error" not in r and not (
                                math.isfinite(r["median_us"]) and r["median_us"] > 0):
                            raise ReportError("%s %s: 'median_us' of a measured variant must be a positive, finite "
                                              "number of microseconds, is %r" % (w, name, r["median_us"]))
                        if first_apart and r["samples"] > 0 and "error" not in r:
                            need(r, "first_median_us", "%s %s" % (w, name), (int, float))
                sizes[b] = reps
            self.sections[section] = sizes
        self.dates = [self.context["date"]]
        self.rep_counts = [self.context.get("reps", "?")]
        # How clzero's views waited in the run (older runs did not say).
        wait = self.context.get("host_wait")
        if wait is not None and (not isinstance(wait, str) or not wait.strip()):
            raise ReportError("%s context: 'host_wait' should be a sentence, is %r" % (where, wait))
        self.host_waits = [wait]
        self.confirm = {"serial": {}, "pipelined": {}}
        self.confirm_context = None
        if any(self.sections.values()):
            self._load_confirm(need(data, "confirm", where, dict), where)

    def _load_confirm(self, conf, where):
        """The confirmation (confirm_size in benchmarks/sequences/main.cpp):
        per section and size, the subjects and the screen's fastest legal
        sequences timed again, a twin of the fastest, and the ratios paired
        round by round. Every name must be one the run describes, every
        pair of a subject (or the twin) and a candidate must be there, and
        every ratio must be a positive number."""
        w = where + " confirm"
        self.confirm_context = {"budget_s": need(conf, "budget_s", w, (int, float)),
                                "reps": need(conf, "reps", w, int),
                                "candidates": need(conf, "candidates", w, int)}
        for section in ("serial", "pipelined"):
            for entry in need(conf, section, w, list):
                self._confirm_entry(entry, section, section, w)
        # Each explicit policy against the legal sequences of its own kind
        # (older runs did not confirm them): kept as a section of its own per
        # policy, "kind:<policy>".
        kinds = conf.get("kinds", [])
        if not isinstance(kinds, list):
            raise ReportError("%s: 'kinds' should be a list" % w)
        if kinds:
            self.confirm_context["kinds_budget_s"] = need(conf, "kinds_budget_s", w, (int, float))
            self.confirm_context["kinds_reps"] = need(conf, "kinds_reps", w, int)
        for entry in kinds:
            subjects = need(entry, "subjects", w + " kinds", list)
            if len(subjects) != 1 or not isinstance(subjects[0], str):
                raise ReportError("%s kinds: an entry confirms one explicit policy, not %r" % (w, subjects))
            v = self.variants.get(subjects[0])
            if v is None or v["section"] != "serial" or v["kind"] != "clzero" or not v["family"]:
                raise ReportError("%s kinds: '%s' is no explicit clzero policy of the serial section" %
                                  (w, subjects[0]))
            self._confirm_entry(entry, "serial", "kind:" + subjects[0], w + " kinds", own_kind(v))

    def _confirm_entry(self, entry, section, key, w, candidate_ok=None):
        """One confirmed size of `section`, stored under confirm[key];
        every candidate must satisfy candidate_ok where given (the legal
        sequences of an explicit policy's own kind)."""
        b = need(entry, "bytes", w + " " + section, int)
        we = "%s %s at %d bytes" % (w, key, b)
        if b not in self.sections[section]:
            raise ReportError("%s: a size the %s section did not screen" % (we, section))
        store = self.confirm.setdefault(key, {})
        if b in store:
            raise ReportError("%s: confirmed twice" % we)
        subjects = need(entry, "subjects", we, list)
        candidates = need(entry, "candidates", we, list)
        twin = need(entry, "twin", we, dict)
        twin_name, twin_of = need(twin, "name", we + " twin", str), need(twin, "of", we + " twin", str)
        # The fastest few at this size, then the fastest of each other size.
        most = self.confirm_context["candidates"] + len(self.sections[section]) - 1
        if not subjects or not candidates or len(candidates) > most or len(set(candidates)) != len(candidates):
            raise ReportError("%s: needs subjects and 1 to %d distinct candidates" % (we, most))
        for name in subjects:
            v = self.variants.get(name)
            if v is None or v["section"] != section or v["kind"] not in ("clzero", "cuda"):
                raise ReportError("%s: subject '%s' is no clzero (or CUDA) variant of the %s section" %
                                  (we, name, section))
        # CUDA's zero copy, timed in Auto's rounds: each clzero subject is
        # also paired with it.
        cuda_subjects = [n for n in subjects if self.variants[n]["kind"] == "cuda"]
        clzero_subjects = [n for n in subjects if self.variants[n]["kind"] == "clzero"]
        if cuda_subjects and not clzero_subjects:
            raise ReportError("%s: CUDA is confirmed only beside a clzero subject" % we)
        for name in candidates:
            v = self.variants.get(name)
            if v is None or v["section"] != section or v["kind"] != "legal":
                raise ReportError("%s: candidate '%s' is no legal variant of the %s section" %
                                  (we, name, section))
            if candidate_ok is not None and not candidate_ok(v):
                raise ReportError("%s: candidate '%s' is not of %s's kind" % (we, name, subjects[0]))
        if twin_of != candidates[0] or twin_name != twin_of.replace("legal.", "twin.", 1):
            raise ReportError("%s: the twin must be the fastest candidate's, '%s', named '%s'" %
                              (we, candidates[0], candidates[0].replace("legal.", "twin.", 1)))
        known = set(subjects) | set(candidates) | {twin_name}
        reps = need(entry, "reps", we, list)
        if not reps:
            raise ReportError("%s: no repetitions" % we)
        for rep in reps:
            for name, r in need(rep, "results", we, dict).items():
                if name not in known:
                    raise ReportError("%s: result for '%s', which it did not confirm" % (we, name))
                for k in ("median_us", "samples", "stale_inferences"):
                    need(r, k, "%s %s" % (we, name), (int, float))
        paired = {}
        for p in need(entry, "paired", we, list):
            a, bb = need(p, "a", we + " paired", str), need(p, "b", we + " paired", str)
            median = need(p, "median", "%s paired %s/%s" % (we, a, bb), (int, float))
            samples = need(p, "samples", "%s paired %s/%s" % (we, a, bb), int)
            if not ((a in set(subjects) | {twin_name} and bb in candidates) or
                    (a in clzero_subjects and bb in cuda_subjects)):
                raise ReportError("%s: paired '%s' over '%s' is no subject or twin over a candidate, nor a clzero "
                                  "subject over CUDA" % (we, a, bb))
            if not median > 0 or median != median or median == float("inf") or samples < 1:
                raise ReportError("%s: paired '%s' over '%s' has no positive ratio over its samples" %
                                  (we, a, bb))
            paired[(a, bb)] = median
        needed = [(a, bb) for a in list(subjects) + [twin_name] for bb in candidates]
        needed += [(a, c) for a in clzero_subjects for c in cuda_subjects]
        for a, bb in needed:
            if (a, bb) not in paired:
                raise ReportError("%s: no paired ratio of '%s' over '%s'" % (we, a, bb))
        parsed = {"subjects": subjects, "candidates": candidates, "twin": twin_name, "reps": reps,
                  "paired": paired, "whole_run": 0}
        store[b] = [parsed]
        return parsed

    def _host_costs(self, data, key, where):
        """{variant: [median ns]} of one host-cost section; an unknown
        variant or a result without its median or samples is refused."""
        out = {}
        for name, h in data.get(key, {}).items():
            if name not in self.variants:
                raise ReportError("%s %s: result for unknown variant '%s'" % (where, key, name))
            need(h, "median_ns", "%s %s %s" % (where, key, name), (int, float))
            need(h, "samples", "%s %s %s" % (where, key, name), int)
            if h["samples"] > 0 and "error" not in h:
                out[name] = [h["median_ns"]]
        return out

    def title(self):
        c = self.context
        return "%s, %s (%s), driver %s" % (c["device"], c["platform"], c["platform_version"].split("  ")[0].strip(),
                                          c["driver_version"])

    # A variant's numbers at one size of one section.
    def reps_of(self, section, size, name):
        out = []
        for rep in self.sections[section].get(size, []):
            r = rep["results"].get(name)
            out.append(r)
        return out

    def ok(self, section, size, name):
        """Measured in every repetition, never stale, never failed."""
        reps = self.reps_of(section, size, name)
        return bool(reps) and all(r is not None and r["samples"] > 0 and r["stale_inferences"] == 0 and
                                  "error" not in r for r in reps)

    def stale(self, section, size, name):
        return sum(r["stale_inferences"] for r in self.reps_of(section, size, name) if r is not None)

    def rep_medians(self, section, size, name):
        return [r["median_us"] for r in self.reps_of(section, size, name)]

    def time(self, section, size, name):
        return statistics.median(self.rep_medians(section, size, name))

    def first_time(self, section, size, name):
        """The median over the repetitions of the median first inference of
        a turn, or None where turns were not timed apart."""
        if not self.blocks.get((section, size), (1, False))[1] or not self.ok(section, size, name):
            return None
        return statistics.median(r["first_median_us"] for r in self.reps_of(section, size, name))

    def ever_stale(self, name):
        """Showed a wrong element at some size of some section of the run: a
        sequence the device gets wrong is no reference at any size (NVIDIA's
        early-completing map is stale at some sizes in one run and at all in
        another)."""
        return any(self.stale(section, b, name) for section, sizes in self.sections.items() for b in sizes)

    def fastest(self, section, size, pred, time=None):
        """The fastest fresh variant for which pred(variant) holds, or None;
        never one that was stale at any size of the run. `time` (default:
        the run's median) gives a variant's time, or None where it has none."""
        time = time or self.time
        best = None
        for name, v in self.variants.items():
            if v["section"] != section or not pred(v) or not self.ok(section, size, name) or self.ever_stale(name):
                continue
            t = time(section, size, name)
            if t is not None and (best is None or t < best[1]):
                best = (name, t)
        return best

    def run_median(self, section, size, name, k):
        """The median of `name`'s repetition medians in whole run k, or None
        unless it was measured, fresh, in every repetition of that run."""
        reps = [r for r in self.sections[section].get(size, []) if r["whole_run"] == k]
        got = [r["results"].get(name) for r in reps]
        if not got or any(g is None or g["samples"] == 0 or g["stale_inferences"] or "error" in g for g in got):
            return None
        return statistics.median(g["median_us"] for g in got)

    def per_run(self, section, size, name, pred):
        """For each whole run: the median of `name`'s repetition medians in
        that run over the same of the run's own fastest variant for which
        pred holds (never one stale anywhere in the pooled runs); None where
        either was not measured in every repetition of that run."""
        out = []
        for k in range(self.whole_runs):
            mine = self.run_median(section, size, name, k)
            refs = [self.run_median(section, size, n, k) for n, v in self.variants.items()
                    if v["section"] == section and pred(v) and not self.ever_stale(n)]
            refs = [t for t in refs if t is not None]
            out.append(mine / min(refs) if mine is not None and refs else None)
        return out

    # The confirmation, per whole run.
    def confirm_entry(self, section, size, k):
        for e in self.confirm.get(section, {}).get(size, []):
            if e["whole_run"] == k:
                return e
        return None

    @staticmethod
    def confirm_fresh(entry, name):
        """Measured in every repetition of the confirmation, never stale, never failed."""
        got = [rep["results"].get(name) for rep in entry["reps"]]
        return all(g is not None and g["samples"] > 0 and g["stale_inferences"] == 0 and "error" not in g
                   for g in got)

    @staticmethod
    def confirm_time(entry, name):
        return statistics.median(rep["results"][name]["median_us"] for rep in entry["reps"])

    def confirmed(self, section, size, name, k):
        """(ratio, reference) of `name` in whole run k: its time over the
        fastest candidate's, paired round by round (the largest paired ratio
        over the candidates), never over a candidate stale anywhere in the
        pooled runs or in the confirmation; "stale" where `name` itself
        showed a wrong element; None where it was not confirmed."""
        e = self.confirm_entry(section, size, k)
        if e is None or name not in e["subjects"]:
            return None
        if any(rep["results"].get(name, {}).get("stale_inferences", 0) for rep in e["reps"]):
            return "stale"
        if not self.confirm_fresh(e, name):
            return None
        refs = [(e["paired"][(name, c)], c) for c in e["candidates"]
                if not self.ever_stale(c) and self.confirm_fresh(e, c)]
        return max(refs) if refs else None

    def confirm_twin(self, section, size, k):
        """The twin's time over its original's in whole run k, paired round
        by round, or None where either was not measured fresh throughout."""
        e = self.confirm_entry(section, size, k)
        if e is None:
            return None
        of = e["candidates"][0]
        if not self.confirm_fresh(e, e["twin"]) or not self.confirm_fresh(e, of):
            return None
        return e["paired"][(e["twin"], of)]

    def confirmed_cuda(self, size, k, name="clzero.Auto", cuda="cuda.zero_copy"):
        """(`name` ÷ CUDA, the fastest candidate ÷ CUDA) in whole run k's
        serial confirmation at `size`, each paired round by round in the
        same process; None where CUDA was not confirmed there or any of the
        three was not fresh throughout."""
        e = self.confirm_entry("serial", size, k)
        if e is None or cuda not in e["subjects"] or name not in e["subjects"]:
            return None
        if not self.confirm_fresh(e, cuda) or not self.confirm_fresh(e, name):
            return None
        over = [e["paired"][(cuda, c)] for c in e["candidates"] if not self.ever_stale(c) and self.confirm_fresh(e, c)]
        if not over:
            return None
        return e["paired"][(name, cuda)], 1 / max(over)

    def ratio(self, section, size, name, ref):
        """(ratio of the run's times, min and max of the per-repetition ratios)."""
        a, b = self.rep_medians(section, size, name), self.rep_medians(section, size, ref)
        per = [x / y for x, y in zip(a, b) if y > 0]
        return self.time(section, size, name) / self.time(section, size, ref), min(per), max(per)


# ---------------------------------------------------------------- formatting

def auto_choices(run, sizes):
    """The policy Auto chose at each of these sizes, one list per whole run
    (whole runs pooled under one name may have chosen differently)."""
    return [[auto.get(str(b), auto.get(b, "?")).split(":")[0] for b in sizes] for auto in run.autos]


def size_name(b):
    if b >= 1 << 20 and b % (1 << 20) == 0:
        return "%d MiB" % (b >> 20)
    if b >= 1 << 10 and b % (1 << 10) == 0:
        return "%d KiB" % (b >> 10)
    return "%d B" % b


def us(v):
    return "%.1f" % v if v >= 100 else "%.2f" % v


def ratio_cell(r):
    value, lo, hi = r
    mark = "" if hi <= TARGET else (" ⚠" if value <= TARGET else "")
    return "%.2f× (%.2f–%.2f)%s" % (value, lo, hi, mark)


def short(name):
    return name.replace("legal.", "").replace("serial.", "")


def table(header, rows, align_first_left=True):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join([":--" if align_first_left else "--:"] + ["--:"] * (len(header) - 1)) + "|"]
    for row in rows:
        out.append("| " + " | ".join(row) + " |")
    return "\n".join(out) + "\n"


def own_kind(v):
    """The predicate selecting the legal sequences a clzero policy is held against."""
    family, allocation = v["family"], v["allocation"]
    if not family:  # Auto: every legal sequence
        return lambda w: w["kind"] == "legal"
    return lambda w: w["kind"] == "legal" and w["family"] == family and (not allocation or w["allocation"] == allocation)


def first_inference_row(run, s, sizes):
    """clzero.Auto's first inference of a turn over the fastest legal
    sequence's, at the sizes timed apart; None where no size was."""
    if "clzero.Auto" not in run.variants or not any(run.blocks.get((s, b), (1, False))[1] for b in sizes):
        return None
    cells = []
    for b in sizes:
        mine = run.first_time(s, b, "clzero.Auto")
        ref = run.fastest(s, b, lambda v: v["kind"] == "legal", time=run.first_time)
        if mine is None or ref is None:
            cells.append("–")
            continue
        n, t = ref
        cells.append("%.2f× (%s `%s`)" % (mine / t, us(t), short(n)))
    return ["clzero.Auto, first inference of each turn"] + cells


def serial_block(run):
    s = "serial"
    sizes = sorted(run.sections[s])
    if not sizes:
        return ""
    def turns(b):
        block, apart = run.blocks.get((s, b), (1, False))
        rounds = sum(rep["rounds"] for rep in run.sections[s][b])
        if block == 1:
            return "%s: %d rounds" % (size_name(b), rounds)
        return "%s: %d rounds of turns of %d%s" % (size_name(b), rounds, block, ", the first apart" if apart else "")
    out = ["#### One inference at a time (%s)\n" % ", ".join(turns(b) for b in sizes), ""]
    header = ["median µs per inference, or ratio to the fastest legal sequence"] + [size_name(b) for b in sizes]
    rows = []
    best = {b: run.fastest(s, b, lambda v: v["kind"] == "legal") for b in sizes}
    rows.append(["**fastest legal sequence**"] + ["%s `%s`" % (us(best[b][1]), short(best[b][0])) if best[b] else "–"
                                                   for b in sizes])
    if "floor.kernel_finish" in run.variants:
        rows.append(["floor: kernel + clFinish, nothing read (not a legal way to read)"] +
                    [us(run.time(s, b, "floor.kernel_finish")) if run.ok(s, b, "floor.kernel_finish") else "–"
                     for b in sizes])
    if run.cuda:
        rows.append(["CUDA zero copy (`cudaHostAllocMapped`), same machine, minutes apart"] +
                    [us(run.cuda[b]) if b in run.cuda else "–" for b in sizes])
        rows.append(["clzero.Auto ÷ CUDA zero copy" + (", and in each run against the CUDA run before it"
                                                        if run.cuda_runs else "")] +
                    [cuda_cell(run, s, b) for b in sizes])
    for name, label in (("cuda.zero_copy", "CUDA zero copy (device-mapped pinned memory, as `cudaHostAllocMapped`), "
                                           "in the same rounds"),
                        ("cuda.floor", "CUDA floor: kernel + stream wait, nothing read")):
        if name in run.variants:
            rows.append([label] + [(us(run.time(s, b, name)) if run.ok(s, b, name) else
                                    "**STALE**" if run.stale(s, b, name) else "–") for b in sizes])
    verdict = {}  # policy -> sizes where it missed its reference in some repetition
    unjudged = {}  # policy -> sizes where it was stale, failed or had no reference
    for name, v in run.variants.items():
        if v["section"] != s or v["kind"] != "clzero":
            continue
        cells, own_cells = [], []
        for b in sizes:
            if not best[b]:
                cells.append("–")
                unjudged.setdefault(name, []).append("%s (no legal sequence)" % size_name(b))
                continue
            if run.stale(s, b, name):
                cells.append("**STALE**")
                unjudged.setdefault(name, []).append("%s (stale)" % size_name(b))
                continue
            if not run.ok(s, b, name):
                cells.append("–")
                unjudged.setdefault(name, []).append("%s (not measured)" % size_name(b))
                continue
            r = run.ratio(s, b, name, best[b][0])
            cell = ratio_cell(r)
            if v["family"]:
                own = run.fastest(s, b, own_kind(v))
                if own:
                    ro = run.ratio(s, b, name, own[0])
                    cell += "; own kind %.2f× (`%s`)" % (ro[0], short(own[0]))
                    if ro[2] > TARGET:
                        verdict.setdefault(name, []).append("%s %.2f×" % (size_name(b), ro[0]))
                else:
                    unjudged.setdefault(name, []).append("%s (no legal sequence of its kind)" % size_name(b))
            elif r[2] > TARGET:
                verdict.setdefault(name, []).append("%s %.2f×" % (size_name(b), r[0]))
            cells.append(cell)
        rows.append([name] + cells)
    first_row = first_inference_row(run, s, sizes)
    if first_row:
        rows.append(first_row)
    out.append(table(header, rows))
    out.append("")
    if first_row:
        out.append("Where a turn is several inferences, the times above are its later ones, run as an engine's loop "
                   "runs them, and the last row compares the first inference of each turn, run with the caches as "
                   "the other sequences left them (median of the repetitions' medians; its reference is the fastest "
                   "legal sequence's first inference).\n")
    auto_sizes = sorted(int(b) for b in run.auto)
    per_run = auto_choices(run, auto_sizes)
    if auto_sizes and all(picks == per_run[0] for picks in per_run):
        out.append("Auto chose: " + "; ".join("%s: %s" % (size_name(b), p)
                                               for b, p in zip(auto_sizes, per_run[0])) + ".\n")
    elif auto_sizes:
        out.append("Auto chose, per whole run: " + "; ".join(
            "run %d: %s" % (k + 1, ", ".join("%s: %s" % (size_name(b), p) for b, p in zip(auto_sizes, picks)))
            for k, picks in enumerate(per_run)) + ".\n")
    if verdict:
        out.append("Above %.2f× its reference (Auto: the fastest legal sequence; the others: the fastest of their "
                   "own kind) in at least one repetition: %s.\n" %
                   (TARGET, "; ".join("%s (%s)" % (k, ", ".join(v)) for k, v in verdict.items())))
    elif not unjudged:
        out.append("Every clzero policy within %.2f× of its reference in every repetition.\n" % TARGET)
    if unjudged:
        out.append("Not judged against %.2f×: %s.\n" %
                   (TARGET, "; ".join("%s (%s)" % (k, ", ".join(v)) for k, v in unjudged.items())))
    if "clzero.Auto" in run.variants:
        out.append(per_run_verdict(run, s, sizes, "clzero.Auto", lambda v: v["kind"] == "legal", TARGET,
                                   "the fastest legal sequence"))
        line = twin_line(run, s, sizes, TARGET)
        if line:
            out.append(line)
    if run.cuda:
        out.append(cuda_verdict(run, s, sizes))
    # The fastest wait method of each family (allocation).
    groups = {}
    for name, v in run.variants.items():
        if v["section"] == s and v["kind"] == "legal":
            groups.setdefault((v["family"], v["allocation"]), []).append(name)
    rows = []
    for (family, allocation), names in sorted(groups.items()):
        cells = []
        for b in sizes:
            fresh = [(run.time(s, b, n), n) for n in names if run.ok(s, b, n)]
            if not fresh:
                cells.append("–")
                continue
            t, n = min(fresh)
            cells.append("%s %s" % (us(t), run.variants[n]["wait"]))
        rows.append(["%s%s" % (family, " (%s)" % allocation if allocation else "")] + cells)
    out.append("\nThe fastest wait of each legal family (µs, wait method):\n")
    out.append(table(["family (allocation)"] + [size_name(b) for b in sizes], rows))
    # What the calls a library adds cost: the blocking mapped-at-rest sequence
    # alone, with an unmap and a kernel event created, and with the events in
    # a wait list and a flush after the unmap (what kernels on another queue
    # need), against clzero's Persistent over the same allocation.
    rows = []
    for name, v in sorted(run.variants.items()):
        if v["section"] != s or v["kind"] != "legal" or v["wait"] != "blocking_events":
            continue
        base = name[:-len("blocking_events")]
        steps = [("blocking", base + "blocking"), ("+ two events", name), ("+ wait list and flush", base + "blocking_flushed"),
                 ("clzero.Persistent", "clzero.Persistent." + v["allocation"])]
        if not all(n in run.variants for _, n in steps):
            raise ReportError("%s: %s has no blocking, blocking_flushed or clzero.Persistent partner" % (run.where, name))
        for label, n in steps:
            rows.append(["%s (%s)" % (label, v["allocation"])] +
                        [us(run.time(s, b, n)) if run.ok(s, b, n) else "–" for b in sizes])
    if rows:
        out.append("\nWhat the calls a library adds cost (µs; `blocking_events` and `blocking_flushed` in "
                   "`benchmarks/sequences/legal.hpp`):\n")
        out.append(table(["mapped at rest, blocking map"] + [size_name(b) for b in sizes], rows))
    stale = []
    for name, v in run.variants.items():
        if v["section"] != s:
            continue
        bad = [size_name(b) for b in sizes if run.stale(s, b, name)]
        if bad:
            stale.append("`%s` (%s)" % (name, ", ".join(bad)))
    out.append("\nStale (a wrong element in at least one inference): %s.\n" % ("; ".join(stale) if stale else "none"))
    return "\n".join(out)


def cuda_ratios(run, section, size):
    """clzero.Auto over CUDA zero copy in each whole run, each against the
    CUDA run made just before it; None where not measured."""
    if not run.cuda_runs:
        return None
    out = []
    for k, cuda in enumerate(run.cuda_runs):
        mine = run.run_median(section, size, "clzero.Auto", k)
        if mine is None or size not in cuda:
            return None
        out.append(mine / cuda[size])
    return out


def cuda_cell(run, section, size):
    if size not in run.cuda or not run.ok(section, size, "clzero.Auto"):
        return "–"
    cell = "%.2f×" % (run.time(section, size, "clzero.Auto") / run.cuda[size])
    ratios = cuda_ratios(run, section, size)
    if ratios:
        cell += " (%s)" % ", ".join("%.2f" % r for r in ratios)
    return cell


def verdict_ratio(r, target):
    """A ratio to two decimals, or three where two would put it on the
    other side of the target (1.0241 against 1.02 is a miss, not "1.02")."""
    for digits in (2, 3, 4, 5):
        text = "%.*f" % (digits, r)
        if (float(text) <= target) == (r <= target):
            return text
    return text


def cuda_verdict(run, section, sizes):
    """Issue 11's CUDA targets, in every whole run against its own CUDA run:
    at most 1.15x at 4 KiB (the OpenCL launch alone costs about 1.13x
    CUDA's there), at most 1.0x from 256 KiB."""
    if not run.cuda_runs:
        return ""
    held, missed = [], []
    for b in sizes:
        target = 1.15 if b == 4096 else 1.0 if b >= 256 << 10 else None
        ratios = cuda_ratios(run, section, b)
        if target is None or ratios is None:
            continue
        cell = "%s ≤ %.2f× (%s)" % (size_name(b), target, ", ".join(verdict_ratio(r, target) for r in ratios))
        (held if max(ratios) <= target else missed).append(cell)
    return ("clzero.Auto ÷ CUDA zero copy in each whole run, against the CUDA run just before it: held at %s; "
            "not at %s.\n" % ("; ".join(held) or "no size", "; ".join(missed) or "any size"))


def per_run_verdict(run, section, sizes, name, pred, target, reference):
    """One line: where `name` is within `target` of its run's own reference
    in every whole run (each run's medians, as the issues state targets),
    with the runs' ratios."""
    held, missed = [], []
    for b in sizes:
        ratios = run.per_run(section, b, name, pred)
        if any(r is None for r in ratios):
            continue
        cell = "%s (%s)" % (size_name(b), ", ".join(verdict_ratio(r, target) for r in ratios))
        (held if max(ratios) <= target else missed).append(cell)
    runs = "each of the %d whole runs" % run.whole_runs if run.whole_runs > 1 else "the run"
    return ("`%s` within %.2f× of %s of the same run, medians of the run's repetitions, in %s: %s; not: %s.\n" %
            (name, target, reference, runs, "; ".join(held) or "at no size", "; ".join(missed) or "none"))


def twins(run, section):
    """(twin, original) pairs of `section`: a variant of kind "twin" is a
    legal variant run again (the same code and calls, buffers of its own),
    named with "twin" in place of "legal"."""
    pairs = []
    for name, v in sorted(run.variants.items()):
        if v["section"] != section or v["kind"] != "twin":
            continue
        original = name.replace("twin.", "legal.", 1)
        if original not in run.variants or run.variants[original]["kind"] != "legal":
            raise ReportError("%s: twin '%s' has no legal variant '%s'" % (run.where, name, original))
        pairs.append((name, original))
    return pairs


def twin_spread(run, section, size):
    """The largest ratio, in one whole run, between the run medians of a
    twin and its original (neither stale anywhere), with the pair; None
    where no pair was measured in full."""
    worst = None
    for a, b in twins(run, section):
        if run.ever_stale(a) or run.ever_stale(b):
            continue
        for k in range(run.whole_runs):
            ta, tb = run.run_median(section, size, a, k), run.run_median(section, size, b, k)
            if ta is None or tb is None:
                continue
            r = max(ta, tb) / min(ta, tb)
            if worst is None or r > worst[0]:
                worst = (r, b)
    return worst


def twin_line(run, section, sizes, target):
    """How far apart a sequence and its twin came, per size: the
    measurement's own spread, against which a ratio is read."""
    cells = []
    for b in sizes:
        t = twin_spread(run, section, b)
        if t:
            cells.append("%s %.3f× (`%s`)" % (size_name(b), t[0], short(t[1])))
    if not cells:
        return ""
    runs = "one whole run" if run.whole_runs > 1 else "the run"
    return ("The measurement's own spread: a legal sequence and its twin (the same code and calls over buffers of "
            "their own, `twin.*`) came this far apart in %s, medians of its repetitions, at most: %s. Where that "
            "exceeds %.2f×, a verdict at %.2f× is within the spread of the measurement itself.\n" %
            (runs, "; ".join(cells), target, target))


def pipelined_block(run):
    s = "pipelined"
    sizes = sorted(run.sections[s])
    if not sizes:
        return ""
    block = run.sections[s][sizes[0]]
    out = ["#### Pipelined: rings of 2 and 3 against the serial sequences, same rounds\n", ""]
    header = ["median µs per inference, or ratio to the fastest legal ring"] + [size_name(b) for b in sizes]
    best_ring = {b: run.fastest(s, b, lambda v: v["kind"] == "legal" and v["slots"] > 1) for b in sizes}
    best_serial = {b: run.fastest(s, b, lambda v: v["kind"] == "legal" and v["slots"] == 1) for b in sizes}
    rows = [["**fastest legal ring**"] + ["%s `%s`" % (us(best_ring[b][1]), short(best_ring[b][0])) if best_ring[b]
                                         else "–" for b in sizes],
            ["fastest legal serial sequence"] + ["%s `%s`" % (us(best_serial[b][1]), short(best_serial[b][0]))
                                                 if best_serial[b] else "–" for b in sizes],
            ["speed-up of the fastest ring over it"] + ["%.2f×" % (best_serial[b][1] / best_ring[b][1])
                                                        if best_ring[b] and best_serial[b] else "–" for b in sizes]]
    for k in (2, 3):
        name = "ring%d.clzero.Auto" % k
        if name in run.variants:
            rows.append(["speed-up of `%s` over it" % name] +
                        ["%.2f×" % (best_serial[b][1] / run.time(s, b, name))
                         if best_serial[b] and run.ok(s, b, name) else "–" for b in sizes])
    for name, v in run.variants.items():
        if v["section"] != s or v["kind"] != "clzero":
            continue
        cells = []
        for b in sizes:
            if run.stale(s, b, name):
                cells.append("**STALE**")
            elif not run.ok(s, b, name) or not best_ring[b]:
                cells.append("–")
            else:
                cells.append(ratio_cell(run.ratio(s, b, name, best_ring[b][0])))
        rows.append([name] + cells)
    out.append(table(header, rows))
    ring_target = RING_TARGET
    for k in (2, 3):
        name = "ring%d.clzero.Auto" % k
        if name not in run.variants:
            continue
        held = [size_name(b) for b in sizes if best_ring[b] and run.ok(s, b, name) and
                run.ratio(s, b, name, best_ring[b][0])[2] <= ring_target]
        missed = ["%s %.2f×" % (size_name(b), run.ratio(s, b, name, best_ring[b][0])[0]) for b in sizes
                  if best_ring[b] and run.ok(s, b, name) and run.ratio(s, b, name, best_ring[b][0])[2] > ring_target]
        out.append("\n`%s` within %.2f× of the fastest legal ring in every repetition: %s; not: %s.\n" %
                   (name, ring_target, ", ".join(held) or "at no size", ", ".join(missed) or "none"))
        out.append(per_run_verdict(run, s, sizes, name, lambda v: v["kind"] == "legal" and v["slots"] > 1,
                                   ring_target, "the fastest legal ring"))
        out.append(per_run_verdict(run, s, sizes, name, lambda v, k=k: v["kind"] == "legal" and v["slots"] == k,
                                   ring_target, "the fastest legal ring of %d" % k))
    line = twin_line(run, s, sizes, ring_target)
    if line:
        out.append(line)
    stale = [n for n, v in run.variants.items() if v["section"] == s and any(run.stale(s, b, n) for b in sizes)]
    out.append("\nStale: %s.\n" % (", ".join("`%s`" % n for n in stale) if stale else "none"))
    del block
    return "\n".join(out)


def calls_block(run):
    if not run.calls:
        return ""
    rows = []
    size = 4096 if 4096 in run.sections["serial"] else None
    for name, v in run.variants.items():
        if v["section"] != "serial" or v["kind"] != "clzero" or name not in run.calls:
            continue
        mine = run.calls[name]
        ref = run.fastest("serial", size, own_kind(v)) if size else None
        ref_calls = run.calls.get(ref[0]) if ref else None

        def fmt(c):
            by = c["by_call"]
            polls = by.get("clGetEventInfo", 0)
            others = sum(n for k, n in by.items() if k != "clGetEventInfo")
            return "%g (+%.0f status queries)" % (others, polls) if polls else "%g" % others

        extra = ""
        if ref_calls:
            diff = []
            for k, n in sorted(mine["by_call"].items()):
                d = n - ref_calls["by_call"].get(k, 0)
                if d > 0 and k != "clGetEventInfo":
                    diff.append("%s +%g" % (k, d))
            extra = ", ".join(diff) if diff else "none"
        rows.append([name, fmt(mine), "`%s`: %s" % (short(ref[0]), fmt(ref_calls)) if ref_calls else "–",
                     extra or "–"])
    if not rows:
        return ""
    return ("#### OpenCL calls per inference (4 KiB; a status query is one clGetEventInfo)\n\n" +
            table(["clzero", "calls", "fastest legal sequence of its kind at 4 KiB", "calls it makes that the "
                   "sequence does not"], rows))


def host_block(run):
    """The host's own cost per inference, the device's calls made free: each
    clzero policy against the fastest legal sequence of its kind at 4 KiB
    (the calls table's reference)."""
    if not run.host:
        return ""
    size = 4096 if 4096 in run.sections["serial"] else None
    rows = []
    for name, v in run.variants.items():
        if v["section"] != "serial" or v["kind"] != "clzero" or name not in run.host:
            continue
        ref = run.fastest("serial", size, own_kind(v)) if size else None

        def cell(medians):
            mid = statistics.median(medians)
            if len(medians) == 1:
                return "%.0f" % mid
            return "%.0f (%.0f–%.0f)" % (mid, min(medians), max(medians))

        mine = statistics.median(run.host[name])
        row = [name, cell(run.host[name])]
        if ref and ref[0] in run.host:
            theirs = statistics.median(run.host[ref[0]])
            row += ["`%s`: %s" % (short(ref[0]), cell(run.host[ref[0]])), "%+.0f" % (mine - theirs)]
        else:
            row += ["–", "–"]
        if run.host_cold:
            if name in run.host_cold and ref and ref[0] in run.host_cold:
                a, b = statistics.median(run.host_cold[name]), statistics.median(run.host_cold[ref[0]])
                row += [cell(run.host_cold[name]), cell(run.host_cold[ref[0]]), "%+.0f" % (a - b)]
            else:
                row += ["–", "–", "–"]
        rows.append(row)
    if not rows:
        return ""
    runs = "median of the runs' medians (range over the runs)" if run.whole_runs > 1 and not run.host_source \
        else "median"
    if run.host_source:
        runs += (", from `docs/bench/sequences/host/%s`, a host-only run (`clzero_sequences --sections host`) "
                 "on the same machine" % run.host_source)
    header = ["clzero", "ns", "fastest legal sequence of its kind at 4 KiB", "clzero − it"]
    cold = ""
    if run.host_cold:
        header += ["ns, caches evicted", "it, caches evicted", "clzero − it, caches evicted"]
        cold = ("The last three columns time one inference at a time after 4 MiB were written to evict the "
                "caches, as the driver's own work between a real inference's calls leaves them. ")
    return ("#### The host's own cost per inference (ns, 4 B; the device's calls made free)\n\n"
            "Every serial sequence again, with the OpenCL calls it makes answered at once by the benchmark "
            "instead of the runtime (`set_null_device` in `benchmarks/sequences/call_count.hpp`): what is "
            "left is the host's work around the calls, the calls' entry, and the check of the one element. "
            "%sTimes: %s.\n\n" % (cold, runs) + table(header, rows))


def confirm_verdict(run, section, sizes, subjects, target, label):
    """One line: where the best of `subjects` (per whole run and size, the
    subject with the smallest confirmed ratio) is within `target` of the
    fastest candidate in every whole run."""
    held, missed, absent = [], [], []
    for b in sizes:
        per = []
        for k in range(run.whole_runs):
            got = [run.confirmed(section, b, name, k) for name in subjects]
            got = [g for g in got if g is not None and g != "stale"]
            per.append(min(got)[0] if got else None)
        if any(r is None for r in per):
            absent.append(size_name(b))
            continue
        cell = "%s (%s)" % (size_name(b), ", ".join(verdict_ratio(r, target) for r in per))
        (held if max(per) <= target else missed).append(cell)
    runs = "each of the %d whole runs" % run.whole_runs if run.whole_runs > 1 else "the run"
    line = ("%s within %.2f× of the fastest legal sequence timed with it, paired round by round, in %s: %s; "
            "not: %s" % (label, target, runs, "; ".join(held) or "at no size", "; ".join(missed) or "none"))
    if absent:
        line += "; not confirmed: %s" % ", ".join(absent)
    return line + ".\n"


def confirm_section(run, section, subjects, target):
    sizes = sorted(run.confirm[section])
    if not sizes:
        return []
    runs = range(run.whole_runs)
    rows = []
    for b in sizes:
        entries = [run.confirm_entry(section, b, k) for k in runs]
        rounds = sum(rep["rounds"] for e in entries if e for rep in e["reps"])
        refs, cells = [], {name: [] for name in subjects}
        for k, e in zip(runs, entries):
            best = None
            for name in subjects:
                got = run.confirmed(section, b, name, k)
                cells[name].append("**STALE**" if got == "stale" else "–" if got is None else
                                   verdict_ratio(got[0], target))
                if got not in (None, "stale") and (best is None or got[0] < best[0]):
                    best = got
            refs.append("`%s` %s" % (short(best[1]), us(run.confirm_time(e, best[1]))) if best else "–")
        twin = [run.confirm_twin(section, b, k) for k in runs]
        rows.append([size_name(b), str(rounds), "; ".join(refs)] + [", ".join(cells[n]) for n in subjects] +
                    [", ".join("%.3f" % t if t is not None else "–" for t in twin)])
    header = (["size", "rounds", "the reference: the candidate the faster subject trails most, µs, per run"] +
              ["`%s` ÷ it, per run" % n for n in subjects] + ["twin ÷ its original, per run"])
    out = [table(header, rows)]
    spread = []
    for b in sizes:
        twins = [t for t in (run.confirm_twin(section, b, k) for k in runs) if t is not None]
        if twins:
            spread.append("%s %.3f×" % (size_name(b), max(max(t, 1 / t) for t in twins)))
    if spread:
        out.append("\nThe confirmation's own resolution: the twin and its original (the same code and calls over "
                   "buffers of their own) came this far apart, paired round by round, in one whole run at most: "
                   "%s.\n" % "; ".join(spread))
    return out


def confirm_block(run):
    """The confirmation: clzero's Auto timed again against each whole run's
    fastest legal sequences and a twin, in rounds of their own."""
    if not any(run.confirm.values()):
        return ""
    c = run.confirm_context
    out = ["#### Confirmed: Auto timed again against the fastest legal sequences, in rounds of their own\n",
           "The tables above time some 60 variants in every round, so at the large sizes a variant gets few "
           "samples, and the fastest of some 40 legal sequences is partly the luckiest: a ratio to it leans "
           "against whatever is held to it. After them, each whole run times clzero's Auto again (serial, and "
           "as TensorRings of 2 and 3) against the %d fastest legal sequences its own tables found at that "
           "size and the fastest of every other size, never one stale at any size, and against a twin of the "
           "fastest, in rounds of these alone, shuffled, with %d "
           "repetitions over fresh buffers (a budget of %s s per run; `confirm_size` in "
           "`benchmarks/sequences/main.cpp`). A ratio here is the median, over every round, of the subject's "
           "time over the candidate's in the same round, held against the candidate it trails most: the "
           "candidates come from the tables above, the numbers from these rounds alone. The twin's ratio is "
           "what this measurement resolves.\n" % (c["candidates"], c["reps"], num_text(c["budget_s"]))]
    serial_subjects = ["clzero.Auto"]
    if run.confirm["serial"]:
        out.append("One inference at a time:\n")
        out += confirm_section(run, "serial", serial_subjects, TARGET)
        out.append(confirm_verdict(run, "serial", sorted(run.confirm["serial"]), serial_subjects, TARGET,
                                   "`clzero.Auto`"))
    ring_subjects = [n for n in ("ring2.clzero.Auto", "ring3.clzero.Auto") if n in run.variants]
    if run.confirm["pipelined"] and ring_subjects:
        out.append("Pipelined, against the fastest legal rings (of 2 or 3):\n")
        out += confirm_section(run, "pipelined", ring_subjects, RING_TARGET)
        sizes = sorted(run.confirm["pipelined"])
        for name in ring_subjects:
            out.append(confirm_verdict(run, "pipelined", sizes, [name], RING_TARGET, "`%s`" % name))
        out.append(confirm_verdict(run, "pipelined", sizes, ring_subjects, RING_TARGET,
                                   "TensorRing (the faster of %s in each run)" %
                                   " and ".join("`%s`" % n for n in ring_subjects)))
    return "\n".join(out)


def cuda_per_run(run, sizes):
    """{size: [(Auto ÷ CUDA, fastest legal ÷ CUDA) or None, per whole run]}
    for the sizes where some run confirmed CUDA in the same process."""
    got = {b: [run.confirmed_cuda(b, k) for k in range(run.whole_runs)] for b in sizes}
    return {b: g for b, g in got.items() if any(x is not None for x in g)}


# Issue 11's CUDA goals: clzero.Auto ÷ CUDA zero copy at most 1.15× at 4 KiB
# (the OpenCL launch alone costs about 1.13× CUDA's there), at most 1.0×
# from 256 KiB.
def cuda_target(size):
    return 1.15 if size == 4096 else 1.0 if size >= 256 << 10 else None


def cuda_block(run):
    """CUDA's zero copy timed in Auto's confirmation rounds, in the same
    process: Auto ÷ CUDA and the fastest legal OpenCL sequence ÷ CUDA, per
    whole run, and the verdict on the goals."""
    per_run = cuda_per_run(run, sorted(run.confirm["serial"]))
    if not per_run:
        return ""
    out = ["#### OpenCL against CUDA, in the same process\n",
           "CUDA's zero copy (`cuda.zero_copy`: `cuMemHostAlloc` with `CU_MEMHOSTALLOC_DEVICEMAP`, the memory "
           "`cudaHostAlloc(cudaHostAllocMapped)` makes; the kernel writes it, the host reads every element after "
           "`cuStreamSynchronize`) ran in the same process as the OpenCL sequences, through the CUDA driver API "
           "on the same GPU, in the screen's rounds and in Auto's confirmation rounds above. A ratio here is "
           "the median over those confirmation rounds of the two times in the same round: no minutes of a "
           "shared machine lie between them.\n"]
    rows = []
    for b, got in per_run.items():
        target = cuda_target(b)
        floor = "–"
        if run.ok("serial", b, "floor.kernel_finish") and run.ok("serial", b, "cuda.floor"):
            floor = "%.2f×" % (run.time("serial", b, "floor.kernel_finish") / run.time("serial", b, "cuda.floor"))
        rows.append([size_name(b),
                     ", ".join(verdict_ratio(g[0], target or TARGET) if g else "–" for g in got),
                     ", ".join(verdict_ratio(g[1], target or TARGET) if g else "–" for g in got),
                     floor, "≤ %.2f×" % target if target else "–"])
    out.append(table(["size", "clzero.Auto ÷ CUDA zero copy, per run", "fastest legal OpenCL sequence ÷ CUDA "
                      "zero copy, per run", "OpenCL floor ÷ CUDA floor (the screen's medians)", "goal"], rows))
    held, missed, bound = [], [], []
    for b, got in per_run.items():
        target = cuda_target(b)
        if target is None or any(g is None for g in got):
            continue
        cell = "%s ≤ %.2f× (%s)" % (size_name(b), target, ", ".join(verdict_ratio(g[0], target) for g in got))
        (held if max(g[0] for g in got) <= target else missed).append(cell)
        if max(g[1] for g in got) > target:
            bound.append("%s (%s)" % (size_name(b), ", ".join(verdict_ratio(g[1], target) for g in got)))
    runs_text = "each of the %d whole runs" % run.whole_runs if run.whole_runs > 1 else "the run"
    out.append("\nclzero.Auto ÷ CUDA zero copy in the same process, paired round by round, in %s: held at %s; "
               "not at %s.\n" % (runs_text, "; ".join(held) or "no size", "; ".join(missed) or "any size"))
    if bound:
        out.append("The fastest legal OpenCL sequence itself was above the goal in some run at: %s: there no "
                   "OpenCL code, clzero's or hand-written, reached CUDA's time in that run.\n" % "; ".join(bound))
    out += coexist_lines(run)
    return "\n".join(out)


def coexist_lines(run):
    """Whether CUDA in the process changes OpenCL's numbers: shorter
    processes with and without it, each with Auto's confirmation."""
    if not run.coexist:
        return []
    sizes = sorted({b for _, _, r in run.coexist for b in r.confirm["serial"]})
    rows, worst = [], {True: [], False: []}
    for n, with_cuda, r in run.coexist:
        cells = []
        for b in sizes:
            got = r.confirmed("serial", b, "clzero.Auto", 0) if b in r.confirm["serial"] else None
            best = r.fastest("serial", b, lambda v: v["kind"] == "legal") if b in r.sections["serial"] else None
            if got in (None, "stale") or best is None:
                cells.append("–")
                continue
            worst[with_cuda].append(got[0])
            cells.append("%s (%s)" % (verdict_ratio(got[0], TARGET), us(best[1])))
        rows.append([str(n), "yes" if with_cuda else "no (`--no-cuda`)"] + cells)
    out = ["Does CUDA beside OpenCL change OpenCL's numbers? Shorter processes on the same machine, one after "
           "another, alternately without CUDA and with it (`docs/bench/sequences/coexist/`, %s each%s): per size, "
           "`clzero.Auto` ÷ the fastest legal sequence, paired in Auto's confirmation, and in brackets the fastest "
           "legal sequence's median in µs from the process's own tables.\n" %
           ("budget %s s" % num_text(run.coexist[0][2].context.get("budget_s", 0)),
            "" if run.coexist_run == run.name else
            "; processes of `%s`, not of the whole runs above" % run.coexist_run),
           table(["process", "CUDA in it"] + [size_name(b) for b in sizes], rows)]
    if worst[True] and worst[False]:
        out.append("\n`clzero.Auto` ÷ the fastest legal sequence over every size: %.3f–%.3f with CUDA in the "
                   "process, %.3f–%.3f without.\n" % (min(worst[True]), max(worst[True]), min(worst[False]),
                                                      max(worst[False])))
    return out


def kinds_block(run):
    """Each explicit policy confirmed against the fastest legal sequences
    of its own kind, in rounds of their own: a ratio per whole run and size,
    and a verdict per policy."""
    keys = sorted(k for k in run.confirm if k.startswith("kind:") and run.confirm[k])
    if not keys:
        return ""
    c = run.confirm_context
    sizes = sorted({b for k in keys for b in run.confirm[k]})
    out = ["#### Confirmed: each explicit policy against the fastest legal sequences of its own kind\n",
           "The same confirmation for every explicit policy, serial, at every size: the policy against the %d "
           "fastest legal sequences of its own kind (its family and allocation, as in the table at the top) "
           "that the tables above found at that size, the fastest of its kind at every other size, and a twin "
           "of the fastest, in rounds of these alone, with %d repetitions over fresh buffers (a budget of %s s "
           "per run, shared by every policy and size). A cell is the policy's time over the candidate it trails "
           "most, paired round by round, per whole run; below the ratios, the reference of the run where the "
           "ratio was largest.\n" % (c["candidates"], c["kinds_reps"], num_text(c["kinds_budget_s"]))]
    # The resolution at each size: how far any twin came from its original
    # in any policy's confirmation of any run.
    resolution = {}
    for b in sizes:
        twins = [t for key in keys for t in (run.confirm_twin(key, b, k) for k in range(run.whole_runs))
                 if t is not None]
        if twins:
            resolution[b] = max(max(t, 1 / t) for t in twins)
    rows, held, missed, absent, beyond = [], [], [], [], []
    for key in keys:
        name = key[len("kind:"):]
        cells, worst = [], []
        for b in sizes:
            per = [run.confirmed(key, b, name, k) for k in range(run.whole_runs)]
            if any(g == "stale" for g in per):
                cells.append("**STALE**")
                worst.append(None)
                continue
            ok = [g for g in per if g is not None]
            if not ok:
                cells.append("–")
                worst.append(None)
                continue
            top = max(ok)
            cells.append("%s<br>`%s`" % (", ".join(verdict_ratio(g[0], TARGET) if g else "–" for g in per),
                                         short(top[1])))
            worst.append(None if len(ok) < run.whole_runs else top[0])
        rows.append(["`%s`" % name] + cells)
        over = ["%s %s×" % (size_name(b), verdict_ratio(r, TARGET)) for b, r in zip(sizes, worst)
                if r is not None and r > TARGET]
        gaps = [size_name(b) for b, r in zip(sizes, worst) if r is None]
        clear = ["%s %s× (its twins %.3f×)" % (size_name(b), verdict_ratio(r, TARGET), resolution[b])
                 for b, r in zip(sizes, worst) if r is not None and r > TARGET and b in resolution and
                 r > resolution[b]]
        if clear:
            beyond.append("`%s` (%s)" % (name, ", ".join(clear)))
        if over:
            missed.append("`%s` (%s)" % (name, ", ".join(over)))
        elif gaps:
            absent.append("`%s` (%s)" % (name, ", ".join(gaps)))
        else:
            held.append("`%s`" % name)
    out.append(table(["policy"] + [size_name(b) for b in sizes], rows))
    spread = ["%s %.3f×" % (size_name(b), resolution[b]) for b in sizes if b in resolution]
    if spread:
        out.append("\nThe twins' resolution (a twin against its original, any policy's confirmation, one whole run "
                   "at most): %s.\n" % "; ".join(spread))
    runs = "each of the %d whole runs" % run.whole_runs if run.whole_runs > 1 else "the run"
    line = ("Within %.2f× of the fastest legal sequence of its own kind at every size, in %s: %s; "
            "above it in some run (the largest ratio): %s" % (TARGET, runs, ", ".join(held) or "none",
                                                             "; ".join(missed) or "none"))
    if absent:
        line += ("; within it where confirmed, but not confirmed in every run (a run ended before it, or no "
                 "candidate was fresh): %s" % "; ".join(absent))
    out.append(line + ".\n")
    if missed:
        out.append("Of those above it, further from their reference than any twin came from its original at that "
                   "size (a miss the measurement resolves): %s.\n" % ("; ".join(beyond) or "none"))
    return "\n".join(out)


def num_text(v):
    return "%g" % v


def run_block(run):
    c = run.context
    if run.whole_runs == 1:
        source = "`docs/bench/sequences/%s.json`, %s; CPU: %s; %s repetitions with fresh buffers, budget %s s.\n" % (
            run.name, c["date"], c["cpu"], c.get("reps", "?"), c.get("budget_s", "?"))
    else:
        source = ("%d whole runs, each a fresh process (%s), %s to %s; CPU: %s; %s repetitions with fresh buffers "
                  "in each, budget %s s each. Medians and ranges pool the repetitions of every run: a ratio in "
                  "range holds in every repetition of every run.\n" %
                  (run.whole_runs, ", ".join("`docs/bench/sequences/%s.json`" % f for f in run.files),
                   min(run.dates), max(run.dates), c["cpu"], "/".join(str(r) for r in run.rep_counts),
                   c.get("budget_s", "?")))
    parts = ["### %s (`%s`)\n" % (run.title(), run.name), source]
    if any(run.host_waits):
        parts.append("clzero's host views waited by: %s.\n" % "; ".join(
            "run %d: %s" % (i, w) if run.whole_runs > 1 else w
            for i, w in enumerate((w or "not recorded" for w in run.host_waits), 1)))
    if run.lacking:
        parts.append("Not offered by the device: %s.\n" % "; ".join(run.lacking))
    if run.skipped:
        parts.append("Could not run: %s.\n" % "; ".join("`%s` (%s)" % (k, v[:120]) for k, v in
                                                        sorted(run.skipped.items())))
    for part in (serial_block(run), pipelined_block(run), confirm_block(run), cuda_block(run), kinds_block(run),
                 calls_block(run), host_block(run)):
        if part:
            parts.append(part)
    return "\n".join(parts)


def generate(runs):
    intro = ("Generated by `tools/sequence_report.py` from `docs/bench/sequences/*.json` "
             "(`benchmarks/clzero_sequences`): every legal sequence and every clzero policy interleaved in one "
             "process, shuffled every round; a ratio is the run's median over the fastest legal sequence's "
             "(never one that showed a wrong element at any size of the run), "
             "with the range over the repetitions in brackets; ⚠ marks a ratio within %.2f× in the run but not in "
             "every repetition.\n" % TARGET)
    if not runs:
        return intro + "\nNo run committed yet.\n"
    text = intro + "\n" + "\n".join(run_block(r) for r in runs)
    return re.sub(r"\n{3,}", "\n\n", text)


# ---------------------------------------------------------------- the document

BLOCK_IN_DOC = OneBlock("sequence_report", BLOCK, MAX_BLOCK_BYTES)
# The README's table and its comparison with CUDA (written with the
# document's block, from the same JSON): the ways to read an output timed in
# the same rounds, then CUDA where a run timed it in the same process.
README_BLOCK = OneBlock("sequence_report", "why", 8192)
README_SIZES = (4096, 256 << 10, 4 << 20)
# (row, variant): the usual ways to read an output, as every run has them.
README_ROWS = [
    ("kernel + `clFinish`, nothing read (the floor; not a way to read the output)", "floor.kernel_finish"),
    ("map, read, unmap per inference (`ALLOC_HOST_PTR`; MNN 2019, TNN)", "legal.map_per_inference.alloc_host_ptr.blocking"),
    ("`clEnqueueReadBuffer` into pinned memory", "legal.read.pinned_alloc_host_ptr.blocking"),
    ("`clEnqueueReadBuffer` into pageable memory (MNN today)", "legal.read.pageable.blocking"),
]


def readme_variants(run):
    """The README reads these variants of `run`; a run without one of them
    (a catalogue that renamed it) cannot fill the README's table."""
    for name in [n for _, n in README_ROWS] + ["clzero.Auto"]:
        if name not in run.variants:
            raise ReportError("%s: no variant %s, which the README's table reads" % (run.where, name))


def readme_time(run, size, name):
    """A README cell: the run's median µs of `name` at `size` (its later
    inferences, where a turn is several; the repetitions of every whole run
    pooled), "stale" where it showed a wrong element, "–" where it was not
    measured throughout."""
    if run.stale("serial", size, name):
        return "stale"
    if size not in run.sections.get("serial", {}) or not run.ok("serial", size, name):
        return "–"
    return us(run.time("serial", size, name))


def readme_auto(run, sizes):
    """What Auto chose at these sizes: one policy, or each size's (and each
    whole run's, where the runs chose differently)."""
    per_run = auto_choices(run, sizes)
    if any(picks != per_run[0] for picks in per_run):
        return "; ".join("run %d: %s" % (k + 1, ", ".join("%s at %s" % (p, size_name(b)) for p, b in zip(picks, sizes)))
                         for k, picks in enumerate(per_run))
    picks = per_run[0]
    if len(set(picks)) == 1:
        return picks[0]
    return "; ".join("%s at %s" % (p, size_name(b)) for p, b in zip(picks, sizes))


def readme_source(run):
    """Where a README line's numbers come from: the run's files, and how
    many whole runs (processes) are pooled."""
    if run.whole_runs == 1:
        return "`docs/bench/sequences/%s-run*.json`, one process" % run.name
    return "`docs/bench/sequences/%s-run*.json`, %d processes, their repetitions pooled" % (run.name, run.whole_runs)


def readme_turns(run, sizes):
    """"; later inferences of turns of N at ..." where the run times turns."""
    turned = [(b, run.blocks[("serial", b)][0]) for b in sizes
              if run.blocks.get(("serial", b), (1, False))[0] > 1]
    if not turned:
        return ""
    names = [size_name(b) for b, _ in turned]
    names = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return "; at %s the later inferences of turns of %s, as an engine's loop runs them" % (
        names, "/".join(sorted({str(n) for _, n in turned})))


def readme_why(runs):
    """The README's table, of the H200's NVIDIA run, and a line per CPU
    run: the usual ways to read an output, the fastest legal sequence and
    clzero's Auto, all timed interleaved in the same rounds."""
    legal = lambda v: v["kind"] == "legal"  # noqa: E731
    nv = [r for r in runs if r.name.startswith("h200-nvidia")]
    if not nv:
        return "_No committed whole run on the H200: see [docs/benchmarks.md](docs/benchmarks.md)._"
    if len(nv) > 1:
        raise ReportError("the README's table reads one group of H200 runs, and there are %d (%s): keep one "
                          "beside the others' replacement" % (len(nv), ", ".join(r.name for r in nv)))
    run = nv[0]
    readme_variants(run)
    sizes = [b for b in README_SIZES if b in run.sections.get("serial", {})]
    rows = [[label] + [readme_time(run, b, name) for b in sizes] for label, name in README_ROWS]
    fastest = [run.fastest("serial", b, legal) for b in sizes]
    rows.append(["the fastest legal sequence of the run, hand-written (below)"] +
                [us(f[1]) if f else "–" for f in fastest])
    rows.append(["**clzero `Auto`** (%s)" % readme_auto(run, sizes)] +
                ["**%s**" % readme_time(run, b, "clzero.Auto") for b in sizes])
    if "cuda.zero_copy" in run.variants:
        rows.append(["CUDA's zero copy (`cudaHostAllocMapped`), in the same rounds"] +
                    [readme_time(run, b, "cuda.zero_copy") for b in sizes])
    out = ["Median µs per inference on an %s (%s, driver %s), every row timed in the same rounds (%s%s), "
           "written by `tools/sequence_report.py`:" %
           (run.context["device"], run.context["platform_version"].split("  ")[0].strip(),
            run.context["driver_version"], readme_source(run), readme_turns(run, sizes)), "",
           table(["the host reads the output of one kernel"] + [size_name(b) for b in sizes], rows).rstrip("\n"), "",
           "The fastest legal sequence: %s." % "; ".join(
               "%s `%s`" % (size_name(b), short(f[0])) if f else "%s none" % size_name(b)
               for b, f in zip(sizes, fastest))]
    for r in runs:
        if r is run or "PoCL" not in r.context["platform_version"] or 4096 not in r.sections.get("serial", {}):
            continue
        readme_variants(r)
        f = r.fastest("serial", 4096, legal)
        out += ["", "%s on %s, 4 KiB: floor %s µs, map/read/unmap %s µs, the fastest legal sequence %s µs, "
                "clzero `Auto` (%s) %s µs (%s)." %
                (r.context["platform_version"].split("  ")[0].replace("OpenCL 3.0 ", "").replace("+debian", "")
                 .strip(), r.context["cpu"], readme_time(r, 4096, "floor.kernel_finish"),
                 readme_time(r, 4096, "legal.map_per_inference.alloc_host_ptr.blocking"),
                 us(f[1]) if f else "–", readme_auto(r, [4096]), readme_time(r, 4096, "clzero.Auto"),
                 readme_source(r))]
    return "\n".join(out + ["", readme_cuda(runs)])


def readme_cuda(runs):
    """The README's lines on CUDA: clzero's Auto and the fastest legal OpenCL
    sequence over CUDA's zero copy, paired round by round in one process,
    per whole run, at the README's sizes."""
    with_cuda = [(r, cuda_per_run(r, README_SIZES)) for r in runs]
    with_cuda = [(r, got) for r, got in with_cuda if got]
    if not with_cuda:
        return "_No committed run timed CUDA in the same process yet: see [docs/benchmarks.md](docs/benchmarks.md)._"
    out = []
    for run, got in with_cuda:
        sizes = list(got)

        def cells(i, got=got):
            return [", ".join("%.2f" % g[i] if g else "–" for g in got[b]) for b in got]
        out += ["Against CUDA on the same GPU (%s): after the rounds above, each run times clzero's `Auto`, the "
                "fastest few legal OpenCL sequences and CUDA's zero copy again, in rounds of their own, and pairs "
                "them round by round (`tools/sequence_report.py`, from %s whole run%s, "
                "`docs/bench/sequences/%s-run*.json`; the method and every size in "
                "[docs/benchmarks.md](docs/benchmarks.md)), one ratio per run:" %
                (run.context["device"], run.whole_runs, "s" if run.whole_runs > 1 else "", run.name), "",
                table(["time ÷ CUDA zero copy (`cudaHostAllocMapped`)"] + [size_name(b) for b in sizes],
                      [["**clzero `Auto`**"] + cells(0), ["the fastest legal OpenCL sequence, hand-written"] + cells(1)]),
                ""]
    return "\n".join(out).strip()


def load_cuda(path):
    """{bytes: median µs of cuda.zero_copy} from cuda_zero_copy's JSON (median over repetitions)."""
    where = os.path.relpath(path, ROOT) if path.startswith(ROOT) else path
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise ReportError("%s: not readable JSON: %s" % (where, e))
    values = {}
    for b in need(data, "benchmarks", where, list):
        name = need(b, "name", where + " benchmark", str)
        parts = name.split("/")
        if len(parts) >= 3 and parts[0] == "infer" and parts[1] == "cuda.zero_copy" and "median_us" in b:
            values.setdefault(int(parts[2]), []).append(float(b["median_us"]))
    if not values:
        raise ReportError("%s: no infer/cuda.zero_copy results" % where)
    return {k: statistics.median(v) for k, v in values.items()}


def same_device(extra, run, where):
    """A run kept beside `run`'s whole runs (host/, coexist/) must be of its device."""
    if extra.context["device"] != run.context["device"] or extra.context["platform"] != run.context["platform"]:
        raise ReportError("%s: device '%s' is not %s's" % (where, extra.context["device"], run.name))


def machine_of(name):
    """<machine>-<commit> -> <machine>: what runs kept beside whole runs match on."""
    return name.rsplit("-", 1)[0]


def load_runs(json_dir):
    groups = {}
    for p in sorted(glob.glob(os.path.join(json_dir, "*.json"))):
        stem = os.path.splitext(os.path.basename(p))[0]
        m = RUN_FILE.match(stem)
        groups.setdefault(m.group("base") if m else stem, []).append(p)
    runs = []
    for base, paths in sorted(groups.items()):
        numbered = [p for p in paths if RUN_FILE.match(os.path.splitext(os.path.basename(p))[0])]
        if numbered and len(numbered) != len(paths):
            raise ReportError("%s: both a single run and numbered whole runs of '%s'; keep one form" %
                              (os.path.relpath(json_dir, ROOT), base))
        numbered.sort(key=lambda p: int(RUN_FILE.match(os.path.splitext(os.path.basename(p))[0]).group("n")))
        runs.append(Run(paths[0], paths[1:]) if not numbered else Run(numbered[0], numbered[1:]))
    # cuda/<machine>-cuda.json (benchmarks/cuda/cuda_zero_copy, run on the same
    # machine minutes apart) goes with the NVIDIA run whose name is <machine>
    # plus one more part: h200-cuda.json with h200-nvidia.json, and
    # h200-nvidia-cuda.json with the whole runs h200-nvidia-<commit>-run*.json.
    # host/<machine>-host.json: a later host-only run (clzero_sequences
    # --sections host) on the same machine; its host costs, with the caches
    # warm and evicted, stand in the host table for the runs' own.
    for path in sorted(glob.glob(os.path.join(json_dir, "host", "*.json"))):
        stem = os.path.splitext(os.path.basename(path))[0]
        if not stem.endswith("-host"):
            raise ReportError("%s: a host-only run is named <machine>-host.json" % os.path.relpath(path, ROOT))
        machine = stem[:-len("-host")]
        extra = Run(path)
        matched = [r for r in runs if machine_of(r.name) == machine]
        if not matched:
            raise ReportError("%s: no whole runs of %s to go with" % (os.path.relpath(path, ROOT), machine))
        for r in matched:
            same_device(extra, r, extra.where)
            r.host, r.host_cold, r.host_source = extra.host, extra.host_cold, os.path.basename(path)
    # coexist/<machine>-<commit>-{cuda,nocuda}-N.json: shorter processes of
    # the same machine, alternately with CUDA in the process and without it
    # (--no-cuda): whether CUDA beside OpenCL changes OpenCL's numbers. They
    # go with the whole runs of their machine; where those are of another
    # commit, the text names the processes' own.
    for path in sorted(glob.glob(os.path.join(json_dir, "coexist", "*.json"))):
        where = os.path.relpath(path, ROOT)
        m = re.match(r"^(?P<run>.+)-(?P<mode>cuda|nocuda)-(?P<n>[0-9]+)$", os.path.splitext(os.path.basename(path))[0])
        if not m:
            raise ReportError("%s: a coexistence run is named <run>-cuda-N.json or <run>-nocuda-N.json" % where)
        machine = machine_of(m.group("run"))
        matched = [r for r in runs if machine_of(r.name) == machine]
        if not matched:
            raise ReportError("%s: no whole runs of %s to go with" % (where, machine))
        extra = Run(path)
        with_cuda = m.group("mode") == "cuda"
        has = "cuda.zero_copy" in extra.variants
        if has != with_cuda:
            raise ReportError("%s: named %s CUDA but %s cuda.zero_copy" %
                              (where, "with" if with_cuda else "without", "has" if has else "lacks"))
        if not extra.confirm["serial"]:
            raise ReportError("%s: no confirmation of Auto to compare" % where)
        for r in matched:
            same_device(extra, r, where)
            r.coexist.append((int(m.group("n")), with_cuda, extra))
            r.coexist_run = m.group("run")
    for r in runs:
        r.coexist.sort(key=lambda x: (x[0], x[1]))
    # Numbered ones, <machine>-cuda-runN.json, ran just before the NVIDIA
    # whole run N (alternating): each run is then held against its own.
    cuda_groups = {}
    for path in sorted(glob.glob(os.path.join(json_dir, "cuda", "*.json"))):
        stem = os.path.splitext(os.path.basename(path))[0]
        m = RUN_FILE.match(stem)
        base, n = (m.group("base"), int(m.group("n"))) if m else (stem, 0)
        cuda_groups.setdefault(machine_of(base), []).append((n, path))
    for machine, files in cuda_groups.items():
        files.sort()
        per_run = [load_cuda(path) for _, path in files]
        cuda = {b: statistics.median(c[b] for c in per_run if b in c) for b in per_run[0]}
        for r in runs:
            if machine_of(r.name) == machine and "NVIDIA" in r.context["platform"]:
                r.cuda = cuda
                if len(per_run) > 1:
                    if len(per_run) != r.whole_runs:
                        raise ReportError("%s: %d CUDA runs for %d whole runs of %s; alternate one per run" %
                                          (os.path.relpath(json_dir, ROOT), len(per_run), r.whole_runs, r.name))
                    r.cuda_runs = per_run
    return runs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="fail unless the document's block is what the JSON gives")
    ap.add_argument("--print", nargs="+", metavar="JSON", help="print the tables of these runs")
    ap.add_argument("--doc", default=DOC, help="the document (default docs/benchmarks.md)")
    ap.add_argument("--json-dir", default=JSON_DIR, help="the runs (default docs/bench/sequences)")
    ap.add_argument("--readme", help="a README whose 'why' block to write or check (default: README.md, where "
                    "--doc and --json-dir are the defaults)")
    args = ap.parse_args(argv)
    try:
        if args.print:
            sys.stdout.write(generate([Run(os.path.abspath(p)) for p in args.print]))
            return 0
        runs = load_runs(args.json_dir)
        generated = generate(runs)
        doc_name = os.path.relpath(args.doc, ROOT) if os.path.abspath(args.doc).startswith(ROOT) else args.doc
        BLOCK_IN_DOC.write_or_check(args.doc, doc_name, generated, args.check, os.path.relpath(args.json_dir, ROOT))
        # The README's block goes with the committed document and JSON only
        # (a copy of the document elsewhere, or other JSON, leaves it alone),
        # unless --readme names a copy of the README.
        readme = args.readme or (README if os.path.abspath(args.doc) == DOC and
                                 os.path.abspath(args.json_dir) == JSON_DIR else None)
        if readme:
            readme_name = os.path.relpath(readme, ROOT) if os.path.abspath(readme).startswith(ROOT) else readme
            README_BLOCK.write_or_check(readme, readme_name, readme_why(runs), args.check,
                                        os.path.relpath(args.json_dir, ROOT))
        return 0
    except ReportError as e:
        print("sequence_report: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
