// Why a run's graphs broke (issue 46): replays that touched memory freed
// since their graph's capture (input liveness), and the updates the driver
// refused, each node said from its exec graph's document. No CUDA header.
#include <algorithm>

#include "../core/demangle.h"
#include "../core/text.h"
#include "../model/graph.h"
#include "ledger_parts.h"

namespace graphscope {

namespace {

// "node 3 scale (Block.proj)": its kernel or type, and its module or line.
std::string node_text(const GraphDocument& doc, uint32_t i) {
  std::string s = "node " + std::to_string(i);
  if (i >= doc.root.nodes.size()) return s;
  const Node& n = doc.root.nodes[i];
  if (n.type == NodeType::kernel && !n.kernel_name.empty()) s += " " + short_kernel_name(demangle(n.kernel_name), 40);
  else s += " (" + std::string(to_string(n.type)) + ")";
  if (n.origin) {
    const std::string m = n.origin->module();
    if (!m.empty()) {
      s += " in " + m;
    } else if (!n.origin->python.empty()) {
      const SourceFrame& f = n.origin->python.front();
      const size_t slash = f.file.rfind('/');
      s += " at " + (slash == std::string::npos ? f.file : f.file.substr(slash + 1)) + ":" + std::to_string(f.line);
    }
  }
  return s;
}

const char* uses_of(const GraphDocument* doc, const LivenessFinding& f) {
  if (!doc || f.node >= doc->root.nodes.size()) return "uses";
  const Node& n = doc->root.nodes[f.node];
  if (n.type == NodeType::memcpy) return f.arg == 0 ? "reads" : "writes";
  if (n.type == NodeType::memset) return "writes";
  return "reads or writes";
}

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

}  // namespace

void why_of(const AttachIndex& index, const std::function<const GraphDocument&(size_t)>& doc, LedgerProcess& p) {
  // The first index entry of each exec graph (its document's node indices
  // are the ones the findings and failures name).
  auto entry_of = [&](std::optional<uint32_t> id) -> std::optional<size_t> {
    if (!id) return std::nullopt;
    for (size_t i = 0; i < index.graphs.size(); ++i)
      if (index.graphs[i].exec_graph_id == *id) return i;
    return std::nullopt;
  };
  auto document = [&](std::optional<uint32_t> id) -> const GraphDocument* {
    auto g = entry_of(id);
    if (!g) return nullptr;
    try {
      return &doc(*g);
    } catch (const std::exception&) {
      return nullptr;  // said where the graphs are read
    }
  };
  for (UpdateFailure u : index.update_failures) {
    if (u.from_node && u.from_node_text.empty()) {
      const GraphDocument* d = document(u.exec_graph_id);
      u.from_node_text = d ? node_text(*d, *u.from_node) : "node " + std::to_string(*u.from_node);
    }
    p.update_failures.push_back(std::move(u));
  }
  if (!index.liveness) return;
  const AttachLiveness& l = *index.liveness;
  LedgerLiveness out;
  out.mode = l.mode, out.watched = l.watched, out.torch = l.torch, out.dropped = l.dropped, out.notes = l.notes;
  for (const LivenessFinding& f : l.findings) {
    if (!f.replays) {
      ++out.unreplayed;
      continue;
    }
    const GraphDocument* d = document(f.exec_graph_id);
    out.findings.push_back({f, d ? node_text(*d, f.node) : "node " + std::to_string(f.node), uses_of(d, f)});
  }
  p.liveness = std::move(out);
}

void format_why(const LedgerProcess& p, std::string& out) {
  if (p.liveness) {
    const LedgerLiveness& l = *p.liveness;
    out += "  input liveness (--liveness=" + l.mode + "): " + plural(l.watched, "address", "addresses") +
           " watched in the graphs' arguments and copies" +
           (l.torch ? ", PyTorch's caching allocator watched" : "") + "; " +
           (l.findings.empty() ? std::string("no replay touched memory freed since its capture")
                               : plural(l.findings.size(), "finding", "findings")) +
           "\n";
    constexpr size_t kShown = 12;
    for (size_t i = 0; i < l.findings.size() && i < kShown; ++i) {
      const LivenessFinding& f = l.findings[i].f;
      std::string s = "    replay " + std::to_string(f.first_replay) + " of exec graph " +
                      std::to_string(f.exec_graph_id) + " " + l.findings[i].uses + " memory freed" +
                      (f.freed_at.empty() ? "" : " at " + printable(f.freed_at)) + " (" +
                      printable(l.findings[i].node) + ", argument " + std::to_string(f.arg);
      if (f.offset) s += " at byte " + std::to_string(f.offset);
      s += ", address " + hex(f.address);
      if (!f.allocated_at.empty()) s += "; allocated at " + printable(f.allocated_at);
      if (f.reused) s += "; handed out again" + (f.reused_at.empty() ? std::string() : " at " + printable(f.reused_at));
      s += ")";
      s += ": " + plural(f.replays, "launch", "launches") + " since the free";
      if (f.refused) s += ", " + std::to_string(f.refused) + " refused";
      if (f.addresses > 1) s += "; " + std::to_string(f.addresses) + " of the graph's addresses in that allocation";
      out += s + "\n";
    }
    if (l.findings.size() > kShown)
      out += "    and " + std::to_string(l.findings.size() - kShown) + " more (--json has them)\n";
    if (l.unreplayed)
      out += "    " + plural(l.unreplayed, "allocation", "allocations") + " a graph holds " +
             (l.unreplayed == 1 ? "was" : "were") + " freed while it lived, the graph not launched after: no harm done\n";
    if (l.dropped) out += "    " + std::to_string(l.dropped) + " findings past the first 1000 not kept\n";
    for (const std::string& n : l.notes) out += "    note: " + printable(n) + "\n";
  }
  if (!p.update_failures.empty()) {
    out += "  updates the driver refused:\n";
    for (const UpdateFailure& u : p.update_failures) {
      std::string s = "    " + std::string(u.exec_graph_id ? "exec graph " + std::to_string(*u.exec_graph_id) : "an exec graph") +
                      ": " + printable(u.call) + " failed with " + printable(u.error);
      if (!u.result.empty()) s += " (" + printable(u.result) + ")";
      if (!u.from_node_text.empty()) s += ", at its " + printable(u.from_node_text);
      if (!u.node_text.empty()) s += ", the offered graph's node " + printable(u.node_text);
      if (u.from_node_text.empty() && u.node_text.empty() && !u.result.empty()) s += "; the driver named no node";
      if (u.count > 1) s += ", " + std::to_string(u.count) + " times";
      out += s + "\n";
    }
  }
}

void write_why(JsonWriter& w, const LedgerProcess& p) {
  if (!p.update_failures.empty()) {
    w.key("update_failures").begin_array();
    for (const UpdateFailure& u : p.update_failures) {
      w.begin_object().key("exec_graph_id");
      u.exec_graph_id ? w.value(uint64_t(*u.exec_graph_id)) : w.null();
      w.key("call").value(u.call).key("error").value(u.error).key("result").value(u.result);
      w.key("from_node");
      u.from_node ? w.value(uint64_t(*u.from_node)) : w.null();
      w.key("from_node_text").value(u.from_node_text).key("node_text").value(u.node_text);
      w.key("count").value(u.count).key("first_s").value(u.first_s).end_object();
    }
    w.end_array();
  }
  if (!p.liveness) return;
  const LedgerLiveness& l = *p.liveness;
  w.key("liveness").begin_object().key("mode").value(l.mode).key("watched").value(l.watched);
  w.key("torch").value(l.torch).key("findings").begin_array();
  for (const LedgerLivenessFinding& x : l.findings) {
    const LivenessFinding& f = x.f;
    w.begin_object().key("exec_graph_id").value(uint64_t(f.exec_graph_id)).key("node").value(uint64_t(f.node));
    w.key("node_text").value(x.node).key("uses").value(x.uses).key("arg").value(uint64_t(f.arg));
    w.key("offset").value(uint64_t(f.offset)).key("address").value(f.address).key("source").value(f.source);
    w.key("allocated_at").value(f.allocated_at).key("freed_at").value(f.freed_at).key("reused").value(f.reused);
    w.key("reused_at").value(f.reused_at).key("first_replay").value(f.first_replay).key("replays").value(f.replays);
    w.key("refused").value(f.refused).key("addresses").value(f.addresses).end_object();
  }
  w.end_array().key("unreplayed").value(l.unreplayed).key("dropped").value(l.dropped).key("notes").begin_array();
  for (const std::string& n : l.notes) w.value(n);
  w.end_array().end_object();
}

}  // namespace graphscope
