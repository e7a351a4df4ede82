// SPDX-License-Identifier: Apache-2.0
// HazardChecker: a happens-before checker over the OpenCL command graph, in
// the manner of ThreadSanitizer. Written from the execution model of OpenCL
// 3.0 (sections 5.11-5.13 and 3.2.1), not from any application's code.
//
// Every command that touches memory records (object, byte range, read or
// write). Two accesses conflict when they name the same object, their ranges
// overlap and one writes; a conflicting pair is a hazard unless a path of
// these edges orders them:
//  - program order on an in-order queue;
//  - an event wait list;
//  - a marker or barrier with an empty wait list waits for everything before
//    it on its queue, and a barrier holds back everything after it;
//  - the host: once it has seen a command end (clWaitForEvents, clFinish, a
//    blocking enqueue, CL_COMPLETE read with clGetEventInfo), that command is
//    ordered before every command enqueued afterwards.
// The host's own accesses are the mapping windows: from a map's completion to
// its unmap's enqueue, reading (CL_MAP_READ) or writing (CL_MAP_WRITE,
// CL_MAP_WRITE_INVALIDATE_REGION) the mapped range. A window is ordered after
// what the map command waited for, and before what waits for the unmap.
//
// It also reports a wait on an event of another queue that was never flushed
// after the event's command was enqueued (section 5.13 requires the flush).
//
// Order is kept with vector clocks over chains: a chain is a run of commands
// each ordered after the previous (an in-order queue is one chain; an
// out-of-order queue reuses a chain whose last command the new one follows,
// else opens one). A command at (chain k, seq s) happens before a command
// whose clock holds at least s for k, or once the host's clock does. History
// per object is the accesses not yet known to be ordered before everything
// to come: a write drops the accesses it covers and follows, a read the reads
// it covers and follows, and a host wait drops what it orders.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace clzero_fault {

using Chain = std::uint32_t;

// Where a command stands: its chain and its place in it (seq 0: no command,
// as for a user event).
struct Position {
  Chain chain = 0;
  std::uint32_t seq = 0;
};

// A sparse vector clock: for each chain, the last seq known to happen before.
class Clock {
 public:
  std::uint32_t get(Chain k) const {
    auto it = std::lower_bound(c_.begin(), c_.end(), k, [](const Entry& e, Chain key) { return e.first < key; });
    return it != c_.end() && it->first == k ? it->second : 0;
  }
  void raise(Chain k, std::uint32_t s) {
    auto it = std::lower_bound(c_.begin(), c_.end(), k, [](const Entry& e, Chain key) { return e.first < key; });
    if (it != c_.end() && it->first == k) it->second = std::max(it->second, s);
    else c_.insert(it, {k, s});
  }
  void join(const Clock& o) {
    if (o.c_.empty()) return;
    if (c_.empty()) {
      c_ = o.c_;
      return;
    }
    std::vector<Entry> out;
    out.reserve(c_.size() + o.c_.size());
    auto a = c_.cbegin();
    auto b = o.c_.cbegin();
    while (a != c_.cend() || b != o.c_.cend()) {
      if (b == o.c_.cend() || (a != c_.cend() && a->first < b->first)) out.push_back(*a++);
      else if (a == c_.cend() || b->first < a->first) out.push_back(*b++);
      else {
        out.push_back({a->first, std::max(a->second, b->second)});
        ++a;
        ++b;
      }
    }
    c_.swap(out);
  }
  // Drops the components `covered` says the host already orders.
  template <class Covered>
  void prune(Covered&& covered) {
    c_.erase(std::remove_if(c_.begin(), c_.end(), [&](const Entry& e) { return covered(e.first, e.second); }),
             c_.end());
  }
  template <class F>
  void for_each(F&& f) const {
    for (const Entry& e : c_) f(e.first, e.second);
  }

 private:
  using Entry = std::pair<Chain, std::uint32_t>;
  std::vector<Entry> c_;
};

// A command as the report names it.
struct Command {
  std::uint64_t number = 0;  // the order of enqueue, from 1
  std::string call;          // the API call, with the kernel's name or the map flags
  const void* queue = nullptr;
  Position pos;
};
using CommandRef = std::shared_ptr<const Command>;

// Bytes [lo, hi) of a memory object: a buffer (sub-buffers name their
// parent) or an SVM allocation (named by its base pointer).
struct Range {
  const void* object = nullptr;
  std::uint64_t lo = 0, hi = 0;
  bool svm = false;
};

