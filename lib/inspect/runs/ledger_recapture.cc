// A family's members, each against the one captured before it at the same
// place (issue 46's re-captures: torch.compile recording a function again
// for a new shape, a serving engine's next bucket): what diff_graphs finds,
// counted by what changed. No CUDA header.
#include <algorithm>
#include <map>
#include <tuple>

#include "../analysis/diff.h"
#include "../core/text.h"
#include "ledger_parts.h"

namespace graphscope {

LedgerRecapture recapture_of(const GraphDocument& previous, const GraphDocument& g, size_t previous_i, size_t g_i) {
  const GraphDiff d = diff_graphs(previous, g);
  LedgerRecapture r;
  r.previous = previous_i, r.graph = g_i;
  for (const NodeGroup& n : d.root.removed) r.removed += n.nodes.size();
  for (const NodeGroup& n : d.root.added) r.added += n.nodes.size();
  std::map<std::tuple<std::string, std::string, std::string>, uint64_t> changes;
  for (const ChangeGroup& c : d.root.changed)
    for (const FieldChange& f : c.changes) changes[{f.field, f.a, f.b}] += c.nodes.size();
  for (const auto& [k, nodes] : changes) r.changes.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), nodes});
  auto has_args = [](const GraphDocument& doc) {
    for (const Node& n : doc.root.nodes)
      if (n.kernel && !n.kernel->args.empty()) return true;
    return false;
  };
  r.args_compared = has_args(previous) && has_args(g);
  r.moved_addresses = d.root.moved_addresses, r.moved_address_nodes = d.root.moved_address_nodes;
  std::stable_sort(r.changes.begin(), r.changes.end(),
                   [](const LedgerRecapture::Change& a, const LedgerRecapture::Change& b) { return a.nodes > b.nodes; });
  return r;
}

namespace {
std::string graph_label(const LedgerGraph& g) {
  return "exec graph " + std::to_string(g.exec_graph_id) + (g.version > 1 ? " v" + std::to_string(g.version) : "");
}

// What changed, in words: " 3 nodes more, 4 nodes' grid 32x1x1 -> 16x1x1, ...".
std::string changed_text(const LedgerRecapture& r) {
  constexpr size_t kChanges = 3;
  std::string line;
  {
    std::vector<std::string> parts;
    if (r.added) parts.push_back(std::to_string(r.added) + (r.added == 1 ? " node" : " nodes") + " more");
    if (r.removed) parts.push_back(std::to_string(r.removed) + (r.removed == 1 ? " node" : " nodes") + " fewer");
    for (size_t k = 0; k < r.changes.size() && k < kChanges; ++k) {
      const LedgerRecapture::Change& c = r.changes[k];
      parts.push_back(std::to_string(c.nodes) + (c.nodes == 1 ? " node's " : " nodes' ") + printable(c.field) + " " +
                      printable(c.before) + " -> " + printable(c.after));
    }
    if (r.changes.size() > kChanges)
      parts.push_back(std::to_string(r.changes.size() - kChanges) +
                      (r.changes.size() - kChanges == 1 ? " more change" : " more changes"));
    if (r.moved_addresses)
      parts.push_back("addresses in " + std::to_string(r.moved_addresses) +
                      (r.moved_addresses == 1 ? " kernel argument" : " kernel arguments") + " of " +
                      std::to_string(r.moved_address_nodes) + (r.moved_address_nodes == 1 ? " node" : " nodes") +
                      " moved");
    if (parts.empty())
      parts.push_back(r.args_compared ? "nothing diff compares changed (kernel arguments included)"
                                      : "nothing diff compares changed (the documents record no kernel arguments)");
    for (size_t k = 0; k < parts.size(); ++k) line += (k ? ", " : " ") + parts[k];
  }
  return line;
}

void write_diff(JsonWriter& w, const LedgerRecapture& r) {
  w.key("graph").value(uint64_t(r.graph)).key("previous").value(uint64_t(r.previous));
  w.key("added").value(r.added).key("removed").value(r.removed);
  w.key("args_compared").value(r.args_compared).key("moved_addresses").value(r.moved_addresses);
  w.key("moved_address_nodes").value(r.moved_address_nodes).key("changes").begin_array();
  for (const LedgerRecapture::Change& c : r.changes)
    w.begin_object().key("field").value(c.field).key("before").value(c.before).key("after").value(c.after)
        .key("nodes").value(c.nodes).end_object();
  w.end_array();
}

}  // namespace

