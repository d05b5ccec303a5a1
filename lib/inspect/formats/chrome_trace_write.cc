#include "chrome_trace.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../core/demangle.h"
#include "../core/error.h"
#include "../core/json_tape.h"
#include "../core/json_writer.h"
#include "../model/lane.h"
#include "../core/parallel.h"
#include "trace_scan.h"

namespace graphscope {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

using namespace detail;

std::string_view category(ActivityKind k) {
  switch (k) {
    case ActivityKind::kernel: return kCatKernel;
    case ActivityKind::memcpy: return kCatMemcpy;
    case ActivityKind::memset: return kCatMemset;
    case ActivityKind::host: return kCatHost;
    case ActivityKind::other: return kCatOther;
  }
  return kCatOther;
}

// One output line at a time: start(max) makes room for the most the line
// can hold, then appends are plain copies with no check.
class Line {
 public:
  void start(size_t max) {
    if (buf_.size() < max) buf_.resize(std::max(max, 2 * buf_.size()));
    p_ = &buf_[0];
  }
  std::string_view view() const { return std::string_view(buf_.data(), size_t(p_ - buf_.data())); }
  template <size_t N>
  void lit(const char (&s)[N]) {
    std::memcpy(p_, s, N - 1);
    p_ += N - 1;
  }
  void lit(std::string_view s) {
    if (s.empty()) return;  // (data() may be null)
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }
  void ch(char c) { *p_++ = c; }
  void u64(uint64_t v) { p_ = std::to_chars(p_, p_ + 20, v).ptr; }
  // Nanoseconds as microseconds with exactly three decimals.
  void us(uint64_t ns) {
    u64(ns / 1000);
    auto r = uint32_t(ns % 1000);
    p_[0] = '.';
    p_[1] = char('0' + r / 100);
    p_[2] = char('0' + r / 10 % 10);
    p_[3] = char('0' + r % 10);
    p_ += 4;
  }
  // , "ts": ..., "dur": ... of [start, end] from the time base.
  void span(uint64_t start, uint64_t end, uint64_t base) {
    key("ts");
    us(start - base);
    key("dur");
    us(end >= start ? end - start : 0);
  }
  // , "key": (the key needs no escaping).
  template <size_t N>
  void key(const char (&k)[N]) {
    lit(", \"");
    lit(k);
    lit("\": ");
  }

