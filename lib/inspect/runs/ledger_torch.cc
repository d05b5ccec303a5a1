#include <algorithm>
#include <cstdio>

#include "../core/text.h"
#include "ledger_parts.h"

namespace graphscope {
namespace {

const char* kind_key(TorchLogRecord::Kind k) {
  switch (k) {
    case TorchLogRecord::Kind::skip: return "skip";
    case TorchLogRecord::Kind::rerecord_limit: return "rerecord_limit";
    case TorchLogRecord::Kind::sizes: return "sizes";
    case TorchLogRecord::Kind::other: break;
  }
  return "other";
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string seconds(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f s", s);
  return b;
}

std::string graph_name(const LedgerGraph& g) {
  return "exec graph " + std::to_string(g.exec_graph_id) + (g.version > 1 ? " v" + std::to_string(g.version) : "");
}

}  // namespace

LedgerTorch ledger_torch(const TorchLog& log, const LedgerProcess& p) {
  LedgerTorch t;
  for (const auto& [k, v] : log.counters) t.counters.emplace_back(k, v);
  for (const TorchLogRecord& r : log.records) {
    LedgerTorchRecord x;
    x.t_s = r.t_s;
    x.kind = kind_key(r.kind);
    x.level = r.level;
    x.headline = torch_log_headline(r);
    if (!r.user_file.empty())
      x.at = base_name(r.user_file) + ":" + std::to_string(r.user_line) +
             (r.user_function.empty() ? "" : " in " + r.user_function);
    if (r.kind == TorchLogRecord::Kind::skip || r.kind == TorchLogRecord::Kind::rerecord_limit) {
      // PyTorch runs the function without a graph from then on.
      x.caused = "no graph for " + (x.at.empty() ? std::string("that function") : x.at) +
                 ": it runs eager from " + seconds(r.t_s) + " on";
    } else {
      // The graph instantiated next (first version of an exec graph).
      for (size_t i = 0; i < p.graphs.size(); ++i) {
        const LedgerGraph& g = p.graphs[i];
        if (g.version != 1 || !g.created_s || *g.created_s < r.t_s) continue;
        if (!x.next_graph || *g.created_s < *p.graphs[*x.next_graph].created_s) x.next_graph = i;
      }
      x.caused = x.next_graph ? "the next graph: " + graph_name(p.graphs[*x.next_graph]) + " at " +
                                    seconds(*p.graphs[*x.next_graph].created_s)
                              : "no graph was made after it";
    }
    t.records.push_back(std::move(x));
  }
  // A family's members after its first, made later (cudagraph trees record
  // a graph per new shape or changed static input).
  for (size_t f = 0; f < p.families.size(); ++f) {
    const std::vector<size_t>& members = p.families[f].graphs;
    for (size_t k = 1; k < members.size(); ++k) t.rerecorded.emplace_back(f, members[k]);
  }
  return t;
}

void format_ledger_torch(const LedgerProcess& p, std::string& out) {
  if (!p.torch) return;
  const LedgerTorch& t = *p.torch;
  out += "  torch.compile (PyTorch's own records of its CUDA graphs):\n";
  if (t.records.empty()) out += "    no record (no skip, no re-recording limit, no recording logged)\n";
  // Every record above the debug level; PyTorch's debug records (why it
  // records or warms up a function), the first few.
  constexpr size_t kDebugShown = 12;
  size_t debug = 0;
  for (const LedgerTorchRecord& r : t.records) {
    if (r.level == "DEBUG" && ++debug > kDebugShown) continue;
    out += "    " + seconds(r.t_s) + "  " + printable(r.headline) + (r.at.empty() ? "" : " (" + printable(r.at) + ")") +
           "\n      -> " + printable(r.caused) + "\n";
  }
  if (debug > kDebugShown)
    out += "    and " + std::to_string(debug - kDebugShown) + " more of PyTorch's debug records (--json has them all)\n";
  for (size_t i = 0; i < t.rerecorded.size(); ++i) {
    const auto& [family, graph] = t.rerecorded[i];
    if (i == 0 || t.rerecorded[i - 1].first != family)
      out += "    recorded again at " + printable(p.families[family].site) + " after " +
             graph_name(p.graphs[p.families[family].graphs[0]]) + ":";
    const bool first = i == 0 || t.rerecorded[i - 1].first != family;
    out += (first ? " " : ", ") + graph_name(p.graphs[graph]);
    if (i + 1 == t.rerecorded.size() || t.rerecorded[i + 1].first != family) out += "\n";
  }
  if (!t.counters.empty()) {
    out += "    PyTorch's counters:";
    for (size_t i = 0; i < t.counters.size(); ++i)
      out += (i ? ", " : " ") + printable(t.counters[i].first) + " " + std::to_string(t.counters[i].second);
    out += "\n";
  }
}

void write_ledger_torch(JsonWriter& w, const LedgerTorch& t) {
  w.key("torch").begin_object();
  w.key("records").begin_array();
  for (const LedgerTorchRecord& r : t.records) {
    w.begin_object();
    w.key("t_s").value(r.t_s).key("kind").value(r.kind).key("level").value(r.level);
    w.key("headline").value(r.headline);
    if (!r.at.empty()) w.key("at").value(r.at);
    if (r.next_graph) w.key("next_graph").value(uint64_t(*r.next_graph));
    w.key("caused").value(r.caused);
    w.end_object();
  }
  w.end_array();
  w.key("rerecorded").begin_array();
  for (const auto& [family, graph] : t.rerecorded)
    w.begin_object().key("family").value(uint64_t(family)).key("graph").value(uint64_t(graph)).end_object();
  w.end_array();
  w.key("counters").begin_object();
  for (const auto& [k, v] : t.counters) w.key(k).value(v);
  w.end_object();
  w.end_object();
}

}  // namespace graphscope
