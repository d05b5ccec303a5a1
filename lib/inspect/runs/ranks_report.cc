// Rendering of `graphscope ranks`: the text report, graphscope.ranks/1 JSON
// and the merged Chrome trace. ranks.cc computes.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
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

// A table of a row's ranks, a column each: the head ("rank N" over each
// column, `first` in the label's place) and a line of `text(x)` for the
// x-th rank of the row.
std::string rank_columns_head(const std::string& first, const RanksResult& r, const RankRow& row) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-22s", first.c_str());
  std::string head = buf;
  for (const RankMatch& m : row.ranks) {
    std::snprintf(buf, sizeof buf, " %14s", ("rank " + std::to_string(r.ranks[m.rank].rank)).c_str());
    head += buf;
  }
  return head + "\n";
}
template <typename Text>
std::string rank_columns_line(const char* label, size_t columns, Text text) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "  %-20s", label);
  std::string line = buf;
  for (size_t x = 0; x < columns; ++x) {
    std::snprintf(buf, sizeof buf, " %14s", std::string(text(x)).c_str());
    line += buf;
  }
  return line + "\n";
}

// Up to this many ranks a table has a column per rank; beyond, each line
// gives the spread over the ranks instead (a 3,000-rank job's table would be
// 45,000 characters wide).
constexpr size_t kRankColumns = 8;

// value(x) over the row's ranks (nullopt: that rank has none), as
// "min V (rank a)  median M  max W (rank b)", with `decimals`.
template <typename Value>
std::string rank_spread_line(const char* label, const RanksResult& r, const RankRow& row, Value value, int decimals) {
  std::vector<std::pair<double, int64_t>> v;  // (value, rank)
  for (size_t x = 0; x < row.ranks.size(); ++x)
    if (const std::optional<double> y = value(x)) v.emplace_back(*y, r.ranks[row.ranks[x].rank].rank);
  char buf[256];
  std::snprintf(buf, sizeof buf, "  %-22s", label);
  std::string line = buf;
  if (v.empty()) return line + "-\n";
  std::sort(v.begin(), v.end());
  // Counts keep a half where the median falls between two.
  auto num = [&](double y) { return fmt(decimals ? "%.3f" : (y == double(int64_t(y)) ? "%.0f" : "%.1f"), y); };
  const double median = v.size() % 2 ? v[v.size() / 2].first : (v[v.size() / 2 - 1].first + v[v.size() / 2].first) / 2;
  const std::string of = v.size() < row.ranks.size() ? std::to_string(v.size()) + " of " + std::to_string(row.ranks.size()) + " ranks" : "";
  if (v.front().first == v.back().first) return line + num(median) + " on " + (of.empty() ? "every rank" : of) + "\n";
  line += "min " + num(v.front().first) + " (rank " + std::to_string(v.front().second) + ")  median " + num(median) +
          "  max " + num(v.back().first) + " (rank " + std::to_string(v.back().second) + ")";
  if (!of.empty()) line += "  [" + of + "]";
  return line + "\n";
}