 private:
  std::string buf_;
  char* p_ = nullptr;
};

// The most an activity's line takes besides its name and node arguments
// (every number at its widest), a flow's line, a metadata line.
constexpr size_t kMaxActivityLine = 1024;
constexpr size_t kMaxFlowLine = 256;
constexpr size_t kMaxMetadataLine = 256;
// The process of the host events (graph launches): above any device.
constexpr uint32_t kHostPid = 1u << 30;
constexpr uint32_t kAccountPid = kHostPid + 1;  // the makespan account's tracks

// A lane's track name: its description without the device (each device is
// a process of its own).
std::string describe_lane(const Lane& l) { return describe(Lane{0, l.channel_type, l.id}); }

struct Flow {
  uint32_t from, to;  // activity indices
  bool fake;
};

// Activities joined to the root graph's nodes, per replay.
struct Join {
  std::optional<uint32_t> exec;       // the exec graph joined
  std::vector<int32_t> node_of;       // per activity: root node index, or -1
  size_t replays = 0;
  std::vector<Flow> flows;
  size_t edge_flows = 0, fake_flows = 0;
};

Join join_graph(const Trace& trace, const GraphDocument& doc, const ProfileReport* report, const TraceJoin* join) {
  Join j;
  const auto& acts = trace.activities;
  const auto& nodes = doc.root.nodes;
  j.node_of.assign(acts.size(), -1);
  // The join (join.h): the one given, else made here; a trace it cannot be
  // joined to (several exec graphs and none named, none of the graph's
  // records) is written without nodes and edges.
  std::optional<TraceJoin> own;
  if (!join && !nodes.empty()) {
    try {
      JoinOptions o;
      if (report && report->by_ids) o.exec_graph_id = report->exec_graph_id;
      if (report)
        for (const LaunchUse& l : report->launches)
          if (l.status == LaunchUse::Status::used) o.launches.push_back(l.correlation);
      own = join_trace(doc, trace, o);
      join = &*own;
    } catch (const Error&) {
    }
  }
  if (!join || nodes.empty()) return j;
  j.exec = join->exec_graph_id;

  struct Hit {
    uint32_t replay, node, act;
  };
  std::vector<Hit> hits;
  for (uint32_t i = 0; i < acts.size(); ++i) {
    const uint32_t node = join->node_of[i];
    if (node == kNoNode) continue;
    j.node_of[i] = int32_t(node);
    hits.push_back({join->replay_of[i], node, i});
  }
  std::sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) {
    return a.replay != b.replay ? a.replay < b.replay : a.node != b.node ? a.node < b.node : a.act < b.act;
  });
  // One slot per (replay, node): its first-starting and last-ending activity.
  struct Slot {
    uint32_t replay, node, first, last;
  };
  std::vector<Slot> slots;
  for (const auto& h : hits) {
    if (slots.empty() || slots.back().replay != h.replay || slots.back().node != h.node) {
      slots.push_back({h.replay, h.node, h.act, h.act});
      continue;
    }
    auto& s = slots.back();
    if (acts[h.act].start_ns < acts[s.first].start_ns) s.first = h.act;
    if (acts[h.act].end_ns > acts[s.last].end_ns) s.last = h.act;
  }

  std::vector<const NodeProfile*> profile(nodes.size(), nullptr);
  if (report)
    for (const auto& p : report->nodes)
      if (p.index < nodes.size()) profile[p.index] = &p;

  // Dependents of each node, from the dependencies (whether or not the
  // document's dependents lists are filled), in node order.
  std::vector<uint32_t> out_begin(nodes.size() + 1, 0), out;
  for (const auto& x : nodes)
    for (const auto& d : x.dependencies)
      if (d.from < nodes.size()) ++out_begin[d.from + 1];
  for (size_t i = 0; i < nodes.size(); ++i) out_begin[i + 1] += out_begin[i];
  out.resize(out_begin.back());
  {
    std::vector<uint32_t> fill(out_begin.begin(), out_begin.end() - 1);
    for (uint32_t i = 0; i < nodes.size(); ++i)
      for (const auto& d : nodes[i].dependencies)
        if (d.from < nodes.size()) out[fill[d.from]++] = i;
  }
  auto push_dependents = [&](std::vector<uint32_t>& stack, uint32_t v) {
    for (uint32_t k = out_begin[v + 1]; k-- > out_begin[v];) stack.push_back(out[k]);  // first on top
  };

  // Edges pass through nodes that have no activity in the replay (empty
  // nodes, host nodes, ...), up to a budget of steps for pathological graphs.
  std::vector<int32_t> slot_of(nodes.size(), -1);
  std::vector<uint32_t> seen(nodes.size(), 0);
  uint32_t stamp = 0;
  size_t budget = 50'000'000;
  std::vector<uint32_t> stack;
  for (size_t b = 0; b < slots.size();) {
    size_t e = b;
    while (e < slots.size() && slots[e].replay == slots[b].replay) ++e;
    ++j.replays;
    for (size_t s = b; s < e; ++s) slot_of[slots[s].node] = int32_t(s);
    for (size_t s = b; s < e; ++s) {
      if (++stamp == 0) std::fill(seen.begin(), seen.end(), 0), stamp = 1;
      stack.clear();
      push_dependents(stack, slots[s].node);
      while (!stack.empty()) {
        uint32_t d = stack.back();
        stack.pop_back();
        if (d >= nodes.size() || seen[d] == stamp) continue;
        seen[d] = stamp;
        if (slot_of[d] >= 0) {
          j.flows.push_back({slots[s].last, slots[size_t(slot_of[d])].first, false});
          ++j.edge_flows;
        } else if (budget > out_begin[d + 1] - out_begin[d]) {
          budget -= out_begin[d + 1] - out_begin[d];
          push_dependents(stack, d);
        }
      }
      const NodeProfile* p = profile[slots[s].node];
      if (p && p->verdict == Verdict::fake && p->observed_dependency &&
          *p->observed_dependency < nodes.size() && slot_of[*p->observed_dependency] >= 0) {
        j.flows.push_back({slots[size_t(slot_of[*p->observed_dependency])].last, slots[s].first, true});
        ++j.fake_flows;
      }
    }
    for (size_t s = b; s < e; ++s) slot_of[slots[s].node] = -1;
    b = e;
  }
  return j;
}

}  // namespace

