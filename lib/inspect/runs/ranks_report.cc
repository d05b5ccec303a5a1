// Rendering of `graphscope ranks`: the text report, graphscope.ranks/1 JSON
// and the merged Chrome trace. ranks.cc computes.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include "../formats/chrome_trace.h"
#include "../model/collective.h"
#include "../core/demangle.h"
#include "../core/error.h"
#include "../core/io.h"
#include "../core/json_writer.h"
#include "ranks.h"
#include "../core/text.h"

namespace graphscope {
namespace fs = std::filesystem;
namespace {

std::string device_text(const RankProcess& p) {
  std::string s = p.device ? "GPU " + std::to_string(*p.device) : std::string("GPU ?");
  if (!p.pci_bus_id.empty()) s += " " + printable(p.pci_bus_id);
  return s;
}

std::string graph_text(const RankGraph& g) {
  return "exec graph " + std::to_string(g.exec_graph_id) + (g.version > 1 ? " v" + std::to_string(g.version) : "") +
         ", " + plural(g.nodes, "node", "nodes") + ", " + plural(g.collectives, "collective", "collectives");
}

std::string fixed(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

// Per graph, a column per rank: launches, makespan, critical path,
// fake / blocking, time in collectives.
std::string profiles(const RanksResult& r) {
  std::string out = "\nprofiles (medians over replays, microseconds)\n";
  char buf[256];
  for (size_t k = 0; k < r.rows.size(); ++k) {
    const RankRow& row = r.rows[k];
    std::snprintf(buf, sizeof buf, "%-22s", row.reference ? ("graph #" + std::to_string(*row.reference)).c_str()
                                                           : "extra graph");
    std::string head = buf;
    for (const RankMatch& m : row.ranks) {
      std::snprintf(buf, sizeof buf, " %14s", ("rank " + std::to_string(r.ranks[m.rank].rank)).c_str());
      head += buf;
    }
    out += head + "\n";
    auto cell = [&](const char* label, auto text) {
      std::snprintf(buf, sizeof buf, "  %-20s", label);
      std::string line = buf;
      for (const RankMatch& m : row.ranks) {
        const RankGraph* g = m.graph ? &r.ranks[m.rank].graphs[*m.graph] : nullptr;
        std::snprintf(buf, sizeof buf, " %14s", g && g->profile ? text(*g->profile).c_str() : "-");
        line += buf;
      }
      out += line + "\n";
    };
    cell("launches", [](const RankProfile& p) { return std::to_string(p.launches); });
    cell("makespan", [](const RankProfile& p) { return fixed(p.makespan_us); });
    cell("critical path", [](const RankProfile& p) { return fixed(p.critical_path_us); });
    cell("fake / blocking", [](const RankProfile& p) { return std::to_string(p.fake) + " / " + std::to_string(p.blocking); });
    cell("in collectives", [](const RankProfile& p) { return fixed(p.collective_us); });
    // Waits at collectives, when the ranks' traces pair them.
    const RankProfile* timed = nullptr;
    for (const RankMatch& m : row.ranks)
      if (m.graph && r.ranks[m.rank].graphs[*m.graph].profile &&
          r.ranks[m.rank].graphs[*m.graph].profile->collective_wait_us)
        timed = &*r.ranks[m.rank].graphs[*m.graph].profile;
    if (!timed) continue;
    cell("waited at collectives", [](const RankProfile& p) {
      return p.collective_wait_us ? fixed(*p.collective_wait_us) : std::string("-");
    });
    cell("arrived last", [](const RankProfile& p) {
      return std::to_string(p.arrived_last) + " of " + std::to_string(p.collectives_timed);
    });
  }
  return out;
}

}  // namespace

std::string format_ranks(const RanksResult& r) {
  std::string out = "ranks:";
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    const RankProcess& p = r.ranks[i];
    out += std::string(i ? ";" : "") + " rank " + std::to_string(p.rank) + " (pid " + std::to_string(p.pid) + ", " +
           device_text(p) + ")";
  }
  out += "\n";
  // Notes and difference lines name kernels and files from the ranks'
  // documents: escaped for the terminal (printable).
  for (const auto& n : r.notes) out += "note: " + printable(n) + "\n";
  const RankProcess& ref = r.ranks[0];
  for (const RankRow& row : r.rows) {
    if (row.reference) {
      const RankGraph& g = ref.graphs[*row.reference];
      const std::string name = "graph #" + std::to_string(*row.reference);
      if (row.same()) {
        out += name + ": all " + std::to_string(r.ranks.size()) + " ranks agree (" + plural(g.nodes, "node", "nodes") +
               ", " + plural(g.collectives, "collective", "collectives") + ")\n";
        continue;
      }
      out += name + " (rank " + std::to_string(ref.rank) + ": " + graph_text(g) + "):\n";
      for (const RankMatch& m : row.ranks) {
        if (m.same) continue;
        const RankProcess& p = r.ranks[m.rank];
        std::string line = "  rank " + std::to_string(p.rank);
        if (!m.graph) {
          out += line + " " + printable(m.lines.front()) + "\n";
          continue;
        }
        const RankGraph& b = p.graphs[*m.graph];
        line += " differs from rank " + std::to_string(ref.rank) + ": ";
        for (size_t i = 0; i < m.lines.size(); ++i) line += (i ? "; " : "") + printable(m.lines[i]);
        if (b.collectives != g.collectives)
          line += " (collectives " + std::to_string(b.collectives) + " vs " + std::to_string(g.collectives) + ")";
        if (m.paired_by == "structure" || *m.graph != *row.reference)
          line += " [its graph #" + std::to_string(*m.graph) + ", paired by " + m.paired_by + "]";
        out += line + "\n";
      }
    } else {
      for (const RankMatch& m : row.ranks)
        if (m.graph) {
          const RankProcess& p = r.ranks[m.rank];
          out += "rank " + std::to_string(p.rank) + " graph #" + std::to_string(*m.graph) + " (" +
                 graph_text(p.graphs[*m.graph]) + "): " + printable(m.lines.front()) + "\n";
        }
    }
  }
  size_t differ = 0;
  for (const auto& row : r.rows) differ += !row.same();
  std::vector<std::string> which;
  for (size_t i = 1; i < r.ranks.size(); ++i) {
    bool bad = false;
    for (const auto& row : r.rows) bad = bad || !row.ranks[i].same;
    if (bad) which.push_back(std::to_string(r.ranks[i].rank));
  }
  std::string who;
  for (const auto& w : which) who += (who.empty() ? "" : ", ") + w;
  out += differ ? "result: " + plural(differ, "graph differs", "graphs differ") + " (rank" +
                      (which.size() == 1 ? " " : "s ") + who + " against rank " + std::to_string(ref.rank) + ")\n"
                : "result: all " + std::to_string(r.ranks.size()) + " ranks agree on " +
                      plural(r.rows.size(), "graph", "graphs") + "\n";
  if (r.profiled) out += profiles(r);
  return out;
}

std::string write_ranks_json(const RanksResult& r) {
  JsonWriter w(3);
  w.begin_object();
  w.key("schema").value("graphscope.ranks/1");
  w.key("graphscope_version").value(GRAPHSCOPE_VERSION);
  w.key("run_dir").value(r.run_dir);
  w.key("same").value(r.same());
  w.key("ranks").begin_array();
  for (const RankProcess& p : r.ranks) {
    w.begin_object();
    w.key("rank").value(p.rank);
    if (p.local_rank) w.key("local_rank").value(*p.local_rank);
    if (p.world_size) w.key("world_size").value(*p.world_size);
    w.key("source").value(p.source);
    w.key("pid").value(p.pid);
    w.key("dir").value(p.dir);
    if (p.device) w.key("device").value(*p.device);
    if (!p.device_name.empty()) w.key("device_name").value(p.device_name);
    if (!p.pci_bus_id.empty()) w.key("pci_bus_id").value(p.pci_bus_id);
    w.key("graphs").value(uint64_t(p.graphs.size()));
    w.end_object();
  }
  w.end_array();
  w.key("graphs").begin_array();
  for (const RankRow& row : r.rows) {
    w.begin_object();
    w.key("index");
    row.reference ? w.value(uint64_t(*row.reference)) : w.null();
    w.key("same").value(row.same());
    w.key("ranks").begin_array();
    for (const RankMatch& m : row.ranks) {
      const RankProcess& p = r.ranks[m.rank];
      w.begin_object();
      w.key("rank").value(p.rank);
      w.key("graph");
      m.graph ? w.value(uint64_t(*m.graph)) : w.null();
      if (m.graph) {
        const RankGraph& g = p.graphs[*m.graph];
        w.key("exec_graph_id").value(uint64_t(g.exec_graph_id));
        w.key("file").value(g.file);
        w.key("nodes").value(uint64_t(g.nodes));
        w.key("collectives").value(uint64_t(g.collectives));
        if (!m.paired_by.empty()) w.key("paired_by").value(m.paired_by);
        if (const auto& q = g.profile) {
          w.key("profile").begin_object();
          w.key("launches").value(q->launches);
          w.key("makespan_us").value(q->makespan_us);
          w.key("critical_path_us").value(q->critical_path_us);
          w.key("fake").value(q->fake);
          w.key("blocking").value(q->blocking);
          w.key("collective_us").value(q->collective_us);
          if (q->collective_wait_us) {
            w.key("collective_wait_us").value(*q->collective_wait_us);
            w.key("collectives_timed").value(q->collectives_timed);
            w.key("arrived_last").value(q->arrived_last);
          }
          w.key("trace").value(q->trace_file);
          w.end_object();
        }
      }
      w.key("same").value(m.same);
      w.key("differences").begin_array();
      for (const auto& l : m.lines) w.value(l);
      w.end_array();
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.key("notes").begin_array();
  for (const auto& n : r.notes) w.value(n);
  w.end_array();
  w.end_object();
  std::string text(w.view());
  return text + "\n";
}

std::string merge_rank_traces(const RanksResult& r) {
  struct Part {
    const RankProcess* p;
    uint32_t exec_graph_id;
    const Trace& t;
  };
  // The traces compare_ranks read (once each, however many graphs name
  // them); a rank's trace named by several of its graphs is merged once.
  std::vector<Part> parts;
  std::set<std::pair<int64_t, const Trace*>> merged;
  uint64_t base = UINT64_MAX;
  for (const RankProcess& p : r.ranks)
    for (const RankGraph& g : p.graphs) {
      if (!g.profile) continue;
      if (!g.profile->trace) throw Error(ExitCode::bad_input, g.profile->trace_error, "");
      if (!merged.insert({p.rank, g.profile->trace.get()}).second) continue;
      parts.push_back({&p, g.exec_graph_id, *g.profile->trace});
      for (const Activity& a : parts.back().t.activities) base = std::min(base, a.start_ns);
    }
  if (parts.empty())
    throw Error(ExitCode::bad_input, r.run_dir, "no rank has a profiled graph; run the job with profile --exec");
  if (base == UINT64_MAX) base = 0;
  // Each rank's traces keep their own clock (CUPTI's, the same on one
  // host): one time base for all, so waits at collectives line up.
  JsonWriter w(1);
  w.begin_object();
  w.key("traceEvents").begin_array();
  for (const RankProcess& p : r.ranks) {
    w.begin_object().key("ph").value("M").key("name").value("process_name").key("pid").value(p.rank);
    w.key("tid").value(0).key("args").begin_object();
    w.key("name").value("rank " + std::to_string(p.rank) + " (pid " + std::to_string(p.pid) + ", " +
                        (p.device ? "GPU " + std::to_string(*p.device) : std::string("GPU ?")) + ")");
    w.end_object().end_object();
    w.begin_object().key("ph").value("M").key("name").value("process_sort_index").key("pid").value(p.rank);
    w.key("tid").value(0).key("args").begin_object().key("sort_index").value(p.rank).end_object().end_object();
  }
  // Each rank's streams, named.
  std::set<std::pair<int64_t, uint32_t>> named;
  for (const Part& part : parts)
    for (const Activity& a : part.t.activities)
      if (named.insert({part.p->rank, a.stream}).second) {
        w.begin_object().key("ph").value("M").key("name").value("thread_name").key("pid").value(part.p->rank);
        w.key("tid").value(uint64_t(a.stream)).key("args").begin_object();
        w.key("name").value("stream " + std::to_string(a.stream)).end_object().end_object();
      }
  for (const Part& part : parts) {
    for (const Activity& a : part.t.activities) {
      const char* cat = a.kind == ActivityKind::kernel   ? "kernel"
                        : a.kind == ActivityKind::memcpy ? "gpu_memcpy"
                        : a.kind == ActivityKind::memset ? "gpu_memset"
                        : a.kind == ActivityKind::host   ? "graph_host"
                                                         : "gpu_other";
      // Names as the rank's own trace shows them: demangled, the mangled
      // one in the arguments.
      const std::string& name = part.t.names[a.name];
      const std::string shown = demangle(name);
      w.begin_object().key("ph").value("X").key("cat").value(cat).key("name").value(shown);
      w.key("pid").value(part.p->rank).key("tid").value(uint64_t(a.stream));
      w.key("ts").value(double(a.start_ns - base) / 1000.0);
      w.key("dur").value(double(a.end_ns > a.start_ns ? a.end_ns - a.start_ns : 0) / 1000.0);
      w.key("args").begin_object();
      w.key("device").value(uint64_t(a.device)).key("stream").value(uint64_t(a.stream));
      w.key("correlation").value(uint64_t(a.correlation));
      w.key("graph id").value(uint64_t(a.graph_id.value_or(part.exec_graph_id)));
      w.key("rank").value(part.p->rank);
      if (shown != name) w.key("mangled name").value(name);
      if (a.kind == ActivityKind::kernel)
        if (std::string_view lib = collective_library(name); !lib.empty()) w.key("collective").value(lib);
      w.end_object().end_object();
    }
  }
  w.end_array();
  w.key("displayTimeUnit").value("ns");
  w.key("baseTimeNanoseconds").value(base);
  w.end_object();
  std::string text(w.view());
  return text + "\n";
}

}  // namespace graphscope
