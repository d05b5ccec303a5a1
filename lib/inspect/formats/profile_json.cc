#include "profile_json.h"

#include <algorithm>
#include <utility>

#include "../core/error.h"
#include "../core/json_read.h"
#include "../core/json_tape.h"
#include "../core/json_writer.h"
#include "../core/parallel.h"
#include "../analysis/simulate.h"
#include "../core/text.h"

namespace graphscope {

namespace {

// describe() of the few lanes that all the nodes share, once each.
class LaneNames {
 public:
  const std::string& operator()(const Lane& l) {
    for (const auto& [lane, name] : seen_)
      if (lane == l) return name;
    if (seen_.size() == kMost) return other_ = describe(l);
    seen_.emplace_back(l, describe(l));
    return seen_.back().second;
  }

 private:
  static constexpr size_t kMost = 32;
  std::vector<std::pair<Lane, std::string>> seen_;
  std::string other_;
};

// One element of the report's "nodes" as JsonWriter writes it at that
// depth (compactly, on one line), formatted straight into a reused buffer:
// a report has a line per node, and the writer's bookkeeping per value (or
// a string's, per append) took most of their time.
class NodeLine : public JsonLine {
 public:
  std::string_view text() const { return view(); }
  void clear() {
    JsonLine::clear();
    first_ = true;
  }
  NodeLine& key(std::string_view k) {
    lit(first_ ? std::string_view("{\"") : std::string_view(", \""));
    first_ = false;
    lit(k);
    lit("\": ");
    return *this;
  }
  void value(uint64_t v) { u64(v); }
  void value(double v) { real(v); }
  void value(std::string_view s) { str(s); }
  void value(bool v) { lit(v ? "true" : "false"); }
  void null() { lit("null"); }
  void close() { lit(first_ ? "{}" : "}"); }

