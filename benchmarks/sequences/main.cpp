// SPDX-License-Identifier: Apache-2.0
// clzero_sequences: every legal way the device offers to make a kernel's
// output visible on the host, and clzero's policies, measured interleaved in
// one process. Each round gives every variant one turn (a block of
// consecutive inferences: 4 for the serial section's small sizes, the first
// timed apart; a ring's worth for the pipelined section) in a freshly
// shuffled order, so that a slow spell of the machine lands on all of them
// alike. For every size the variants' buffers are created anew, in a freshly
// shuffled order, for each repetition (placement in memory changes
// large-size results from run to run more than clocks do), and the medians
// of all repetitions are reported with their spread.
//
// Every inference's producer writes values that change from inference to
// inference, and the host compares every element: a variant that shows a
// wrong element once is reported stale and is never a winner.
//
//   clzero_sequences [--platform NAME] [--budget-s S] [--out FILE.json]
//                    [--sections serial,pipelined,host|footprint] [--sizes 4,4096,...]
//                    [--pipelined-sizes ...] [--reps N] [--filter TEXT[,TEXT...]] [--no-calls] [--no-cuda]
//                    [--confirm-budget-s S] [--confirm-kinds-budget-s S] [--confirm-reps N]
//                    [--confirm-kinds-reps N] [--gap-us US [--gap-spin]]
//
// --gap-us paces the serial section like an engine that waits for its next
// input (a camera's frames, a server's requests): every turn is one
// inference, and before it, untimed, the host thread sleeps US
// microseconds (with --gap-spin it spins them instead, busy with work of
// its own). Back-to-back rounds, which decide Auto's choice and the host's
// wait, do not show what a host thread that slept changes. The
// confirmation is not paced: run a paced section with --confirm-budget-s 0.
//
// After the timed sections, a confirmation (confirm_size) times clzero's
// Auto again against the fastest legal sequences the sections found, in
// rounds of their own, then each explicit policy against the fastest legal
// sequences of its own kind; --confirm-budget-s 0 leaves out the first,
// --confirm-kinds-budget-s 0 the second (by default it gets the first's
// budget).
//
// tools/sequence_report.py turns the JSON into a table of docs/benchmarks.md.
#include <clzero/clzero.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define CLZERO_SEQ_HAVE_CALLGRIND 1
#endif
#endif

#include "../cpu_model.hpp"
#include "call_count.hpp"
#include "catalogue.hpp"
#include "sequence.hpp"

namespace clzero_seq {

std::size_t count_wrong(const std::uint32_t* p, std::size_t n, std::uint32_t iter) {
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += p[i] != iter + static_cast<std::uint32_t>(i) ? 1 : 0;
  return wrong;
}

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  double budget_s = 120;
  std::string out;
  bool serial = true, pipelined = true, host = true, calls = true, footprint = false, cuda = true;
  std::vector<std::size_t> sizes = {4, 4096, 256 << 10, 4 << 20, 64 << 20};
  std::vector<std::size_t> pipelined_sizes = {256 << 10, 4 << 20, 16 << 20, 64 << 20};
  std::size_t reps = 3;
  std::string filter;
  double confirm_budget_s = -1;        // below zero: the same as budget_s; zero: no confirmation
  double confirm_kinds_budget_s = -1;  // below zero: the same as the confirmation's; zero: none
  std::size_t confirm_kinds_reps = 3;  // fewer than Auto's: some 40 confirmations, each with fresh buffers
  std::size_t confirm_reps = 6;
  double gap_us = 0;      // above zero: a paced serial section (see the top of this file)
  bool gap_spin = false;  // the gap is spun, not slept
};

// The serial section's pace (Options::gap_us), for serial_plan and run_size.
struct Gap {
  double us = 0;
  bool spin = false;
  void pass() const {
    const auto d = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::micro>(us));
    if (!spin) {
      std::this_thread::sleep_for(d);
      return;
    }
    const auto end = Clock::now() + d;
    while (Clock::now() < end) {
    }
  }
};
Gap g_gap;

/// How one size is run: rounds and warm-up per repetition (upper bounds; the
/// budget may cut rounds, never below min_rounds), inferences per block, and
/// the size's share of the time budget.
struct Plan {
  std::size_t max_rounds, warmup, block, min_rounds;
  double weight;
  // Time a turn's first inference apart from the rest (serial blocks): the
  // first runs with the caches as the other variants left them, the rest as
  // an engine's loop leaves them, its own code and data warm.
  bool first_apart = false;
  // Paced (--gap-us): one inference per turn, each after g_gap, untimed.
  bool paced = false;
};

// Small sizes run in turns of 4 inferences. One inference per turn would
// time each variant with the caches as the 60-odd variants before it left
// them, which favours whatever code many variants share (the hand-written
// sequences are a few templates; each clzero policy is code of its own): on
// the H200, clzero.Auto, code used by one variant alone, came last among the
// sequences making its calls (docs/logs/h200/12-final-2bd5da8). The turn's first
// inference is still timed apart ("first_median_us"), so the cold case stays
// in the report. From 4 MiB on, an inference takes long enough that the
// host's caches do not show, and one per turn keeps the rounds many.
Plan back_to_back_plan(std::size_t bytes) {
  if (bytes <= 4096) return {200, 20, 4, 20, 1.0, true};
  if (bytes <= (256u << 10)) return {120, 5, 4, 10, 1.0, true};
  if (bytes <= (4u << 20)) return {60, 4, 1, 5, 1.5};
  return {12, 1, 1, 3, 2.0};
}

// Paced (--gap-us), the same rounds with one inference per turn.
Plan serial_plan(std::size_t bytes) {
  Plan p = back_to_back_plan(bytes);
  if (g_gap.us > 0) {
    p.block = 1;
    p.first_apart = false;
    p.paced = true;
  }
  return p;
}

Plan pipelined_plan(std::size_t bytes) {
  if (bytes <= (256u << 10)) return {100, 5, 16, 5, 1.0};
  if (bytes <= (4u << 20)) return {30, 2, 8, 3, 1.0};
  if (bytes <= (16u << 20)) return {10, 1, 4, 2, 1.5};
  return {5, 1, 4, 2, 2.0};
}