// Per graph, a column per rank: launches, makespan, critical path,
// fake / blocking, time in collectives.
std::string profiles(const RanksResult& r) {
  std::string out = "\nprofiles (medians over replays, microseconds)\n";
  for (size_t k = 0; k < r.rows.size(); ++k) {
    const RankRow& row = r.rows[k];
    const std::string name = row.reference ? "graph #" + std::to_string(*row.reference) : "extra graph";
    auto profile_of = [&](size_t x) -> const RankProfile* {
      const RankMatch& m = row.ranks[x];
      const RankGraph* g = m.graph ? &r.ranks[m.rank].graphs[*m.graph] : nullptr;
      return g && g->profile ? &*g->profile : nullptr;
    };
    if (row.ranks.size() > kRankColumns) {
      out += name + ", " + std::to_string(row.ranks.size()) + " ranks:\n";
      auto spread = [&](const char* label, int decimals, auto get) {
        out += rank_spread_line(label, r, row, [&](size_t x) -> std::optional<double> {
          const RankProfile* p = profile_of(x);
          return p ? get(*p) : std::nullopt;
        }, decimals);
      };
      spread("launches", 0, [](const RankProfile& p) -> std::optional<double> { return double(p.launches); });
      spread("makespan", 3, [](const RankProfile& p) -> std::optional<double> { return p.makespan_us; });
      spread("critical path", 3, [](const RankProfile& p) -> std::optional<double> { return p.critical_path_us; });
      spread("fake", 0, [](const RankProfile& p) -> std::optional<double> { return double(p.fake); });
      spread("blocking", 0, [](const RankProfile& p) -> std::optional<double> { return double(p.blocking); });
      spread("in collectives", 3, [](const RankProfile& p) -> std::optional<double> { return p.collective_us; });
      spread("waited at collectives", 3, [](const RankProfile& p) { return p.collective_wait_us; });
      spread("arrived last", 0, [](const RankProfile& p) -> std::optional<double> {
        if (!p.collective_wait_us) return std::nullopt;
        return double(p.arrived_last);
      });
      continue;
    }
    out += rank_columns_head(name, r, row);
    auto cell = [&](const char* label, auto text) {
      out += rank_columns_line(label, row.ranks.size(), [&](size_t x) {
        const RankMatch& m = row.ranks[x];
        const RankGraph* g = m.graph ? &r.ranks[m.rank].graphs[*m.graph] : nullptr;
        return g && g->profile ? text(*g->profile) : std::string("-");
      });
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

// "0-3, 5, 7-9": rank numbers, ascending, as ranges.
std::string rank_ranges(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  std::string s;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    s += (s.empty() ? "" : ", ") + std::to_string(v[i]) + (j > i ? "-" + std::to_string(v[j]) : "");
    i = j + 1;
  }
  return s;
}

std::string who(const std::vector<int64_t>& ranks) {
  return ranks.size() == 1 ? "rank " + std::to_string(ranks[0])
                           : "ranks " + rank_ranges(ranks) + " (" + std::to_string(ranks.size()) + ")";
}

std::string ordinal(size_t n) {
  const char* suffix = (n % 100 >= 11 && n % 100 <= 13) ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
  return std::to_string(n) + suffix;
}

std::string collective_text(const RankCollective& c) {
  return "node " + std::to_string(c.node) + (c.nested ? " (in its body)" : "") + " " + printable(c.name) +
         (c.origin.empty() ? "" : " (" + printable(c.origin) + ")");
}

// RankMatch::first_side for people.
std::string first_side_text(const std::string& side, int64_t rank, int64_t ref) {
  const std::string own = "rank " + std::to_string(rank), other = "rank " + std::to_string(ref);
  if (side == "added") return "only in " + own;
  if (side == "removed") return "only in " + other;
  if (side == "edge_added") return "an edge into it only in " + own;
  if (side == "edge_removed") return "an edge into it only in " + other;
  if (side == "edge_retyped") return "an edge into it changed type";
  return side;  // "changed"
}

// The lines under a differing rank: its first different node, and where
// its collectives part from the reference's.
std::string difference_detail(const RanksResult& r, const RankRow& row, const RankMatch& m) {
  std::string out;
  const RankProcess& p = r.ranks[m.rank];
  const RankProcess& ref = r.ranks[0];
  if (m.first_node) {
    const RankNode& n = *m.first_node;
    const std::string side = first_side_text(m.first_side, p.rank, ref.rank);
    out += "    first: node " + std::to_string(n.node) + " " + printable(n.name) + ", " + side +
           (n.origin.empty() ? "" : " (" + printable(n.origin) + ")") + "\n";
  }
  if (m.collectives_part_at) {
    const size_t k = *m.collectives_part_at;
    static const std::vector<RankCollective> none;
    const auto& a = row.reference ? ref.graphs[*row.reference].collective_kernels : none;
    const auto& b = m.graph ? p.graphs[*m.graph].collective_kernels : none;
    auto at = [&](const std::vector<RankCollective>& v, int64_t rank) {
      return "rank " + std::to_string(rank) + (k < v.size() ? " " + collective_text(v[k]) : " has no more");
    };
    out += "    collectives part at the " + ordinal(k + 1) + ": " + at(a, ref.rank) + "; " + at(b, p.rank) + "\n";
  }
  return out;
}

// Per graph, the collective kernels of each rank in capture order, ranks
// with the same list together.
std::string collective_lists(const RanksResult& r) {
  std::string out = "\ncollectives in capture order\n";
  for (size_t k = 0; k < r.rows.size(); ++k) {
    const RankRow& row = r.rows[k];
    out += row.reference ? "graph #" + std::to_string(*row.reference) + "\n" : "extra graph\n";
    std::vector<std::pair<const std::vector<RankCollective>*, std::vector<int64_t>>> lists;
    for (const RankMatch& m : row.ranks) {
      if (!m.graph) continue;
      const auto& list = r.ranks[m.rank].graphs[*m.graph].collective_kernels;
      auto same_list = [&](const auto& e) {
        const auto& o = *e.first;
        if (o.size() != list.size()) return false;
        for (size_t i = 0; i < o.size(); ++i)
          if (o[i].node != list[i].node || o[i].kernel != list[i].kernel || o[i].origin != list[i].origin) return false;
        return true;
      };
      auto it = std::find_if(lists.begin(), lists.end(), same_list);
      if (it == lists.end()) lists.push_back({&list, {}}), it = lists.end() - 1;
      it->second.push_back(r.ranks[m.rank].rank);
    }
    for (const auto& [list, ranks] : lists) {
      out += "  " + who(ranks) + ": " + plural(list->size(), "collective", "collectives") + "\n";
      for (size_t i = 0; i < list->size(); ++i)
        out += "    " + std::to_string(i + 1) + ". " + collective_text((*list)[i]) + "\n";
    }
  }
  return out;
}

// Per collective of each timed graph: how long each rank waited in it and
// which rank arrived last, a column per rank.
std::string waits_text(const RanksResult& r) {
  std::string out;
  for (const RankRow& row : r.rows) {
    const std::string name = row.reference ? "graph #" + std::to_string(*row.reference) : std::string("extra graph");
    if (row.waits.empty()) {
      if (!row.waits_note.empty()) out += name + ": collectives not timed (" + printable(row.waits_note) + ")\n";
      continue;
    }
    for (const CollectiveWait& w : row.waits) {
      const RankProcess& last = r.ranks[row.ranks[w.last].rank];
      out += name + ", collective " + std::to_string(w.position + 1) + ": " +
             (w.node ? "node " + std::to_string(*w.node) + " " : std::string()) + printable(w.name) + ", " +
             plural(w.replays, "replay", "replays") + "; rank " + std::to_string(last.rank) + " arrived last in " +
             std::to_string(w.arrived_last[w.last]) + " of " + std::to_string(w.replays) + "; skew " +
             fixed(w.skew_us) + "\n";
      if (row.ranks.size() > kRankColumns) {
        out += rank_spread_line("waited (median)", r, row, [&](size_t x) -> std::optional<double> { return w.wait_us[x]; }, 3);
        out += rank_spread_line("longest wait", r, row, [&](size_t x) -> std::optional<double> { return w.max_wait_us[x]; }, 3);
        out += rank_spread_line("arrived last", r, row,
                                [&](size_t x) -> std::optional<double> { return double(w.arrived_last[x]); }, 0);
        continue;
      }
      out += rank_columns_head("", r, row);
      auto line = [&](const char* label, auto text) { out += rank_columns_line(label, row.ranks.size(), text); };
      line("waited (median)", [&](size_t x) { return fixed(w.wait_us[x]); });
      line("longest wait", [&](size_t x) { return fixed(w.max_wait_us[x]); });
      line("arrived last", [&](size_t x) {
        return std::to_string(w.arrived_last[x]) + " of " + std::to_string(w.replays);
      });
    }
  }
  return out.empty() ? out : "\ncollective waits (medians over replays, microseconds)\n" + out;
}

}  // namespace

std::string format_ranks(const RanksResult& r) {
  std::string out = "ranks:";
  auto rank_text = [&](const RankProcess& p) {
    return "rank " + std::to_string(p.rank) + " (pid " + std::to_string(p.pid) + ", " + device_text(p) + ")";
  };
  if (r.ranks.size() <= kRankColumns) {
    for (size_t i = 0; i < r.ranks.size(); ++i) out += std::string(i ? ";" : "") + " " + rank_text(r.ranks[i]);
  } else {
    // Many ranks: how many, the first two and the last (--json lists all).
    out += " " + std::to_string(r.ranks.size()) + "; " + rank_text(r.ranks[0]) + "; " + rank_text(r.ranks[1]) +
           "; ...; " + rank_text(r.ranks.back());
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
          out += line + " " + printable(m.lines.front()) + "\n" + difference_detail(r, row, m);
          continue;
        }
        const RankGraph& b = p.graphs[*m.graph];
        line += " differs from rank " + std::to_string(ref.rank) + ": ";
        for (size_t i = 0; i < m.lines.size(); ++i) line += (i ? "; " : "") + printable(m.lines[i]);
        if (b.collectives != g.collectives)
          line += " (collectives " + std::to_string(b.collectives) + " vs " + std::to_string(g.collectives) + ")";
        if (m.paired_by == "structure" || *m.graph != *row.reference)
          line += " [its graph #" + std::to_string(*m.graph) + ", paired by " + m.paired_by + "]";
        out += line + "\n" + difference_detail(r, row, m);
      }
    } else {
      for (const RankMatch& m : row.ranks)
        if (m.graph) {
          const RankProcess& p = r.ranks[m.rank];
          out += "rank " + std::to_string(p.rank) + " graph #" + std::to_string(*m.graph) + " (" +
                 graph_text(p.graphs[*m.graph]) + "): " + printable(m.lines.front()) + "\n" +
                 difference_detail(r, row, m);
        }
    }
  }
  out += "result: " + ranks_result_line(r) + "\n";
  out += collective_lists(r);
  if (r.profiled) out += profiles(r) + waits_text(r);
  return out;
}