void format_recaptures(const LedgerProcess& p, const LedgerFamily& f, std::string& out) {
  constexpr size_t kShown = 8;
  for (size_t i = 0; i < f.recaptures.size() && i < kShown; ++i) {
    const LedgerRecapture& r = f.recaptures[i];
    out += "    " + graph_label(p.graphs[r.graph]) + " is " + graph_label(p.graphs[r.previous]) + " captured again:" +
           changed_text(r) + "\n";
  }
  if (f.recaptures.size() > kShown)
    out += "    and " + std::to_string(f.recaptures.size() - kShown) + " more captured again (--json has them)\n";
}

void write_recaptures(JsonWriter& w, const LedgerFamily& f) {
  if (f.recaptures.empty()) return;
  w.key("recaptures").begin_array();
  for (const LedgerRecapture& r : f.recaptures) {
    w.begin_object();
    write_diff(w, r);
    w.end_object();
  }
  w.end_array();
}

void format_updates(const LedgerProcess& p, std::string& out) {
  if (p.updates.empty() && p.unchanged_updates.empty() && p.updates_not_recorded.empty()) return;
  constexpr size_t kShown = 12;
  out += "  exec graphs changed after instantiation (each version against the one before):\n";
  // Versions of one exec graph in a row that changed alike (NVIDIA's
  // jacobiCudaGraphs swaps two pointers at every step): one line.
  size_t shown = 0, i = 0;
  while (i < p.updates.size() && shown < kShown) {
    const LedgerUpdate& u = p.updates[i];
    const std::string what = changed_text(u.diff);
    size_t j = i + 1;
    while (j < p.updates.size() && p.graphs[p.updates[j].diff.graph].exec_graph_id ==
                                       p.graphs[u.diff.graph].exec_graph_id &&
           p.updates[j].updated_by == u.updated_by && p.updates[j].not_recorded.empty() && u.not_recorded.empty() &&
           changed_text(p.updates[j].diff) == what)
      ++j;
    std::string by;
    for (size_t k = 0; k < u.updated_by.size(); ++k) by += (k ? ", " : "") + printable(u.updated_by[k]);
    std::string label = graph_label(p.graphs[u.diff.graph]);
    if (j - i > 1)
      label += "-v" + std::to_string(p.graphs[p.updates[j - 1].diff.graph].version) + " (" +
               std::to_string(j - i) + " versions, each";
    else if (!by.empty())
      label += " (";
    if (!by.empty()) label += (j - i > 1 ? " by " : "") + by;
    if (j - i > 1 || !by.empty()) label += ")";
    out += "    " + label + ":" + what + "\n";
    for (const std::string& n : u.not_recorded) out += "      not recorded: " + printable(n) + "\n";
    ++shown;
    i = j;
  }
  if (i < p.updates.size())
    out += "    and " + std::to_string(p.updates.size() - i) + " more versions (--json has them)\n";
  // Updates that changed nothing: one line an exec graph, however many.
  for (const auto& [id, calls] : p.unchanged_updates)
    out += "    exec graph " + std::to_string(id) + ": " + std::to_string(calls) +
           (calls == 1 ? " update call" : " update calls") + " changed nothing recorded\n";
  for (const auto& [id, calls] : p.updates_not_recorded)
    out += "    exec graph " + std::to_string(id) + ": " + std::to_string(calls) +
           (calls == 1 ? " update call" : " update calls") + " after its last recorded version, not recorded\n";
}

void write_updates(JsonWriter& w, const LedgerProcess& p) {
  if (p.updates.empty() && p.unchanged_updates.empty() && p.updates_not_recorded.empty()) return;
  w.key("updates").begin_array();
  for (const LedgerUpdate& u : p.updates) {
    w.begin_object();
    write_diff(w, u.diff);
    w.key("updated_by").begin_array();
    for (const std::string& s : u.updated_by) w.value(s);
    w.end_array();
    if (!u.not_recorded.empty()) {
      w.key("not_recorded").begin_array();
      for (const std::string& s : u.not_recorded) w.value(s);
      w.end_array();
    }
    w.end_object();
  }
  w.end_array();
  w.key("unchanged_updates").begin_array();
  for (const auto& [id, calls] : p.unchanged_updates)
    w.begin_object().key("exec_graph_id").value(uint64_t(id)).key("calls").value(calls).end_object();
  w.end_array();
  if (!p.updates_not_recorded.empty()) {
    w.key("updates_not_recorded").begin_array();
    for (const auto& [id, calls] : p.updates_not_recorded)
      w.begin_object().key("exec_graph_id").value(uint64_t(id)).key("calls").value(calls).end_object();
    w.end_array();
  }
}

}  // namespace graphscope
