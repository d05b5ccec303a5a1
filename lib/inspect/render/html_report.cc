#include "html_report.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "../core/demangle.h"
#include "../core/error.h"
#include "../analysis/fold.h"
#include "../core/json_writer.h"
#include "../core/stats.h"
#include "../model/lane.h"
#include "../model/origin_view.h"
#include "delay_scale.h"
#include "profile_report.h"
#include "../analysis/simulate.h"
#include "../analysis/summary.h"
#include "../core/text.h"

namespace graphscope {

// report.js and report.css, embedded at build time (report_assets.cc).
extern const char* const kReportScript;
extern const char* const kReportStyle;

namespace {

/// Strings of one page, each written once; columns hold their index.
class Strings {
 public:
  int64_t operator()(const std::string& s) {
    auto [it, fresh] = index_.try_emplace(s, int64_t(list_.size()));
    if (fresh) list_.push_back(&it->first);
    return it->second;
  }
  void write(JsonWriter& w) const {
    w.begin_array();
    for (const std::string* s : list_) w.value(*s);
    w.end_array();
  }

 private:
  std::unordered_map<std::string, int64_t> index_;
  std::vector<const std::string*> list_;
};

/// A column of numbers, written compactly: integers as they are, others
/// with at most three decimals, nothing for "none" (-1 stays -1).
class Column {
 public:
  void add(int64_t v) {
    sep();
    char buf[24];
    int n = std::snprintf(buf, sizeof buf, "%" PRId64, v);
    s_.append(buf, size_t(n));
  }
  void add(double v) {
    sep();
    if (!std::isfinite(v)) v = 0;
    char buf[40];
    int n = std::snprintf(buf, sizeof buf, "%.3f", v);
    std::string_view t(buf, size_t(n));
    while (t.back() == '0') t.remove_suffix(1);
    if (t.back() == '.') t.remove_suffix(1);
    if (t == "-0") t = "0";
    s_.append(t);
  }
  void add_null() {
    sep();
    s_ += "null";
  }
  void add_raw(std::string_view json) {
    sep();
    s_.append(json);
  }
  std::string done() const { return "[" + s_ + "]"; }

