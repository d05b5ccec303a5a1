#include "fold.h"

#include <algorithm>
#include <cctype>
#include <queue>
#include <set>
#include <tuple>
#include <unordered_map>

#include "../core/demangle.h"
#include "../core/hash.h"
#include "../core/text.h"

namespace graphscope {
namespace {

constexpr uint32_t kNone = UINT32_MAX;
// A repeat covers at least this many nodes (2 x 2 is too small to help).
constexpr size_t kMinCovered = 6;

using ::graphscope::hash_text;
uint64_t mix(uint64_t x) { return hash_mix(x); }

// What a node is, as far as folding cares: its kind, name and sizes.
uint64_t label_of(const Node& n) {
  uint64_t h = mix(uint64_t(n.type) + 1);
  if (n.type == NodeType::unknown) h = mix(h ^ hash_text(n.type_spelling));
  if (!n.kernel_name.empty()) h = mix(h ^ hash_text(n.kernel_name));
  if (n.kernel && n.kernel->geometry_known) {
    const KernelInfo& k = *n.kernel;
    h = mix(h ^ (uint64_t(k.grid.x) << 32 | k.grid.y));
    h = mix(h ^ (uint64_t(k.grid.z) << 32 | k.block.x));
    h = mix(h ^ (uint64_t(k.block.y) << 32 | k.block.z));
    h = mix(h ^ k.shared_mem_bytes);
  }
  if (n.memcpy) h = mix(h ^ hash_text(n.memcpy->kind) ^ mix(n.memcpy->bytes));
  if (n.memset) h = mix(h ^ mix(n.memset->bytes + 7));
  if (n.host) h = mix(h ^ hash_text(n.host->symbol));
  if (n.mem_alloc) h = mix(h ^ mix(n.mem_alloc->bytes + 11));
  return h;
}

// A topological order that follows each chain as far as it goes (Kahn's
// with a stack), so that a branch's nodes stand together: four branches of
// three nodes read A1 B1 C1 A2 B2 C2 ..., not A1 A2 A3 A4 B1 ...
std::vector<uint32_t> chain_order(const Graph& g) {
  const size_t n = g.nodes.size();
  std::vector<uint32_t> indegree(n, 0), order, stack;
  for (const Node& x : g.nodes)
    for (const auto& d : x.dependencies)
      if (d.from < n) ++indegree[x.index];
  for (size_t i = n; i-- > 0;)
    if (!indegree[i]) stack.push_back(uint32_t(i));
  order.reserve(n);
  while (!stack.empty()) {
    const uint32_t v = stack.back();
    stack.pop_back();
    order.push_back(v);
    const auto& out = g.nodes[v].dependents;
    for (size_t k = out.size(); k-- > 0;)
      if (out[k] < n && --indegree[out[k]] == 0) stack.push_back(out[k]);
  }
  return order;  // shorter than n in a graph with a cycle: what is there folds
}

struct Candidate {
  uint32_t start, period, count;
  size_t covered() const { return size_t(period) * count; }
};

std::string node_name(const Node& n) {
  if (n.type == NodeType::kernel) {
    const std::string full = n.kernel && !n.kernel->demangled.empty() ? n.kernel->demangled : demangle(n.kernel_name);
    return full.empty() ? std::string("kernel") : short_kernel_name(full, 40);
  }
  return std::string(to_string(n.type));
}

// The longest common subsequence of a and b, as the pairs it matches.
std::vector<std::pair<uint32_t, uint32_t>> common(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<uint32_t> t((n + 1) * (m + 1), 0);
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      t[i * (m + 1) + j] = a[i] == b[j] ? t[(i + 1) * (m + 1) + j + 1] + 1
                                        : std::max(t[(i + 1) * (m + 1) + j], t[i * (m + 1) + j + 1]);
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (size_t i = 0, j = 0; i < n && j < m;) {
    if (a[i] == b[j]) out.emplace_back(uint32_t(i++), uint32_t(j++));
    else if (t[(i + 1) * (m + 1) + j] >= t[i * (m + 1) + j + 1]) ++i;
    else ++j;
  }
  return out;
}

// Next to each repeat, a stretch of about one block's length that matches
// at least three quarters of the block in order, and is no repeat itself:
// a copy that differs.
void find_odd_copies(const Graph& g, const std::vector<uint32_t>& order, const std::vector<uint64_t>& label,
                     const std::vector<char>& taken, const std::vector<uint32_t>& starts, Folding& f) {
  const size_t m = order.size();
  for (uint32_t r = 0; r < f.repeats.size(); ++r) {
    const Repeat& rp = f.repeats[r];
    const uint32_t p = rp.size;
    if (p < 2 || p > 2000) continue;
    std::vector<uint64_t> block(label.begin() + starts[r], label.begin() + starts[r] + p);
    const uint32_t slack = std::max<uint32_t>(1, p / 8);
    for (bool before : {false, true}) {
      const size_t edge = before ? starts[r] : starts[r] + size_t(p) * rp.count;
      size_t best_len = 0, best_score = 0;
      std::vector<std::pair<uint32_t, uint32_t>> best_match;
      for (uint32_t len = p > slack ? p - slack : 1; len <= p + slack; ++len) {
        if (before ? len > edge : edge + len > m) continue;
        const size_t from = before ? edge - len : edge;
        bool free = true;
        for (size_t q = from; q < from + len && free; ++q) free = !taken[q];
        if (!free) continue;
        std::vector<uint64_t> seg(label.begin() + from, label.begin() + from + len);
        if (seg == block) continue;  // a clean copy the search did not take (cannot repeat alone)
        auto match = common(seg, block);
        const size_t score = match.size() * 4;
        if (match.size() * 4 < size_t(p) * 3) continue;
        if (score > best_score || (score == best_score && (len > p ? len - p : p - len) < (best_len > p ? best_len - p : p - best_len)))
          best_score = score, best_len = len, best_match = std::move(match);
      }
      if (!best_len) continue;
      const size_t from = before ? edge - best_len : edge;
      bool known = false;  // the gap between two repeats of one block, seen from the other side
      for (const OddCopy& o : f.odd) known = known || o.nodes.front() == order[from];
      if (known) continue;
      OddCopy odd;
      odd.repeat = r;
      odd.before = before;
      for (size_t q = from; q < from + best_len; ++q) odd.nodes.push_back(order[q]);
      // What differs: nodes of this copy the block lacks, and the reverse.
      std::vector<char> in_seg(best_len, 0), in_block(p, 0);
      for (const auto& [i, j] : best_match) in_seg[i] = 1, in_block[j] = 1;
      std::vector<std::string> extra, missing;
      for (size_t i = 0; i < best_len; ++i)
        if (!in_seg[i]) extra.push_back(node_name(g.nodes[order[from + i]]));
      for (size_t j = 0; j < p; ++j)
        if (!in_block[j]) missing.push_back(node_name(g.nodes[rp.copies[0][j]]));
      auto list = [](const std::vector<std::string>& v) {
        std::string s;
        for (size_t k = 0; k < v.size() && k < 3; ++k) s += (k ? ", " : "") + v[k];
        if (v.size() > 3) s += ", ...";
        return s;
      };
      if (!extra.empty()) odd.difference = "+" + plural(extra.size(), "node", "nodes") + " (" + list(extra) + ")";
      if (!missing.empty())
        odd.difference += std::string(odd.difference.empty() ? "" : ", ") + "-" +
                          plural(missing.size(), "node", "nodes") + " (" + list(missing) + ")";
      if (odd.difference.empty()) odd.difference = "other edges";
      f.odd.push_back(std::move(odd));
    }
  }
}

// The deepest module every node of the copy (that has modules) lies in.
const ModuleFrame* copy_module(const Graph& g, const std::vector<uint32_t>& copy) {
  const std::vector<ModuleFrame>* common = nullptr;
  size_t depth = 0;
  for (uint32_t v : copy) {
    const auto& o = g.nodes[v].origin;
    if (!o || o->modules.empty()) continue;
    if (!common) {
      common = &o->modules;
      depth = common->size();
      continue;
    }
    size_t k = 0;
    while (k < depth && k < o->modules.size() && o->modules[k].name == (*common)[k].name) ++k;
    depth = k;
  }
  return common && depth ? &(*common)[depth - 1] : nullptr;
}

// "model.layers.3" -> "model.layers.#": digit runs as one mark.
std::string without_digits(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(s[i]))) {
      if (out.empty() || out.back() != '#') out += '#';
    } else {
      out += s[i];
    }
  }
  return out;
}