/// The non-empty comma-separated parts of `s`.
std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::vector<std::size_t> parse_sizes(const char* s) {
  std::vector<std::size_t> out;
  for (const std::string& item : split_commas(s)) out.push_back(static_cast<std::size_t>(std::stoull(item)));
  return out;
}

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      o += '\\';
      o += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
    } else {
      o += ch;
    }
  }
  return o + "\"";
}

std::string num(double v, int digits = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  const std::size_t k = std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

struct Measured {
  std::vector<double> us;        // per-inference time of every timed block (its first inference apart, if timed apart)
  std::vector<double> first_us;  // the first inference of every timed block, where the plan times it apart
  std::size_t inferences = 0, stale_inferences = 0;
  std::string error;  // the variant failed during this repetition
  std::vector<std::size_t> rounds;  // the timed round of each entry of `us`
};

/// A variant's samples at one size, pooled over the repetitions: what the
/// confirmation picks its candidates from, and pairs round by round.
struct Pooled {
  std::vector<double> us;
  std::vector<std::uint64_t> round;  // (repetition << 32) | timed round, one per entry of `us`
  std::size_t stale_inferences = 0;
  bool failed = false;
};
using Pool = std::map<std::string, Pooled>;

/// One section (serial or pipelined) at one size: reps repetitions, each with
/// fresh sequences, warm-up, then timed shuffled rounds.
std::string run_size(const Catalogue& cat, std::size_t bytes, const Plan& plan, std::size_t reps, double budget_s,
                     std::mt19937& rng, std::map<std::string, std::string>& skipped,
                     std::map<std::string, std::size_t>& stale_clzero, Pool* pool = nullptr) {
  const std::size_t n = bytes / sizeof(std::uint32_t);
  const std::size_t nv = cat.variants.size();
  std::ostringstream js;
  const bool apart = plan.first_apart && plan.block > 1;  // a turn's first inference timed on its own
  js << "{\"bytes\": " << bytes << ", \"block\": " << plan.block << ", \"first_apart\": " << (apart ? "true" : "false");
  if (plan.paced) js << ", \"gap_us\": " << num(g_gap.us) << ", \"gap\": \"" << (g_gap.spin ? "spin" : "sleep") << "\"";
  js << ", \"reps\": [";
  const auto size_start = Clock::now();
  for (std::size_t rep = 0; rep < reps; ++rep) {
    const auto rep_start = Clock::now();
    std::vector<std::unique_ptr<Sequence>> seq(nv);
    std::vector<Measured> m(nv);
    // Made in a fresh order every repetition: where an allocation lands
    // (pages, NUMA node, what the driver pinned before) depends on what was
    // allocated before it, and a fixed order would give one variant the same
    // placement in every repetition, a bias no repetition could reveal.
    std::vector<std::size_t> made(nv);
    for (std::size_t v = 0; v < nv; ++v) made[v] = v;
    std::shuffle(made.begin(), made.end(), rng);
    for (std::size_t v : made) {
      if (skipped.count(cat.variants[v].name) != 0) continue;
      try {
        seq[v] = cat.variants[v].make(n);
      } catch (const std::exception& e) {
        m[v].error = std::string("construction failed: ") + e.what();
      }
    }
    std::vector<std::uint32_t> iter(nv, 1);
    std::vector<std::size_t> order;
    for (std::size_t v = 0; v < nv; ++v)
      if (seq[v]) order.push_back(v);
    std::size_t timed_rounds = 0;
    auto round = [&](bool timed) {
      std::shuffle(order.begin(), order.end(), rng);
      for (std::size_t v : order) {
        if (!seq[v]) continue;
        if (plan.paced) g_gap.pass();
        try {
          const auto t0 = Clock::now();
          std::size_t stale = 0, steady = plan.block;
          auto t1 = t0;
          if (apart) {
            stale += seq[v]->run_block(iter[v], 1);
            t1 = Clock::now();
            steady = plan.block - 1;
          }
          stale += seq[v]->run_block(apart ? next_iter(iter[v]) : iter[v], steady);
          const auto t2 = Clock::now();
          if (timed) {
            m[v].us.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count() / static_cast<double>(steady));
            if (apart) m[v].first_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
            m[v].rounds.push_back(timed_rounds);
          }
          m[v].inferences += plan.block;
          m[v].stale_inferences += stale;
        } catch (const std::exception& e) {
          m[v].error = e.what();
          seq[v].reset();
        }
        for (std::size_t i = 0; i < plan.block; ++i) iter[v] = next_iter(iter[v]);
      }
      if (timed) ++timed_rounds;
    };
    const auto warm_start = Clock::now();
    for (std::size_t r = 0; r < plan.warmup; ++r) round(false);
    const double per_round = plan.warmup == 0 ? 0.0
                                              : std::chrono::duration<double>(Clock::now() - warm_start).count() /
                                                    static_cast<double>(plan.warmup);
    // The repetition's share of what is left of this size's budget.
    const double left = budget_s - std::chrono::duration<double>(Clock::now() - size_start).count();
    const double share =
        left / static_cast<double>(reps - rep) - std::chrono::duration<double>(Clock::now() - rep_start).count() * 0.5;
    std::size_t rounds = plan.max_rounds;
    if (per_round > 0) rounds = static_cast<std::size_t>(std::max(0.0, share / per_round));
    rounds = std::min(plan.max_rounds, std::max(plan.min_rounds, rounds));
    for (std::size_t r = 0; r < rounds; ++r) round(true);
    std::fprintf(stderr, "  %zu bytes, repetition %zu: %zu rounds of %zu variants in %.1f s\n", bytes, rep + 1, rounds,
                 order.size(), std::chrono::duration<double>(Clock::now() - rep_start).count());
    seq.clear();  // released before the next repetition allocates
    js << (rep ? ", " : "") << "{\"rounds\": " << rounds << ", \"warmup\": " << plan.warmup << ", \"results\": {";
    bool first = true;
    for (std::size_t v = 0; v < nv; ++v) {
      if (skipped.count(cat.variants[v].name) != 0) continue;
      if (m[v].us.empty() && !m[v].error.empty() && rep == 0 && m[v].inferences == 0) {
        skipped[cat.variants[v].name] = m[v].error;  // never ran here: left out of later repetitions
        continue;
      }
      js << (first ? "" : ", ") << json_string(cat.variants[v].name)
         << ": {\"median_us\": " << num(quantile(m[v].us, 0.5)) << ", \"p10_us\": " << num(quantile(m[v].us, 0.1))
         << ", \"p90_us\": " << num(quantile(m[v].us, 0.9)) << ", \"samples\": " << m[v].us.size()
         << ", \"inferences\": " << m[v].inferences << ", \"stale_inferences\": " << m[v].stale_inferences;
      if (!m[v].first_us.empty()) js << ", \"first_median_us\": " << num(quantile(m[v].first_us, 0.5));
      if (!m[v].error.empty()) js << ", \"error\": " << json_string(m[v].error);
      if (cat.variants[v].kind == "clzero" && m[v].stale_inferences != 0)
        stale_clzero[cat.variants[v].name + " at " + std::to_string(bytes) + " bytes"] += m[v].stale_inferences;
      if (pool != nullptr) {
        Pooled& p = (*pool)[cat.variants[v].name];
        for (std::size_t i = 0; i < m[v].us.size(); ++i) {
          p.us.push_back(m[v].us[i]);
          p.round.push_back((static_cast<std::uint64_t>(rep) << 32) | m[v].rounds[i]);
        }
        p.stale_inferences += m[v].stale_inferences;
        p.failed = p.failed || !m[v].error.empty();
      }
      js << "}";
      first = false;
    }
    js << "}}";
  }
  js << "]}";
  return js.str();
}