 private:
  void sep() {
    if (!s_.empty()) s_ += ',';
  }
  std::string s_;
};

std::string dim(const Dim3& d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

std::string bytes_text(uint64_t b) { return std::to_string(b) + (b == 1 ? " byte" : " bytes"); }

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

/// The short name a node is listed and searched by.
std::string short_name(const Node& n) {
  switch (n.type) {
    case NodeType::kernel: {
      std::string full = n.kernel && !n.kernel->demangled.empty() ? n.kernel->demangled : demangle(n.kernel_name);
      return full.empty() ? "kernel" : short_kernel_name(full);
    }
    case NodeType::memcpy: return "memcpy" + (n.memcpy ? " " + n.memcpy->kind : std::string());
    case NodeType::host:
      return n.host && !n.host->symbol.empty() ? "host " + short_kernel_name(n.host->symbol) : "host function";
    case NodeType::conditional: return "conditional " + n.conditional_type;
    case NodeType::unknown: return n.type_spelling.empty() ? "unknown" : n.type_spelling;
    default: return std::string(to_string(n.type));
  }
}

/// What the node does, in full: the demangled kernel name, and lines of its
/// geometry, sizes and bodies.
std::string what_text(const Node& n) {
  std::vector<std::string> lines;
  if (n.type == NodeType::kernel) {
    std::string full = n.kernel && !n.kernel->demangled.empty() ? n.kernel->demangled : demangle(n.kernel_name);
    lines.push_back(full.empty() ? "(kernel name unknown)" : full);
    if (!n.kernel_name.empty() && n.kernel_name != full) lines.push_back("mangled: " + n.kernel_name);
    if (n.kernel && n.kernel->geometry_known) {
      std::string g = "grid " + dim(n.kernel->grid) + "  block " + dim(n.kernel->block);
      if (n.kernel->cluster) g += "  cluster " + dim(*n.kernel->cluster);
      g += "  shared memory " + bytes_text(n.kernel->shared_mem_bytes);
      lines.push_back(g);
    } else {
      lines.push_back("geometry not recorded");
    }
  }
  if (n.memcpy) lines.push_back(n.memcpy->kind + ", " + bytes_text(n.memcpy->bytes));
  if (n.memset)
    lines.push_back("value " + std::to_string(n.memset->value) + ", element " + bytes_text(n.memset->element_size) +
                    ", " + std::to_string(n.memset->width) + " x " + std::to_string(n.memset->height) + " = " +
                    bytes_text(n.memset->bytes));
  if (n.host) lines.push_back(n.host->symbol.empty() ? "host function (symbol unknown)" : n.host->symbol);
  if (n.mem_alloc) lines.push_back("allocates " + bytes_text(n.mem_alloc->bytes));
  if (!n.conditional_type.empty()) lines.push_back("conditional: " + n.conditional_type);
  if (!n.bodies.empty()) {
    size_t nested = 0;
    for (const Graph& b : n.bodies) nested += total_nodes(b);
    lines.push_back(plural(n.bodies.size(), "body", "bodies") + " with " + plural(nested, "node", "nodes"));
  }
  std::string s;
  for (const auto& l : lines) s += (s.empty() ? "" : "\n") + l;
  return s;
}

/// Every line the origin holds, outermost first.
std::string origin_text(const Origin& o) {
  std::vector<std::string> lines;
  if (!o.modules.empty()) {
    std::string m = "module " + o.module();
    if (!o.modules.back().type.empty()) m += " (" + o.modules.back().type + ")";
    lines.push_back(m);
  }
  if (!o.op.empty()) lines.push_back("op " + o.op);
  for (const SourceFrame& f : o.python)
    lines.push_back(f.file + ":" + std::to_string(f.line) + (f.function.empty() ? "" : " in " + f.function));
  if (!o.nvtx.empty()) {
    std::string r = "NVTX ";
    for (size_t i = 0; i < o.nvtx.size(); ++i)
      r += (i ? " / " : "") + (o.nvtx[i].domain.empty() ? "" : o.nvtx[i].domain + ": ") + o.nvtx[i].message;
    lines.push_back(r);
  }
  if (o.native)
    lines.push_back("native " + (o.native->function.empty() ? std::string("?") : o.native->function) + " in " +
                    o.native->object + " +" + hex(o.native->offset));
  std::string s;
  for (const auto& l : lines) s += (s.empty() ? "" : "\n") + l;
  return s;
}

/// graph start of one replay: its first activity's start.
struct ReplayRecords {
  int64_t start = INT64_MAX;
  std::vector<size_t> activities;
};

class PageWriter {
 public:
  explicit PageWriter(const HtmlReportInput& in) : in_(in) {}

  std::string data() {
    JsonWriter w(0);
    w.begin_object();
    w.key_literal("version").value(GRAPHSCOPE_VERSION);
    w.key_literal("title").value(in_.title);
    w.key_literal("sources").begin_array();
    for (const auto& s : in_.sources) w.value(s);
    w.end_array();
    w.key_literal("notes").begin_array();
    for (const auto& s : in_.notes) w.value(s);
    w.end_array();
    w.key_literal("types").begin_array();
    for (int t = 0; t < kNodeTypeCount; ++t) w.value(to_string(NodeType(t)));
    w.end_array();
    w.key_literal("categories").begin_array();
    for (size_t c = 0; c < kAccountCategories; ++c) {
      w.begin_object();
      w.key_literal("key").value(account_key(AccountCategory(c)));
      w.key_literal("name").value(to_string(AccountCategory(c)));
      w.end_object();
    }
    w.end_array();
    // The delay colour scale of the pictures (delay_scale.h), for the legend.
    w.key_literal("delay_bands").begin_array();
    for (const DelayBand& b : kDelayBands) {
      w.begin_object();
      w.key_literal("from").value(b.from);
      w.key_literal("fill").value(b.fill);
      w.key_literal("text").value(text_on(b.fill));
      w.key_literal("words").value(b.words);
      w.end_object();
    }
    w.end_array();
    w.key_literal("no_record_fill").value(kNoRecordFill);
    w.key_literal("graphs").begin_array();
    for (const ReportGraph& g : in_.graphs) write_graph(w, g);
    w.end_array();
    if (in_.diff) write_diff(w);
    if (in_.run) write_run(w);
    if (!in_.ranks_json.empty()) w.key_literal("ranks").raw(in_.ranks_json);
    if (!in_.ledger_json.empty()) {
      std::string_view doc = in_.ledger_json;
      while (!doc.empty() && doc.back() == '\n') doc.remove_suffix(1);  // the document's own last line
      w.key_literal("ledger").raw(doc);
      w.key_literal("ledger_names").begin_object();
      for (const auto& [recorded, shown] : in_.ledger_names) w.key(recorded).value(shown);
      w.end_object();
    }
    if (!in_.ledger_note.empty()) w.key_literal("ledger_note").value(in_.ledger_note);
    w.key_literal("strings");
    strings_.write(w);
    w.end_object();
    return w.take();
  }

 private:
  // What the page shows of a graph apart from its label and profile: its
  // name, ids and device, per node its type, names, origin, ids and edges
  // (nested bodies by their kernels and edges). Graphs with the same key
  // are drawn and listed alike (the picture, folding and summary follow).
  std::string page_key(const GraphDocument& doc) {
    // The picture's heading names the graph, its ids and device: the same too.
    std::string k = doc.device ? doc.device->name : std::string();
    k += '\x1f' + doc.source_format + '\x1f' + doc.name + '\x1f' +
         (doc.exec_graph_id ? std::to_string(*doc.exec_graph_id) : std::string("-")) + '\x1f' +
         (doc.root.graph_id ? std::to_string(*doc.root.graph_id) : std::string("-"));
    std::function<void(const Graph&, bool)> add = [&](const Graph& g, bool root) {
      k += "\x1e" + std::to_string(g.nodes.size());
      for (const Node& x : g.nodes) {
        k += '\x1f' + std::to_string(int(x.type)) + ':' + std::to_string(x.node_id) + ':';
        if (x.tools_id) k += std::to_string(*x.tools_id);
        k += '\x1d' + (root ? short_name(x) + '\x1d' + what_text(x) : x.kernel_name + '\x1d' + x.conditional_type);
        if (x.origin && !x.origin->empty()) k += '\x1d' + origin_text(*x.origin) + '\x1d' + x.origin->module();
        for (const Dependency& e : x.dependencies)
          k += ',' + std::to_string(e.from) + '.' + std::to_string(int(e.type)) + '.' + std::to_string(e.from_port) +
               '.' + std::to_string(e.to_port);
        for (const Graph& b : x.bodies) add(b, false);
      }
    };
    add(doc.root, true);
    return k;
  }

  void write_graph(JsonWriter& w, const ReportGraph& rg) {
    const GraphDocument& doc = *rg.doc;
    const Graph& g = doc.root;
    const size_t n = g.nodes.size();
    // A graph shown exactly as an earlier one: its own label, process and
    // note, the rest by reference (report.js reads it through same_as).
    if (in_.share_identical && !rg.profile) {
      auto [it, fresh] = shared_.try_emplace(page_key(doc), int64_t(written_));
      if (!fresh) {
        w.begin_object();
        w.key_literal("label").value(rg.label);
        w.key_literal("process").value(int64_t(rg.process));
        if (doc.exec_graph_id) w.key_literal("exec_graph_id").value(*doc.exec_graph_id);
        else w.key_literal("exec_graph_id").null();
        w.key_literal("same_as").value(it->second);
        w.key_literal("profile").null();
        w.key_literal("profile_note").value(rg.profile_note);
        w.end_object();
        ++written_;
        return;
      }
    }
    ++written_;
    w.begin_object();
    w.key_literal("label").value(rg.label);
    w.key_literal("name").value(doc.name);
    w.key_literal("format").value(doc.source_format);
    w.key_literal("process").value(int64_t(rg.process));
    if (doc.exec_graph_id) w.key_literal("exec_graph_id").value(*doc.exec_graph_id);
    else w.key_literal("exec_graph_id").null();
    w.key_literal("nodes").value(uint64_t(n));
    w.key_literal("total_nodes").value(uint64_t(total_nodes(g)));
    size_t edges = 0;
    for (const Node& x : g.nodes) edges += x.dependencies.size();
    w.key_literal("edges").value(uint64_t(edges));
    if (doc.device) w.key_literal("device").value(doc.device->name);
    // What repeats: found once (or by the command) for the summary, the
    // picture and the folding section.
    std::optional<Folding> found;
    const Folding& f = rg.folding ? *rg.folding : found.emplace(find_repeats(g));
    w.key_literal("summary").value(format_summary(doc, summarize(doc), rg.label, &f));

    // The picture, and which shape draws each node.
    std::vector<std::string> drawn;
    std::string svg;
    std::string svg_note;
    DotOverlay overlay;
    if (rg.profile) overlay = profile_overlay(*rg.profile);
    try {
      svg = render_svg(doc, in_.svg_max_nodes, rg.profile ? &overlay : nullptr, in_.fold ? &f : nullptr, &drawn);
      const size_t at = svg.find("<svg");
      if (at != std::string::npos) svg.erase(0, at);
    } catch (const Error& e) {
      if (e.code() != ExitCode::usage) throw;
      svg.clear();
      drawn.assign(n, "");
      svg_note = "no picture: " + e.reason();
    }
    if (svg.empty()) w.key_literal("svg").null();
    else w.key_literal("svg").value(svg);
    w.key_literal("svg_note").value(svg_note);

    // Folding.
    w.key_literal("folding").value(describe_folding(f, n));
    w.key_literal("repeats").begin_array();
    for (const Repeat& r : f.repeats) {
      w.begin_object();
      w.key_literal("label").value(r.label);
      w.key_literal("count").value(r.count);
      w.key_literal("size").value(r.size);
      w.key_literal("chained").value(r.chained);
      w.key_literal("module_type").value(r.module_type);
      w.key_literal("module").value(r.module);
      w.end_object();
    }
    w.end_array();

    // Per node columns. Kernels are named so that no two different ones of
    // the graph read the same (demangle.h's KernelNamer).
    KernelNamer kernels(48);
    for (const Node& x : g.nodes)
      if (x.type == NodeType::kernel && !x.kernel_name.empty()) kernels.add(x.kernel_name);
    Column type, name, what, module, origin, tools, node_id, deps, shape, rep, copy, odd_edges;
    bool ids_follow = true;
    for (uint32_t v = 0; v < n; ++v) {
      const Node& x = g.nodes[v];
      type.add(int64_t(x.type));
      name.add(strings_(x.type == NodeType::kernel && !x.kernel_name.empty() ? kernels(x.kernel_name) : short_name(x)));
      what.add(strings_(what_text(x)));
      if (x.origin && !x.origin->empty()) {
        const std::string m = module_group(*x.origin);
        module.add(m.empty() ? int64_t(-1) : strings_(x.origin->module()));
        origin.add(strings_(origin_text(*x.origin)));
      } else {
        module.add(int64_t(-1));
        origin.add(int64_t(-1));
      }
      if (x.tools_id) tools.add(int64_t(*x.tools_id));
      else tools.add_null();
      node_id.add(int64_t(x.node_id));
      // Most documents number nodes 0..n-1 with tools ids (exec graph << 32) | node id:
      // then the page computes them instead of reading two more columns.
      ids_follow &= x.node_id == v && x.tools_id && doc.exec_graph_id &&
                    *x.tools_id == ((uint64_t(*doc.exec_graph_id) << 32) | x.node_id);
      std::string d = "[";
      for (size_t k = 0; k < x.dependencies.size(); ++k) {
        const Dependency& e = x.dependencies[k];
        d += (k ? "," : "") + std::to_string(e.from);
        if (e.type != EdgeType::standard) {
          Column o;
          o.add(int64_t(v));
          o.add(int64_t(e.from));
          o.add(strings_(std::string(to_string(e.type))));
          odd_edges.add_raw(o.done());
        }
      }
      deps.add_raw(d + "]");
      shape.add(drawn[v].empty() ? int64_t(-1) : strings_(drawn[v]));
      rep.add(f.repeat_of.empty() || f.repeat_of[v] == UINT32_MAX ? int64_t(-1) : int64_t(f.repeat_of[v]));
      copy.add(f.copy_of.empty() || f.repeat_of[v] == UINT32_MAX ? int64_t(-1) : int64_t(f.copy_of[v]));
    }
    w.key_literal("type").raw(type.done());
    w.key_literal("name").raw(name.done());
    w.key_literal("what").raw(what.done());
    w.key_literal("module").raw(module.done());
    w.key_literal("origin").raw(origin.done());
    if (ids_follow && n) {
      w.key_literal("tools_id").null();
      w.key_literal("node_id").null();
    } else {
      w.key_literal("tools_id").raw(tools.done());
      w.key_literal("node_id").raw(node_id.done());
    }
    w.key_literal("deps").raw(deps.done());
    w.key_literal("edge_types").raw(odd_edges.done());
    w.key_literal("shape").raw(shape.done());
    w.key_literal("repeat").raw(rep.done());
    w.key_literal("copy").raw(copy.done());
    if (rg.profile && rg.trace && rg.join) write_profile(w, rg);
    else w.key_literal("profile").null();
    w.key_literal("profile_note").value(rg.profile_note);
    w.end_object();
  }

  void write_profile(JsonWriter& w, const ReportGraph& rg) {
    const GraphDocument& doc = *rg.doc;
    const ProfileReport& r = *rg.profile;
    const Trace& t = *rg.trace;
    const TraceJoin& j = *rg.join;
    const size_t n = doc.root.nodes.size();
    w.key_literal("profile").begin_object();
    w.key_literal("replays").value(r.replays);
    w.key_literal("exec_graph_id").value(r.exec_graph_id);
    w.key_literal("makespan_us").value(r.makespan_us);
    w.key_literal("critical_path_us").value(r.critical_path_us);
    w.key_literal("real").value(uint64_t(r.real));
    w.key_literal("fake").value(uint64_t(r.fake));
    w.key_literal("blocking").value(uint64_t(r.blocking));
    w.key_literal("threshold_us").value(r.threshold_us);
    w.key_literal("joined_by").value(r.by_ids ? "graph ids" : "graph launch (the trace has no graph ids)");
    Column crit;
    for (uint32_t v : r.critical_path) crit.add(int64_t(v));
    w.key_literal("critical_path").raw(crit.done());

    // Durations and starts over every replay, for their spread.
    std::vector<std::vector<double>> dur(n);
    std::vector<ReplayRecords> replays(j.replays);
    for (size_t i = 0; i < t.activities.size() && i < j.replay_of.size(); ++i) {
      const uint32_t rp = j.replay_of[i];
      if (rp == kNoNode || rp >= replays.size()) continue;
      const Activity& a = t.activities[i];
      replays[rp].start = std::min(replays[rp].start, int64_t(a.start_ns));
      replays[rp].activities.push_back(i);
    }
    for (size_t i = 0; i < t.activities.size() && i < j.node_of.size(); ++i) {
      const uint32_t v = j.node_of[i], rp = i < j.replay_of.size() ? j.replay_of[i] : kNoNode;
      if (v >= n || rp >= replays.size()) continue;
      const Activity& a = t.activities[i];
      dur[v].push_back(double(int64_t(a.end_ns) - int64_t(a.start_ns)) / 1000.0);
    }
    Column s, e, ready, delay, dmed, dmin, dmax, verdict, blocker, obs, obs_other, cause, lane, stream, unsure,
        blocking, nrep, assign, work, wait, wait_cat, on_chain;
    for (uint32_t v = 0; v < n; ++v) {
      const NodeProfile& p = r.nodes[v];
      s.add(p.start_us), e.add(p.end_us), ready.add(p.ready_us), delay.add(p.delay_us);
      auto lo_hi = [](const std::vector<double>& x, Column& lo, Column& hi) {
        if (x.empty()) return lo.add_null(), hi.add_null();
        auto [a, b] = std::minmax_element(x.begin(), x.end());
        lo.add(*a), hi.add(*b);
      };
      lo_hi(dur[v], dmin, dmax);
      if (dur[v].empty()) dmed.add_null();
      else dmed.add(median(dur[v]));
      verdict.add(int64_t(p.verdict));
      blocker.add(p.blocker ? int64_t(*p.blocker) : -1);
      obs.add(p.observed_dependency ? int64_t(*p.observed_dependency) : -1);
      obs_other.add(p.observed_other.empty() ? -1 : strings_(p.observed_other));
      cause.add(p.cause.empty() ? -1 : strings_(p.cause + (p.lane_busy ? " (its lane was busy: a dispatch delay)" : "")));
      lane.add(p.lane ? strings_(describe(*p.lane)) : -1);
      stream.add(p.stream ? int64_t(*p.stream) : -1);
      unsure.add(int64_t(uncertain_verdict(r, v)));
      blocking.add(int64_t(p.blocking));
      nrep.add(int64_t(p.replays));
      assign.add(p.assignment ? strings_(std::string(to_string(*p.assignment))) : -1);
      if (v < r.account.nodes.size()) {
        const NodeAccount& na = r.account.nodes[v];
        work.add(na.work_ns), wait.add(na.wait_ns), wait_cat.add(int64_t(na.wait)), on_chain.add(int64_t(na.on_chain));
      } else {
        work.add(int64_t(0)), wait.add(int64_t(0)), wait_cat.add(int64_t(-1)), on_chain.add(int64_t(0));
      }
    }
    w.key_literal("start").raw(s.done());
    w.key_literal("end").raw(e.done());
    w.key_literal("ready").raw(ready.done());
    w.key_literal("delay").raw(delay.done());
    w.key_literal("duration").raw(dmed.done());
    w.key_literal("duration_min").raw(dmin.done());
    w.key_literal("duration_max").raw(dmax.done());
    w.key_literal("verdict").raw(verdict.done());
    w.key_literal("blocker").raw(blocker.done());
    w.key_literal("observed").raw(obs.done());
    w.key_literal("observed_other").raw(obs_other.done());
    w.key_literal("cause").raw(cause.done());
    w.key_literal("lane").raw(lane.done());
    w.key_literal("stream").raw(stream.done());
    w.key_literal("uncertain").raw(unsure.done());
    w.key_literal("blocking_node").raw(blocking.done());
    w.key_literal("node_replays").raw(nrep.done());
    w.key_literal("assignment").raw(assign.done());
    w.key_literal("work_ns").raw(work.done());
    w.key_literal("wait_ns").raw(wait.done());
    w.key_literal("wait_category").raw(wait_cat.done());
    w.key_literal("on_chain").raw(on_chain.done());

    // The account.
    const MakespanAccount& a = r.account;
    w.key_literal("account").begin_object();
    w.key_literal("replay").value(a.replay);
    w.key_literal("replays").value(a.replays);
    w.key_literal("makespan_ns").value(a.makespan_ns);
    w.key_literal("chain_nodes").value(a.chain_nodes);
    w.key_literal("parts").begin_array();
    for (const AccountPart& p : a.parts) {
      w.begin_object();
      w.key_literal("category").value(int64_t(p.category));
      w.key_literal("ns").value(p.ns);
      w.key_literal("median_us").value(p.median_us);
      w.key_literal("min_us").value(p.min_us);
      w.key_literal("max_us").value(p.max_us);
      w.end_object();
    }
    w.end_array();
    w.key_literal("modules").begin_array();
    for (size_t k = 0; k < a.modules.size() && k < 20; ++k) {
      w.begin_object();
      w.key_literal("module").value(a.modules[k].module);
      w.key_literal("ns").value(a.modules[k].ns);
      w.end_object();
    }
    w.end_array();
    w.end_object();

    // What-if.
    if (a.replays && r.what_if) {
      const WhatIf& wi = *r.what_if;
      w.key_literal("what_if").begin_object();
      w.key_literal("measured_us").value(wi.measured_us);
      w.key_literal("as_measured_us").value(wi.as_measured_us);
      w.key_literal("without_fake_us").value(wi.without_fake_us);
      w.key_literal("zero_latency_us").value(wi.zero_latency_us);
      if (wi.fitted_us) w.key_literal("fitted_us").value(*wi.fitted_us);
      w.key_literal("latency_us").value(wi.model.latency_us);
      w.key_literal("dispatch_us").value(wi.model.dispatch_us);
      w.end_object();
    }
    // Findings (findings.h): what to try, each line with its numbers, as the text report says it.
    w.key_literal("findings").begin_array();
    for (const Finding& f : r.findings)
      w.begin_object().key_literal("kind").value(finding_key(f.kind)).key_literal("share").value(f.share).key_literal("text").value(f.text).end_object();
    w.end_array();
    if (r.findings.empty()) w.key_literal("findings_note").value(no_findings(a, r.what_if ? &*r.what_if : nullptr));

    // One replay's timeline: the account's representative replay.
    w.key_literal("timeline").begin_object();
    if (a.replay < replays.size()) {
      const ReplayRecords& rr = replays[a.replay];
      std::vector<Lane> lanes;
      for (size_t i : rr.activities) lanes.push_back(lane_of(t.activities[i]));
      std::sort(lanes.begin(), lanes.end(), listed_before);
      lanes.erase(std::unique(lanes.begin(), lanes.end()), lanes.end());
      w.key_literal("replay").value(a.replay);
      w.key_literal("lanes").begin_array();
      for (const Lane& l : lanes) w.value(describe(l));
      w.end_array();
      // Flat: node, lane, start, duration (ns from the replay's start) per record.
      Column items;
      for (size_t i : rr.activities) {
        const Activity& act = t.activities[i];
        Column& it = items;
        it.add(j.node_of[i] < n ? int64_t(j.node_of[i]) : int64_t(-1));
        it.add(int64_t(std::lower_bound(lanes.begin(), lanes.end(), lane_of(act), listed_before) - lanes.begin()));
        it.add(int64_t(act.start_ns) - rr.start);
        it.add(int64_t(act.end_ns) - int64_t(act.start_ns));
      }
      w.key_literal("items").raw(items.done());
      // Flat: category, start, duration, node per segment.
      Column segs;
      for (const AccountSegment& sg : a.segments) {
        segs.add(int64_t(sg.category));
        segs.add(sg.start_ns - rr.start);
        segs.add(sg.end_ns - sg.start_ns);
        segs.add(sg.node == UINT32_MAX ? int64_t(-1) : int64_t(sg.node));
      }
      w.key_literal("segments").raw(segs.done());
    }
    w.end_object();
    w.end_object();
  }

  void write_diff(JsonWriter& w) {
    const GraphDiff& d = *in_.diff;
    const StructureDiff& sd = d.root;
    const size_t na = in_.graphs[0].doc->root.nodes.size(), nb = in_.graphs[1].doc->root.nodes.size();
    // Per node: 0 same, 1 only on this side, 2 changed, 3 an edge of it changed.
    std::vector<int64_t> ma(na, 0), mb(nb, 0), wa(na, -1), wb(nb, -1);
    for (const NodeGroup& gp : sd.removed)
      for (uint32_t v : gp.nodes)
        if (v < na) ma[v] = 1;
    for (const NodeGroup& gp : sd.added)
      for (uint32_t v : gp.nodes)
        if (v < nb) mb[v] = 1;
    for (const ChangeGroup& c : sd.changed) {
      std::string why;
      for (const FieldChange& fc : c.changes) why += (why.empty() ? "" : "; ") + fc.field + " " + fc.a + " -> " + fc.b;
      const int64_t k = strings_(why);
      for (auto [x, y] : c.nodes) {
        if (x < na) ma[x] = 2, wa[x] = k;
        if (y < nb) mb[y] = 2, wb[y] = k;
      }
    }
    auto mark_edges = [&](const std::vector<EdgeGroup>& groups, std::vector<int64_t>& m, std::vector<int64_t>& why,
                          const char* what) {
      for (const EdgeGroup& eg : groups)
        for (auto [x, y] : eg.edges)
          for (uint32_t v : {x, y})
            if (v < m.size() && m[v] == 0) m[v] = 3, why[v] = strings_(what);
    };
    mark_edges(sd.removed_edges, ma, wa, "an edge of it is only in A");
    mark_edges(sd.retyped_edges, ma, wa, "an edge of it changed type");
    mark_edges(sd.added_edges, mb, wb, "an edge of it is only in B");
    // A retyped edge is on both sides: its ends in B (the partners) too.
    std::vector<EdgeGroup> retyped_in_b = sd.retyped_edges;
    for (EdgeGroup& eg : retyped_in_b)
      for (auto& [x, y] : eg.edges) {
        const int64_t px = x < sd.a_to_b.size() ? sd.a_to_b[x] : -1, py = y < sd.a_to_b.size() ? sd.a_to_b[y] : -1;
        x = px < 0 ? UINT32_MAX : uint32_t(px), y = py < 0 ? UINT32_MAX : uint32_t(py);
      }
    mark_edges(retyped_in_b, mb, wb, "an edge of it changed type");
    auto column = [](const std::vector<int64_t>& x) {
      Column c;
      for (int64_t v : x) c.add(v);
      return c.done();
    };
    Column pair;
    for (size_t v = 0; v < na; ++v) pair.add(v < sd.a_to_b.size() ? sd.a_to_b[v] : int64_t(-1));
    w.key_literal("diff").begin_object();
    w.key_literal("same").value(d.same());
    w.key_literal("text").value(in_.diff_text);
    w.key_literal("a_mark").raw(column(ma));
    w.key_literal("a_why").raw(column(wa));
    w.key_literal("b_mark").raw(column(mb));
    w.key_literal("b_why").raw(column(wb));
    w.key_literal("a_to_b").raw(pair.done());
    w.end_object();
  }

  void write_run(JsonWriter& w) {
    const AttachRun& run = *in_.run;
    w.key_literal("run").begin_object();
    w.key_literal("command").begin_array();
    for (const auto& s : run.command) w.value(s);
    w.end_array();
    w.key_literal("exit_code").value(run.exit_code);
    w.key_literal("profile").value(run.profile);
    // A process per row; what repeats across processes (the command line,
    // the device, a problem) as indices into the page's strings, so that
    // thousands of ranks of one job cost a few numbers each.
    std::vector<std::vector<uint64_t>> graphs_of(run.processes.size());
    for (size_t k = 0; k < in_.graphs.size(); ++k)
      if (in_.graphs[k].process >= 0 && size_t(in_.graphs[k].process) < graphs_of.size())
        graphs_of[size_t(in_.graphs[k].process)].push_back(uint64_t(k));
    w.key_literal("processes").begin_array();
    for (size_t p = 0; p < run.processes.size(); ++p) {
      const AttachIndex& x = run.processes[p].index;
      w.begin_object();
      w.key_literal("dir").value(run.processes[p].dir);
      w.key_literal("pid").value(x.pid);
      std::string command;
      for (const auto& s : x.command_line) command += (command.empty() ? "" : " ") + s;
      w.key_literal("command").value(strings_(command));
      w.key_literal("attached").value(x.attached);
      w.key_literal("complete").value(x.complete);
      w.key_literal("problem").value(strings_(!x.attach_error.empty()    ? "did not attach: " + x.attach_error
                                              : !x.let_go.empty()        ? "let go: " + x.let_go
                                              : !x.profile_error.empty() ? "profiling: " + x.profile_error
                                                                         : std::string()));
      // The device, with the GPU's ordinal and bus id where the index has
      // them (multi-rank runs: which GPU each rank drove).
      std::string device = x.device ? x.device->name : std::string();
      if (x.device && x.device->ordinal)
        device += " (GPU " + std::to_string(*x.device->ordinal) +
                  (x.device->pci_bus_id.empty() ? std::string() : ", " + x.device->pci_bus_id) + ")";
      w.key_literal("device").value(strings_(device));
      if (x.rank) w.key_literal("rank").value(x.rank->rank);
      w.key_literal("graphs").begin_array();
      for (uint64_t k : graphs_of[p]) w.value(k);
      w.end_array();
      w.key_literal("skipped").begin_array();
      for (const SkippedGraph& s : x.skipped) {
        w.begin_object();
        if (s.exec_graph_id) w.key_literal("exec_graph_id").value(*s.exec_graph_id);
        else w.key_literal("exec_graph_id").null();
        w.key_literal("nodes").value(s.nodes);
        w.key_literal("why").value(s.why);
        w.end_object();
      }
      w.end_array();
      w.key_literal("errors").begin_array();
      for (const auto& s : x.errors) w.value(s);
      w.end_array();
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }

  const HtmlReportInput& in_;
  Strings strings_;
  std::unordered_map<std::string, int64_t> shared_;  // page_key -> the graph written in full
  size_t written_ = 0;
};

/// JSON text that is safe inside a <script> element: no '<' at all (every
/// one is inside a string, where \u003c means the same). What an HTML or XML
/// parser must not meet raw (DEL, the C1 controls, U+FFFE and U+FFFF; the
/// JSON writer already escaped C0 and replaced invalid UTF-8) is written as
/// \uXXXX too: the page's bytes are clean and the names in its data whole.
std::string script_safe(const std::string& json) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(json.size() + json.size() / 16);
  for (size_t i = 0; i < json.size();) {
    const char c = json[i];
    if (c == '<') {
      out += "\\u003c";
      ++i;
      continue;
    }
    const Utf8Char u = static_cast<unsigned char>(c) < 0x7f ? Utf8Char{} : utf8_char(json, i);
    if (u.len && (u.cp <= 0x9f || !xml_char(u.cp))) {
      out += {'\\', 'u', hex[u.cp >> 12], hex[(u.cp >> 8) & 15], hex[(u.cp >> 4) & 15], hex[u.cp & 15]};
      i += u.len;
      continue;
    }
    const size_t n = u.len ? u.len : 1;
    out.append(json, i, n);
    i += n;
  }
  return out;
}

}  // namespace

std::string write_html_report(const HtmlReportInput& in) {
  const std::string data = script_safe(PageWriter(in).data());
  std::string page;
  page.reserve(data.size() + 65536);
  page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  page += "<meta name=\"generator\" content=\"graphscope " GRAPHSCOPE_VERSION "\">\n";
  page += "<title>" + xml_escape(in.title) + "</title>\n<style>\n";
  page += kReportStyle;
  page += "</style>\n</head>\n<body>\n<div id=\"app\"><noscript>This report is drawn by its inline script: allow "
          "JavaScript for this file.</noscript></div>\n";
  page += "<script type=\"application/json\" id=\"gs-data\">";
  page += data;
  page += "</script>\n<script>\n";
  page += kReportScript;
  page += "</script>\n</body>\n</html>\n";
  return page;
}

}  // namespace graphscope