// Names a repeat by its copies' modules when each copy lies in one module,
// all of one class, named alike but for an index: the decoder layers.
bool name_by_modules(const Graph& g, Repeat& r) {
  std::vector<std::string> names;
  std::string type, shape;
  for (const auto& copy : r.copies) {
    const ModuleFrame* m = copy_module(g, copy);
    if (!m || m->name.empty()) return false;
    if (names.empty()) type = m->type, shape = without_digits(m->name);
    else if (m->type != type || without_digits(m->name) != shape) return false;
    names.push_back(m->name);
  }
  if (names.size() < 2 || names.front() == names.back() || type.empty()) return false;
  // model.layers.0 ... model.layers.7 -> model.layers.{0..7}
  const std::string& a = names.front();
  const std::string& b = names.back();
  size_t p = 0;
  while (p < a.size() && p < b.size() && a[p] == b[p]) ++p;
  while (p > 0 && std::isdigit(static_cast<unsigned char>(a[p - 1]))) --p;
  size_t ea = p, eb = p;
  while (ea < a.size() && std::isdigit(static_cast<unsigned char>(a[ea]))) ++ea;
  while (eb < b.size() && std::isdigit(static_cast<unsigned char>(b[eb]))) ++eb;
  if (ea > p && eb > p && a.substr(ea) == b.substr(eb))
    r.module = a.substr(0, p) + "{" + a.substr(p, ea - p) + ".." + b.substr(p, eb - p) + "}" + a.substr(ea);
  else
    r.module = a + " ... " + b;
  r.module_type = type;
  r.copy_module = std::move(names);
  return true;
}

}  // namespace