std::string write_ranks_json(const RanksResult& r) {
  JsonWriter w(3);
  w.begin_object();
  w.key("schema").value("graphscope.ranks/1");
  w.key("graphscope_version").value(GRAPHSCOPE_VERSION);
  w.key("run_dir").value(r.run_dir);
  w.key("same").value(r.same());
  w.key("first_difference");
  if (const auto& f = r.first_difference) {
    w.begin_object();
    w.key("row").value(uint64_t(f->row));
    w.key("graph");
    r.rows[f->row].reference ? w.value(uint64_t(*r.rows[f->row].reference)) : w.null();
    w.key("rank").value(r.ranks[f->rank].rank);
    w.end_object();
  } else {
    w.null();
  }
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
        w.key("collective_kernels").begin_array();
        for (const RankCollective& c : g.collective_kernels) {
          w.begin_object();
          w.key("node").value(uint64_t(c.node));
          if (c.nested) w.key("nested").value(true);
          w.key("name").value(c.name);
          w.key("kernel").value(c.kernel);
          if (!c.origin.empty()) w.key("origin").value(c.origin);
          w.end_object();
        }
        w.end_array();
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
      if (m.first_node) {
        w.key("first_node").begin_object();
        w.key("node").value(uint64_t(m.first_node->node));
        w.key("name").value(m.first_node->name);
        if (!m.first_node->origin.empty()) w.key("origin").value(m.first_node->origin);
        w.key("side").value(m.first_side);
        w.end_object();
      }
      if (m.collectives_part_at) w.key("collectives_part_at").value(uint64_t(*m.collectives_part_at));
      w.end_object();
    }
    w.end_array();
    if (!row.waits.empty()) {
      w.key("collective_waits").begin_array();
      for (const CollectiveWait& c : row.waits) {
        w.begin_object();
        w.key("position").value(uint64_t(c.position));
        w.key("name").value(c.name);
        if (c.node) w.key("node").value(uint64_t(*c.node));
        w.key("replays").value(uint64_t(c.replays));
        w.key("last_rank").value(r.ranks[row.ranks[c.last].rank].rank);
        w.key("skew_us").value(c.skew_us);
        w.key("ranks").begin_array();
        for (size_t x = 0; x < row.ranks.size(); ++x) {
          w.begin_object();
          w.key("rank").value(r.ranks[row.ranks[x].rank].rank);
          w.key("wait_us").value(c.wait_us[x]);
          w.key("max_wait_us").value(c.max_wait_us[x]);
          w.key("arrived_last").value(c.arrived_last[x]);
          w.end_object();
        }
        w.end_array();
        w.end_object();
      }
      w.end_array();
    }
    if (!row.waits_note.empty()) w.key("waits_note").value(row.waits_note);
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