/// The confirmation's plans: the turns of the sections' own plans (so that
/// its times mean what theirs mean), many more rounds, since a round holds a
/// few variants instead of some 60.
Plan confirm_plan(bool pipelined, std::size_t bytes) {
  if (pipelined) {
    if (bytes <= (256u << 10)) return {3000, 5, 16, 20, 1.0};
    if (bytes <= (4u << 20)) return {1000, 2, 8, 10, 1.5};
    if (bytes <= (16u << 20)) return {400, 1, 4, 6, 2.0};
    return {200, 1, 4, 4, 3.0};
  }
  if (bytes <= 4096) return {4000, 20, 4, 50, 0.5, true};
  if (bytes <= (256u << 10)) return {3000, 5, 4, 30, 0.75, true};
  if (bytes <= (4u << 20)) return {2000, 4, 1, 30, 1.5};
  return {600, 1, 1, 10, 3.0};
}

/// How many of the screen's fastest legal sequences at a size its
/// confirmation times again (with the fastest of each other size).
constexpr std::size_t kConfirmCandidates = 3;

/// The median over the rounds where both ran of a's time over b's in that
/// round, pooled, and per repetition (0 for a repetition without one).
std::string paired_json(const Pooled& a, const Pooled& b, std::size_t reps) {
  std::map<std::uint64_t, double> at;
  for (std::size_t i = 0; i < b.us.size(); ++i) at[b.round[i]] = b.us[i];
  std::vector<double> all;
  std::vector<std::vector<double>> by_rep(reps);
  for (std::size_t i = 0; i < a.us.size(); ++i) {
    const auto found = at.find(a.round[i]);
    if (found == at.end() || !(found->second > 0)) continue;
    const double r = a.us[i] / found->second;
    all.push_back(r);
    const std::size_t rep = static_cast<std::size_t>(a.round[i] >> 32);
    if (rep < reps) by_rep[rep].push_back(r);
  }
  std::ostringstream js;
  js << "\"median\": " << (all.empty() ? std::string("0") : num(quantile(all, 0.5), 4)) << ", \"samples\": "
     << all.size() << ", \"by_rep\": [";
  for (std::size_t k = 0; k < reps; ++k)
    js << (k ? ", " : "") << (by_rep[k].empty() ? std::string("0") : num(quantile(by_rep[k], 0.5), 4));
  return js.str() + "]";
}