struct Access {
  Range range;
  bool write = false;
};

enum class CommandKind { plain, marker, barrier };

class HazardChecker {
 public:
  static constexpr std::size_t kReportLimit = 100;
  static constexpr std::size_t kHistoryLimit = 1024;  // per object: beyond it the oldest go, counted

  struct Figures {
    long commands = 0;  // commands recorded
    long accesses = 0;  // memory accesses recorded (a window counts once)
    long pairs = 0;     // conflicting pairs whose order was checked
    long hazards = 0;   // unordered conflicting pairs
    long unflushed = 0; // waits on an event of a queue never flushed after it
    long dropped = 0;   // history entries dropped at kHistoryLimit
  };

  // What the checker needs to know of a queue the first time it sees it.
  void queue_created(const void* queue, bool in_order) {
    auto q = std::make_shared<QueueState>();
    q->in_order = in_order;
    if (in_order) q->chain = new_chain();
    queues_[queue] = std::move(q);
  }
  bool knows_queue(const void* queue) const { return queues_.count(queue) != 0; }

  // A command the implementation accepted. `waits` are the wait list's
  // events; `event` the handle given back to the application (or null);
  // `accesses` are checked and recorded, `window` only checked (a map's
  // window is recorded at its unmap). Returns the command.
  CommandRef enqueue(const void* queue, CommandKind kind, std::uint32_t n, const void* const* waits,
                     std::string call, const std::vector<Access>& accesses, const Access* window,
                     const void* event) {
    auto qit = queues_.find(queue);
    if (qit == queues_.end()) {
      queue_created(queue, true);
      qit = queues_.find(queue);
    }
    QueueState& q = *qit->second;
    auto cmd = std::make_shared<Command>();
    cmd->number = ++figures_.commands;
    cmd->call = std::move(call);
    cmd->queue = queue;

    Clock clock = q.barrier;
    if (q.in_order) clock.join(q.last);
    if (n == 0 && kind != CommandKind::plain) clock.join(q.all);
    for (std::uint32_t i = 0; i < n; ++i) {
      auto e = events_.find(waits[i]);
      if (e == events_.end()) continue;  // an event made before the checker saw it
      clock.join(e->second.clock);
      check_flushed(e->second, queue, *cmd);
    }
    cmd->pos = place(q, clock);
    clock.raise(cmd->pos.chain, cmd->pos.seq);
    prune(clock);
    last_clock_ = clock;

    for (const Access& a : accesses) check(a, clock, *cmd);
    if (window != nullptr) check(*window, clock, *cmd);
    CommandRef ref = cmd;
    for (const Access& a : accesses) record(a, ref, nullptr);
    figures_.accesses += static_cast<long>(accesses.size());

    q.last = clock;
    q.all.join(clock);
    prune(q.all);
    if (kind == CommandKind::barrier) q.barrier = clock;
    ++q.enqueued;
    if (event != nullptr) {
      EventState& es = events_[event];
      es.clock = clock;
      es.pos = cmd->pos;
      es.queue = qit->second;
      es.queue_index = q.enqueued;
      es.command = ref;
    }
    return ref;
  }

  // The host's window over a mapping, from `map` (just enqueued) to its
  // unmap. `key`/`user` identify the mapping at its unmap.
  void open_window(const CommandRef& map, const void* key, const void* user, const Access& a) {
    windows_.push_back({key, user, a, map});
  }
  // The unmap `unmap` (just enqueued) ends the window: from now on it is an
  // access of the host, ordered before what follows the unmap.
  void close_window(const CommandRef& unmap, const void* key, const void* user) {
    for (auto it = windows_.rbegin(); it != windows_.rend(); ++it) {
      if (it->key != key || it->user != user) continue;
      ++figures_.accesses;
      record(it->access, unmap, it->map);
      windows_.erase(std::next(it).base());
      return;
    }
  }

  // A map that ended in error mapped nothing: the host has no window.
  void drop_window(const void* key, const void* user) {
    for (auto it = windows_.rbegin(); it != windows_.rend(); ++it) {
      if (it->key != key || it->user != user) continue;
      windows_.erase(std::next(it).base());
      return;
    }
  }

