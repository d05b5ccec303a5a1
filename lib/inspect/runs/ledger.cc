#include "ledger.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "../core/json_writer.h"
#include "../core/text.h"
#include "../formats/load.h"
#include "../model/graph.h"
#include "run_dir.h"

namespace graphscope {
namespace {

// Code written at run time by a compiler (TorchInductor's modules, under its
// cache directory): no place a user would recognise as theirs.
bool generated(const SourceFrame& f) { return f.file.find("torchinductor_") != std::string::npos; }

bool same_frame(const SourceFrame& a, const SourceFrame& b) {
  return a.line == b.line && a.file == b.file && a.function == b.function;
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A graph's nodes, edges and launch parameters in one string: two graphs
// with the same are the same executable graph.
std::string shape_key(const Graph& g) {
  std::string k;
  for (const Node& n : g.nodes) {
    k += std::to_string(int(n.type)) + ':' + n.kernel_name;
    if (n.kernel) {
      const KernelInfo& x = *n.kernel;
      k += '[' + std::to_string(x.grid.x) + ',' + std::to_string(x.grid.y) + ',' + std::to_string(x.grid.z) + ';' +
           std::to_string(x.block.x) + ',' + std::to_string(x.block.y) + ',' + std::to_string(x.block.z) + ';' +
           std::to_string(x.shared_mem_bytes) + ']';
    }
    if (n.memcpy) k += "c" + std::to_string(n.memcpy->bytes);
    if (n.memset) k += "s" + std::to_string(n.memset->bytes);
    if (n.mem_alloc) k += "a" + std::to_string(n.mem_alloc->bytes);
    for (const Dependency& d : n.dependencies) k += '<' + std::to_string(d.from) + '.' + std::to_string(int(d.type));
    k += '\n';
  }
  return k;
}

std::string us(double v) {
  char b[32];
  std::snprintf(b, sizeof b, v >= 1000 ? "%.2f ms" : "%.1f us", v >= 1000 ? v / 1000 : v);
  return b;
}

std::string bytes_text(uint64_t b) {
  char s[32];
  if (b >= (uint64_t(1) << 20)) std::snprintf(s, sizeof s, "%.1f MiB", double(b) / double(uint64_t(1) << 20));
  else if (b >= 1024) std::snprintf(s, sizeof s, "%.1f KiB", double(b) / 1024);
  else std::snprintf(s, sizeof s, "%llu B", static_cast<unsigned long long>(b));
  return s;
}

std::string graph_name(const LedgerGraph& g) {
  return "exec graph " + std::to_string(g.exec_graph_id) + (g.version > 1 ? " v" + std::to_string(g.version) : "");
}

std::string process_name(const LedgerProcess& p) {
  std::string s = p.rank ? "rank " + std::to_string(*p.rank) + " (pid " + std::to_string(p.pid) + ")"
                         : "pid " + std::to_string(p.pid);
  if (!p.command.empty()) {
    std::string c;
    for (const std::string& a : p.command) c += (c.empty() ? "" : " ") + a;
    s += " (" + printable(c.size() > 100 ? c.substr(0, 97) + "..." : c) + ")";
  }
  return s;
}

}  // namespace

std::string capture_site(const Graph& g) {
  // The outermost Python frames every node shares (stacks are innermost first).
  const std::vector<SourceFrame>* first = nullptr;
  size_t shared = 0;  // frames shared, counted from the outermost
  bool python = true;
  for (const Node& n : g.nodes) {
    const std::vector<SourceFrame>* s = n.origin ? &n.origin->python : nullptr;
    if (!s || s->empty()) {
      python = false;
      break;
    }
    if (!first) {
      first = s, shared = s->size();
      continue;
    }
    size_t k = 0;
    while (k < shared && k < s->size() && same_frame((*first)[first->size() - 1 - k], (*s)[s->size() - 1 - k])) ++k;
    shared = k;
  }
  if (python && first && shared) {
    // The innermost shared frame that is not generated code.
    for (size_t k = first->size() - shared; k < first->size(); ++k) {
      const SourceFrame& f = (*first)[k];
      if (!generated(f)) return base_name(f.file) + ":" + std::to_string(f.line) + " in " + f.function;
    }
  }
  // NVTX ranges every node shares, outermost first.
  std::vector<std::string> ranges;
  bool any = false;
  for (const Node& n : g.nodes) {
    std::vector<std::string> mine;
    if (n.origin)
      for (const NvtxRange& r : n.origin->nvtx) mine.push_back(r.message);
    if (!any) {
      ranges = mine, any = true;
      continue;
    }
    size_t k = 0;
    while (k < ranges.size() && k < mine.size() && ranges[k] == mine[k]) ++k;
    ranges.resize(k);
  }
  if (!ranges.empty()) {
    std::string s = "NVTX ";
    for (size_t i = 0; i < ranges.size(); ++i) s += (i ? " / " : "") + ranges[i];
    return s;
  }
  // The native function every node shares.
  std::string native;
  for (const Node& n : g.nodes) {
    if (!n.origin || !n.origin->native || n.origin->native->function.empty()) return "";
    if (native.empty()) native = n.origin->native->function;
    else if (native != n.origin->native->function) return "";
  }
  return native;
}

Ledger make_ledger(const std::string& run_dir) {
  RunDirectory dir(run_dir);
  const AttachRun run = dir.read_index();
  Ledger l;
  l.run_dir = run_dir;
  l.command = run.command;
  l.profile = run.profile;
  for (size_t p = 0; p < run.processes.size(); ++p) {
    const AttachRun::Process& proc = run.processes[p];
    LedgerProcess lp;
    lp.dir = proc.dir;
    lp.pid = proc.index.pid;
    if (proc.index.rank) lp.rank = proc.index.rank->rank;
    lp.command = proc.index.command_line;
    lp.launches_counted = proc.index.profiling;
    std::map<std::string, size_t> shapes;  // shape_key -> first graph with it
    for (size_t i = 0; i < proc.index.graphs.size(); ++i) {
      const AttachedGraph& a = proc.index.graphs[i];
      const RunFile file = dir.resolve(run, p, i, RunName::file);
      const GraphDocument doc = parse_graph(dir.read(file), file.path);
      LedgerGraph g;
      g.exec_graph_id = a.exec_graph_id;
      g.version = a.version;
      g.file = a.file;
      g.nodes = doc.root.nodes.size();
      for (const Node& n : doc.root.nodes) {
        if (n.type == NodeType::kernel) ++g.kernels;
        if (n.mem_alloc) g.alloc_bytes += n.mem_alloc->bytes;
      }
      g.site = capture_site(doc.root);
      if (lp.launches_counted) g.launches = a.launches;
      if (a.profiled) g.makespan_us = a.makespan_us;
      const auto [it, fresh] = shapes.emplace(shape_key(doc.root), lp.graphs.size());
      if (!fresh && g.nodes) g.identical_to = it->second;
      lp.graphs.push_back(std::move(g));
    }
    // Families: two or more graphs captured at one place, in index order.
    std::map<std::string, size_t> family_of;
    for (size_t i = 0; i < lp.graphs.size(); ++i) {
      const LedgerGraph& g = lp.graphs[i];
      if (g.site.empty() || g.version > 1) continue;
      auto [it, fresh] = family_of.emplace(g.site, lp.families.size());
      if (fresh) lp.families.push_back({g.site, {}});
      lp.families[it->second].graphs.push_back(i);
    }
    lp.families.erase(std::remove_if(lp.families.begin(), lp.families.end(),
                                     [](const LedgerFamily& f) { return f.graphs.size() < 2; }),
                      lp.families.end());
    l.processes.push_back(std::move(lp));
  }
  return l;
}

std::string format_ledger(const Ledger& l) {
  size_t graphs = 0;
  for (const LedgerProcess& p : l.processes) graphs += p.graphs.size();
  std::string out = "ledger: " + printable(l.run_dir) + " (" + (l.profile ? "profile --exec" : "capture --exec") + ", " +
                    plural(l.processes.size(), "process", "processes") + ", " + plural(graphs, "graph", "graphs") + ")\n";
  char buf[256];
  for (const LedgerProcess& p : l.processes) {
    if (p.graphs.empty()) continue;
    uint64_t launches = 0;
    for (const LedgerGraph& g : p.graphs) launches += g.launches.value_or(0);
    out += "\n" + process_name(p) + ": " + plural(p.graphs.size(), "graph", "graphs") +
           (p.launches_counted ? ", " + plural(launches, "launch", "launches") : "") + "\n";
    std::snprintf(buf, sizeof buf, "  %-18s %7s %9s %11s %11s %12s  %s\n", "graph", "nodes", "memory", "launches",
                  "each", "in replays", "captured at");
    out += buf;
    for (const LedgerGraph& g : p.graphs) {
      const std::string each = g.makespan_us ? us(*g.makespan_us) : "-";
      const std::string total = g.makespan_us && g.launches ? us(*g.makespan_us * double(*g.launches)) : "-";
      std::snprintf(buf, sizeof buf, "  %-18s %7llu %9s %11s %11s %12s  ", graph_name(g).c_str(),
                    static_cast<unsigned long long>(g.nodes), g.alloc_bytes ? bytes_text(g.alloc_bytes).c_str() : "-",
                    g.launches ? std::to_string(*g.launches).c_str() : "-", each.c_str(), total.c_str());
      out += buf + (g.site.empty() ? std::string("(no origin)") : printable(g.site)) + "\n";
    }
    for (const LedgerFamily& f : p.families) {
      out += "  family at " + printable(f.site) + ": " + plural(f.graphs.size(), "graph", "graphs") + " captured there (";
      for (size_t i = 0; i < f.graphs.size(); ++i) {
        const LedgerGraph& g = p.graphs[f.graphs[i]];
        out += (i ? ", " : "") + std::to_string(g.exec_graph_id) +
               (g.launches ? " x" + std::to_string(*g.launches) : std::string());
      }
      out += ")\n";
    }
    if (p.launches_counted) {
      std::string never;
      size_t n = 0;
      for (const LedgerGraph& g : p.graphs)
        if (g.launches && *g.launches == 0)
          never += std::string(n++ ? ", " : "") + graph_name(g) + " (" + plural(g.nodes, "node", "nodes") + ")";
      out += "  never replayed: " + (n ? never : std::string("none")) + "\n";
    }
    for (const LedgerGraph& g : p.graphs)
      if (g.identical_to)
        out += "  " + graph_name(g) + " is identical to " + graph_name(p.graphs[*g.identical_to]) +
               ": one executable graph would have done\n";
  }
  bool uncounted = false;
  for (const LedgerProcess& p : l.processes) uncounted = uncounted || (!p.launches_counted && !p.graphs.empty());
  if (uncounted) out += "\nlaunches: not counted by capture --exec (profile --exec counts them)\n";
  out += "not yet in the ledger: capture and instantiate times, PyTorch's pool memory, GPU work outside graphs\n";
  return out;
}

std::string write_ledger_json(const Ledger& l) {
  JsonWriter w(3);
  w.begin_object();
  w.key("schema").value("graphscope.ledger/1");
  w.key("graphscope_version").value(GRAPHSCOPE_VERSION);
  w.key("run_dir").value(l.run_dir);
  auto strings = [&](const char* key, const std::vector<std::string>& v) {
    w.key(key).begin_array();
    for (const std::string& a : v) w.value(a);
    w.end_array();
  };
  strings("command", l.command);
  w.key("profile").value(l.profile);
  w.key("processes").begin_array();
  for (const LedgerProcess& p : l.processes) {
    w.begin_object();
    w.key("dir").value(p.dir).key("pid").value(p.pid);
    if (p.rank) w.key("rank").value(*p.rank);
    strings("command", p.command);
    w.key("launches_counted").value(p.launches_counted);
    w.key("graphs").begin_array();
    for (const LedgerGraph& g : p.graphs) {
      w.begin_object();
      w.key("exec_graph_id").value(g.exec_graph_id).key("version").value(g.version).key("file").value(g.file);
      w.key("nodes").value(g.nodes).key("kernels").value(g.kernels).key("alloc_bytes").value(g.alloc_bytes);
      w.key("site").value(g.site);
      if (g.launches) w.key("launches").value(*g.launches);
      if (g.makespan_us) w.key("makespan_us").value(*g.makespan_us);
      if (g.identical_to) w.key("identical_to").value(uint64_t(*g.identical_to));
      w.end_object();
    }
    w.end_array();
    w.key("families").begin_array();
    for (const LedgerFamily& f : p.families) {
      w.begin_object().key("site").value(f.site).key("graphs").begin_array();
      for (size_t i : f.graphs) w.value(uint64_t(i));
      w.end_array().end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return std::string(w.view()) + "\n";
}

}  // namespace graphscope