/// The confirmation at one size. The screen (run_size over the whole
/// catalogue) times some 60 variants per round; at the large sizes a round
/// is long, so each variant gets few samples, and the fastest of some 40
/// legal sequences is partly the luckiest: a ratio to it is biased against
/// whatever is held to it. Here each subject (clzero's Auto, serial or
/// ringed) runs again, in rounds of its own, against the screen's
/// kConfirmCandidates fastest legal sequences and the fastest of every other
/// size (never one stale at any size of the screen's section), and a twin of
/// the fastest here (the same code and
/// calls over buffers of its own: what this measurement resolves), with many
/// more rounds and fresh buffers for every repetition. The candidates come
/// from the screen, every number from the confirmation's own samples. For
/// each subject and the twin against each candidate it also writes the
/// median over the rounds of the ratio of their times in the same round
/// ("paired"): a round takes milliseconds, so a slow spell of the machine
/// lands on both alike and cancels. `eligible` narrows the candidates: every
/// legal sequence for Auto, the legal sequences of its own kind (family and
/// allocation) for an explicit policy.
std::string confirm_size(const Catalogue& cat, bool pipelined, const std::vector<std::string>& subjects,
                         const std::function<bool(const Variant&)>& eligible, const std::map<std::size_t, Pool>& screens,
                         const std::map<std::string, std::size_t>& stale_in_section, std::size_t bytes,
                         std::size_t reps, double budget_s, std::mt19937& rng,
                         std::map<std::string, std::size_t>& stale_clzero) {
  // The fresh legal sequences of the section that ran at a size, fastest first.
  auto ranked_at = [&](std::size_t size) {
    std::vector<std::pair<double, const Variant*>> ranked;
    const Pool& screen = screens.at(size);
    for (const Variant& v : cat.variants) {
      const auto found = screen.find(v.name);
      if (found == screen.end() || found->second.us.empty() || found->second.failed) continue;
      const auto stale = stale_in_section.find(v.name);
      if (v.kind == "legal" && (v.slots > 1) == pipelined && eligible(v) &&
          (stale == stale_in_section.end() || stale->second == 0))
        ranked.push_back({quantile(found->second.us, 0.5), &v});
    }
    std::sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    return ranked;
  };
  // The kConfirmCandidates fastest here, then the fastest of each other
  // size (a sequence that wins elsewhere is worth timing here too: at small
  // sizes the screen's ranking rests on differences of a few percent).
  const auto ranked = ranked_at(bytes);
  std::vector<const Variant*> chosen;
  for (std::size_t i = 0; i < ranked.size() && i < kConfirmCandidates; ++i) chosen.push_back(ranked[i].second);
  for (const auto& other : screens) {
    if (other.first == bytes) continue;
    const auto there = ranked_at(other.first);
    if (there.empty()) continue;
    const Variant* winner = there.front().second;
    const bool ran_here = std::any_of(ranked.begin(), ranked.end(), [&](const auto& r) { return r.second == winner; });
    if (ran_here && std::find(chosen.begin(), chosen.end(), winner) == chosen.end()) chosen.push_back(winner);
  }
  Catalogue sub;
  const Pool& screen = screens.at(bytes);
  for (const Variant& v : cat.variants) {
    const auto found = screen.find(v.name);
    if (found != screen.end() && !found->second.us.empty() && !found->second.failed &&
        std::find(subjects.begin(), subjects.end(), v.name) != subjects.end())
      sub.variants.push_back(v);
  }
  std::ostringstream js;
  if (sub.variants.empty() || chosen.empty()) return "";
  std::vector<std::string> candidates;
  for (const Variant* v : chosen) {
    sub.variants.push_back(*v);
    candidates.push_back(v->name);
  }
  Variant twin = *chosen.front();
  twin.name.replace(twin.name.find("legal."), 5, "twin");
  twin.kind = "twin";
  sub.variants.push_back(twin);
  std::map<std::string, std::string> skipped;
  Pool pool;
  std::string measured =
      run_size(sub, bytes, confirm_plan(pipelined, bytes), reps, budget_s, rng, skipped, stale_clzero, &pool);
  measured.pop_back();  // the closing brace: the confirmation's own fields follow
  auto names = [](const std::vector<std::string>& list) {
    std::string out = "[";
    for (std::size_t i = 0; i < list.size(); ++i) out += (i ? ", " : "") + json_string(list[i]);
    return out + "]";
  };
  std::vector<std::string> present;
  for (const std::string& s : subjects)
    if (pool.count(s) != 0) present.push_back(s);
  js << measured << ", \"subjects\": " << names(present) << ", \"candidates\": " << names(candidates)
     << ", \"twin\": {\"name\": " << json_string(twin.name) << ", \"of\": " << json_string(candidates.front())
     << "}, \"paired\": [";
  bool first = true;
  std::vector<std::string> held, cuda_subjects;
  for (const std::string& s : present) (s.rfind("cuda.", 0) == 0 ? cuda_subjects : held).push_back(s);
  held.push_back(twin.name);
  // Each clzero subject against each legal candidate and against CUDA.
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const std::string& a : held)
    for (const std::string& b : candidates) pairs.push_back({a, b});
  for (const std::string& c : cuda_subjects) {
    for (const std::string& b : candidates) pairs.push_back({c, b});
    for (const std::string& a : held)
      if (a != twin.name) pairs.push_back({a, c});
  }
  for (const auto& [a, b] : pairs) {
    if (pool.count(a) == 0 || pool.count(b) == 0) continue;
    js << (first ? "" : ", ") << "{\"a\": " << json_string(a) << ", \"b\": " << json_string(b) << ", "
       << paired_json(pool.at(a), pool.at(b), reps) << "}";
    first = false;
  }
  js << "]}";
  return js.str();
}

std::string variants_json(const Catalogue& cat, const char* section) {
  std::ostringstream js;
  bool first = true;
  for (const Variant& v : cat.variants) {
    js << (first ? "" : ",\n    ") << "{\"name\": " << json_string(v.name) << ", \"section\": \"" << section
       << "\", \"kind\": " << json_string(v.kind) << ", \"family\": " << json_string(v.family)
       << ", \"allocation\": " << json_string(v.allocation) << ", \"wait\": " << json_string(v.wait)
       << ", \"slots\": " << v.slots << "}";
    first = false;
  }
  return js.str();
}

/// OpenCL calls per inference of each variant at 4 KiB (blocks of 64 after
/// one warm-up block), counted by call_count.cpp.
std::string calls_json(const std::vector<const Catalogue*>& cats) {
  std::ostringstream js;
  bool first = true;
  constexpr std::size_t kBlock = 64, kN = 1024;
  for (const Catalogue* cat : cats)
    for (const Variant& v : cat->variants) {
      if (v.kind == "cuda") continue;  // no OpenCL calls to count
      std::vector<std::pair<std::string, long long>> counts;
      try {
        auto s = v.make(kN);
        s->run_block(1, kBlock);
        start_counting_calls();
        s->run_block(1 + kBlock, kBlock);
        counts = stop_counting_calls();
      } catch (const std::exception&) {
        stop_counting_calls();
        continue;
      }
      long long total = 0;
      for (const auto& c : counts) total += c.second;
      js << (first ? "" : ",\n    ") << json_string(v.name)
         << ": {\"per_inference\": " << num(static_cast<double>(total) / kBlock) << ", \"by_call\": {";
      bool f2 = true;
      for (const auto& c : counts) {
        js << (f2 ? "" : ", ") << json_string(c.first) << ": " << num(static_cast<double>(c.second) / kBlock);
        f2 = false;
      }
      js << "}}";
      first = false;
    }
  return js.str();
}

/// Writes 4 MiB (a new value into each cache line), more than the L2 of the
/// machines measured and than tools/footprint.sh's simulated last level:
/// what follows runs with the caches cold, as a real inference's calls find
/// them after the driver's and the engine's own work.
class CacheEvictor {
 public:
  void operator()() {
    ++stamp_;
    for (std::size_t b = 0; b < bytes_.size(); b += 64) bytes_[b] = stamp_;
  }

 private:
  std::vector<unsigned char> bytes_ = std::vector<unsigned char>(std::size_t{4} << 20);
  unsigned char stamp_ = 0;
};