 private:
  bool first_ = true;
};

void write_node_line(NodeLine& w, const NodeProfile& p, const Node& n, LaneNames& lane_name) {
  w.key("index").value(uint64_t(p.index));
  w.key("tools_id");
  n.tools_id ? w.value(*n.tools_id) : w.null();
  w.key("kernel_name");
  n.type == NodeType::kernel ? w.value(std::string_view(n.kernel_name)) : w.null();
  w.key("node_type").value(to_string(n.type));
  w.key("replays").value(uint64_t(p.replays));
  auto num = [&](std::string_view k, double v) {
    w.key(k);
    p.replays ? w.value(v) : w.null();
  };
  num("start_us", p.start_us);
  num("end_us", p.end_us);
  num("ready_us", p.ready_us);
  num("delay_us", p.delay_us);
  w.key("observed_dependency");
  p.observed_dependency ? w.value(uint64_t(*p.observed_dependency)) : w.null();
  if (!p.observed_other.empty()) w.key("observed_other").value(std::string_view(p.observed_other));
  w.key("verdict").value(to_string(p.verdict));
  w.key("blocking").value(p.blocking);
  w.key("lane_busy").value(p.lane_busy);
  w.key("blocker");
  p.blocker ? w.value(uint64_t(*p.blocker)) : w.null();
  w.key("cause");
  p.cause.empty() ? w.null() : w.value(std::string_view(p.cause));
  if (p.blocking) w.key("fake_wait_us").value(p.fake_wait_us);
  if (p.wait) w.key("wait").value(account_key(*p.wait));
  if (p.lane) w.key("lane").value(std::string_view(lane_name(*p.lane)));
  if (p.stream) w.key("stream").value(uint64_t(*p.stream));
  if (p.assignment && *p.assignment != Assignment::id) w.key("assignment").value(to_string(*p.assignment));
  w.close();
}

// "account" (account.h): the representative replay's parts, exact in ns,
// with medians and spread over replays, and the chain's nodes.
void write_account(JsonWriter& w, const MakespanAccount& a) {
  w.key("account").begin_object();
  w.key("replay").value(a.replay).key("replays").value(a.replays);
  w.key("makespan_ns").value(uint64_t(a.makespan_ns)).key("chain_nodes").value(a.chain_nodes);
  w.key("parts").begin_object();
  for (const AccountPart& p : a.parts) {
    w.key(account_key(p.category)).begin_object();
    w.key("ns").value(uint64_t(p.ns)).key("median_us").value(p.median_us);
    w.key("min_us").value(p.min_us).key("max_us").value(p.max_us).end_object();
  }
  w.end_object();
  if (!a.modules.empty()) {
    w.key("modules").begin_array();
    for (const ModuleTime& m : a.modules) w.begin_object().key("module").value(m.module).key("ns").value(uint64_t(m.ns)).end_object();
    w.end_array();
  }
  w.key("chain").begin_array();
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const NodeAccount& x = a.nodes[i];
    if (!x.on_chain) continue;
    w.begin_object().key("node").value(uint64_t(i)).key("work_ns").value(uint64_t(x.work_ns));
    w.key("wait_ns").value(uint64_t(x.wait_ns));
    if (x.wait_ns) w.key("wait").value(account_key(x.wait));
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace

std::string write_profile_json(const ProfileReport& r, const GraphDocument& doc) {
  JsonWriter w(2);
  w.begin_object();
  w.key("schema").value(kProfileSchema);
  w.key("graphscope_version").value(GRAPHSCOPE_VERSION);
  w.key("exec_graph_id").value(r.exec_graph_id);
  if (doc.root.graph_id) w.key("template_graph_id").value(*doc.root.graph_id);
  if (!doc.name.empty()) w.key("name").value(doc.name);
  w.key("replays").value(r.replays);
  w.key("threshold_us").value(r.threshold_us);
  w.key("tolerance_us").value(r.tolerance_us);
  w.key("summary").begin_object();
  w.key("real").value(uint64_t(r.real)).key("fake").value(uint64_t(r.fake));
  w.key("blocking").value(uint64_t(r.blocking)).key("none").value(uint64_t(r.none));
  w.key("time_lost_us").value(r.time_lost_us);
  w.key("lane_busy").value(uint64_t(r.lane_busy));
  w.key("makespan_us").value(r.makespan_us);
  w.key("critical_path_us").value(r.critical_path_us);
  w.key("nodes_without_records").value(uint64_t(r.nodes_without_records));
  w.key("unmatched_records").value(uint64_t(r.unmatched_records));
  w.key("other_records").value(uint64_t(r.other_records));
  w.end_object();
  w.key("join").begin_object();
  w.key("by").value(r.by_ids ? "ids" : "launches");
  w.key("assigned").begin_object();
  for (int k = 0; k < kAssignmentCount; ++k) w.key(to_string(Assignment(k))).value(uint64_t(r.assigned[k]));
  w.end_object();
  if (!r.by_ids) {
    w.key("launches").begin_array();
    for (const LaunchUse& l : r.launches) {
      w.begin_object().key("correlation").value(l.correlation).key("records").value(l.records);
      w.key("status").value(to_string(l.status));
      if (!l.why.empty()) w.key("why").value(l.why);
      w.end_object();
    }
    w.end_array();
  }
  w.end_object();
  w.key("critical_path").begin_array();
  for (uint32_t i : r.critical_path) w.value(i);
  w.end_array();
  w.key("lanes").begin_array();
  for (const auto& u : r.lanes) {
    w.begin_object().key("lane").value(describe(u.lane)).key("device").value(u.lane.device);
    w.key("channel_type").value(uint32_t(u.lane.channel_type)).key("id").value(u.lane.id);
    w.key("activities").value(u.activities).key("busy_us").value(u.busy_us).end_object();
  }
  w.end_array();
  w.key("streams").begin_array();
  for (uint32_t s : r.streams) w.value(s);
  w.end_array();
  if (r.account.replays) write_account(w, r.account);
  if (r.account.replays && r.what_if) {
    const WhatIf& wi = *r.what_if;
    w.key("what_if").begin_object();
    w.key("latency_us").value(wi.model.latency_us).key("dispatch_us").value(wi.model.dispatch_us);
    w.key("as_measured_us").value(wi.as_measured_us).key("without_fake_us").value(wi.without_fake_us);
    w.key("zero_latency_us").value(wi.zero_latency_us);
    if (wi.fitted_us) w.key("fitted_us").value(*wi.fitted_us);
    if (wi.replays_simulated) w.key("replays_simulated").value(*wi.replays_simulated);
    if (wi.gap_nodes) w.key("gap_nodes").value(*wi.gap_nodes);
    w.end_object();
  }
  if (r.account.replays) {
    // What to try (findings.h); an empty list: nothing stands out.
    w.key("findings").begin_array();
    for (const Finding& f : r.findings) {
      w.begin_object().key("kind").value(finding_key(f.kind));
      w.key("part_us").value(f.part_us).key("share").value(f.share);
      w.key("from_us").value(f.from_us).key("to_us").value(f.to_us);
      w.key("what").value(f.what).key("try").value(f.try_).key("text").value(f.text).end_object();
    }
    w.end_array();
  }
  w.key("nodes").begin_array();
  // The document is the writer's text around the nodes' lines, which are
  // most of it. Each line depends on its node alone: they are formatted in
  // slices, in parallel, each with its separator and indentation; the first
  // slice after the head, with room for all, so that only the others' lines
  // are copied once more. Room for 512 bytes a line (the 100k-node bench's
  // lines take 420): room never written is never touched, and a regrowth
  // copies the whole text into pages the kernel must zero first (and
  // doubles: 84 MB for that report).
  const size_t n = r.nodes.size();
  const unsigned workers = worker_count(n, 10000);
  std::vector<std::string> parts(workers);
  parts[0].reserve(w.view().size() + n * 512 + 4096);
  parts[0] = w.view();
  const std::string pad(w.indent() + 2, ' ');
  parallel_slices(n, workers, [&](unsigned k, size_t begin, size_t end) {
    LaneNames lane_name;
    NodeLine line;
    std::string& out = parts[k];
    if (k) out.reserve((end - begin) * 512);
    for (size_t i = begin; i < end; ++i) {
      line.clear();
      line.lit(i ? ",\n" : "\n");
      line.lit(pad);
      write_node_line(line, r.nodes[i], doc.root.nodes[r.nodes[i].index], lane_name);
      out += line.text();
    }
  });
  // The writer closes the document: after one byte standing for the lines
  // (which makes the array non-empty, as the lines would).
  const size_t head = w.view().size();
  if (n) w.raw_elements(" ");
  w.end_array();
  w.end_object();
  const std::string closing = w.take();
  size_t size = closing.size();
  for (const auto& part : parts) size += part.size();
  parts[0].reserve(size);  // when the lines were longer than allowed for
  for (size_t k = 1; k < parts.size(); ++k) parts[0] += parts[k];
  parts[0].append(closing, head + (n ? 1 : 0), std::string::npos);
  return std::move(parts[0]);
}


namespace {

using Kind = JsonTape::Kind;

// The count at v as a uint32_t ("is larger than 32 bits" past it).
uint32_t count32(const JsonRead& r, uint32_t v, const JsonPath& path, const char* want) {
  uint64_t x = r.count(v, path, want);
  if (x > UINT32_MAX) r.fail(path, std::to_string(x) + " is larger than 32 bits");
  return uint32_t(x);
}

// An optional member: absent or null leave *out as it is.
template <typename F>
void optional_member(const JsonRead& r, uint32_t obj, std::string_view key, F read) {
  uint32_t v = r.find(obj, key);
  if (v != kJsonAbsent && !r.is_null(v)) read(v);
}

// Each element of array v, an object, through f(object, its path).
template <typename F>
void each_object(const JsonRead& r, uint32_t v, const JsonPath& path, const char* what, F f) {
  uint32_t n = 0;
  r.array(v, path, what, &n);
  for (uint32_t i = 0; i < n; ++i) {
    const JsonPath e(path, i);
    f(r.object(r.tape().element(v, i), e, "an object"), e);
  }
}

void read_summary(const JsonRead& r, uint32_t summary, ProfileReport& p) {
  const JsonPath at("summary");
  p.makespan_us = r.non_negative(r.required(summary, "makespan_us", at), JsonPath(at, "makespan_us"));
  p.critical_path_us = r.non_negative(r.required(summary, "critical_path_us", at), JsonPath(at, "critical_path_us"));
  const std::pair<const char*, size_t*> counts[] = {{"real", &p.real},
                                                    {"fake", &p.fake},
                                                    {"blocking", &p.blocking},
                                                    {"none", &p.none},
                                                    {"lane_busy", &p.lane_busy},
                                                    {"blocking_lane_busy", &p.lane_busy},  // an older report's name
                                                    {"nodes_without_records", &p.nodes_without_records},
                                                    {"unmatched_records", &p.unmatched_records},
                                                    {"other_records", &p.other_records}};
  for (const auto& field : counts)  // (a structured binding cannot be captured in C++17)
    optional_member(r, summary, field.first,
                    [&](uint32_t v) { *field.second = size_t(r.count(v, JsonPath(at, field.first), "a count")); });
  optional_member(r, summary, "time_lost_us",
                  [&](uint32_t v) { p.time_lost_us = r.non_negative(v, JsonPath(at, "time_lost_us")); });
}

void read_join(const JsonRead& r, uint32_t join, ProfileReport& p) {
  const JsonPath at("join");
  optional_member(r, join, "by", [&](uint32_t v) {
    std::string_view by = r.string(v, JsonPath(at, "by"), 64);
    if (by != "ids" && by != "launches") r.fail(JsonPath(at, "by"), quoted(by, 64) + " is not \"ids\" or \"launches\"");
    p.by_ids = by == "ids";
  });
  optional_member(r, join, "assigned", [&](uint32_t v) {
    const JsonPath as(at, "assigned");
    r.object(v, as, "an object of counts");
    for (int k = 0; k < kAssignmentCount; ++k) {
      const std::string_view name = to_string(Assignment(k));
      optional_member(r, v, name, [&](uint32_t x) { p.assigned[k] = size_t(r.count(x, JsonPath(as, name), "a count")); });
    }
  });
  optional_member(r, join, "launches", [&](uint32_t v) {
    each_object(r, v, JsonPath(at, "launches"), "an array of launches", [&](uint32_t o, const JsonPath& e) {
      LaunchUse l;
      l.correlation = r.u32(r.required(o, "correlation", e), JsonPath(e, "correlation"));
      optional_member(r, o, "records", [&](uint32_t x) { l.records = r.u32(x, JsonPath(e, "records")); });
      std::string_view st = r.string(r.required(o, "status", e), JsonPath(e, "status"), 64);
      if (st == "used") l.status = LaunchUse::Status::used;
      else if (st == "partial") l.status = LaunchUse::Status::partial;
      else if (st == "skipped") l.status = LaunchUse::Status::skipped;
      else r.fail(JsonPath(e, "status"), quoted(st, 64) + " is not \"used\", \"partial\" or \"skipped\"");
      optional_member(r, o, "why", [&](uint32_t x) { l.why = std::string(r.string(x, JsonPath(e, "why"), 4096)); });
      p.launches.push_back(std::move(l));
    });
  });
}

void read_lanes(const JsonRead& r, uint32_t lanes, ProfileReport& p) {
  each_object(r, lanes, JsonPath("lanes"), "an array of lanes", [&](uint32_t o, const JsonPath& e) {
    LaneUsage u;
    u.lane.device = r.u32(r.required(o, "device", e), JsonPath(e, "device"));
    uint32_t type = r.u32(r.required(o, "channel_type", e), JsonPath(e, "channel_type"));
    if (type > 255) r.fail(JsonPath(e, "channel_type"), std::to_string(type) + " is not a channel type");
    u.lane.channel_type = uint8_t(type);
    u.lane.id = r.u32(r.required(o, "id", e), JsonPath(e, "id"));
    optional_member(r, o, "activities",
                    [&](uint32_t v) { u.activities = count32(r, v, JsonPath(e, "activities"), "a count"); });
    optional_member(r, o, "busy_us", [&](uint32_t v) { u.busy_us = r.non_negative(v, JsonPath(e, "busy_us")); });
    p.lanes.push_back(u);
  });
}

// A list of node indices (< n) or stream ids.
void read_indices(const JsonRead& r, uint32_t v, const char* key, uint32_t limit, std::vector<uint32_t>& out) {
  const JsonPath at(key);
  uint32_t n = 0;
  r.array(v, at, "an array of integers", &n);
  for (uint32_t i = 0; i < n; ++i) {
    const JsonPath e(at, i);
    uint32_t x = r.u32(r.tape().element(v, i), e);
    if (x >= limit) r.fail(e, std::to_string(x) + " is not a node index (the report has " + plural(limit, "node", "nodes") + ")");
    out.push_back(x);
  }
}

void read_node(const JsonRead& r, uint32_t o, const JsonPath& path, uint32_t n, NodeProfile& f,
               ProfileDocument::NodeIdentity& id) {
  optional_member(r, o, "tools_id", [&](uint32_t v) { id.tools_id = r.count(v, JsonPath(path, "tools_id"), "a tools id"); });
  optional_member(r, o, "kernel_name",
                  [&](uint32_t v) { id.kernel_name = std::string(r.string(v, JsonPath(path, "kernel_name"))); });
  optional_member(r, o, "node_type",
                  [&](uint32_t v) { id.node_type = std::string(r.string(v, JsonPath(path, "node_type"), 64)); });
  optional_member(r, o, "replays",
                  [&](uint32_t v) { f.replays = count32(r, v, JsonPath(path, "replays"), "a count of replays"); });
  uint32_t v = r.required(o, "delay_us", path);
  bool timed = !r.is_null(v);
  if (timed) {
    f.delay_us = r.number(v, JsonPath(path, "delay_us"));
    if (!f.replays) f.replays = 1;  // timed, in a report that does not say how often
  } else {
    f.replays = 0;
  }
  const std::pair<const char*, double*> times[] = {
      {"start_us", &f.start_us}, {"end_us", &f.end_us}, {"ready_us", &f.ready_us}};
  for (const auto& field : times)
    optional_member(r, o, field.first, [&](uint32_t x) { *field.second = r.number(x, JsonPath(path, field.first)); });
  optional_member(r, o, "observed_dependency", [&](uint32_t x) {
    uint64_t d = r.count(x, JsonPath(path, "observed_dependency"), "a node index or null");
    if (d >= n)
      r.fail(JsonPath(path, "observed_dependency"),
             std::to_string(d) + " is not a node index (the report has " + plural(n, "node", "nodes") + ")");
    f.observed_dependency = uint32_t(d);
  });
  optional_member(r, o, "observed_other", [&](uint32_t x) {
    f.observed_other = std::string(r.string(x, JsonPath(path, "observed_other")));
  });
  std::string_view verdict = r.string(r.required(o, "verdict", path), JsonPath(path, "verdict"), 64);
  if (!parse_verdict(verdict, &f.verdict))
    r.fail(JsonPath(path, "verdict"), quoted(verdict, 64) + " is not \"real\", \"fake\" or \"none\"");
  f.blocking = r.boolean(r.required(o, "blocking", path), JsonPath(path, "blocking"));
  optional_member(r, o, "lane_busy", [&](uint32_t x) { f.lane_busy = r.boolean(x, JsonPath(path, "lane_busy")); });
  v = r.required(o, "blocker", path);
  if (!r.is_null(v)) {
    uint64_t b = r.count(v, JsonPath(path, "blocker"), "a node index or null");
    if (b >= n)
      r.fail(JsonPath(path, "blocker"),
             std::to_string(b) + " is not a node index (the report has " + plural(n, "node", "nodes") + ")");
    f.blocker = uint32_t(b);
  }
  optional_member(r, o, "cause", [&](uint32_t x) { f.cause = std::string(r.string(x, JsonPath(path, "cause"), 256)); });
  // A blocking node's fake wait; a report of an older graphscope has none:
  // its cost was its delay.
  if (f.blocking) f.fake_wait_us = f.delay_us;
  optional_member(r, o, "fake_wait_us",
                  [&](uint32_t x) { f.fake_wait_us = r.non_negative(x, JsonPath(path, "fake_wait_us")); });
  optional_member(r, o, "wait", [&](uint32_t x) {
    AccountCategory c;
    if (!parse_account_key(r.string(x, JsonPath(path, "wait"), 64), &c))
      r.fail(JsonPath(path, "wait"), "is not a category of the account");
    f.wait = c;
  });
  optional_member(r, o, "lane", [&](uint32_t x) {
    Lane l;
    if (!parse_lane(r.string(x, JsonPath(path, "lane"), 256), &l))
      r.fail(JsonPath(path, "lane"), quoted(r.tape().str(x), 64) + " is not a lane (\"compute channel 3\", \"stream 7\")");
    f.lane = l;
  });
  optional_member(r, o, "stream", [&](uint32_t x) { f.stream = r.u32(x, JsonPath(path, "stream")); });
  optional_member(r, o, "assignment", [&](uint32_t x) {
    Assignment a;
    std::string_view s = r.string(x, JsonPath(path, "assignment"), 64);
    if (!parse_assignment(s, &a))
      r.fail(JsonPath(path, "assignment"),
             quoted(s, 64) + " is not \"id\", \"unique\", \"order\", \"interchangeable\" or \"ambiguous\"");
    f.assignment = a;
  });
  // Blocking means a fake verdict, a delay and what the node waited behind:
  // a blocker, or work outside the graph (observed_other); a report saying
  // otherwise would make the blocking rule guess.
  if (f.blocking && (f.verdict != Verdict::fake || (!f.blocker && f.observed_other.empty()) || !timed))
    r.fail(JsonPath(path, "blocking"), "is true without a fake verdict, a blocker and a delay");
}

void read_account(const JsonRead& r, uint32_t v, uint32_t n, MakespanAccount& a) {
  const JsonPath at("account");
  r.object(v, at, "an object");
  optional_member(r, v, "replay", [&](uint32_t x) { a.replay = r.u32(x, JsonPath(at, "replay")); });
  optional_member(r, v, "replays", [&](uint32_t x) { a.replays = r.u32(x, JsonPath(at, "replays")); });
  optional_member(r, v, "makespan_ns", [&](uint32_t x) {
    a.makespan_ns = int64_t(std::min<uint64_t>(r.u64(x, JsonPath(at, "makespan_ns")), uint64_t(INT64_MAX) / 2));
  });
  optional_member(r, v, "chain_nodes", [&](uint32_t x) { a.chain_nodes = r.u32(x, JsonPath(at, "chain_nodes")); });
  a.parts.clear();
  for (size_t c = 0; c < kAccountCategories; ++c) a.parts.push_back({AccountCategory(c), 0, 0, 0, 0});
  const uint32_t parts = r.required(v, "parts", at);
  const JsonPath pp(at, "parts");
  r.object(parts, pp, "an object of categories");
  int64_t sum = 0;
  for (size_t c = 0; c < kAccountCategories; ++c) {
    const std::string_view key = account_key(AccountCategory(c));
    optional_member(r, parts, key, [&](uint32_t x) {
      const JsonPath kp(pp, key);
      r.object(x, kp, "an object");
      AccountPart& part = a.parts[c];
      part.ns = int64_t(std::min<uint64_t>(r.u64(r.required(x, "ns", kp), JsonPath(kp, "ns")), uint64_t(INT64_MAX) / 16));
      optional_member(r, x, "median_us", [&](uint32_t y) { part.median_us = r.non_negative(y, JsonPath(kp, "median_us")); });
      optional_member(r, x, "min_us", [&](uint32_t y) { part.min_us = r.non_negative(y, JsonPath(kp, "min_us")); });
      optional_member(r, x, "max_us", [&](uint32_t y) { part.max_us = r.non_negative(y, JsonPath(kp, "max_us")); });
      sum += part.ns;
    });
  }
  if (sum != a.makespan_ns)
    r.fail(pp, "the parts add up to " + std::to_string(sum) + " ns, not the makespan's " + std::to_string(a.makespan_ns));
  a.nodes.assign(n, NodeAccount{});
  optional_member(r, v, "chain", [&](uint32_t x) {
    each_object(r, x, JsonPath(at, "chain"), "an array of chain nodes", [&](uint32_t o, const JsonPath& ip) {
      const uint64_t node = r.count(r.required(o, "node", ip), JsonPath(ip, "node"), "a node index");
      if (node >= n) r.fail(JsonPath(ip, "node"), std::to_string(node) + " is not a node of the report");
      NodeAccount& na = a.nodes[node];
      na.on_chain = true;
      optional_member(r, o, "work_ns", [&](uint32_t y) { na.work_ns = int64_t(std::min<uint64_t>(r.u64(y, JsonPath(ip, "work_ns")), uint64_t(INT64_MAX) / 2)); });
      optional_member(r, o, "wait_ns", [&](uint32_t y) { na.wait_ns = int64_t(std::min<uint64_t>(r.u64(y, JsonPath(ip, "wait_ns")), uint64_t(INT64_MAX) / 2)); });
      optional_member(r, o, "wait", [&](uint32_t y) {
        if (!parse_account_key(r.string(y, JsonPath(ip, "wait"), 64), &na.wait))
          r.fail(JsonPath(ip, "wait"), "is not a category of the account");
      });
    });
  });
}

}  // namespace

ProfileDocument read_profile_json(std::string_view text, const std::string& origin) {
  JsonTape t = JsonTape::parse(text, origin, 64);
  JsonRead r(t, origin);
  const uint32_t root = r.document(kProfileSchema, "a profile report");
  ProfileDocument d;
  ProfileReport& p = d.report;
  optional_member(r, root, "exec_graph_id", [&](uint32_t v) { p.exec_graph_id = count32(r, v, "exec_graph_id", "a graph id"); });
  optional_member(r, root, "template_graph_id", [&](uint32_t v) { d.template_graph_id = r.u32(v, "template_graph_id"); });
  optional_member(r, root, "name", [&](uint32_t v) { d.name = std::string(r.string(v, "name")); });
  optional_member(r, root, "replays", [&](uint32_t v) {
    p.replays = uint32_t(std::min<uint64_t>(r.count(v, "replays", "a count of replays"), UINT32_MAX));
  });
  optional_member(r, root, "threshold_us", [&](uint32_t v) { p.threshold_us = r.non_negative(v, "threshold_us"); });
  optional_member(r, root, "tolerance_us", [&](uint32_t v) { p.tolerance_us = r.non_negative(v, "tolerance_us"); });
  read_summary(r, r.object(r.required(root, "summary", ""), "summary", "an object"), p);
  optional_member(r, root, "join", [&](uint32_t v) { read_join(r, r.object(v, "join", "an object"), p); });
  uint32_t nodes = r.required(root, "nodes", "");
  uint32_t n = 0;
  r.array(nodes, "nodes", "an array of node profiles", &n);
  optional_member(r, root, "critical_path", [&](uint32_t v) { read_indices(r, v, "critical_path", n, p.critical_path); });
  optional_member(r, root, "lanes", [&](uint32_t v) { read_lanes(r, v, p); });
  optional_member(r, root, "streams", [&](uint32_t v) { read_indices(r, v, "streams", UINT32_MAX, p.streams); });
  optional_member(r, root, "account", [&](uint32_t v) { read_account(r, v, n, p.account); });
  optional_member(r, root, "what_if", [&](uint32_t v) {
    const JsonPath at("what_if");
    r.object(v, at, "an object");
    WhatIf x;
    x.measured_us = p.makespan_us;
    auto num = [&](const char* key, double& out) { out = r.number(r.required(v, key, at), JsonPath(at, key)); };
    num("latency_us", x.model.latency_us);
    num("dispatch_us", x.model.dispatch_us);
    num("as_measured_us", x.as_measured_us);
    num("without_fake_us", x.without_fake_us);
    num("zero_latency_us", x.zero_latency_us);
    optional_member(r, v, "fitted_us", [&](uint32_t y) { x.fitted_us = r.number(y, JsonPath(at, "fitted_us")); });
    optional_member(r, v, "replays_simulated",
                    [&](uint32_t y) { x.replays_simulated = r.u64(y, JsonPath(at, "replays_simulated")); });
    optional_member(r, v, "gap_nodes", [&](uint32_t y) { x.gap_nodes = r.u64(y, JsonPath(at, "gap_nodes")); });
    p.what_if = x;
  });
  p.nodes.resize(n);
  d.nodes.resize(n);
  const JsonPath at("nodes");
  for (uint32_t i = 0; i < n; ++i) {
    const JsonPath path(at, i);
    uint32_t o = r.object(t.element(nodes, i), path, "an object");
    uint64_t index = r.count(r.required(o, "index", path), JsonPath(path, "index"), "a node index");
    if (index != i)
      r.fail(JsonPath(path, "index"),
             "is " + std::to_string(index) + ", expected " + std::to_string(i) + " (nodes in index order)");
    p.nodes[i].index = i;
    read_node(r, o, path, n, p.nodes[i], d.nodes[i]);
  }
  // What to try, as written; a report written before findings existed gets
  // them from its account and what-if.
  const uint32_t findings = r.find(root, "findings");
  if (findings != kJsonAbsent) {
    each_object(r, findings, JsonPath("findings"), "an array of findings", [&](uint32_t o, const JsonPath& e) {
      Finding f;
      const std::string_view kind = r.string(r.required(o, "kind", e), JsonPath(e, "kind"), 64);
      if (!parse_finding_key(kind, &f.kind))
        r.fail(JsonPath(e, "kind"), quoted(kind, 64) + " is not \"channel\", \"copy_engine\" or \"latency\"");
      auto num = [&](const char* key, double& out) { out = r.non_negative(r.required(o, key, e), JsonPath(e, key)); };
      num("part_us", f.part_us);
      num("share", f.share);
      num("from_us", f.from_us);
      num("to_us", f.to_us);
      auto text = [&](const char* key, std::string& out) {
        out = std::string(r.string(r.required(o, key, e), JsonPath(e, key), 4096));
      };
      text("what", f.what);
      text("try", f.try_);
      text("text", f.text);
      p.findings.push_back(std::move(f));
    });
  } else {
    size_t compute_channels = 0;
    for (const LaneUsage& u : p.lanes) compute_channels += u.lane.channel_type == 1;
    p.findings = find_findings(p.account, p.what_if ? &*p.what_if : nullptr, compute_channels);
  }
  return d;
}

void check_profile_matches(const ProfileDocument& p, const GraphDocument& doc, const std::string& profile_origin,
                           const std::string& graph_origin) {
  const auto& nodes = doc.root.nodes;
  auto mismatch = [&](const std::string& why) {
    throw_input(profile_origin, "not a report of " + graph_origin + ": " + why);
  };
  if (p.nodes.size() != nodes.size())
    mismatch(plural(p.nodes.size(), "node", "nodes") + " against the graph's " + std::to_string(nodes.size()));
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto& f = p.nodes[i];
    const Node& n = nodes[i];
    if (f.tools_id && n.tools_id && *f.tools_id != *n.tools_id)
      mismatch("node " + std::to_string(i) + " has tools id " + std::to_string(*f.tools_id) +
               " against the graph's " + std::to_string(*n.tools_id));
    if (!f.kernel_name.empty() && f.kernel_name != n.kernel_name)
      mismatch("node " + std::to_string(i) + " runs " + quoted(f.kernel_name, 64) + ", the graph's " +
               (n.kernel_name.empty() ? std::string(to_string(n.type)) : quoted(n.kernel_name, 64)));
  }
}

}  // namespace graphscope