  // The host saw the command behind `event` end.
  void host_completed(const void* event) {
    auto e = events_.find(event);
    if (e == events_.end()) return;
    host_join(e->second.clock);
    if (e->second.queue) flush(*e->second.queue);  // a blocking wait flushes (section 5.13)
  }
  // clFinish: everything enqueued on the queue so far has ended.
  void host_finished(const void* queue) {
    auto q = queues_.find(queue);
    if (q == queues_.end()) return;
    host_join(q->second->all);
    flush(*q->second);
  }
  // A blocking enqueue: the command just enqueued has ended.
  void host_completed_last() { host_join(last_clock_); }
  void flushed(const void* queue) {
    auto q = queues_.find(queue);
    if (q != queues_.end()) flush(*q->second);
  }
  // clReleaseCommandQueue flushes; the last release ends the queue.
  void queue_released(const void* queue, bool last) {
    auto q = queues_.find(queue);
    if (q == queues_.end()) return;
    flush(*q->second);
    if (last) queues_.erase(q);
  }
  // A user event carries no command: what the host had seen end before it
  // was set is ordered before its waiters by the host's clock already.
  void user_event(const void* event) { events_[event] = EventState{}; }
  void forget_event(const void* event) { events_.erase(event); }
  // Memory freed: its handle or address may come back for new memory.
  void forget_object(const void* object) {
    history_.erase(object);
    windows_.erase(std::remove_if(windows_.begin(), windows_.end(),
                                  [&](const Window& w) { return w.access.range.object == object; }),
                   windows_.end());
  }

  const Figures& figures() const { return figures_; }
  const std::vector<std::string>& reports() const { return reports_; }
  void clear_reports() {
    reports_.clear();
    figures_.hazards = 0;
    figures_.unflushed = 0;
  }

 private:
  struct QueueState {
    bool in_order = true;
    Chain chain = 0;           // an in-order queue's chain
    std::vector<Chain> pool;   // the chains an out-of-order queue's commands extended
    Clock last, all, barrier;  // the last command, all commands, the last barrier
    std::uint64_t enqueued = 0, flushed = 0;
  };
  struct EventState {
    Clock clock;
    Position pos;
    std::shared_ptr<QueueState> queue;  // null for user events
    std::uint64_t queue_index = 0;
    CommandRef command;
  };
  struct Entry {
    std::uint64_t lo, hi;
    bool write;
    CommandRef command;  // the command, or the unmap that ended a window
    CommandRef map;      // the map that began a window, or null
  };
  struct Window {
    const void* key;
    const void* user;
    Access access;
    CommandRef map;
  };

  Chain new_chain() {
    host_.push_back(0);
    tail_.push_back(0);
    return static_cast<Chain>(tail_.size() - 1);
  }
  // Whether the command at `p` happens before one whose clock is `c`.
  bool before(const Position& p, const Clock& c) const {
    return p.seq != 0 && (c.get(p.chain) >= p.seq || host_[p.chain] >= p.seq);
  }
  bool host_ordered(const Position& p) const { return host_[p.chain] >= p.seq; }
  void prune(Clock& c) const {
    c.prune([&](Chain k, std::uint32_t s) { return host_[k] >= s; });
  }

  // The chain a command extends: its in-order queue's, else one whose last
  // command it follows, else a new one.
  Position place(QueueState& q, const Clock& clock) {
    Chain k = q.chain;
    if (!q.in_order) {
      auto it = std::find_if(q.pool.begin(), q.pool.end(),
                             [&](Chain c) { return clock.get(c) >= tail_[c] || host_[c] >= tail_[c]; });
      if (it != q.pool.end()) k = *it;
      else {
        k = new_chain();
        q.pool.push_back(k);
      }
    }
    return {k, ++tail_[k]};
  }

  void host_join(const Clock& c) {
    c.for_each([&](Chain k, std::uint32_t s) { host_[k] = std::max(host_[k], s); });
  }
  static void flush(QueueState& q) { q.flushed = q.enqueued; }

  // Section 5.13: a wait across queues needs the other queue flushed after
  // the command was enqueued. An event the host has seen end is exempt.
  void check_flushed(const EventState& e, const void* queue, const Command& waiter) {
    if (!e.queue || !e.command || e.command->queue == queue || host_ordered(e.pos)) return;
    if (e.queue->flushed >= e.queue_index) return;
    ++figures_.unflushed;
    report("unflushed wait: #" + std::to_string(waiter.number) + " " + waiter.call + " on queue " +
           pointer(queue) + " waits on the event of #" + std::to_string(e.command->number) + " " +
           e.command->call + " on queue " + pointer(e.command->queue) +
           ", which was never flushed (clFlush, clFinish or a blocking call) after that command was enqueued "
           "(OpenCL 3.0 section 5.13)");
  }