/// The host's own cost of an inference: each serial variant, hand-written
/// or clzero, over one element (4 bytes) on the null device
/// (call_count.hpp), after one real block, in shuffled rounds of kBlock
/// inferences. What is left is what the host does around the calls, the
/// calls' own entry, and the check of the one element (alike for all);
/// nothing the device does. Every object is made and destroyed within one
/// repetition, destroyed while the null device is still on. `cold_js` gets
/// the same measured one inference at a time with the caches evicted
/// before each.
std::string host_json(const Catalogue& cat, std::size_t reps, std::mt19937& rng, std::string& cold_js) {
  constexpr std::size_t kBlock = 256, kWarmup = 3, kRounds = 60, kColdBlock = 16, kColdRounds = 12;
  const std::size_t nv = cat.variants.size();
  std::vector<std::vector<double>> ns(nv), cold(nv);
  // The same again with the caches made cold before each inference; the
  // eviction's own time is not counted.
  CacheEvictor evict;
  std::vector<std::string> error(nv);
  for (std::size_t rep = 0; rep < reps; ++rep) {
    std::vector<std::unique_ptr<Sequence>> seq(nv);
    std::vector<std::size_t> order;
    for (std::size_t v = 0; v < nv; ++v) {
      const Variant& var = cat.variants[v];
      if ((var.kind != "legal" && var.kind != "clzero") || var.slots != 1 || !error[v].empty()) continue;
      try {
        seq[v] = var.make(1);
        seq[v]->run_block(1, 16);  // real: every mapping and event made once
        order.push_back(v);
      } catch (const std::exception& e) {
        error[v] = e.what();
        seq[v].reset();
      }
    }
    ok(clFinish(Rig::get().q()), "clFinish");  // nothing real left in flight
    set_null_device(true);
    std::uint32_t iter = 17;
    for (std::size_t r = 0; r < kWarmup + kRounds; ++r) {
      std::shuffle(order.begin(), order.end(), rng);
      for (std::size_t v : order) {
        if (!seq[v]) continue;
        try {
          const auto t0 = Clock::now();
          seq[v]->run_block(iter, kBlock);
          const auto t1 = Clock::now();
          if (r >= kWarmup)
            ns[v].push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(kBlock));
        } catch (const std::exception& e) {
          error[v] = e.what();
          seq[v].reset();
        }
      }
      for (std::size_t i = 0; i < kBlock; ++i) iter = next_iter(iter);
    }
    for (std::size_t r = 0; r < kColdRounds; ++r) {
      std::shuffle(order.begin(), order.end(), rng);
      for (std::size_t v : order) {
        if (!seq[v]) continue;
        try {
          double total = 0;
          for (std::size_t i = 0; i < kColdBlock; ++i, iter = next_iter(iter)) {
            evict();
            const auto t0 = Clock::now();
            seq[v]->run_block(iter, 1);
            total += std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
          }
          cold[v].push_back(total / static_cast<double>(kColdBlock));
        } catch (const std::exception& e) {
          error[v] = e.what();
          seq[v].reset();
        }
      }
    }
    seq.clear();
    set_null_device(false);
  }
  std::ostringstream js;
  bool first = true;
  for (std::size_t v = 0; v < nv; ++v) {
    if (ns[v].empty() && error[v].empty()) continue;
    js << (first ? "" : ",\n    ") << json_string(cat.variants[v].name)
       << ": {\"median_ns\": " << num(quantile(ns[v], 0.5)) << ", \"p10_ns\": " << num(quantile(ns[v], 0.1))
       << ", \"p90_ns\": " << num(quantile(ns[v], 0.9)) << ", \"samples\": " << ns[v].size();
    if (!error[v].empty()) js << ", \"error\": " << json_string(error[v]);
    js << "}";
    first = false;
  }
  std::ostringstream cj;
  first = true;
  for (std::size_t v = 0; v < nv; ++v) {
    if (cold[v].empty()) continue;
    cj << (first ? "" : ",\n    ") << json_string(cat.variants[v].name)
       << ": {\"median_ns\": " << num(quantile(cold[v], 0.5)) << ", \"samples\": " << cold[v].size() << "}";
    first = false;
  }
  cold_js = cj.str();
  return js.str();
}

