#include "origin_view.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>

#include "../core/text.h"

namespace graphscope {

namespace {

// "model.layers.3.mlp" -> "model.layers.*.mlp"; whether it had an index.
bool star_indices(const std::string& name, std::string* out) {
  out->clear();
  bool any = false;
  size_t i = 0;
  while (i <= name.size()) {
    size_t j = name.find('.', i);
    if (j == std::string::npos) j = name.size();
    std::string part = name.substr(i, j - i);
    bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (!out->empty()) *out += '.';
    *out += digits ? "*" : part;
    any = any || digits;
    i = j + 1;
  }
  return any;
}

// "layer 3" -> "layer *": numbers that stand as words (after a space, a
// dot or the start; before a space, a dot or the end) become "*"; numbers
// inside names ("sm80", "program_id=4639") stay. Whether any did.
bool star_words(const std::string& text, std::string* out) {
  out->clear();
  bool any = false;
  for (size_t i = 0; i < text.size();) {
    const bool word_start = i == 0 || text[i - 1] == ' ' || text[i - 1] == '.';
    size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (word_start && j > i && (j == text.size() || text[j] == ' ' || text[j] == '.')) {
      *out += '*';
      any = true;
      i = j;
    } else {
      *out += text[i++];
    }
  }
  return any;
}

// The NVTX group of a node's ranges, and the range at its level: the ranges
// from the outermost down to the first one numbered ("forward / layer *"),
// else down to the `depth`th.
std::string range_group(const Origin& o, size_t depth, std::string* level = nullptr) {
  std::string key, starred;
  const size_t n = o.nvtx.size();
  for (size_t i = 0; i < n; ++i) {
    const bool numbered = star_words(o.nvtx[i].message, &starred);
    if (!key.empty()) key += " / ";
    key += starred;
    if (numbered || i + 1 == std::min(depth, n)) {
      if (level) *level = o.nvtx[i].message;
      break;
    }
  }
  return key;
}

bool any_module(const Graph& g) {
  for (const Node& n : g.nodes)
    if (n.origin && !n.origin->modules.empty()) return true;
  return false;
}

}  // namespace

std::string module_group(const Origin& o) {
  if (o.modules.empty()) return "";
  std::string starred;
  for (const auto& m : o.modules)
    if (star_indices(m.name, &starred)) return starred;
  const ModuleFrame& m = o.modules[std::min<size_t>(2, o.modules.size() - 1)];
  return m.name.empty() ? m.type : m.name;
}

OriginCounts count_origins(const Graph& g) {
  OriginCounts c;
  c.nodes = g.nodes.size();
  for (const Node& n : g.nodes) {
    const bool kernel = n.type == NodeType::kernel;
    c.kernels += kernel;
    if (!n.origin || n.origin->empty()) continue;
    const Origin& o = *n.origin;
    ++c.with_origin;
    c.with_module += !o.modules.empty();
    c.kernels_with_module += kernel && !o.modules.empty();
    c.with_python += !o.python.empty();
    c.with_nvtx += !o.nvtx.empty();
    c.with_native += bool(o.native);
  }
  return c;
}

std::vector<ModuleShare> by_module(const Graph& g, const std::vector<double>* time) {
  const bool ranges = !any_module(g);
  const std::string none_key = ranges ? "(no NVTX range)" : "(no module)";
  std::map<std::string, ModuleShare> groups;
  std::map<std::string, std::set<std::string>> names;
  std::map<std::string, std::set<std::string>> types;
  // Two ranges deep, unless that makes a group of nearly every node (XLA
  // names a range per operation): then the outermost alone.
  size_t depth = 2;
  if (ranges) {
    std::set<std::string> keys;
    size_t with = 0;
    for (const Node& n : g.nodes)
      if (n.origin && !n.origin->nvtx.empty()) keys.insert(range_group(*n.origin, 2)), ++with;
    if (keys.size() > 2 && 2 * keys.size() > with) depth = 1;
  }
  for (const Node& n : g.nodes) {
    std::string level;
    std::string key = !n.origin ? "" : ranges ? range_group(*n.origin, depth, &level) : module_group(*n.origin);
    const bool none = key.empty();
    if (none) key = none_key;
    ModuleShare& s = groups[key];
    s.group = key;
    s.none = none;
    s.range = ranges;
    ++s.nodes;
    if (time && n.index < time->size() && (*time)[n.index] >= 0) s.time_us += (*time)[n.index];
    if (none) continue;
    if (ranges) {
      names[key].insert(level);
      continue;
    }
    // The module at the group's level: the one whose starred name is the key.
    for (const auto& m : n.origin->modules) {
      std::string starred;
      star_indices(m.name, &starred);
      if (starred == key || (m.name.empty() ? m.type : m.name) == key) {
        names[key].insert(m.name);
        types[key].insert(m.type);
        break;
      }
    }
  }
  std::vector<ModuleShare> out;
  for (auto& [k, s] : groups) {
    s.instances = names[k].size();
    if (types[k].size() == 1) s.type = *types[k].begin();
    out.push_back(std::move(s));
  }
  std::stable_sort(out.begin(), out.end(), [&](const ModuleShare& a, const ModuleShare& b) {
    if (a.none != b.none) return b.none;
    if (time && a.time_us != b.time_us) return a.time_us > b.time_us;
    return a.nodes > b.nodes;
  });
  return out;
}

std::string group_kind(const Graph& g) {
  if (any_module(g)) return "module";
  for (const Node& n : g.nodes)
    if (n.origin && !n.origin->nvtx.empty()) return "NVTX range";
  return "";
}

std::string describe_share(const ModuleShare& s) {
  std::string what = s.group.size() > 56 ? s.group.substr(0, 53) + "..." : s.group;
  if (s.instances > 1 && s.range)
    what += " (" + std::to_string(s.instances) + " ranges)";
  else if (s.instances > 1)
    what += " (" + std::to_string(s.instances) + " x " + (s.type.empty() ? "modules" : s.type) + ")";
  else if (!s.type.empty() && s.type != s.group)
    what += " (" + s.type + ")";
  return what;
}

std::string common_module(const Graph& g, const std::vector<uint32_t>& nodes) {
  std::string common;
  bool first = true;
  for (uint32_t v : nodes) {
    if (v >= g.nodes.size() || !g.nodes[v].origin || g.nodes[v].origin->modules.empty()) continue;
    const std::string m = g.nodes[v].origin->module();
    if (first) {
      common = m, first = false;
      continue;
    }
    // The longest dotted prefix of both.
    size_t k = 0;
    while (k < common.size() && k < m.size() && common[k] == m[k]) ++k;
    if (!(k == common.size() && (k == m.size() || m[k] == '.'))) {
      while (k > 0 && !((k == common.size() || common[k] == '.') && (k == m.size() || m[k] == '.'))) --k;
      common.resize(k);
    }
  }
  return common;
}

std::string shared_origin(const Graph& g, const std::vector<uint32_t>& nodes) {
  std::vector<const Origin*> os;
  for (uint32_t v : nodes) {
    if (v >= g.nodes.size() || !g.nodes[v].origin || g.nodes[v].origin->empty()) return "";
    os.push_back(&*g.nodes[v].origin);
  }
  if (os.empty()) return "";
  // The value every origin gives, "" when one differs or gives none.
  auto same = [&](auto value) {
    const std::string first = value(*os[0]);
    for (const Origin* o : os)
      if (value(*o) != first) return std::string();
    return first;
  };
  std::vector<std::string> parts;
  if (std::string op = same([](const Origin& o) { return o.op; }); !op.empty()) parts.push_back(op);
  // Modules dot by dot: the parts all share, an index that differs as "*".
  bool modules = true;
  for (const Origin* o : os) modules = modules && !o->modules.empty();
  if (modules) {
    std::vector<std::vector<std::string>> names;
    for (const Origin* o : os) {
      names.emplace_back();
      const std::string m = o->module();
      for (size_t i = 0; i <= m.size();) {
        size_t j = std::min(m.find('.', i), m.size());
        names.back().push_back(m.substr(i, j - i));
        i = j + 1;
      }
    }
    std::string module;
    for (size_t k = 0;; ++k) {
      bool all = true, equal = true, digits = true;
      for (const auto& n : names) {
        all = all && k < n.size();
        if (!all) break;
        equal = equal && n[k] == names[0][k];
        digits = digits && !n[k].empty() && std::all_of(n[k].begin(), n[k].end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
      }
      if (!all || (!equal && !digits)) break;
      module += (k ? "." : "") + (equal ? names[0][k] : std::string("*"));
    }
    if (!module.empty()) parts.push_back(module);
  }
  if (parts.empty()) {
    std::string where = same([](const Origin& o) {
      if (o.python.empty()) return std::string();
      const SourceFrame& f = o.python.front();
      const size_t slash = f.file.find_last_of('/');
      return f.file.substr(slash == std::string::npos ? 0 : slash + 1) + ":" + std::to_string(f.line) +
             (f.function.empty() ? "" : " in " + f.function);
    });
    if (where.empty())
      where = same([](const Origin& o) {
        std::string r;
        for (const auto& x : o.nvtx) r += (r.empty() ? "" : " / ") + x.message;
        return r;
      });
    if (where.empty())
      where = same([](const Origin& o) { return o.native ? o.native->function : std::string(); });
    if (!where.empty()) parts.push_back(where);
  }
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : ", ") + p;
  return s;
}

std::string format_origins(const Graph& g) {
  const OriginCounts c = count_origins(g);
  if (!c.with_origin) return "";
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-14s %zu of %zu nodes: module %zu, Python %zu, NVTX %zu, native %zu", "origins",
                c.with_origin, c.nodes, c.with_module, c.with_python, c.with_nvtx, c.with_native);
  out += buf;
  if (c.kernels)
    std::snprintf(buf, sizeof buf, "; kernel nodes with a module: %zu of %zu (%.0f%%)\n", c.kernels_with_module,
                  c.kernels, 100.0 * double(c.kernels_with_module) / double(c.kernels)),
        out += buf;
  else
    out += "\n";
  const std::string kind = group_kind(g);
  if (kind.empty()) return out;
  const auto shares = by_module(g);
  const std::string heading = "by " + kind;
  bool first = true;
  size_t shown = 0;
  for (const auto& s : shares) {
    if (++shown > 12) {
      std::snprintf(buf, sizeof buf, "%-14s ... and %zu more\n", "", shares.size() - 12);
      out += buf;
      break;
    }
    // Module and range names as the document spells them, escaped for the
    // terminal and whole (a NUL in one does not end the line).
    out += padded(first ? heading : "", 14) + " " + padded(printable(describe_share(s)), 56) + " " +
           plural(s.nodes, "node", "nodes") + "\n";
    first = false;
  }
  return out;
}

}  // namespace graphscope