std::string write_chrome_trace(const Trace& trace, const GraphDocument* doc, const ProfileReport* report,
                               const TraceJoin* trace_join) {
  const auto& acts = trace.activities;
  const size_t n = acts.size();

  // Lanes, in order of first use; few in practice, so looked up by a short
  // scan before the hash table.
  std::unordered_map<Lane, uint32_t, LaneHash> lane_index;
  std::vector<Lane> lanes;
  std::vector<uint32_t> lane_of_act(n);
  uint64_t base = n || !trace.launches.empty() ? UINT64_MAX : 0;  // times are written from the first start
  for (const GraphLaunch& g : trace.launches) base = std::min(base, g.start_ns);
  for (size_t i = 0; i < n; ++i) {
    base = std::min(base, acts[i].start_ns);
    Lane k = lane_of(acts[i]);
    uint32_t found = kNone;
    if (lanes.size() <= 16) {
      for (uint32_t l = 0; l < lanes.size(); ++l)
        if (lanes[l] == k) {
          found = l;
          break;
        }
      if (found == kNone) {
        found = uint32_t(lanes.size());
        lanes.push_back(k);
        lane_index.emplace(k, found);
      }
    } else {
      auto [it, added] = lane_index.emplace(k, uint32_t(lanes.size()));
      if (added) lanes.push_back(k);
      found = it->second;
    }
    lane_of_act[i] = found;
  }
  // Shown per device: compute channels, copy channels, other channels, streams.
  std::vector<uint32_t> order(lanes.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return listed_before(lanes[x], lanes[y]); });

  // Activities that overlap on one lane (concurrent kernels on a shared
  // channel) go on rows of their own, as trace viewers drop or misdraw
  // slices that overlap without nesting: per lane in start order, each
  // activity takes the row that freed up first, else a new row.
  std::vector<uint32_t> row_of_act(n), rows(lanes.size(), 0);
  {
    using Free = std::pair<uint64_t, uint32_t>;  // (end, row)
    auto place = [&](std::vector<Free>& heap, uint32_t& count, size_t i) {
      const Activity& a = acts[i];
      uint64_t end = std::max(a.end_ns, a.start_ns);
      uint32_t row;
      if (!heap.empty() && heap.front().first <= a.start_ns) {
        row = heap.front().second;
        std::pop_heap(heap.begin(), heap.end(), std::greater<Free>());
        heap.back() = {end, row};
      } else {
        row = count++;
        heap.emplace_back(end, row);
      }
      std::push_heap(heap.begin(), heap.end(), std::greater<Free>());
      row_of_act[i] = row;
    };
    // Usually each lane's activities come in start order: one pass in
    // trace order. Else per lane, sorted by start.
    bool in_order = true;
    {
      std::vector<uint64_t> last(lanes.size(), 0);
      for (size_t i = 0; i < n && in_order; ++i) {
        uint64_t& x = last[lane_of_act[i]];
        in_order = acts[i].start_ns >= x;
        x = acts[i].start_ns;
      }
    }
    if (in_order) {
      std::vector<std::vector<Free>> heaps(lanes.size());
      for (size_t i = 0; i < n; ++i) place(heaps[lane_of_act[i]], rows[lane_of_act[i]], i);
    } else {
      std::vector<uint32_t> offset(lanes.size() + 1, 0), by_lane(n);
      for (size_t i = 0; i < n; ++i) ++offset[lane_of_act[i] + 1];
      for (size_t l = 0; l < lanes.size(); ++l) offset[l + 1] += offset[l];
      std::vector<uint32_t> fill(offset.begin(), offset.end() - 1);
      for (size_t i = 0; i < n; ++i) by_lane[fill[lane_of_act[i]]++] = uint32_t(i);
      auto by_start = [&](uint32_t x, uint32_t y) { return acts[x].start_ns < acts[y].start_ns; };
      std::vector<Free> heap;
      for (size_t l = 0; l < lanes.size(); ++l) {
        auto b = by_lane.begin() + offset[l], e = by_lane.begin() + offset[l + 1];
        std::stable_sort(b, e, by_start);
        heap.clear();
        for (auto it = b; it != e; ++it) place(heap, rows[l], *it);
      }
    }
  }
  // Thread ids as Kineto's: a stream's first row is the stream id, so that
  // a PyTorch trace of the same program lines up; channel lanes and further
  // rows are tracks of their own, numbered per device from kTrackBase.
  constexpr uint32_t kTrackBase = 1u << 30;
  std::vector<std::vector<uint32_t>> tids(lanes.size());
  std::vector<uint32_t> sort_of_first(lanes.size());
  {
    uint32_t next = kTrackBase, sort = 0;
    for (size_t r = 0; r < order.size(); ++r) {
      const Lane& k = lanes[order[r]];
      if (r == 0 || lanes[order[r - 1]].device != k.device) next = kTrackBase, sort = 0;
      sort_of_first[order[r]] = sort;
      sort += rows[order[r]];
      for (uint32_t row = 0; row < rows[order[r]]; ++row)
        tids[order[r]].push_back(k.channel_type == 0 && row == 0 && k.id < kTrackBase ? k.id : next++);
    }
  }
  auto tid_of = [&](size_t i) { return tids[lane_of_act[i]][row_of_act[i]]; };

  // Names quoted once: demangled, as Kineto writes them, with the mangled
  // name kept in args ("mangled name", which the reader takes back).
  std::vector<std::string> quoted(trace.names.size()), mangled(trace.names.size());
  for (size_t i = 0; i < quoted.size(); ++i) {
    const std::string& name = trace.names[i];
    const std::string shown = demangle(name);
    append_json_string(quoted[i], shown);
    if (shown != name) {
      mangled[i] = ", \"mangled name\": ";
      append_json_string(mangled[i], name);
    }
  }
  const std::string unnamed = "\"\"";

  // The graph: each joined activity's node, and per node its arguments,
  // formatted once.
  Join join;
  std::vector<std::string> node_args;
  if (doc) {
    join = join_graph(trace, *doc, report, trace_join);
    std::vector<const NodeProfile*> profile(doc->root.nodes.size(), nullptr);
    if (report)
      for (const auto& p : report->nodes)
        if (p.index < profile.size()) profile[p.index] = &p;
    node_args.resize(doc->root.nodes.size());
    for (uint32_t i = 0; i < node_args.size(); ++i) {
      std::string& x = node_args[i];
      x = ", \"node index\": " + std::to_string(i) + ", \"node type\": \"";
      x += to_string(doc->root.nodes[i].type);
      x += '"';
      const NodeProfile* p = profile[i];
      if (p && p->verdict == Verdict::real) {
        x += ", \"verdict\": \"real\"";
      } else if (p && p->verdict == Verdict::fake) {
        x += ", \"verdict\": \"fake\", \"observed dependency\": ";
        x += p->observed_dependency ? std::to_string(*p->observed_dependency) : "null";
        if (!p->observed_dependency && !p->observed_other.empty()) {
          x += ", \"observed other\": ";
          append_json_string(x, p->observed_other);
        }
        x += ", \"blocking\": ";
        x += p->blocking ? "true" : "false";
        x += ", \"delay_us\": ";
        JsonWriter num(0);
        num.value(p->delay_us);
        x += num.view();
        x += ", \"cause\": ";
        if (p->cause.empty()) x += "null";
        else append_json_string(x, p->cause);
      }
      // Where the node came from, as Perfetto shows args: the module, the
      // source line and the innermost NVTX range.
      if (const auto& o = doc->root.nodes[i].origin) {
        if (!o->modules.empty()) x += ", \"module\": ", append_json_string(x, o->module());
        if (!o->python.empty())
          x += ", \"source\": ", append_json_string(x, o->python.front().file + ":" + std::to_string(o->python.front().line));
        if (!o->nvtx.empty()) x += ", \"nvtx\": ", append_json_string(x, o->nvtx.back().message);
        if (!o->op.empty()) x += ", \"op\": ", append_json_string(x, o->op);
        if (o->native && !o->native->function.empty())
          x += ", \"native\": ", append_json_string(x, o->native->function);
      }
    }
  }
  auto args_of = [&](size_t i) -> std::string_view {
    if (!doc || join.node_of[i] < 0) return {};
    return node_args[size_t(join.node_of[i])];
  };

  JsonWriter w(2);
  {
    // About the size of the document, so that the output never regrows.
    size_t bytes = 4096 + lanes.size() * 2 * kMaxMetadataLine + join.flows.size() * 2 * 150 +
                   trace.launches.size() * 200 + (report ? report->account.segments.size() * 200 + 2048 : 0);
    for (size_t i = 0; i < n; ++i) {
      const Activity& a = acts[i];
      bytes += 320 + (a.name < quoted.size() ? quoted[a.name].size() + mangled[a.name].size() : 2) + args_of(i).size();
      if (a.graph_node_id) bytes += 40;
      if (a.graph_id) bytes += 25;
      if (a.channel_type || a.channel_id) bytes += 36;
      if (a.bytes) bytes += 24;
      if (a.kind == ActivityKind::memcpy) bytes += 20;
    }
    w.reserve(bytes);
  }
  w.begin_object();
  w.key_literal("graphscope").begin_object();
  w.key_literal("schema").value(kTraceSchema);
  w.key_literal("graphscope_version").value(GRAPHSCOPE_VERSION);
  if (!trace.source.empty()) w.key_literal("source").value(trace.source);
  w.key_literal("time_base_ns").value(uint64_t(base));
  w.key_literal("activities").value(uint64_t(n));
  w.key_literal("lanes").value(uint64_t(lanes.size()));
  if (!trace.devices.empty()) {
    w.key_literal("devices").begin_array();
    for (const DeviceSms& d : trace.devices) {
      w.begin_object();
      w.key_literal("device").value(uint64_t(d.device));
      w.key_literal("sm_count").value(uint64_t(d.sm_count));
      w.end_object();
    }
    w.end_array();
  }
  if (doc) {
    w.key_literal("exec_graph_id");
    join.exec ? w.value(*join.exec) : w.null();
    w.key_literal("replays").value(uint64_t(join.replays));
    w.key_literal("graph_edge_flows").value(uint64_t(join.edge_flows));
  }
  if (doc && report) {
    w.key_literal("real").value(uint64_t(report->real));
    w.key_literal("fake").value(uint64_t(report->fake));
    w.key_literal("blocking").value(uint64_t(report->blocking));
    w.key_literal("time_lost_us").value(report->time_lost_us);
    w.key_literal("fake_dependency_flows").value(uint64_t(join.fake_flows));
  }
  w.end_object();
  w.key_literal("baseTimeNanoseconds").value(uint64_t(base));  // Kineto's: ts are microseconds from it
  w.key_literal("displayTimeUnit").value("ns");
  w.key_literal("traceEvents").begin_array();

  // Each event on a line of its own: the separator, the indent, the event.
  const std::string pad = "\n" + std::string(w.indent() + 2, ' ');
  bool first = true;
  Line l;
  auto begin_line = [&](size_t max) {
    l.start(max + pad.size() + 1);
    if (!first) l.ch(',');
    l.lit(pad);
    first = false;
  };

  // Metadata: process names (GPU n) and thread names (lanes and their rows).
  for (size_t r = 0; r < order.size(); ++r) {
    const Lane& k = lanes[order[r]];
    if (r == 0 || lanes[order[r - 1]].device != k.device) {
      begin_line(kMaxMetadataLine);
      l.lit("{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": ");
      l.u64(k.device);
      l.lit(", \"tid\": 0, \"ts\": 0, \"args\": {\"name\": \"GPU ");
      l.u64(k.device);
      l.lit("\"}}");
      w.raw_elements(l.view());
      begin_line(kMaxMetadataLine);
      l.lit("{\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": ");
      l.u64(k.device);
      l.lit(", \"tid\": 0, \"ts\": 0, \"args\": {\"sort_index\": ");
      l.u64(k.device);
      l.lit("}}");
      w.raw_elements(l.view());
    }
    const std::string lane_name = describe_lane(k);
    for (uint32_t row = 0; row < rows[order[r]]; ++row) {
      const uint32_t tid = tids[order[r]][row];
      begin_line(kMaxMetadataLine);
      l.lit("{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": ");
      l.u64(k.device);
      l.key("tid");
      l.u64(tid);
      l.lit(", \"ts\": 0, \"args\": {\"name\": \"");
      l.lit(lane_name);
      if (row > 0) {
        l.lit(" (");
        l.u64(row + 1);
        l.ch(')');
      }
      l.lit("\"}}");
      w.raw_elements(l.view());
      begin_line(kMaxMetadataLine);
      l.lit("{\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": ");
      l.u64(k.device);
      l.key("tid");
      l.u64(tid);
      l.lit(", \"ts\": 0, \"args\": {\"sort_index\": ");
      l.u64(sort_of_first[order[r]] + row + 1);
      l.lit("}}");
      w.raw_elements(l.view());
    }
  }

  // One complete event per activity, with Kineto's argument keys.
  for (size_t i = 0; i < n; ++i) {
    const Activity& a = acts[i];
    const std::string& name = a.name < quoted.size() ? quoted[a.name] : unnamed;
    const std::string_view node = args_of(i);
    const std::string_view mangled_arg = a.name < mangled.size() ? std::string_view(mangled[a.name]) : "";
    begin_line(kMaxActivityLine + name.size() + mangled_arg.size() + node.size());
    l.lit("{\"ph\": \"X\", \"cat\": \"");
    l.lit(category(a.kind));
    l.lit("\", \"name\": ");
    l.lit(name);
    l.key("pid");
    l.u64(a.device);
    l.key("tid");
    l.u64(tid_of(i));
    l.span(a.start_ns, a.end_ns, base);
    l.lit(", \"args\": {\"device\": ");
    l.u64(a.device);
    l.key("stream");
    l.u64(a.stream);
    l.key("correlation");
    l.u64(a.correlation);
    if (a.graph_node_id) {
      l.key("graph node id");
      l.u64(*a.graph_node_id);
    }
    if (a.graph_id) {
      l.key("graph id");
      l.u64(*a.graph_id);
    }
    if (a.channel_type != 0 || a.channel_id != 0) {
      l.key("channel");
      l.u64(a.channel_id);
      l.key("channel_type");
      l.u64(a.channel_type);
    }
    if (a.bytes) {
      l.key("bytes");
      l.u64(a.bytes);
    }
    if (a.kind == ActivityKind::memcpy && a.copy != CopyKind::none) {
      l.key("copy kind");
      l.ch('"');
      l.lit(to_string(a.copy));
      l.ch('"');
    }
    if (a.context) {
      l.key("context");
      l.u64(a.context);
    }
    if (a.grid[0] || a.grid[1] || a.grid[2] || a.block[0] || a.block[1] || a.block[2]) {
      for (int g = 0; g < 2; ++g) {
        const uint32_t* d = g ? a.block : a.grid;
        if (g) l.key("block");
        else l.key("grid");
        l.ch('[');
        l.u64(d[0]);
        l.lit(", ");
        l.u64(d[1]);
        l.lit(", ");
        l.u64(d[2]);
        l.ch(']');
      }
    }
    if (a.has_shared) {
      l.key("shared memory");
      l.u64(a.shared_bytes);
    }
    l.lit(mangled_arg);
    l.lit(node);
    l.lit("}}");
    w.raw_elements(l.view());
  }

  // Graph launches (cudaGraphLaunch calls read from a PyTorch export), on a
  // host track of their own, as Kineto's cuda_runtime events.
  if (!trace.launches.empty()) {
    begin_line(kMaxMetadataLine);
    l.lit("{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": ");
    l.u64(kHostPid);
    l.lit(", \"tid\": 0, \"ts\": 0, \"args\": {\"name\": \"host: graph launches\"}}");
    w.raw_elements(l.view());
  }
  for (const GraphLaunch& g : trace.launches) {
    begin_line(kMaxFlowLine);
    l.lit("{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaGraphLaunch\", \"pid\": ");
    l.u64(kHostPid);
    l.lit(", \"tid\": 1");
    l.span(g.start_ns, g.end_ns, base);
    l.lit(", \"args\": {\"correlation\": ");
    l.u64(g.correlation);
    l.lit("}}");
    w.raw_elements(l.view());
  }

  // Where the makespan went (account.h): one track per part, the
  // representative replay's segments on them, under a process of their own.
  if (report && !report->account.segments.empty()) {
    const MakespanAccount& acc = report->account;
    begin_line(kMaxMetadataLine);
    l.lit("{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": ");
    l.u64(kAccountPid);
    l.lit(", \"tid\": 0, \"ts\": 0, \"args\": {\"name\": \"makespan account: replay ");
    l.u64(acc.replay);
    l.lit("\"}}");
    w.raw_elements(l.view());
    bool used[kAccountCategories] = {};
    for (const AccountSegment& g : acc.segments) used[size_t(g.category)] = true;
    for (size_t c = 0; c < kAccountCategories; ++c) {
      if (!used[c]) continue;
      begin_line(kMaxMetadataLine);
      l.lit("{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": ");
      l.u64(kAccountPid);
      l.key("tid");
      l.u64(c + 1);
      l.lit(", \"ts\": 0, \"args\": {\"name\": \"");
      l.lit(to_string(AccountCategory(c)));
      l.lit("\"}}");
      w.raw_elements(l.view());
    }
    for (const AccountSegment& g : acc.segments) {
      if (g.start_ns < int64_t(base) || g.end_ns < g.start_ns) continue;
      begin_line(kMaxFlowLine);
      l.lit("{\"ph\": \"X\", \"cat\": \"makespan account\", \"name\": \"");
      l.lit(to_string(g.category));
      l.lit("\", \"pid\": ");
      l.u64(kAccountPid);
      l.key("tid");
      l.u64(size_t(g.category) + 1);
      l.span(uint64_t(g.start_ns), uint64_t(g.end_ns), base);
      if (g.node != UINT32_MAX) {
        l.lit(", \"args\": {\"node index\": ");
        l.u64(g.node);
        l.ch('}');
      }
      l.ch('}');
      w.raw_elements(l.view());
    }
  }

  // Flow arrows: graph edges and fake dependencies, each from the middle of
  // one activity to the middle of the other (so each end binds to its slice).
  uint64_t id = 0;
  for (const Flow& f : join.flows) {
    ++id;
    for (int end = 0; end < 2; ++end) {
      const size_t i = end ? f.to : f.from;
      const Activity& a = acts[i];
      uint64_t mid = a.start_ns - base + (a.end_ns > a.start_ns ? (a.end_ns - a.start_ns) / 2 : 0);
      begin_line(kMaxFlowLine);
      l.lit(end ? std::string_view("{\"ph\": \"f\", \"bp\": \"e\", \"cat\": \"")
                : std::string_view("{\"ph\": \"s\", \"cat\": \""));
      const std::string_view cat = f.fake ? "fake dependency" : "graph edge";
      l.lit(cat);
      l.lit("\", \"name\": \"");
      l.lit(cat);
      l.lit("\", \"id\": ");
      l.u64(id);
      l.key("pid");
      l.u64(a.device);
      l.key("tid");
      l.u64(tid_of(i));
      l.key("ts");
      l.us(mid);
      l.ch('}');
      w.raw_elements(l.view());
    }
  }
  w.end_array();
  w.end_object();
  return w.take();
}

}  // namespace graphscope