/// The host's footprint of one inference, counted rather than timed: each
/// serial variant on the null device (as host_json), under Callgrind with its
/// cache simulator. Before each counted inference 4 MiB are written, more
/// than the simulated last-level cache (tools/footprint.sh sets its size), so
/// that the inference's last-level misses are the cache lines it touches:
/// code and data, the cold case of a real engine, whose own work between two
/// inferences evicts clzero's. Callgrind collects only inside the counted
/// inferences and dumps one profile per variant and mode, named
/// "cold <n> <variant>" (n inferences, each after an eviction) and
/// "warm <n> <variant>" (n inferences in a row), and writes the variants'
/// description to `out` (as the "variants" of the timed sections);
/// tools/footprint_report.py reads them. Outside Callgrind the counts cannot
/// be made, and this says so rather than reporting nothing.
int footprint_run(const Catalogue& cat, const std::string& out) {
#if defined(CLZERO_SEQ_HAVE_CALLGRIND)
  if (!RUNNING_ON_VALGRIND) {
    std::fprintf(stderr,
                 "clzero_sequences: --sections footprint counts under Callgrind only; run it through "
                 "tools/footprint.sh\n");
    return 2;
  }
  constexpr std::size_t kFootprintCold = 8, kFootprintWarm = 8;
  CacheEvictor evict;
  std::size_t counted = 0;
  std::uint32_t iter = 17;
  for (const Variant& var : cat.variants) {
    if ((var.kind != "legal" && var.kind != "clzero") || var.slots != 1) continue;
    std::unique_ptr<Sequence> seq;
    try {
      seq = var.make(1);
      seq->run_block(1, 16);  // real: every mapping and event made once
      ok(clFinish(Rig::get().q()), "clFinish");
      set_null_device(true);
      CALLGRIND_START_INSTRUMENTATION;
      seq->run_block(iter, 16);  // the null device's own first use
      for (int i = 0; i < 16; ++i) iter = next_iter(iter);
      for (std::size_t i = 0; i < kFootprintCold; ++i, iter = next_iter(iter)) {
        evict();
        // The element checked is the null device's scratch, not a kernel's
        // output: what counts here is the work, not what it finds.
        CALLGRIND_TOGGLE_COLLECT;
        seq->run_block(iter, 1);
        CALLGRIND_TOGGLE_COLLECT;
      }
      // Callgrind reads the name after the request returns: it must outlive it.
      const std::string cold_name = "cold " + std::to_string(kFootprintCold) + " " + var.name;
      const std::string warm_name = "warm " + std::to_string(kFootprintWarm) + " " + var.name;
      CALLGRIND_DUMP_STATS_AT(cold_name.c_str());
      CALLGRIND_TOGGLE_COLLECT;
      seq->run_block(iter, kFootprintWarm);
      CALLGRIND_TOGGLE_COLLECT;
      for (std::size_t i = 0; i < kFootprintWarm; ++i) iter = next_iter(iter);
      CALLGRIND_DUMP_STATS_AT(warm_name.c_str());
      CALLGRIND_STOP_INSTRUMENTATION;
      seq.reset();
      set_null_device(false);
      ++counted;
      std::fprintf(stderr, "footprint: %s\n", var.name.c_str());
    } catch (const std::exception& e) {
      CALLGRIND_STOP_INSTRUMENTATION;
      seq.reset();
      set_null_device(false);
      std::fprintf(stderr, "clzero_sequences: footprint of %s: %s\n", var.name.c_str(), e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "footprint: %zu variants, %zu cold and %zu warm inferences each\n", counted, kFootprintCold,
               kFootprintWarm);
  if (!out.empty()) {
    const clzero::DeviceCaps& caps = Rig::get().caps;
    std::string auto_choice;
    try {
      ClzeroSequence<clzero::policy::Auto> probe(1, clzero::policy::Auto::Options{});
      auto_choice = probe.tensor().policy().describe();
    } catch (const std::exception& e) {
      auto_choice = std::string("(Auto failed: ") + e.what() + ")";
    }
    std::ofstream f(out);
    f << "{\n  \"schema\": \"clzero.footprint-variants/1\",\n  \"context\": {\"clzero_version\": "
      << json_string(CLZERO_VERSION_STRING) << ", \"platform\": " << json_string(caps.platform_name)
      << ", \"platform_version\": " << json_string(caps.platform_version) << ", \"device\": " << json_string(caps.name)
      << ", \"cpu\": " << json_string(clzero_bench::cpu_model()) << ", \"auto\": " << json_string(auto_choice)
      << "},\n  \"variants\": [\n    " << variants_json(cat, "serial") << "\n  ]\n}\n";
    if (!f) {
      std::fprintf(stderr, "clzero_sequences: cannot write %s\n", out.c_str());
      return 1;
    }
  }
  return counted > 0 ? 0 : 1;
#else
  (void)cat;
  (void)out;
  std::fprintf(stderr,
               "clzero_sequences: built without <valgrind/callgrind.h> (Debian's valgrind package), so "
               "--sections footprint cannot count\n");
  return 2;
#endif
}

/// The variants whose name contains one of the comma-separated parts of
/// `filter` (all of them for an empty filter).
Catalogue filtered(Catalogue c, const std::string& filter) {
  if (filter.empty()) return c;
  const std::vector<std::string> parts = split_commas(filter);
  std::vector<Variant> keep;
  for (auto& v : c.variants)
    for (const std::string& part : parts)
      if (v.name.find(part) != std::string::npos) {
        keep.push_back(std::move(v));
        break;
      }
  c.variants = std::move(keep);
  return c;
}

int usage() {
  std::fprintf(stderr,
               "usage: clzero_sequences [--platform NAME] [--budget-s S] [--out FILE.json] [--sections "
               "serial,pipelined,host|footprint] [--sizes B,B,...] [--pipelined-sizes B,...] [--reps N] [--filter "
               "TEXT[,TEXT...]] "
               "[--no-calls] [--no-cuda] [--confirm-budget-s S] [--confirm-kinds-budget-s S] [--confirm-reps N] "
               "[--confirm-kinds-reps N] [--gap-us US [--gap-spin]]\n");
  return 2;
}

}  // namespace
}  // namespace clzero_seq

