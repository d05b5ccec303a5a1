#include "origin_view.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>

#include "text.h"

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
  std::map<std::string, ModuleShare> groups;
  std::map<std::string, std::set<std::string>> names;
  std::map<std::string, std::set<std::string>> types;
  for (const Node& n : g.nodes) {
    std::string key = n.origin ? module_group(*n.origin) : "";
    const bool none = key.empty();
    if (none) key = "(no module)";
    ModuleShare& s = groups[key];
    s.group = key;
    ++s.nodes;
    if (time && n.index < time->size() && (*time)[n.index] >= 0) s.time_us += (*time)[n.index];
    if (none) continue;
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
    const bool na = a.group == "(no module)", nb = b.group == "(no module)";
    if (na != nb) return nb;
    if (time && a.time_us != b.time_us) return a.time_us > b.time_us;
    return a.nodes > b.nodes;
  });
  return out;
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
  if (!c.with_module) return out;
  const auto shares = by_module(g);
  bool first = true;
  size_t shown = 0;
  for (const auto& s : shares) {
    if (++shown > 12) {
      std::snprintf(buf, sizeof buf, "%-14s ... and %zu more\n", "", shares.size() - 12);
      out += buf;
      break;
    }
    std::string what = s.group;
    if (s.instances > 1) what += " (" + std::to_string(s.instances) + " x " + (s.type.empty() ? "modules" : s.type) + ")";
    else if (!s.type.empty() && s.type != s.group) what += " (" + s.type + ")";
    std::snprintf(buf, sizeof buf, "%-14s %-56s %s\n", first ? "by module" : "", what.c_str(),
                  plural(s.nodes, "node", "nodes").c_str());
    out += buf;
    first = false;
  }
  return out;
}

}  // namespace graphscope