  void check(const Access& a, const Clock& clock, const Command& cmd) {
    auto h = history_.find(a.range.object);
    if (h != history_.end()) {
      for (const Entry& e : h->second) {
        if (!(a.write || e.write) || e.hi <= a.range.lo || a.range.hi <= e.lo) continue;
        ++figures_.pairs;
        if (before(e.command->pos, clock)) continue;
        hazard(a, cmd, e.lo, e.hi, e.write, *e.command, e.map.get());
      }
    }
    for (const Window& w : windows_) {
      if (w.access.range.object != a.range.object || !(a.write || w.access.write) ||
          w.access.range.hi <= a.range.lo || a.range.hi <= w.access.range.lo || w.map->number == cmd.number)
        continue;
      ++figures_.pairs;
      // A window ends at its unmap's enqueue, after this command: never ordered.
      hazard(a, cmd, w.access.range.lo, w.access.range.hi, w.access.write, *w.map, nullptr, true);
    }
  }

  void record(const Access& a, const CommandRef& cmd, const CommandRef& map) {
    std::vector<Entry>& entries = history_[a.range.object];
    // Keep what a later access could still conflict with unordered.
    entries.erase(std::remove_if(entries.begin(), entries.end(),
                                 [&](const Entry& e) {
                                   if (host_ordered(e.command->pos)) return true;
                                   const bool covered = a.range.lo <= e.lo && e.hi <= a.range.hi;
                                   return covered && (a.write || !e.write) &&
                                          (e.command == cmd || before(e.command->pos, last_clock_));
                                 }),
                  entries.end());
    if (entries.size() >= kHistoryLimit) {
      entries.erase(entries.begin());
      ++figures_.dropped;
    }
    entries.push_back({a.range.lo, a.range.hi, a.write, cmd, map});
  }
  void hazard(const Access& a, const Command& cmd, std::uint64_t lo, std::uint64_t hi, bool other_writes,
              const Command& other, const Command* other_map, bool open_window = false) {
    ++figures_.hazards;
    if (reports_.size() >= kReportLimit) return;
    const std::uint64_t from = std::max(lo, a.range.lo), to = std::min(hi, a.range.hi);
    std::string first;
    if (other_map != nullptr)
      first = std::string("the host's ") + (other_writes ? "writing" : "reading") + " mapping from #" +
              std::to_string(other_map->number) + " " + other_map->call + " to #" + std::to_string(other.number) +
              " " + other.call;
    else if (open_window)
      first = std::string("the host's ") + (other_writes ? "writing" : "reading") + " mapping from #" +
              std::to_string(other.number) + " " + other.call + " (not yet unmapped)";
    else
      first = std::string(other_writes ? "write" : "read") + " by #" + std::to_string(other.number) + " " +
              other.call;
    report("hazard: " + first + " on queue " + pointer(other.queue) + " and " + (a.write ? "write" : "read") +
           " by #" + std::to_string(cmd.number) + " " + cmd.call + " on queue " + pointer(cmd.queue) + " touch bytes [" +
           std::to_string(from) + ", " + std::to_string(to) + ") of " + (a.range.svm ? "SVM allocation " : "buffer ") +
           pointer(a.range.object) +
           " with no order between them (no wait list, queue order, marker, barrier or host wait)");
  }
  void report(std::string text) {
    if (reports_.size() < kReportLimit) reports_.push_back(std::move(text));
  }
  static std::string pointer(const void* p) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%p", p);
    return buf;
  }

  Figures figures_;
  std::vector<std::uint32_t> host_;  // per chain: the last seq the host has seen end
  std::vector<std::uint32_t> tail_;  // per chain: its last seq
  std::unordered_map<const void*, std::shared_ptr<QueueState>> queues_;
  std::unordered_map<const void*, EventState> events_;
  std::unordered_map<const void*, std::vector<Entry>> history_;
  std::vector<Window> windows_;
  std::vector<std::string> reports_;
  Clock last_clock_;  // the clock of the command enqueued last
};

}  // namespace clzero_fault