std::string ranks_result_line(const RanksResult& r) {
  size_t differ = 0;
  for (const auto& row : r.rows) differ += !row.same();
  std::vector<int64_t> which;
  for (size_t i = 1; i < r.ranks.size(); ++i) {
    bool bad = false;
    for (const auto& row : r.rows) bad = bad || !row.ranks[i].same;
    if (bad) which.push_back(r.ranks[i].rank);
  }
  if (!differ)
    return "all " + std::to_string(r.ranks.size()) + " ranks agree on " + plural(r.rows.size(), "graph", "graphs");
  std::string listed;
  for (int64_t x : which) listed += (listed.empty() ? "" : ", ") + std::to_string(x);
  return plural(differ, "graph differs", "graphs differ") + " (" +
         (which.size() <= 8 ? std::string(which.size() == 1 ? "rank " : "ranks ") + listed : who(which)) +
         " against rank " + std::to_string(r.ranks[0].rank) + ")";
}

std::string write_ranks_page_json(const RanksResult& r,
                                  const std::function<int64_t(size_t rank, size_t graph)>& page_graph) {
  JsonWriter w(0);
  w.begin_object();
  w.key("same").value(r.same());
  w.key("result").value(ranks_result_line(r));
  w.key("notes").begin_array();
  for (const auto& n : r.notes) w.value(n);
  w.end_array();
  auto column = [&](const char* key, auto get) {
    w.key(key).begin_array();
    for (const RankProcess& p : r.ranks) get(p);
    w.end_array();
  };
  column("rank", [&](const RankProcess& p) { w.value(p.rank); });
  column("pid", [&](const RankProcess& p) { w.value(p.pid); });
  column("process", [&](const RankProcess& p) { w.value(uint64_t(p.process)); });
  column("device", [&](const RankProcess& p) { p.device ? w.value(*p.device) : w.value(int64_t(-1)); });
  w.key("first_difference");
  if (r.first_difference) {
    w.begin_object();
    w.key("row").value(uint64_t(r.first_difference->row));
    w.key("rank").value(uint64_t(r.first_difference->rank));
    w.end_object();
  } else {
    w.null();
  }
  w.key("graphs").begin_array();
  for (const RankRow& row : r.rows) {
    w.begin_object();
    w.key("index");
    row.reference ? w.value(uint64_t(*row.reference)) : w.null();
    w.key("same").value(row.same());
    w.key("graph").begin_array();
    for (const RankMatch& m : row.ranks) w.value(m.graph ? int64_t(*m.graph) : int64_t(-1));
    w.end_array();
    w.key("page").begin_array();
    for (const RankMatch& m : row.ranks) w.value(m.graph ? page_graph(m.rank, *m.graph) : int64_t(-1));
    w.end_array();
    // What ranks have in common here, once per kind: agreeing, or
    // differing the same way, with the same collective kernels.
    std::map<std::string, size_t> kinds;
    std::vector<size_t> kind_of;
    std::string list;
    for (const RankMatch& m : row.ranks) {
      JsonWriter k(0);
      k.begin_object();
      k.key("same").value(m.same);
      k.key("has_graph").value(m.graph.has_value());
      k.key("differences").begin_array();
      for (const auto& l : m.lines) k.value(l);
      k.end_array();
      if (m.first_node) {
        k.key("first_node").begin_object();
        k.key("node").value(uint64_t(m.first_node->node));
        k.key("name").value(m.first_node->name);
        k.key("origin").value(m.first_node->origin);
        k.key("side").value(m.first_side);
        k.end_object();
      }
      if (m.collectives_part_at) k.key("collectives_part_at").value(uint64_t(*m.collectives_part_at));
      k.key("collectives").begin_array();
      if (m.graph)
        for (const RankCollective& c : r.ranks[m.rank].graphs[*m.graph].collective_kernels) {
          k.begin_object();
          k.key("node").value(uint64_t(c.node));
          k.key("nested").value(c.nested);
          k.key("name").value(c.name);
          k.key("origin").value(c.origin);
          k.end_object();
        }
      k.end_array();
      k.end_object();
      std::string text(k.view());
      auto [it, fresh] = kinds.try_emplace(text, kinds.size());
      if (fresh) list += (list.empty() ? "" : ",") + text;
      kind_of.push_back(it->second);
    }
    w.key("kinds").begin_array().raw_elements(list).end_array();
    w.key("kind").begin_array();
    for (size_t k : kind_of) w.value(uint64_t(k));
    w.end_array();
    bool profiled = false;
    for (const RankMatch& m : row.ranks) profiled = profiled || (m.graph && r.ranks[m.rank].graphs[*m.graph].profile);
    w.key("profile");
    if (profiled) {
      w.begin_object();
      auto prof = [&](const char* key, auto get) {
        w.key(key).begin_array();
        for (const RankMatch& m : row.ranks) {
          const RankGraph* g = m.graph ? &r.ranks[m.rank].graphs[*m.graph] : nullptr;
          if (g && g->profile) get(*g->profile);
          else w.null();
        }
        w.end_array();
      };
      prof("launches", [&](const RankProfile& q) { w.value(q.launches); });
      prof("makespan_us", [&](const RankProfile& q) { w.value(q.makespan_us); });
      prof("critical_path_us", [&](const RankProfile& q) { w.value(q.critical_path_us); });
      prof("fake", [&](const RankProfile& q) { w.value(q.fake); });
      prof("blocking", [&](const RankProfile& q) { w.value(q.blocking); });
      prof("collective_us", [&](const RankProfile& q) { w.value(q.collective_us); });
      prof("collective_wait_us", [&](const RankProfile& q) {
        q.collective_wait_us ? w.value(*q.collective_wait_us) : w.null();
      });
      prof("collectives_timed", [&](const RankProfile& q) { w.value(q.collectives_timed); });
      prof("arrived_last", [&](const RankProfile& q) { w.value(q.arrived_last); });
      w.end_object();
    } else {
      w.null();
    }
    w.key("waits").begin_array();
    for (const CollectiveWait& c : row.waits) {
      w.begin_object();
      w.key("position").value(uint64_t(c.position));
      w.key("name").value(c.name);
      w.key("node");
      c.node ? w.value(uint64_t(*c.node)) : w.null();
      w.key("replays").value(uint64_t(c.replays));
      w.key("last").value(uint64_t(c.last));
      w.key("last_rank").value(r.ranks[row.ranks[c.last].rank].rank);
      w.key("skew_us").value(c.skew_us);
      w.key("wait_us").begin_array();
      for (double v : c.wait_us) w.value(v);
      w.end_array();
      w.key("max_wait_us").begin_array();
      for (double v : c.max_wait_us) w.value(v);
      w.end_array();
      w.key("arrived_last").begin_array();
      for (uint64_t v : c.arrived_last) w.value(v);
      w.end_array();
      w.end_object();
    }
    w.end_array();
    w.key("waits_note").value(row.waits_note);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return std::string(w.view());
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
