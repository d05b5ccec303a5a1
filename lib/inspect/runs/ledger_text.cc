// The ledger as text (ledger.h's format_ledger): per process a table of its
// graphs, their costs together, the families with the buckets never
// replayed and the fallbacks, then the GPU work outside graphs and its
// timeline; what the indexes do not hold is said once, at the end. Nothing
// here computes: make_ledger did.
#include <algorithm>
#include <cstdio>

#include "../core/demangle.h"
#include "../core/text.h"
#include "ledger_parts.h"

namespace graphscope {
namespace {

// A time given in microseconds: "152.1 us", "12.30 ms", "4.21 s".
std::string us(double v) {
  char b[32];
  if (v >= 1e6)
    std::snprintf(b, sizeof b, "%.2f s", v / 1e6);
  else if (v >= 1000)
    std::snprintf(b, sizeof b, "%.2f ms", v / 1000);
  else
    std::snprintf(b, sizeof b, "%.1f us", v);
  return b;
}

std::string ms(double v) {
  return us(v * 1000);
}

std::string bytes_text(uint64_t b) {
  char s[32];
  if (b >= (uint64_t(1) << 30))
    std::snprintf(s, sizeof s, "%.1f GiB", double(b) / double(uint64_t(1) << 30));
  else if (b >= (uint64_t(1) << 20))
    std::snprintf(s, sizeof s, "%.1f MiB", double(b) / double(uint64_t(1) << 20));
  else if (b >= 1024)
    std::snprintf(s, sizeof s, "%.1f KiB", double(b) / 1024);
  else
    std::snprintf(s, sizeof s, "%llu B", static_cast<unsigned long long>(b));
  return s;
}

std::string percent(double share) {
  return fmt("%.0f%%", share * 100);
}

std::string graph_name(const LedgerGraph& g) {
  return "exec graph " + std::to_string(g.exec_graph_id) +
         (g.version > 1 ? " v" + std::to_string(g.version) : "");
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

std::string right(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// How often a graph ran: its launches where counted, else its replays in the records.
std::optional<uint64_t> runs_of(const LedgerGraph& g) {
  return g.launches ? g.launches : g.replays;
}

// The graph table: the columns every ledger has, and those of costs only
// some indexes record, shown where some graph of the process has them.
void graph_table(const LedgerProcess& p, std::string& out) {
  struct Column {
    const char* head;
    size_t width;
    std::vector<std::string> cells;
    bool shown = true;
  };
  bool pool = false, capture = false, instantiate = false, replayed = false, estimated = false, each = false;
  for (const LedgerGraph& g : p.graphs) {
    each = each || g.makespan_us;
    pool = pool || g.capture_alloc_bytes;
    capture = capture || g.capture_ms;
    instantiate = instantiate || g.instantiate_ms;
    replayed = replayed || g.first_launch_s || g.replayed;
    estimated = estimated || (g.replay_gpu_us && g.replay_gpu_from != "records");
  }
  std::vector<Column> cols = {{"nodes", 7, {}},
                              {"memory", 9, {}},
                              {"pool", 9, {}, pool},
                              {"capture", 9, {}, capture},
                              {"instantiate", 11, {}, instantiate},
                              {"launches", 11, {}},
                              {"each", 11, {}, each},
                              {"in replays", 12, {}},
                              {"replayed", 11, {}, replayed}};
  for (const LedgerGraph& g : p.graphs) {
    std::string when = "-";
    if (g.first_launch_s && g.last_launch_s)
      when = fmt("%.1f", *g.first_launch_s) + "-" + fmt("%.1f s", *g.last_launch_s);
    else if (g.replayed)
      when = *g.replayed ? "yes" : "never";
    std::string total = "-";
    if (g.replay_gpu_us) total = (g.replay_gpu_from == "records" ? "" : "~") + us(*g.replay_gpu_us);
    const std::string cells[] = {std::to_string(g.nodes),
                                 g.alloc_bytes ? bytes_text(g.alloc_bytes) : "-",
                                 g.capture_alloc_bytes ? bytes_text(*g.capture_alloc_bytes) : "-",
                                 g.capture_ms ? ms(*g.capture_ms) : "-",
                                 g.instantiate_ms ? ms(*g.instantiate_ms) : "-",
                                 g.launches ? std::to_string(*g.launches) : "-",
                                 g.makespan_us ? us(*g.makespan_us) : "-",
                                 total,
                                 when};
    for (size_t c = 0; c < cols.size(); ++c) cols[c].cells.push_back(cells[c]);
  }
  out += "  " + padded("graph", 18);
  for (const Column& c : cols)
    if (c.shown) out += " " + right(c.head, c.width);
  out += "  captured at\n";
  for (size_t r = 0; r < p.graphs.size(); ++r) {
    const LedgerGraph& g = p.graphs[r];
    out += "  " + padded(graph_name(g), 18);
    for (const Column& c : cols)
      if (c.shown) out += " " + right(c.cells[r], c.width);
    out += "  " + (g.site.empty() ? std::string("(no origin)") : printable(g.site)) + "\n";
  }
  if (estimated) out += "  in replays: ~ launches x the median makespan of the replays profiled\n";
  if (pool)
    out += "  pool: device memory the driver allocated on the capturing thread while the graph was captured "
           "(PyTorch: its private pool's new segments)\n";
}

void costs(const LedgerProcess& p, std::string& out) {
  std::vector<std::string> cost;
  if (p.capture_ms) cost.push_back("capture " + ms(*p.capture_ms));
  if (p.instantiate_ms) cost.push_back("instantiate " + ms(*p.instantiate_ms));
  if (p.uploads)
    cost.push_back("upload " + ms(p.upload_ms) + " (" + plural(p.uploads, "call", "calls") + ")");
  if (!cost.empty()) {
    std::string line;
    for (const std::string& c : cost) line += (line.empty() ? "" : ", ") + c;
    out += "  cost: " + line + "\n";
  }
  std::vector<std::string> memory;
  if (p.capture_alloc_bytes)
    memory.push_back(bytes_text(*p.capture_alloc_bytes) + " allocated while capturing");
  if (p.alloc_bytes) memory.push_back(bytes_text(p.alloc_bytes) + " in memory alloc nodes");
  if (p.graph_mem_reserved_high || p.graph_mem_used_high)
    memory.push_back("graph memory high-water " + bytes_text(p.graph_mem_reserved_high.value_or(0)) +
                     " reserved, " + bytes_text(p.graph_mem_used_high.value_or(0)) + " used");
  if (!memory.empty()) {
    std::string line;
    for (const std::string& m : memory) line += (line.empty() ? "" : "; ") + m;
    out += "  memory: " + line + "\n";
  }
  if (!p.launches_missed.empty())
    out += "  launches: some may not be counted (" + printable(p.launches_missed) + ")\n";
}

// The buckets never replayed, with what they cost.
void never_replayed(const LedgerProcess& p, const LedgerFamily& f, std::string& out) {
  for (size_t i : f.never_replayed) {
    const LedgerGraph& g = p.graphs[i];
    std::string cost = g.capture_ms ? ms(*g.capture_ms) + " of capture" : "capture time not recorded";
    if (g.capture_alloc_bytes || g.alloc_bytes)
      cost += ", " + bytes_text(g.alloc_bytes + g.capture_alloc_bytes.value_or(0));
    out += "    bucket " + graph_name(g) + " never replayed: " + cost + "\n";
  }
}

// The fallback's headline: how often the family's code ran without its graphs.
void fallback_line(const LedgerFamily& f, std::string& out) {
  const LedgerFallback& b = *f.fallback;
  if (b.runs) {
    out += "    fallback: the family at " + printable(f.site) + " ran eager about " + std::to_string(b.runs) +
           " times after its graphs were captured (median over " +
           plural(b.kernels.size(), "kernel", "kernels") + " every member has";
    if (b.at_other_geometry) out += "; " + std::to_string(b.at_other_geometry) + " at geometries no member has";
    out += ")\n";
  } else {
    out += "    outside its graphs: the family's code at " + printable(f.site) +
           " launched work eager after its graphs were captured (not a whole run of their kernels)\n";
  }
  // Where it was called from, by the launch sites the run read.
  const size_t shown = std::min<size_t>(b.from.size(), 3);
  for (size_t i = 0; i < shown; ++i) {
    const LedgerFallback::From& x = b.from[i];
    out += "      from " + (x.call.empty() ? std::string("the family's own code") : printable(x.call)) + ": " +
           plural(x.launches_after_captures, "eager launch", "eager launches") + " after the captures, " +
           us(x.gpu_us) + " of GPU time\n";
  }
  if (b.from.size() > shown)
    out += "      and from " + plural(b.from.size() - shown, "more place", "more places") + "\n";
}

// A demangled native function as a place to read in a table: its return
// type and parameter list left out, at most 100 bytes.
std::string short_native(std::string f) {
  if (const size_t clone = f.find(" [clone "); clone != std::string::npos) f.resize(clone);
  const std::string whole = f;
  size_t end = f.size();
  while (end && f[end - 1] == ' ') --end;
  if (end >= 6 && f.compare(end - 6, 6, " const") == 0) end -= 6;
  if (end && f[end - 1] == ')') {
    int depth = 0;
    for (size_t i = end; i-- > 0;) {
      if (f[i] == ')') ++depth;
      else if (f[i] == '(' && --depth == 0) {
        // "(anonymous namespace)::f(...)": the list is the last group.
        if (i > 0) f.resize(i);
        break;
      }
    }
  }
  int depth = 0;
  size_t name_at = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    const char c = f[i];
    if (c == '<' || c == '(') ++depth;
    else if ((c == '>' || c == ')') && depth > 0) --depth;
    else if (c == ' ' && depth == 0) name_at = i + 1;
  }
  f = f.substr(name_at);
  // A lambda inside a function's parameter list's scope: the whole name.
  if (f.size() < 8 || f.rfind("const", 0) == 0) f = whole;
  if (f.size() > 100) f = f.substr(0, 97) + "...";
  return f;
}

// What tells the buckets apart, as the graphs show it.
void bucket_line(const LedgerProcess& p, const LedgerFamily& f, std::string& out) {
  if (f.bucket_kernel.empty()) return;
  KernelNamer names;
  names.add(f.bucket_kernel);
  std::string list;
  for (size_t i = 0; i < f.graphs.size() && i < f.bucket_blocks.size(); ++i)
    list += (i ? ", " : " ") + std::to_string(p.graphs[f.graphs[i]].exec_graph_id) + " " +
            std::to_string(f.bucket_blocks[i]);
  out += "    bucket sizes as the graphs show them (blocks of " + printable(names(f.bucket_kernel)) +
         "): exec graph" + list + "\n";
  if (f.uncaptured.empty()) return;
  // Its eager launches after the captures at sizes no bucket has.
  constexpr size_t kSizes = 12;
  std::string sizes;
  for (size_t i = 0; i < f.uncaptured.size() && i < kSizes; ++i)
    sizes += (i ? ", " : "") + std::to_string(f.uncaptured[i].first) + " (x" + std::to_string(f.uncaptured[i].second) + ")";
  if (f.uncaptured.size() > kSizes) sizes += " and " + std::to_string(f.uncaptured.size() - kSizes) + " more";
  out += "    ran eager after the captures at sizes no bucket was captured for (its blocks, launches): " + sizes + "\n";
}

void family(const LedgerProcess& p, const LedgerFamily& f, std::string& out) {
  bool counted = true;
  for (size_t i : f.graphs) counted = counted && runs_of(p.graphs[i]);
  out +=
      "  family at " + printable(f.site) + ": " + plural(f.graphs.size(), "graph", "graphs") + " (buckets)";
  out += counted ? ", runs per bucket: exec graph " : ": exec graphs ";
  for (size_t i = 0; i < f.graphs.size(); ++i) {
    const LedgerGraph& g = p.graphs[f.graphs[i]];
    out += (i ? ", " : "") + std::to_string(g.exec_graph_id) +
           (g.version > 1 ? " v" + std::to_string(g.version) : "");
    if (counted) out += " x" + std::to_string(*runs_of(g));
  }
  out += "\n";
  bucket_line(p, f, out);
  format_recaptures(p, f, out);
  never_replayed(p, f, out);
  for (size_t i : f.identical)
    out += "    bucket " + graph_name(p.graphs[i]) + " is identical to " +
           graph_name(p.graphs[*p.graphs[i].identical_to]) + ": one executable graph would have done\n";
  if (!f.fallback) return;
  fallback_line(f, out);
  const LedgerFallback& b = *f.fallback;
  const size_t shown = std::min<size_t>(b.by_member.size(), 5);
  for (size_t i = 0; i < shown; ++i)
    out += "      about " + std::to_string(b.by_member[i].second) + " at a geometry bucket " +
           graph_name(p.graphs[b.by_member[i].first]) + " has: the graph could have run\n";
  if (b.by_member.size() > shown)
    out += "      and at the geometries of " +
           plural(b.by_member.size() - shown, "more bucket", "more buckets") + "\n";
  if (b.by_member.empty() && b.at_member_geometry)
    out += "      about " + std::to_string(b.at_member_geometry) + " at geometries members have\n";
}

// A row of the eager tables: GPU time, launches, those after the captures
// ("-": the index does not say when they ended; "": not shown) and a label.
std::string eager_row(double gpu_us, uint64_t launches, const std::string& after, const std::string& label) {
  return "    " + right(us(gpu_us), 10) + " " + right(std::to_string(launches), 9) + " " + right(after, 14) + "  " +
         label + "\n";
}

std::string eager_header(const char* last) {
  return "    " + right("GPU time", 10) + " " + right("launches", 9) + " " + right("after captures", 14) + "  " + last +
         "\n";
}

void work(const LedgerProcess& p, const LedgerWork& w, std::string& out) {
  out += "  GPU work (" + printable(w.source) + ", " + fmt("%.1f", w.start_s) + "-" + fmt("%.1f s", w.end_s) +
         " after attach): busy " + us(w.busy_us);
  if (w.in_graph_share)
    out += "; in graphs " + percent(*w.in_graph_share) + " of GPU busy time (" + us(w.graph_us) + ")";
  out += ", eager " + us(w.eager_us) + "\n";
  if (w.misstamped_records)
    out += "  " + plural(w.misstamped_records, "eager record", "eager records") +
           " CUPTI stamped to end after the next work on their stream began (they claimed " + us(w.misstamped_us) +
           "): launches counted, durations left out\n";
  if (!w.top.empty()) {
    KernelNamer names;
    for (const LedgerEager& e : w.top)
      if (e.kind == "kernel") names.add(e.name);
    constexpr size_t kShown = 10;
    out += "  eager work by GPU time (launched outside any graph):\n";
    out += eager_header("name");
    uint64_t rest_launches = w.rest_launches;
    double rest_us = w.rest_us;
    for (size_t i = 0; i < w.top.size(); ++i) {
      const LedgerEager& e = w.top[i];
      if (i >= kShown) {
        rest_launches += e.launches, rest_us += e.gpu_us;
        continue;
      }
      std::string name = e.kind == "kernel" ? printable(names(e.name)) : printable(e.name);
      if (const auto& n = e.graph_node)
        name += " (the kernel of " + graph_name(p.graphs[n->graph]) + " node " + std::to_string(n->node) +
                ": " + printable(n->origin) + ")";
      // More than the GPU was busy in all: its records overlap one another,
      // or CUPTI stamped some wrong (an index summarized before records
      // stamped to end late were left out: misstamped_records).
      if (e.gpu_us > w.busy_us) name += " [its durations add up to more than the GPU was busy: overlapping or misstamped]";
      out += eager_row(e.gpu_us, e.launches, w.captures_end_s ? std::to_string(e.launches_after_captures) : "-", name);
    }
    if (rest_launches) out += eager_row(rest_us, rest_launches, "", "(the rest)");
  }
  if (w.sites_read) {
    out += "  eager work by origin (where each launch was made):\n";
    if (w.sites.empty()) out += "    (no eager launch had a place read)\n";
    else out += eager_header("where");
    constexpr size_t kShown = 12;
    uint64_t rest_launches = w.sites_rest_launches;
    double rest_us = w.sites_rest_us;
    for (size_t i = 0; i < w.sites.size(); ++i) {
      const LedgerSite& x = w.sites[i];
      if (i >= kShown) {
        rest_launches += x.launches, rest_us += x.gpu_us;
        continue;
      }
      const bool native = x.callers.empty() && x.where.find(" in ") == std::string::npos &&
                          x.where.rfind("NVTX ", 0) != 0;
      std::string where = printable(x.where.empty() ? std::string("(unknown)") : native ? short_native(x.where) : x.where);
      if (!x.module.empty()) where += " (" + printable(x.module) + ")";
      if (!x.callers.empty()) where += " <- " + printable(x.callers.front());
      if (x.family) where += " [the code of the family at " + printable(p.families[*x.family].site) + "]";
      out += eager_row(x.gpu_us, x.launches, w.captures_end_s ? std::to_string(x.launches_after_captures) : "-", where);
    }
    if (rest_launches) out += eager_row(rest_us, rest_launches, "", "(the rest)");
    if (w.unsited_launches) out += eager_row(w.unsited_us, w.unsited_launches, "", "(no place read for the launch)");
  }
  if (w.timeline.empty()) return;
  // A row per bin, or per run of bins where there are many.
  constexpr size_t kRows = 12;
  const size_t per = (w.timeline.size() + kRows - 1) / kRows;
  out += "  timeline (" + plural(w.timeline.size(), "bin", "bins") + " of " + fmt("%g s", w.bin_s) +
         (per > 1 ? ", " + std::to_string(per) + " a row" : std::string()) + "), from the first record\n";
  for (size_t r = 0; r * per < w.timeline.size(); ++r) {
    double graph = 0, eager = 0;
    for (size_t i = r * per; i < std::min(w.timeline.size(), (r + 1) * per); ++i)
      graph += w.timeline[i].graph_us, eager += w.timeline[i].eager_us;
    const double from = w.start_s + double(r * per) * w.bin_s;
    const double to = std::min(w.end_s, w.start_s + double((r + 1) * per) * w.bin_s);
    const double span_us = std::max(0.0, to - from) * 1e6;
    auto share = [&](double v) {
      return span_us > 0 ? " (" + right(percent(std::min(1.0, v / span_us)), 4) + ")" : "";
    };
    out += "    " + padded(fmt("%.1f", from) + "-" + fmt("%.1f s", to), 14) + "graphs " +
           right(us(graph), 10) + share(graph) + "  eager " + right(us(eager), 10) + share(eager);
    if (span_us > 0) out += "  idle " + percent(std::max(0.0, 1 - (graph + eager) / span_us));
    out += "\n";
  }
}

}  // namespace

std::string format_ledger(const Ledger& l) {
  size_t graphs = 0;
  for (const LedgerProcess& p : l.processes) graphs += p.graphs.size();
  std::string out =
      "ledger: " + printable(l.run_dir) + " (" + (l.profile ? "profile --exec" : "capture --exec") + ", " +
      plural(l.processes.size(), "process", "processes") + ", " + plural(graphs, "graph", "graphs") + ")\n";
  std::vector<std::string> not_recorded;
  for (const LedgerProcess& p : l.processes) {
    // A process without graphs shows only GPU work it had (a compile
    // worker, a launcher: none).
    if (p.graphs.empty() && (!p.work || p.work->eager_records + p.work->graph_records == 0)) continue;
    for (const std::string& n : p.not_recorded)
      if (std::find(not_recorded.begin(), not_recorded.end(), n) == not_recorded.end())
        not_recorded.push_back(n);
    uint64_t launches = 0;
    for (const LedgerGraph& g : p.graphs) launches += g.launches.value_or(0);
    out += "\n" + process_name(p) + ": " + plural(p.graphs.size(), "graph", "graphs") +
           (p.launches_counted ? ", " + plural(launches, "launch", "launches") : "") + "\n";
    if (!p.graphs.empty()) graph_table(p, out);
    costs(p, out);
    std::vector<bool> in_family(p.graphs.size());
    for (const LedgerFamily& f : p.families) {
      family(p, f, out);
      for (size_t i : f.graphs) in_family[i] = true;
    }
    bool known = p.launches_counted;
    for (const LedgerGraph& g : p.graphs) known = known || g.replayed;
    if (known && !p.graphs.empty()) {
      std::string never;
      size_t n = 0;
      for (const LedgerGraph& g : p.graphs)
        if (g.replayed == false)
          never +=
              std::string(n++ ? ", " : "") + graph_name(g) + " (" + plural(g.nodes, "node", "nodes") + ")";
      out += "  never replayed: " + (n ? never : std::string("none")) + "\n";
    }
    for (size_t i = 0; i < p.graphs.size(); ++i)
      if (p.graphs[i].identical_to && !in_family[i])
        out += "  " + graph_name(p.graphs[i]) + " is identical to " +
               graph_name(p.graphs[*p.graphs[i].identical_to]) + ": one executable graph would have done\n";
    format_updates(p, out);
    format_why(p, out);
    if (p.work) work(p, *p.work, out);
    format_ledger_torch(p, out);
  }
  if (!not_recorded.empty()) {
    out += "\n";
    for (const std::string& n : not_recorded) out += n + "\n";
  }
  return out;
}

std::string format_ledger_summary(const Ledger& l) {
  std::string out = "ledger (graphscope ledger " + printable(l.run_dir) + " shows it whole):\n";
  for (const LedgerProcess& p : l.processes) {
    if (p.graphs.empty()) continue;
    uint64_t launches = 0;
    for (const LedgerGraph& g : p.graphs) launches += g.launches.value_or(0);
    std::string line = "  " + (p.rank ? "rank " + std::to_string(*p.rank) + ", " : std::string()) + "pid " +
                       std::to_string(p.pid) + ": " + plural(p.graphs.size(), "graph", "graphs");
    if (p.launches_counted) line += ", " + plural(launches, "launch", "launches");
    if (p.capture_ms) line += "; capture " + ms(*p.capture_ms);
    if (p.instantiate_ms) line += ", instantiate " + ms(*p.instantiate_ms);
    if (p.work && p.work->in_graph_share)
      line += "; in graphs " + percent(*p.work->in_graph_share) + " of GPU busy time";
    out += line + "\n";
    for (const LedgerFamily& f : p.families) {
      never_replayed(p, f, out);
      if (f.fallback) fallback_line(f, out);
    }
  }
  return out;
}

}  // namespace graphscope