size_t Folding::folded_nodes() const {
  size_t n = 0;
  for (const auto& r : repeats) n += size_t(r.count) * r.size;
  return n;
}

Folding find_repeats(const Graph& g) {
  Folding f;
  const size_t n = g.nodes.size();
  f.repeat_of.assign(n, kNone);
  f.copy_of.assign(n, kNone);
  f.place_of.assign(n, kNone);
  const std::vector<uint32_t> order = chain_order(g);
  const size_t m = order.size();
  if (m < 2) return f;
  std::vector<uint64_t> label(m);
  for (size_t i = 0; i < m; ++i) label[i] = label_of(g.nodes[order[i]]);
  std::vector<uint32_t> pos(n, kNone);
  for (size_t i = 0; i < m; ++i) pos[order[i]] = uint32_t(i);

  // The periods worth trying: the distances between one node and the next
  // of the same kind and name, the most frequent first (a block's length
  // shows up once per node of each copy), and all short ones.
  std::vector<size_t> periods;
  {
    std::unordered_map<uint64_t, uint32_t> last;
    std::unordered_map<uint32_t, uint32_t> gaps;
    last.reserve(m);
    for (uint32_t i = 0; i < m; ++i) {
      auto [it, added] = last.emplace(label[i], i);
      if (!added) {
        const uint32_t gap = i - it->second;
        if (gap <= m / 2) ++gaps[gap];
        it->second = i;
      }
    }
    std::vector<std::pair<uint32_t, uint32_t>> by_count;  // (count, gap)
    for (const auto& [gap, count] : gaps)
      if (count >= 2 || gap <= 8) by_count.emplace_back(count, gap);
    std::sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    for (size_t p = 1; p <= std::min<size_t>(8, m / 2); ++p) periods.push_back(p);
    for (size_t k = 0; k < by_count.size() && periods.size() < 72; ++k)
      if (by_count[k].second > 8) periods.push_back(by_count[k].second);
  }
  // Runs of one period: positions i with label[i] == label[i + p] in a row.
  std::vector<Candidate> cands;
  for (size_t p : periods) {
    size_t i = 0;
    while (i + p < m) {
      if (label[i] != label[i + p]) {
        ++i;
        continue;
      }
      size_t b = i;
      while (b + p < m && label[b] == label[b + p]) ++b;
      const size_t count = (b - i + p) / p;
      if (count >= 2 && count * p >= kMinCovered) cands.push_back({uint32_t(i), uint32_t(p), uint32_t(count)});
      i = b;
    }
  }

  // The edges inside one copy, and from one copy to the next, must be the
  // same for every copy; anything else crossing copies breaks the repeat.
  // How many leading copies repeat cleanly (at least 1).
  using EdgeKey = std::tuple<uint32_t, uint32_t, uint8_t>;  // from place, to place, type
  size_t work = 0;                                          // edges looked at, bounded
  const size_t max_work = size_t(50) << 20;
  auto clean_prefix = [&](uint32_t start, uint32_t p, uint32_t count, bool* chained) -> uint32_t {
    const uint32_t end = start + p * count;
    std::vector<std::vector<EdgeKey>> inside(count), next(count);
    std::vector<char> broken(count, 0);  // an edge skips a copy, or goes back
    for (uint32_t q = start; q < end; ++q) {
      const uint32_t v = order[q];
      const uint32_t cv = (q - start) / p, jv = (q - start) % p;
      for (const auto& d : g.nodes[v].dependencies) {
        ++work;
        if (d.from >= n || pos[d.from] == kNone) continue;
        const uint32_t qu = pos[d.from];
        if (qu < start || qu >= end) continue;
        const uint32_t cu = (qu - start) / p, ju = (qu - start) % p;
        if (cv == cu) inside[cu].emplace_back(ju, jv, uint8_t(d.type));
        else if (cv == cu + 1) next[cu].emplace_back(ju, jv, uint8_t(d.type));
        else broken[std::min(cu, cv)] = broken[std::max(cu, cv)] = 1;
      }
    }
    for (auto& x : inside) std::sort(x.begin(), x.end());
    for (auto& x : next) std::sort(x.begin(), x.end());
    uint32_t k = 1;
    if (broken[0]) return 1;
    while (k < count && !broken[k] && inside[k] == inside[0] && (k + 1 == count || k == 1 || next[k - 1] == next[0]))
      ++k;
    // The last copy's edges to a next copy are outside the repeat: the
    // chain test compares the copies before it.
    while (k >= 2 && next[k - 2] != next[0]) --k;
    *chained = !next[0].empty() && k >= 2;
    return k;
  };

  // Largest first; what does not repeat cleanly, or overlaps a repeat
  // taken, comes back as the pieces that might.
  auto smaller = [](const Candidate& a, const Candidate& b) {
    return std::make_tuple(a.covered(), b.period, b.start) < std::make_tuple(b.covered(), a.period, a.start);
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(smaller)> queue(smaller, std::move(cands));
  std::vector<char> taken(m, 0);
  std::vector<uint32_t> starts;  // per repeat: its first position in `order`
  std::set<std::tuple<uint32_t, uint32_t, uint32_t>> seen;
  while (!queue.empty() && work < max_work) {
    const Candidate c = queue.top();
    queue.pop();
    if (c.count < 2 || c.covered() < kMinCovered || !seen.insert({c.start, c.period, c.count}).second) continue;
    // Overlapping a repeat taken: the copies before it, and those after.
    uint32_t first_taken = kNone;
    for (uint32_t q = c.start; q < c.start + c.covered(); ++q)
      if (taken[q]) {
        first_taken = q;
        break;
      }
    if (first_taken != kNone) {
      const uint32_t before = (first_taken - c.start) / c.period;
      queue.push({c.start, c.period, before});
      uint32_t resume = first_taken;
      while (resume < c.start + c.covered() && taken[resume]) ++resume;
      const uint32_t skip = (resume - c.start + c.period - 1) / c.period;
      if (skip < c.count) queue.push({c.start + skip * c.period, c.period, c.count - skip});
      continue;
    }
    // A run of a block taken already, started elsewhere in the block (after
    // a copy that differs): its copies begin where the block's begin.
    uint32_t shift = 0;
    for (size_t r = 0; r < f.repeats.size() && !shift; ++r) {
      if (f.repeats[r].size != c.period) continue;
      const uint64_t* b = &label[starts[r]];
      const uint64_t* x = &label[c.start];
      for (uint32_t o = 1; o < c.period && !shift; ++o) {
        bool rotated = true;
        for (uint32_t i = 0; i < c.period && rotated; ++i) rotated = x[i] == b[(i + o) % c.period];
        if (rotated) shift = c.period - o;
      }
    }
    if (shift) {
      // As many whole copies as follow from there.
      const uint32_t from = c.start + shift;
      uint32_t count = 1;
      while (size_t(from) + size_t(count + 1) * c.period <= m &&
             std::equal(&label[from], &label[from] + c.period, &label[from + count * c.period]))
        ++count;
      queue.push({from, c.period, count});
      continue;
    }
    bool chained = false;
    const uint32_t clean = clean_prefix(c.start, c.period, c.count, &chained);
    if (clean < c.count) {
      // The clean copies, those after them, and all but the first (the
      // first copy may be the odd one: a chain's head).
      const uint32_t cut = std::max<uint32_t>(clean, 1);
      if (clean >= 2) queue.push({c.start, c.period, clean});
      queue.push({c.start + cut * c.period, c.period, c.count - cut});
      if (cut > 1) queue.push({c.start + c.period, c.period, c.count - 1});
      continue;
    }
    const uint32_t count = c.count;
    Repeat r;
    r.count = count;
    r.size = c.period;
    r.chained = chained;
    r.copies.resize(count);
    const uint32_t id = uint32_t(f.repeats.size());
    for (uint32_t k = 0; k < count; ++k)
      for (uint32_t j = 0; j < c.period; ++j) {
        const uint32_t q = c.start + k * c.period + j;
        const uint32_t v = order[q];
        taken[q] = 1;
        r.copies[k].push_back(v);
        f.repeat_of[v] = id, f.copy_of[v] = k, f.place_of[v] = j;
      }
    const Node& first = g.nodes[r.copies[0].front()];
    const Node& last = g.nodes[r.copies[0].back()];
    r.label = r.size == 1 ? node_name(first)
                          : "block of " + std::to_string(r.size) + " nodes (" + node_name(first) + " ... " +
                                node_name(last) + ")";
    if (name_by_modules(g, r))
      r.label = r.module_type + " (" + std::to_string(r.size) + (r.size == 1 ? " node" : " nodes") + " each)";
    if (name_by_modules(g, r))
      r.label = r.module_type + " (" + std::to_string(r.size) + (r.size == 1 ? " node" : " nodes") + " each)";
    f.repeats.push_back(std::move(r));
    starts.push_back(c.start);
  }
  find_odd_copies(g, order, label, taken, starts, f);
  return f;
}

std::string describe_folding(const Folding& f, size_t nodes) {
  if (f.repeats.empty()) return "";
  std::string s;
  for (size_t k = 0; k < f.repeats.size() && k < 4; ++k) {
    const Repeat& r = f.repeats[k];
    if (k) s += " + ";
    s += std::to_string(r.count) + " x " + r.label + (r.chained ? "" : " side by side");
  }
  if (f.repeats.size() > 4) s += " + " + std::to_string(f.repeats.size() - 4) + " more repeats";
  const size_t other = nodes - f.folded_nodes();
  s += " + " + plural(other, "other node", "other nodes");
  for (size_t k = 0; k < f.odd.size() && k < 3; ++k) {
    const OddCopy& o = f.odd[k];
    s += "; next to the " + std::to_string(f.repeats[o.repeat].count) + " x, one copy differs: " + o.difference +
         " (nodes " + std::to_string(o.nodes.front()) + ".." + std::to_string(o.nodes.back()) + ")";
  }
  return s;
}

}  // namespace graphscope