int main(int argc, char** argv) {
  using namespace clzero_seq;
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "clzero_sequences: %s needs a value\n", a.c_str());
        std::exit(usage());
      }
      return argv[++i];
    };
    if (a == "--platform")
      setenv("CLZERO_BENCH_PLATFORM", value(), 1);
    else if (a == "--budget-s")
      o.budget_s = std::atof(value());
    else if (a == "--out")
      o.out = value();
    else if (a == "--sections") {
      const std::string s = value();
      o.serial = s.find("serial") != std::string::npos;
      o.pipelined = s.find("pipelined") != std::string::npos;
      o.host = s.find("host") != std::string::npos;
      o.footprint = s.find("footprint") != std::string::npos;
    } else if (a == "--sizes")
      o.sizes = parse_sizes(value());
    else if (a == "--pipelined-sizes")
      o.pipelined_sizes = parse_sizes(value());
    else if (a == "--reps")
      o.reps = static_cast<std::size_t>(std::max(1, std::atoi(value())));
    else if (a == "--filter")
      o.filter = value();
    else if (a == "--no-calls")
      o.calls = false;
    else if (a == "--no-cuda")
      o.cuda = false;
    else if (a == "--confirm-budget-s")
      o.confirm_budget_s = std::atof(value());
    else if (a == "--confirm-kinds-budget-s")
      o.confirm_kinds_budget_s = std::atof(value());
    else if (a == "--confirm-kinds-reps")
      o.confirm_kinds_reps = static_cast<std::size_t>(std::max(1, std::atoi(value())));
    else if (a == "--confirm-reps")
      o.confirm_reps = static_cast<std::size_t>(std::max(1, std::atoi(value())));
    else if (a == "--gap-us") {
      const char* text = value();
      char* end = nullptr;
      o.gap_us = std::strtod(text, &end);
      if (end == text || *end != '\0') o.gap_us = -1;  // refused below
    }
    else if (a == "--gap-spin")
      o.gap_spin = true;
    else
      return usage();
  }

  if (!(o.gap_us >= 0) || (o.gap_spin && o.gap_us <= 0)) {
    std::fprintf(stderr, "clzero_sequences: --gap-us needs a number of microseconds above 0%s\n",
                 o.gap_spin ? " (--gap-spin spins that gap)" : "");
    return usage();
  }
  g_gap = {o.gap_us, o.gap_spin};
  try {
    const auto start = Clock::now();
    const Rig& rig = Rig::get();
    const clzero::DeviceCaps& caps = rig.caps;
    std::fprintf(stderr, "clzero_sequences on: %s (%s) | %s | %s | driver %s\n", caps.platform_name.c_str(),
                 caps.platform_version.c_str(), caps.name.c_str(), caps.device_version.c_str(),
                 caps.driver_version.c_str());
    // CUDA's zero copy joins the serial rounds where the device is an
    // NVIDIA GPU, unless left out; never under Callgrind.
    const Catalogue serial =
        filtered(serial_catalogue(caps, o.cuda && !o.footprint ? rig.device : nullptr), o.filter);
    const Catalogue pipelined = filtered(pipelined_catalogue(caps), o.filter);
    std::mt19937 rng(20261201u);
    // Counted under Callgrind, apart from every timed section: the
    // simulator makes timing meaningless.
    if (o.footprint) return footprint_run(serial, o.out);

    // Budget shares by weight, over the sizes that fit one allocation.
    double weights = 0;
    auto fits = [&](std::size_t b) { return b <= caps.max_mem_alloc_size; };
    if (o.serial)
      for (std::size_t b : o.sizes)
        if (fits(b)) weights += serial_plan(b).weight;
    if (o.pipelined)
      for (std::size_t b : o.pipelined_sizes)
        if (fits(b)) weights += pipelined_plan(b).weight;
    const double budget = o.budget_s * (o.calls ? 0.97 : 1.0);

    std::map<std::string, std::string> skipped;
    std::map<std::string, std::size_t> stale_clzero;
    std::ostringstream serial_js, pipelined_js, auto_js, confirm_serial_js, confirm_pipelined_js, confirm_kinds_js;
    const double confirm_budget = o.confirm_budget_s < 0 ? o.budget_s : o.confirm_budget_s;
    const double kinds_budget = o.confirm_kinds_budget_s < 0 ? confirm_budget : o.confirm_kinds_budget_s;
    const auto any_legal = [](const Variant&) { return true; };
    // The screen's samples, per section and size, and what was stale at any
    // size of a section: the confirmation's candidates come from them.
    std::map<std::size_t, Pool> serial_pool, pipelined_pool;
    std::map<std::string, std::size_t> serial_stale, pipelined_stale;
    std::string calls, host, host_cold;
    // How clzero's views wait on this device in this process (measured as
    // the first tensor was made, or set): what its policies' times rest on.
    const clzero::detail::WaitMethod wait = clzero::detail::wait_method(rig.ctx(), rig.device);
    const std::string host_wait = (wait.map_at_view ? "map at the view" : wait.poll ? "poll" : "clWaitForEvents") +
                                  std::string(wait.svm_map_at_view != wait.map_at_view
                                                  ? (wait.svm_map_at_view ? "; coarse-grained SVM: map at the view"
                                                                          : "; coarse-grained SVM: no map at the view")
                                                  : "") +
                                  " (" + wait.reason + ")";
    std::fprintf(stderr, "clzero's host views: %s\n", host_wait.c_str());
    auto compose = [&]() {
      std::ostringstream js;
      bool first = true;
      const std::time_t now = std::time(nullptr);
      char date[32];
      std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
      js << "{\n  \"schema\": \"clzero.sequences/1\",\n  \"context\": {\"date\": \"" << date
         << "\", \"clzero_version\": " << json_string(CLZERO_VERSION_STRING)
         << ", \"platform\": " << json_string(caps.platform_name)
         << ", \"platform_version\": " << json_string(caps.platform_version)
         << ", \"device\": " << json_string(caps.name) << ", \"device_version\": " << json_string(caps.device_version)
         << ", \"driver_version\": " << json_string(caps.driver_version)
         << ", \"cpu\": " << json_string(clzero_bench::cpu_model())
         << ", \"host_wait\": " << json_string(host_wait) << ", \"budget_s\": " << num(o.budget_s)
         << ", \"reps\": " << o.reps << ", \"calls_counted\": " << (call_counting_works() ? "true" : "false")
         << "},\n  \"auto\": {" << auto_js.str() << "},\n  \"variants\": [\n    " << variants_json(serial, "serial");
      if (!serial.variants.empty() && !pipelined.variants.empty()) js << ",\n    ";
      js << variants_json(pipelined, "pipelined") << "\n  ],\n  \"lacking\": [";
      for (const auto& l : serial.lacking) {
        js << (first ? "" : ", ") << json_string(l);
        first = false;
      }
      js << "],\n  \"skipped\": {";
      first = true;
      for (const auto& s : skipped) {
        js << (first ? "" : ", ") << json_string(s.first) << ": " << json_string(s.second);
        first = false;
      }
      js << "},\n  \"serial\": [\n    " << serial_js.str() << "\n  ],\n  \"pipelined\": [\n    " << pipelined_js.str()
         << "\n  ],\n  \"host_ns\": {\n    " << host << "\n  },\n  \"host_cold_ns\": {\n    " << host_cold
         << "\n  },\n  \"calls\": {\n    " << calls << "\n  },\n  \"confirm\": {\"budget_s\": " << num(confirm_budget)
         << ", \"reps\": " << o.confirm_reps << ", \"candidates\": " << kConfirmCandidates
         << ", \"kinds_budget_s\": " << num(kinds_budget) << ", \"kinds_reps\": " << o.confirm_kinds_reps
         << ", \"serial\": [\n    " << confirm_serial_js.str()
         << "\n  ], \"kinds\": [\n    " << confirm_kinds_js.str() << "\n  ], \"pipelined\": [\n    "
         << confirm_pipelined_js.str() << "\n  ]}"
         << ",\n  \"elapsed_s\": " << num(std::chrono::duration<double>(Clock::now() - start).count()) << "\n}\n";
      return js.str();
    };
    // Written after every size, so that a run stopped early keeps what it measured.
    auto save = [&]() -> bool {
      if (o.out.empty()) return true;
      const std::string tmp = o.out + ".part";
      {
        std::ofstream f(tmp);
        f << compose();
        if (!f) return false;
      }
      return std::rename(tmp.c_str(), o.out.c_str()) == 0;
    };
    if (o.calls) calls = calls_json({&serial, &pipelined});
    if (o.host) {
      std::fprintf(stderr, "host cost, the device's calls made free\n");
      host = host_json(serial, o.reps, rng, host_cold);
    }
    bool first = true;
    if (o.serial)
      for (std::size_t b : o.sizes) {
        if (!fits(b)) continue;
        std::string label;
        try {
          ClzeroSequence<clzero::policy::Auto> probe(b / sizeof(std::uint32_t), clzero::policy::Auto::Options{});
          const auto& c = probe.tensor().policy().choice();
          label = c.label() + ": " + c.reason;
        } catch (const std::exception& e) {
          label = std::string("(Auto failed: ") + e.what() + ")";
        }
        std::fprintf(stderr, "serial, %zu bytes (Auto: %s)\n", b, label.c_str());
        auto_js << (first ? "" : ", ") << "\"" << b << "\": " << json_string(label);
        serial_js << (first ? "" : ",\n    ")
                  << run_size(serial, b, serial_plan(b), o.reps, budget * serial_plan(b).weight / weights, rng, skipped,
                              stale_clzero, &serial_pool[b]);
        for (const auto& p : serial_pool[b]) serial_stale[p.first] += p.second.stale_inferences;
        first = false;
        save();
      }
    first = true;
    if (o.pipelined)
      for (std::size_t b : o.pipelined_sizes) {
        if (!fits(b)) continue;
        std::fprintf(stderr, "pipelined, %zu bytes\n", b);
        pipelined_js << (first ? "" : ",\n    ")
                     << run_size(pipelined, b, pipelined_plan(b), o.reps, budget * pipelined_plan(b).weight / weights,
                                 rng, skipped, stale_clzero, &pipelined_pool[b]);
        for (const auto& p : pipelined_pool[b]) pipelined_stale[p.first] += p.second.stale_inferences;
        first = false;
        save();
      }
    // The confirmation, after every size was screened: a candidate must
    // have been fresh at every size of its section.
    if (confirm_budget > 0) {
      double confirm_weights = 0;
      for (const auto& p : serial_pool) confirm_weights += confirm_plan(false, p.first).weight;
      for (const auto& p : pipelined_pool) confirm_weights += confirm_plan(true, p.first).weight;
      bool first_serial = true, first_pipelined = true;
      for (int section = 0; section < 2; ++section) {
        const bool ringed = section == 1;
        for (const auto& p : ringed ? pipelined_pool : serial_pool) {
          std::fprintf(stderr, "confirmation, %s, %zu bytes\n", ringed ? "pipelined" : "serial", p.first);
          const std::string js =
              confirm_size(ringed ? pipelined : serial, ringed,
                           ringed ? std::vector<std::string>{"ring2.clzero.Auto", "ring3.clzero.Auto"}
                                  : std::vector<std::string>{"clzero.Auto", "cuda.zero_copy"},
                           any_legal, ringed ? pipelined_pool : serial_pool, ringed ? pipelined_stale : serial_stale,
                           p.first,
                           o.confirm_reps,
                           confirm_budget * confirm_plan(ringed, p.first).weight / confirm_weights, rng, stale_clzero);
          if (js.empty()) continue;
          bool& first_in = ringed ? first_pipelined : first_serial;
          (ringed ? confirm_pipelined_js : confirm_serial_js) << (first_in ? "" : ",\n    ") << js;
          first_in = false;
          save();
        }
      }
    }
    // Each explicit policy against the legal sequences of its own kind, at
    // every serial size, the same way (issue: an explicit policy costs
    // nothing over the best hand-written code that does what it does).
    if (kinds_budget > 0) {
      std::vector<const Variant*> policies;
      for (const Variant& v : serial.variants)
        if (v.kind == "clzero" && !v.family.empty()) policies.push_back(&v);
      double kind_weights = 0;
      for (const auto& p : serial_pool)
        kind_weights += confirm_plan(false, p.first).weight * static_cast<double>(policies.size());
      bool first_kind = true;
      for (const Variant* policy : policies)
        for (const auto& p : serial_pool) {
          std::fprintf(stderr, "confirmation of its kind, %s, %zu bytes\n", policy->name.c_str(), p.first);
          const auto own_kind = [policy](const Variant& v) {
            return v.family == policy->family && (policy->allocation.empty() || v.allocation == policy->allocation);
          };
          const std::string js = confirm_size(serial, false, {policy->name}, own_kind, serial_pool, serial_stale,
                                              p.first, o.confirm_kinds_reps,
                                              kinds_budget * confirm_plan(false, p.first).weight / kind_weights, rng,
                                              stale_clzero);
          if (js.empty()) continue;
          confirm_kinds_js << (first_kind ? "" : ",\n    ") << js;
          first_kind = false;
          save();
        }
    }
    if (o.out.empty()) {
      std::fputs(compose().c_str(), stdout);
    } else if (!save()) {
      std::fprintf(stderr, "clzero_sequences: cannot write %s\n", o.out.c_str());
      return 1;
    }
    std::fprintf(stderr, "clzero_sequences: done in %.1f s\n",
                 std::chrono::duration<double>(Clock::now() - start).count());
    // A stale hand-written variant is a finding about the driver, shown in
    // the report; a stale clzero variant fails the run (after the JSON is
    // written), because clzero promises fresh data.
    for (const auto& s : stale_clzero)
      std::fprintf(stderr, "clzero_sequences: STALE: %s showed wrong elements in %zu inferences\n", s.first.c_str(),
                   s.second);
    return stale_clzero.empty() ? 0 : 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "clzero_sequences: %s\n", e.what());
    return 1;
  }
}
