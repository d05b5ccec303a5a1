#include "liveness.h"

#include <algorithm>
#include <deque>
#include <iterator>

namespace graphscope {

namespace {

// The entry of m with the greatest key <= a, or end().
template <class Map>
typename Map::const_iterator at_or_below(const Map& m, uint64_t a) {
  auto it = m.upper_bound(a);
  if (it == m.begin()) return m.end();
  return std::prev(it);
}

// Keeps a history map to at most n entries, the oldest out first: `order`
// holds (base, seq) in the order they went in; an entry whose seq no longer
// matches was replaced or erased since, and is skipped. Amortized O(log n).
template <class Map, class Seq>
void bound(Map& m, std::deque<std::pair<uint64_t, uint64_t>>& order, size_t n, Seq seq) {
  while (m.size() > n && !order.empty()) {
    const auto [base, q] = order.front();
    order.pop_front();
    auto it = m.find(base);
    if (it != m.end() && seq(it->second) == q) m.erase(it);
  }
  // Entries no longer in the map, once they are most of the queue.
  if (order.size() > 2 * n + 1024) {
    std::deque<std::pair<uint64_t, uint64_t>> kept;
    for (const auto& e : order) {
      auto it = m.find(e.first);
      if (it != m.end() && seq(it->second) == e.second) kept.push_back(e);
    }
    order.swap(kept);
  }
}

}  // namespace

void LivenessTracker::allocated(Source s, uint64_t base, uint64_t size, uint32_t site, bool in_capture) {
  std::lock_guard<std::mutex> lock(m_);
  const uint64_t seq = seq_.fetch_add(1, std::memory_order_relaxed) + 1;
  blocks(s)[base] = Block{size, site, seq, in_capture};
  // Memory a finding names, handed out again.
  auto& freed = s == Source::torch ? freed_torch_ : freed_driver_;
  const uint64_t end = size ? base + size : base + 1;
  for (auto it = freed.lower_bound(base); it != freed.end() && it->first < end;) {
    if (it->second.lost)
      for (Finding& f : findings_)
        if (f.source == s && f.block == it->first && !f.reused) f.reused = true, f.reused_site = site;
    it = freed.erase(it);
  }
  if (s == Source::torch) pool_.erase(base);
}

void LivenessTracker::freed(Source s, uint64_t base, uint64_t size, uint32_t site) {
  std::lock_guard<std::mutex> lock(m_);
  const uint64_t seq = seq_.fetch_add(1, std::memory_order_relaxed) + 1;
  Blocks& b = blocks(s);
  auto it = b.find(base);
  if (it == b.end()) return;  // not an allocation seen: nothing watched in it
  const Block blk = it->second;
  b.erase(it);
  if (s == Source::torch && blk.in_capture) {
    pool_[base] = seq;
    pool_order_.emplace_back(base, seq);
    bound(pool_, pool_order_, kMaxHistory, [](uint64_t q) { return q; });
    return;
  }
  auto& history = s == Source::torch ? freed_torch_ : freed_driver_;
  Freed& f = history[base];
  f = Freed{blk.size ? blk.size : size, blk.seq, seq, blk.site, site, false};
  auto [w, end] = by_block_.equal_range(base);
  for (; w != end; ++w) {
    const Watch& x = watches_[w->second];
    if (!x.dead && x.source == s && x.block_seq == blk.seq) lose(w->second, f);
  }
  auto& order = s == Source::torch ? freed_torch_order_ : freed_driver_order_;
  order.emplace_back(base, seq);
  bound(history, order, kMaxHistory, [](const Freed& x) { return x.freed_seq; });
}

bool LivenessTracker::resolve(uint64_t a, uint64_t since, Resolved* r) const {
  // The driver's allocation holding a, live or freed since.
  auto d = at_or_below(driver_, a);
  if (d == driver_.end() || a >= d->first + std::max<uint64_t>(d->second.size, 1)) {
    auto f = at_or_below(freed_driver_, a);
    if (f != freed_driver_.end() && a < f->first + std::max<uint64_t>(f->second.size, 1) &&
        f->second.freed_seq > since) {
      *r = Resolved{Source::driver, f->first, nullptr, &f->second};
      return true;
    }
    return false;  // in no allocation graphscope saw
  }
  const uint64_t lo = d->first, hi = d->first + d->second.size;
  // PyTorch's block holding it: the nearest block start at or below a in
  // that allocation, live, freed since, or of a capture's pool.
  uint64_t best = 0;
  int which = -1;  // 0 live, 1 freed, 2 pool
  auto consider = [&](auto& m, int kind) {
    auto it = at_or_below(m, a);
    if (it != m.end() && it->first >= lo && (which < 0 || it->first > best)) best = it->first, which = kind;
  };
  consider(torch_, 0);
  consider(freed_torch_, 1);
  consider(pool_, 2);
  if (which >= 0) {
    if (which == 2) return false;
    if (which == 1) {
      const Freed& f = freed_torch_.at(best);
      if (f.freed_seq <= since) return false;  // freed before the capture: not this graph's input
      *r = Resolved{Source::torch, best, nullptr, &f};
      return true;
    }
    const Block& b = torch_.at(best);
    if (b.in_capture) return false;
    *r = Resolved{Source::torch, best, &b, nullptr};
    return true;
  }
  // No block of PyTorch's below a: a driver allocation of the program's
  // own, unless PyTorch has blocks in it (a segment of its allocator).
  auto any_in = [&](const auto& m) {
    auto it = m.lower_bound(lo);
    return it != m.end() && it->first < hi;
  };
  if (any_in(torch_) || any_in(pool_) || any_in(freed_torch_)) return false;
  if (d->second.in_capture) return false;
  *r = Resolved{Source::driver, d->first, &d->second, nullptr};
  return true;
}

void LivenessTracker::watch(uint64_t exec, uint32_t exec_graph_id, const std::vector<Address>& addresses,
                            uint64_t since) {
  std::lock_guard<std::mutex> lock(m_);
  Exec& e = execs_[exec];
  e.exec_graph_id = exec_graph_id;
  for (const Address& a : addresses) {
    Resolved r;
    if (!resolve(a.value, since, &r)) continue;
    Watch w;
    w.exec = exec, w.exec_graph_id = exec_graph_id, w.at = a, w.source = r.source, w.block = r.base;
    w.block_seq = r.live ? r.live->seq : r.freed->seq;
    w.block_site = r.live ? r.live->site : r.freed->site;
    const size_t idx = watches_.size();
    watches_.push_back(w);
    e.watches.push_back(idx);
    by_block_.emplace(r.base, idx);
    ++watched_;
    if (r.freed) {
      auto& history = r.source == Source::torch ? freed_torch_ : freed_driver_;
      lose(idx, history.at(r.base));
    }
  }
}

void LivenessTracker::lose(size_t idx, const Freed& f) {
  Watch& w = watches_[idx];
  const_cast<Freed&>(f).lost = true;
  Exec& e = execs_[w.exec];
  auto key = std::make_pair(w.exec_graph_id, w.block);
  auto it = finding_at_.find(key);
  if (it != finding_at_.end()) {
    ++findings_[it->second].addresses;
    return;
  }
  if (findings_.size() >= kMaxFindings) {
    ++dropped_;
    return;
  }
  Finding x;
  x.exec_graph_id = w.exec_graph_id;
  x.at = w.at;
  x.source = w.source;
  x.block = w.block;
  x.block_size = f.size;
  x.allocated_site = w.block_site;
  x.freed_site = f.freed_site;
  finding_at_.emplace(key, findings_.size());
  if (e.findings.empty()) lost_execs_.fetch_add(1, std::memory_order_relaxed);
  e.findings.push_back(findings_.size());
  findings_.push_back(x);
}

void LivenessTracker::forget(uint64_t exec) {
  std::lock_guard<std::mutex> lock(m_);
  auto it = execs_.find(exec);
  if (it == execs_.end()) return;
  for (size_t idx : it->second.watches) {
    Watch& w = watches_[idx];
    w.dead = true;
    auto [b, end] = by_block_.equal_range(w.block);
    for (; b != end; ++b)
      if (b->second == idx) {
        by_block_.erase(b);
        break;
      }
  }
  if (!it->second.findings.empty()) lost_execs_.fetch_sub(1, std::memory_order_relaxed);
  execs_.erase(it);
  // The watches of destroyed exec graphs, once they are most of them.
  if (watches_.size() > 4096 && by_block_.size() < watches_.size() / 4) {
    std::vector<Watch> kept;
    std::vector<size_t> moved(watches_.size(), SIZE_MAX);
    for (size_t i = 0; i < watches_.size(); ++i)
      if (!watches_[i].dead) moved[i] = kept.size(), kept.push_back(watches_[i]);
    watches_ = std::move(kept);
    std::multimap<uint64_t, size_t> index;
    for (const auto& [base, i] : by_block_) index.emplace(base, moved[i]);
    by_block_ = std::move(index);
    for (auto& [h, e] : execs_)
      for (size_t& i : e.watches) i = moved[i];
  }
}

void LivenessTracker::launched(uint64_t exec, uint64_t number, bool refused) {
  if (!lost_execs_.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(m_);
  auto it = execs_.find(exec);
  if (it == execs_.end()) return;
  for (size_t i : it->second.findings) {
    Finding& f = findings_[i];
    ++f.replays;
    if (refused) ++f.refused;
    if (!f.first_replay) f.first_replay = number;
  }
}

bool LivenessTracker::lost(uint64_t exec, Finding* first) const {
  if (!lost_execs_.load(std::memory_order_relaxed)) return false;
  std::lock_guard<std::mutex> lock(m_);
  auto it = execs_.find(exec);
  if (it == execs_.end() || it->second.findings.empty()) return false;
  if (first) *first = findings_[it->second.findings.front()];
  return true;
}

std::vector<LivenessTracker::Finding> LivenessTracker::findings() const {
  std::lock_guard<std::mutex> lock(m_);
  return findings_;
}

uint64_t LivenessTracker::dropped() const {
  std::lock_guard<std::mutex> lock(m_);
  return dropped_;
}

uint64_t LivenessTracker::watched() const {
  std::lock_guard<std::mutex> lock(m_);
  return watched_;
}

}  // namespace graphscope
