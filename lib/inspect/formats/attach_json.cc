#include "attach_json.h"

#include "../core/error.h"
#include "../core/json_read.h"
#include "../core/json_tape.h"
#include "../core/json_writer.h"
#include "../core/text.h"

namespace graphscope {
namespace {

using Kind = JsonTape::Kind;

// Bounds of the ledger's figures on read: an index's times are since its
// process attached, and no process runs for 30 years; a hostile index's
// figures stay finite when the ledger sums them and divides by them.
constexpr double kMaxSeconds = 1e9;
constexpr double kMaxMs = kMaxSeconds * 1e3;
constexpr double kMaxUs = kMaxSeconds * 1e6;

void strings(JsonWriter& w, const char* key, const std::vector<std::string>& v) {
  w.key(key).begin_array();
  for (const auto& s : v) w.value(s);
  w.end_array();
}

void dim3(JsonWriter& w, const char* key, const uint32_t (&v)[3]) {
  w.key(key).begin_array().value(v[0]).value(v[1]).value(v[2]).end_array();
}

// The process's GPU work: totals, then the eager groups, the exec graphs
// and the timeline as [graph_us, eager_us] per bin (an hour of 1 s bins
// stays a few kilobytes).
void work_members(JsonWriter& w, const AttachWork& k) {
  w.key("work").begin_object();
  w.key("source").value(k.source);
  w.key("start_s").value(k.start_s).key("end_s").value(k.end_s);
  w.key("busy_us").value(k.busy_us).key("graph_us").value(k.graph_us).key("eager_us").value(k.eager_us);
  w.key("graph_records").value(k.graph_records).key("eager_records").value(k.eager_records);
  if (k.captures_end_s) w.key("captures_end_s").value(*k.captures_end_s);
  w.key("eager").begin_array();
  for (const AttachWork::Group& g : k.eager) {
    w.begin_object();
    w.key("kind").value(g.kind).key("name").value(g.name);
    bool geometry = false;
    for (int i = 0; i < 3; ++i) geometry = geometry || g.grid[i] || g.block[i];
    if (geometry) {
      dim3(w, "grid", g.grid);
      dim3(w, "block", g.block);
    }
    w.key("launches").value(g.launches);
    if (g.launches_after_captures) w.key("launches_after_captures").value(g.launches_after_captures);
    w.key("gpu_us").value(g.gpu_us).key("first_s").value(g.first_s).key("last_s").value(g.last_s);
    w.end_object();
  }
  w.end_array();
  if (k.other_launches || k.other_us != 0)
    w.key("other_launches").value(k.other_launches).key("other_us").value(k.other_us);
  if (k.misstamped_records)
    w.key("misstamped_records").value(k.misstamped_records).key("misstamped_us").value(k.misstamped_us);
  if (k.sites_read) {
    w.key("sites").begin_array();
    for (const AttachWork::Site& x : k.sites) {
      w.begin_object();
      if (!x.python.empty()) {
        w.key("python").begin_array();
        for (const AttachWork::SiteFrame& f : x.python)
          w.begin_object().key("file").value(f.file).key("line").value(f.line).key("function").value(f.function).end_object();
        w.end_array();
      }
      if (!x.module.empty()) w.key("module").value(x.module);
      if (!x.nvtx.empty()) strings(w, "nvtx", x.nvtx);
      if (!x.native.empty()) w.key("native").value(x.native);
      w.key("launches").value(x.launches);
      if (x.launches_after_captures) w.key("launches_after_captures").value(x.launches_after_captures);
      w.key("gpu_us").value(x.gpu_us);
      if (!x.top.empty()) w.key("top").value(x.top);
      w.end_object();
    }
    w.end_array();
    w.key("unsited_launches").value(k.unsited_launches).key("unsited_us").value(k.unsited_us);
  }
  w.key("graphs").begin_array();
  for (const AttachWork::GraphTime& g : k.graphs) {
    w.begin_object();
    w.key("exec_graph_id").value(g.exec_graph_id).key("replays").value(g.replays).key("gpu_us").value(g.gpu_us);
    w.key("first_s").value(g.first_s).key("last_s").value(g.last_s);
    w.end_object();
  }
  w.end_array();
  w.key("bin_s").value(k.bin_s);
  w.key("timeline").begin_array();
  for (const AttachWork::Bin& b : k.timeline) w.begin_array().value(b.graph_us).value(b.eager_us).end_array();
  w.end_array();
  w.end_object();
}

// The members of a process index after "schema", in the order the
// injection library has always written them.
void index_members(JsonWriter& w, const AttachIndex& x) {
  w.key("pid").value(x.pid);
  strings(w, "command_line", x.command_line);
  w.key("attached").value(x.attached);
  if (!x.let_go.empty()) w.key("let_go").value(x.let_go);
  if (x.let_go_count) w.key("let_go_count").value(x.let_go_count);
  if (x.taken_back_count) w.key("taken_back_count").value(x.taken_back_count);
  if (!x.stays_attached.empty()) w.key("stays_attached").value(x.stays_attached);
  if (!x.attach_error.empty()) w.key("attach_error").value(x.attach_error);
  w.key("complete").value(x.complete);
  w.key("profile").value(x.profile);
  if (!x.profile_error.empty()) w.key("profile_error").value(x.profile_error);
  if (const auto& r = x.rank) {
    w.key("rank").begin_object();
    w.key("rank").value(r->rank);
    if (r->local_rank) w.key("local_rank").value(*r->local_rank);
    if (r->world_size) w.key("world_size").value(*r->world_size);
    w.key("source").value(r->source);
    w.end_object();
  }
  if (const auto& d = x.device) {
    w.key("device").begin_object();
    w.key("name").value(d->name);
    if (!d->compute_capability.empty()) w.key("compute_capability").value(d->compute_capability);
    if (d->driver_version) w.key("driver_version").value(*d->driver_version);
    if (d->runtime_version) w.key("runtime_version").value(*d->runtime_version);
    if (d->ordinal) w.key("ordinal").value(*d->ordinal);
    if (!d->pci_bus_id.empty()) w.key("pci_bus_id").value(d->pci_bus_id);
    w.end_object();
  }
  w.key("graphs").begin_array();
  for (const auto& g : x.graphs) {
    w.begin_object();
    w.key("exec_graph_id").value(uint64_t(g.exec_graph_id));
    w.key("file").value(g.file);
    w.key("nodes").value(g.nodes);
    w.key("nodes_with_bodies").value(g.nodes_with_bodies);
    strings(w, "first_kernels", g.first_kernels);
    if (g.version > 1) {
      w.key("version").value(uint64_t(g.version));
      strings(w, "updated_by", g.updated_by);
    }
    if (g.superseded) w.key("superseded").value(true);
    if (g.unchanged_updates) w.key("unchanged_updates").value(g.unchanged_updates);
    if (g.updates_not_recorded) w.key("updates_not_recorded").value(g.updates_not_recorded);
    if (!g.not_recorded.empty()) strings(w, "not_recorded", g.not_recorded);
    if (g.created_s) w.key("created_s").value(*g.created_s);
    if (g.capture_ms) w.key("capture_ms").value(*g.capture_ms);
    if (g.instantiate_ms) w.key("instantiate_ms").value(*g.instantiate_ms);
    if (g.uploads) w.key("uploads").value(g.uploads);
    if (g.upload_ms != 0) w.key("upload_ms").value(g.upload_ms);
    if (g.capture_alloc_bytes) w.key("capture_alloc_bytes").value(*g.capture_alloc_bytes);
    if (x.profiling || x.launches_counted) w.key("launches").value(g.launches);
    if (x.profiling) {
      w.key("replays_analysed").value(g.replays_analysed);
      if (g.profiled) {
        w.key("profile").value(g.profile_file).key("trace").value(g.trace_file);
        w.key("fake").value(g.fake).key("blocking").value(g.blocking);
        w.key("makespan_us").value(g.makespan_us).key("critical_path_us").value(g.critical_path_us);
      } else if (!g.profile_error.empty()) {
        w.key("profile_error").value(g.profile_error);
      }
    }
    if (g.first_launch_s) w.key("first_launch_s").value(*g.first_launch_s);
    if (g.last_launch_s) w.key("last_launch_s").value(*g.last_launch_s);
    w.end_object();
  }
  w.end_array();
  w.key("skipped").begin_array();
  for (const auto& s : x.skipped) {
    w.begin_object();
    w.key("exec_graph_id");
    s.exec_graph_id ? w.value(uint64_t(*s.exec_graph_id)) : w.null();
    w.key("nodes").value(s.nodes).key("why").value(s.why);
    w.end_object();
  }
  w.end_array();
  if (x.dropped_records) w.key("dropped_records").value(x.dropped_records);
  if (x.launches_counted) w.key("launches_counted").value(true);
  if (!x.launches_missed.empty()) w.key("launches_missed").value(x.launches_missed);
  if (x.graph_mem_reserved_high) w.key("graph_mem_reserved_high").value(*x.graph_mem_reserved_high);
  if (x.graph_mem_used_high) w.key("graph_mem_used_high").value(*x.graph_mem_used_high);
  if (x.work) work_members(w, *x.work);
  if (x.attached_monotonic_s) w.key("attached_monotonic_s").value(*x.attached_monotonic_s);
  if (!x.torch_log.empty()) w.key("torch_log").value(x.torch_log);
  if (!x.update_failures.empty()) {
    w.key("update_failures").begin_array();
    for (const UpdateFailure& f : x.update_failures) {
      w.begin_object().key("exec_graph_id");
      f.exec_graph_id ? w.value(uint64_t(*f.exec_graph_id)) : w.null();
      w.key("call").value(f.call).key("error").value(f.error);
      if (!f.result.empty()) w.key("result").value(f.result);
      if (f.from_node) w.key("from_node").value(uint64_t(*f.from_node));
      if (!f.from_node_text.empty()) w.key("from_node_text").value(f.from_node_text);
      if (!f.node_text.empty()) w.key("node_text").value(f.node_text);
      w.key("count").value(f.count).key("first_s").value(f.first_s).end_object();
    }
    w.end_array();
  }
  if (const auto& l = x.liveness) {
    w.key("liveness").begin_object().key("mode").value(l->mode).key("watched").value(l->watched);
    w.key("torch").value(l->torch).key("findings").begin_array();
    for (const LivenessFinding& f : l->findings) {
      w.begin_object().key("exec_graph_id").value(uint64_t(f.exec_graph_id)).key("node").value(uint64_t(f.node));
      w.key("arg").value(uint64_t(f.arg)).key("offset").value(uint64_t(f.offset)).key("address").value(f.address);
      w.key("source").value(f.source).key("block").value(f.block).key("block_size").value(f.block_size);
      if (!f.allocated_at.empty()) w.key("allocated_at").value(f.allocated_at);
      if (!f.freed_at.empty()) w.key("freed_at").value(f.freed_at);
      w.key("reused").value(f.reused);
      if (!f.reused_at.empty()) w.key("reused_at").value(f.reused_at);
      w.key("first_replay").value(f.first_replay).key("replays").value(f.replays).key("refused").value(f.refused);
      w.key("addresses").value(f.addresses).end_object();
    }
    w.end_array();
    if (l->dropped) w.key("dropped").value(l->dropped);
    strings(w, "notes", l->notes);
    w.end_object();
  }
  strings(w, "errors", x.errors);
  if (!x.unindexed.empty()) strings(w, "unindexed", x.unindexed);
}

std::string finished(JsonWriter& w) {
  std::string text(w.view());
  text += '\n';
  return text;
}

// Typed reading of both documents.
class Reader {
 public:
  Reader(const JsonTape& t, const std::string& origin) : t_(t), r_(t, origin) {}

  std::vector<std::string> strings(uint32_t v, const JsonPath& at) const {
    uint32_t n = 0;
    r_.array(v, at, "an array of strings", &n);
    std::vector<std::string> out;
    for (uint32_t i = 0; i < n; ++i) out.emplace_back(r_.string(t_.element(v, i), JsonPath(at, i)));
    return out;
  }
  std::string text(uint32_t obj, const char* key, const JsonPath& at) const {
    uint32_t v = r_.find(obj, key);
    return v == kJsonAbsent ? std::string() : std::string(r_.string(v, JsonPath(at, key)));
  }
  uint64_t count(uint32_t obj, const char* key, const JsonPath& at, bool required = false) const {
    uint32_t v = required ? r_.required(obj, key, at) : r_.find(obj, key);
    return v == kJsonAbsent ? 0 : r_.u64(v, JsonPath(at, key));
  }

  // A figure: a number, not negative and at most max.
  double figure(uint32_t v, const JsonPath& at, double max) const {
    const double d = r_.non_negative(v, at);
    if (d > max) r_.fail(at, "is " + num(d) + ", more than " + num(max));
    return d;
  }
  double figure(uint32_t obj, const char* key, const JsonPath& at, double max) const {
    return figure(r_.required(obj, key, at), JsonPath(at, key), max);
  }
  std::optional<double> opt_figure(uint32_t obj, const char* key, const JsonPath& at, double max) const {
    uint32_t v = r_.find(obj, key);
    if (v == kJsonAbsent) return std::nullopt;
    return figure(v, JsonPath(at, key), max);
  }
  std::optional<uint64_t> opt_count(uint32_t obj, const char* key, const JsonPath& at) const {
    uint32_t v = r_.find(obj, key);
    if (v == kJsonAbsent) return std::nullopt;
    return r_.u64(v, JsonPath(at, key));
  }
  // An array of at most max elements, refused in one line when longer.
  uint32_t capped(uint32_t obj, const char* key, const JsonPath& at, const char* want, size_t max,
                  uint32_t* n) const {
    const JsonPath p(at, key);
    uint32_t v = r_.array(r_.required(obj, key, at), p, want, n);
    if (*n > max) r_.fail(p, "holds " + std::to_string(*n) + " entries, more than " + std::to_string(max));
    return v;
  }
  void dim3(uint32_t obj, const char* key, const JsonPath& at, uint32_t (&out)[3]) const {
    const JsonPath p(at, key);
    uint32_t n = 0, v = r_.array(r_.required(obj, key, at), p, "an array of 3 integers", &n);
    if (n != 3) r_.fail(p, "holds " + std::to_string(n) + " numbers, expected 3");
    for (uint32_t i = 0; i < 3; ++i) out[i] = r_.u32(t_.element(v, i), JsonPath(p, i));
  }

  // An eager group's or site's launches, and those of them after the captures.
  void launch_counts(uint32_t g, const JsonPath& e, uint64_t& launches, uint64_t& after) const {
    launches = count(g, "launches", e, true);
    after = count(g, "launches_after_captures", e);
    if (after > launches) r_.fail(JsonPath(e, "launches_after_captures"), "is more than launches");
  }

  AttachWork work(uint32_t o, const JsonPath& at) const {
    r_.object(o, at);
    AttachWork k;
    k.source = std::string(r_.string(r_.required(o, "source", at), JsonPath(at, "source"), 256));
    k.start_s = figure(o, "start_s", at, kMaxSeconds);
    k.end_s = figure(o, "end_s", at, kMaxSeconds);
    k.busy_us = figure(o, "busy_us", at, kMaxUs);
    k.graph_us = figure(o, "graph_us", at, kMaxUs);
    k.eager_us = figure(o, "eager_us", at, kMaxUs);
    k.graph_records = count(o, "graph_records", at, true);
    k.eager_records = count(o, "eager_records", at, true);
    k.captures_end_s = opt_figure(o, "captures_end_s", at, kMaxSeconds);
    uint32_t n = 0;
    const JsonPath ep(at, "eager");
    uint32_t eager = capped(o, "eager", at, "an array of groups", AttachWork::kMaxGroups, &n);
    for (uint32_t i = 0; i < n; ++i) {
      const JsonPath e(ep, i);
      uint32_t g = r_.object(t_.element(eager, i), e);
      AttachWork::Group x;
      x.kind = std::string(r_.string(r_.required(g, "kind", e), JsonPath(e, "kind"), 64));
      x.name = std::string(r_.string(r_.required(g, "name", e), JsonPath(e, "name")));
      if (r_.find(g, "grid") != kJsonAbsent || r_.find(g, "block") != kJsonAbsent) {
        dim3(g, "grid", e, x.grid);
        dim3(g, "block", e, x.block);
      }
      launch_counts(g, e, x.launches, x.launches_after_captures);
      x.gpu_us = figure(g, "gpu_us", e, kMaxUs);
      x.first_s = figure(g, "first_s", e, kMaxSeconds);
      x.last_s = figure(g, "last_s", e, kMaxSeconds);
      k.eager.push_back(std::move(x));
    }
    k.other_launches = count(o, "other_launches", at);
    k.other_us = opt_figure(o, "other_us", at, kMaxUs).value_or(0);
    k.misstamped_records = count(o, "misstamped_records", at);
    k.misstamped_us = opt_figure(o, "misstamped_us", at, kMaxUs).value_or(0);
    if (r_.find(o, "sites") != kJsonAbsent) {
      k.sites_read = true;
      const JsonPath sp(at, "sites");
      uint32_t sites = capped(o, "sites", at, "an array of launch sites", AttachWork::kMaxSites, &n);
      for (uint32_t i = 0; i < n; ++i) {
        const JsonPath e(sp, i);
        uint32_t g = r_.object(t_.element(sites, i), e);
        AttachWork::Site x;
        if (r_.find(g, "python") != kJsonAbsent) {
          uint32_t m = 0;
          const JsonPath pp(e, "python");
          uint32_t frames = capped(g, "python", e, "an array of frames", 8, &m);
          for (uint32_t j = 0; j < m; ++j) {
            const JsonPath fp(pp, j);
            uint32_t f = r_.object(t_.element(frames, j), fp);
            AttachWork::SiteFrame sf;
            sf.file = std::string(r_.string(r_.required(f, "file", fp), JsonPath(fp, "file"), 4096));
            sf.line = count(f, "line", fp, true);
            sf.function = std::string(r_.string(r_.required(f, "function", fp), JsonPath(fp, "function"), 4096));
            x.python.push_back(std::move(sf));
          }
        }
        x.module = text(g, "module", e);
        if (r_.find(g, "nvtx") != kJsonAbsent) x.nvtx = strings(r_.find(g, "nvtx"), JsonPath(e, "nvtx"));
        x.native = text(g, "native", e);
        launch_counts(g, e, x.launches, x.launches_after_captures);
        x.gpu_us = figure(g, "gpu_us", e, kMaxUs);
        x.top = text(g, "top", e);
        k.sites.push_back(std::move(x));
      }
      k.unsited_launches = count(o, "unsited_launches", at);
      k.unsited_us = opt_figure(o, "unsited_us", at, kMaxUs).value_or(0);
    }
    const JsonPath gp(at, "graphs");
    uint32_t graphs = r_.array(r_.required(o, "graphs", at), gp, "an array of graphs", &n);
    for (uint32_t i = 0; i < n; ++i) {
      const JsonPath e(gp, i);
      uint32_t g = r_.object(t_.element(graphs, i), e);
      AttachWork::GraphTime x;
      x.exec_graph_id = r_.u32(r_.required(g, "exec_graph_id", e), JsonPath(e, "exec_graph_id"));
      x.replays = count(g, "replays", e, true);
      x.gpu_us = figure(g, "gpu_us", e, kMaxUs);
      x.first_s = figure(g, "first_s", e, kMaxSeconds);
      x.last_s = figure(g, "last_s", e, kMaxSeconds);
      k.graphs.push_back(x);
    }
    k.bin_s = figure(o, "bin_s", at, kMaxSeconds);
    if (k.bin_s <= 0) r_.fail(JsonPath(at, "bin_s"), "is 0, expected a positive interval");
    const JsonPath tp(at, "timeline");
    uint32_t timeline = capped(o, "timeline", at, "an array of bins", AttachWork::kMaxBins, &n);
    for (uint32_t i = 0; i < n; ++i) {
      const JsonPath e(tp, i);
      uint32_t m = 0, b = r_.array(t_.element(timeline, i), e, "a pair [graph_us, eager_us]", &m);
      if (m != 2) r_.fail(e, "holds " + std::to_string(m) + " numbers, expected 2: [graph_us, eager_us]");
      k.timeline.push_back({figure(t_.element(b, 0), JsonPath(e, uint32_t(0)), kMaxUs),
                            figure(t_.element(b, 1), JsonPath(e, uint32_t(1)), kMaxUs)});
    }
    return k;
  }

  AttachIndex index(uint32_t o, const JsonPath& at) const {
    AttachIndex x;
    uint32_t v = r_.required(o, "pid", at);
    const auto& pid = t_.at(v);
    if (pid.kind == Kind::integer) x.pid = pid.i;
    else x.pid = int64_t(r_.u64(v, JsonPath(at, "pid")) & 0x7fffffffffffffffull);
    x.command_line = strings(r_.required(o, "command_line", at), JsonPath(at, "command_line"));
    x.attached = r_.boolean(r_.required(o, "attached", at), JsonPath(at, "attached"));
    x.let_go = text(o, "let_go", at);
    x.let_go_count = count(o, "let_go_count", at);
    x.taken_back_count = count(o, "taken_back_count", at);
    x.stays_attached = text(o, "stays_attached", at);
    x.attach_error = text(o, "attach_error", at);
    x.complete = r_.boolean(r_.required(o, "complete", at), JsonPath(at, "complete"));
    x.profile = r_.boolean(r_.required(o, "profile", at), JsonPath(at, "profile"));
    x.profile_error = text(o, "profile_error", at);
    if (uint32_t d = r_.find(o, "device"); d != kJsonAbsent) {
      const JsonPath dp(at, "device");
      r_.object(d, dp);
      AttachDevice dev;
      dev.name = std::string(r_.string(r_.required(d, "name", dp), JsonPath(dp, "name")));
      dev.compute_capability = text(d, "compute_capability", dp);
      if (uint32_t y = r_.find(d, "driver_version"); y != kJsonAbsent)
        dev.driver_version = int64_t(r_.u32(y, JsonPath(dp, "driver_version")));
      if (uint32_t y = r_.find(d, "runtime_version"); y != kJsonAbsent)
        dev.runtime_version = int64_t(r_.u32(y, JsonPath(dp, "runtime_version")));
      if (uint32_t y = r_.find(d, "ordinal"); y != kJsonAbsent) dev.ordinal = int64_t(r_.u32(y, JsonPath(dp, "ordinal")));
      dev.pci_bus_id = text(d, "pci_bus_id", dp);
      x.device = dev;
    }
    // Indexes of releases before ranks have no "rank": none.
    if (uint32_t k = r_.find(o, "rank"); k != kJsonAbsent) {
      const JsonPath kp(at, "rank");
      r_.object(k, kp);
      AttachRank rank;
      rank.rank = int64_t(r_.u32(r_.required(k, "rank", kp), JsonPath(kp, "rank")));
      if (uint32_t y = r_.find(k, "local_rank"); y != kJsonAbsent)
        rank.local_rank = int64_t(r_.u32(y, JsonPath(kp, "local_rank")));
      if (uint32_t y = r_.find(k, "world_size"); y != kJsonAbsent)
        rank.world_size = int64_t(r_.u32(y, JsonPath(kp, "world_size")));
      rank.source = std::string(r_.string(r_.required(k, "source", kp), JsonPath(kp, "source")));
      x.rank = rank;
    }
    // Launches counted in every run (the ledger's indexes): "launches" no
    // longer says the process profiled.
    if (uint32_t v = r_.find(o, "launches_counted"); v != kJsonAbsent)
      x.launches_counted = r_.boolean(v, JsonPath(at, "launches_counted"));
    const JsonPath gp(at, "graphs");
    uint32_t n = 0, graphs = r_.array(r_.required(o, "graphs", at), gp, "an array of graphs", &n);
    for (uint32_t i = 0; i < n; ++i) {
      const JsonPath e(gp, i);
      uint32_t g = r_.object(t_.element(graphs, i), e);
      AttachedGraph a;
      a.exec_graph_id = r_.u32(r_.required(g, "exec_graph_id", e), JsonPath(e, "exec_graph_id"));
      a.file = std::string(r_.string(r_.required(g, "file", e), JsonPath(e, "file"), 4096));
      a.nodes = count(g, "nodes", e, true);
      a.nodes_with_bodies = count(g, "nodes_with_bodies", e, true);
      a.first_kernels = strings(r_.required(g, "first_kernels", e), JsonPath(e, "first_kernels"));
      if (uint32_t v = r_.find(g, "version"); v != kJsonAbsent) {
        a.version = r_.u32(v, JsonPath(e, "version"));
        if (a.version < 1) r_.fail(JsonPath(e, "version"), "versions start at 1");
        a.updated_by = strings(r_.required(g, "updated_by", e), JsonPath(e, "updated_by"));
      }
      if (uint32_t v = r_.find(g, "superseded"); v != kJsonAbsent)
        a.superseded = r_.boolean(v, JsonPath(e, "superseded"));
      a.unchanged_updates = count(g, "unchanged_updates", e);
      a.updates_not_recorded = count(g, "updates_not_recorded", e);
      if (uint32_t v = r_.find(g, "not_recorded"); v != kJsonAbsent)
        a.not_recorded = strings(v, JsonPath(e, "not_recorded"));
      a.created_s = opt_figure(g, "created_s", e, kMaxSeconds);
      a.capture_ms = opt_figure(g, "capture_ms", e, kMaxMs);
      a.instantiate_ms = opt_figure(g, "instantiate_ms", e, kMaxMs);
      a.uploads = count(g, "uploads", e);
      a.upload_ms = opt_figure(g, "upload_ms", e, kMaxMs).value_or(0);
      a.capture_alloc_bytes = opt_count(g, "capture_alloc_bytes", e);
      a.first_launch_s = opt_figure(g, "first_launch_s", e, kMaxSeconds);
      a.last_launch_s = opt_figure(g, "last_launch_s", e, kMaxSeconds);
      if (r_.find(g, "launches") != kJsonAbsent) {
        // An index from before launches were counted in every run has them
        // only when the process profiled.
        if (!x.launches_counted) x.profiling = true;
        a.launches = count(g, "launches", e);
        a.replays_analysed = count(g, "replays_analysed", e);
        if (uint32_t p = r_.find(g, "profile"); p != kJsonAbsent) {
          a.profiled = true;
          a.profile_file = std::string(r_.string(p, JsonPath(e, "profile"), 4096));
          a.trace_file = std::string(r_.string(r_.required(g, "trace", e), JsonPath(e, "trace"), 4096));
          a.fake = count(g, "fake", e, true);
          a.blocking = count(g, "blocking", e, true);
          a.makespan_us = r_.non_negative(r_.required(g, "makespan_us", e), JsonPath(e, "makespan_us"));
          a.critical_path_us =
              r_.non_negative(r_.required(g, "critical_path_us", e), JsonPath(e, "critical_path_us"));
        }
        a.profile_error = text(g, "profile_error", e);
      }
      x.graphs.push_back(std::move(a));
    }
    // A profiling process that dumped no graph says so only by "profile".
    x.profiling = x.profiling || x.profile || !x.profile_error.empty();
    const JsonPath sp(at, "skipped");
    uint32_t skipped = r_.array(r_.required(o, "skipped", at), sp, "an array", &n);
    for (uint32_t i = 0; i < n; ++i) {
      const JsonPath e(sp, i);
      uint32_t s = r_.object(t_.element(skipped, i), e);
      SkippedGraph k;
      k.exec_graph_id = r_.opt_u32(r_.required(s, "exec_graph_id", e), JsonPath(e, "exec_graph_id"));
      k.nodes = count(s, "nodes", e, true);
      k.why = std::string(r_.string(r_.required(s, "why", e), JsonPath(e, "why")));
      x.skipped.push_back(std::move(k));
    }
    x.dropped_records = count(o, "dropped_records", at);
    x.launches_missed = text(o, "launches_missed", at);
    x.graph_mem_reserved_high = opt_count(o, "graph_mem_reserved_high", at);
    x.graph_mem_used_high = opt_count(o, "graph_mem_used_high", at);
    if (uint32_t k = r_.find(o, "work"); k != kJsonAbsent) x.work = work(k, JsonPath(at, "work"));
    // A monotonic clock's instant: seconds since the machine booted (no bound but a finite number).
    if (uint32_t v = r_.find(o, "attached_monotonic_s"); v != kJsonAbsent)
      x.attached_monotonic_s = r_.non_negative(v, JsonPath(at, "attached_monotonic_s"));
    if (uint32_t v = r_.find(o, "torch_log"); v != kJsonAbsent)
      x.torch_log = std::string(r_.string(v, JsonPath(at, "torch_log"), 4096));
    if (r_.find(o, "update_failures") != kJsonAbsent) {
      const JsonPath up(at, "update_failures");
      uint32_t fs = capped(o, "update_failures", at, "an array", 100000, &n);
      for (uint32_t i = 0; i < n; ++i) {
        const JsonPath e(up, i);
        uint32_t f = r_.object(t_.element(fs, i), e);
        UpdateFailure u;
        u.exec_graph_id = r_.opt_u32(r_.required(f, "exec_graph_id", e), JsonPath(e, "exec_graph_id"));
        u.call = std::string(r_.string(r_.required(f, "call", e), JsonPath(e, "call"), 256));
        u.error = std::string(r_.string(r_.required(f, "error", e), JsonPath(e, "error"), 256));
        u.result = text(f, "result", e);
        if (uint32_t v = r_.find(f, "from_node"); v != kJsonAbsent) u.from_node = r_.u32(v, JsonPath(e, "from_node"));
        u.from_node_text = text(f, "from_node_text", e);
        u.node_text = text(f, "node_text", e);
        u.count = count(f, "count", e, true);
        u.first_s = figure(f, "first_s", e, 1e9);
        x.update_failures.push_back(std::move(u));
      }
    }
    if (uint32_t v = r_.find(o, "liveness"); v != kJsonAbsent) x.liveness = liveness(v, JsonPath(at, "liveness"));
    x.errors = strings(r_.required(o, "errors", at), JsonPath(at, "errors"));
    if (uint32_t u = r_.find(o, "unindexed"); u != kJsonAbsent) x.unindexed = strings(u, JsonPath(at, "unindexed"));
    return x;
  }

  AttachLiveness liveness(uint32_t v, const JsonPath& at) const {
    uint32_t o = r_.object(v, at);
    AttachLiveness l;
    l.mode = std::string(r_.string(r_.required(o, "mode", at), JsonPath(at, "mode"), 16));
    if (l.mode != "report" && l.mode != "error") r_.fail(JsonPath(at, "mode"), "is not report or error");
    l.watched = count(o, "watched", at, true);
    l.torch = r_.boolean(r_.required(o, "torch", at), JsonPath(at, "torch"));
    uint32_t n = 0;
    const JsonPath fp(at, "findings");
    uint32_t fs = capped(o, "findings", at, "an array", 100000, &n);
    for (uint32_t i = 0; i < n; ++i) {
      const JsonPath e(fp, i);
      uint32_t f = r_.object(t_.element(fs, i), e);
      LivenessFinding x;
      x.exec_graph_id = r_.u32(r_.required(f, "exec_graph_id", e), JsonPath(e, "exec_graph_id"));
      x.node = r_.u32(r_.required(f, "node", e), JsonPath(e, "node"));
      x.arg = r_.u32(r_.required(f, "arg", e), JsonPath(e, "arg"));
      x.offset = r_.u32(r_.required(f, "offset", e), JsonPath(e, "offset"));
      x.address = count(f, "address", e, true);
      x.source = std::string(r_.string(r_.required(f, "source", e), JsonPath(e, "source"), 16));
      if (x.source != "driver" && x.source != "torch") r_.fail(JsonPath(e, "source"), "is not driver or torch");
      x.block = count(f, "block", e, true);
      x.block_size = count(f, "block_size", e, true);
      x.allocated_at = text(f, "allocated_at", e);
      x.freed_at = text(f, "freed_at", e);
      x.reused_at = text(f, "reused_at", e);
      x.reused = r_.boolean(r_.required(f, "reused", e), JsonPath(e, "reused"));
      x.first_replay = count(f, "first_replay", e, true);
      x.replays = count(f, "replays", e, true);
      x.refused = count(f, "refused", e, true);
      x.addresses = count(f, "addresses", e, true);
      l.findings.push_back(std::move(x));
    }
    l.dropped = count(o, "dropped", at);
    l.notes = strings(r_.required(o, "notes", at), JsonPath(at, "notes"));
    return l;
  }

  const JsonTape& t_;
  JsonRead r_;
};

}  // namespace

std::string write_attach_index(const AttachIndex& x) {
  JsonWriter w(2);
  w.begin_object();
  w.key("schema").value(kAttachSchema);
  w.key("graphscope_version").value(GRAPHSCOPE_VERSION);
  index_members(w, x);
  w.end_object();
  return finished(w);
}

AttachIndex read_attach_index(std::string_view text, const std::string& origin) {
  JsonTape t = JsonTape::parse(text, origin, 16);
  Reader r(t, origin);
  uint32_t root = r.r_.document(kAttachSchema, "a process index");
  return r.index(root, JsonPath(""));
}

std::string write_attach_run(const AttachRun& run) {
  JsonWriter w(3);
  w.begin_object();
  w.key("schema").value(kAttachRunSchema);
  w.key("graphscope_version").value(GRAPHSCOPE_VERSION);
  strings(w, "command", run.command);
  w.key("exit_code").value(run.exit_code);
  w.key("profile").value(run.profile);
  w.key("processes").begin_array();
  for (const auto& p : run.processes) {
    w.begin_object();
    w.key("dir").value(p.dir);
    w.key("schema").value(kAttachSchema);
    index_members(w, p.index);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return finished(w);
}

AttachRun read_attach_run(std::string_view text, const std::string& origin) {
  JsonTape t = JsonTape::parse(text, origin, 16);
  Reader r(t, origin);
  const JsonRead& j = r.r_;
  uint32_t root = j.document(kAttachRunSchema, "a run index");
  AttachRun run;
  run.command = r.strings(j.required(root, "command", ""), "command");
  uint32_t code = j.required(root, "exit_code", "");
  run.exit_code = t.at(code).kind == Kind::integer ? t.at(code).i : int64_t(j.u32(code, "exit_code"));
  run.profile = j.boolean(j.required(root, "profile", ""), "profile");
  const JsonPath at("processes");
  uint32_t n = 0, list = j.array(j.required(root, "processes", ""), at, "an array of process indexes", &n);
  for (uint32_t i = 0; i < n; ++i) {
    const JsonPath e(at, i);
    uint32_t o = j.object(t.element(list, i), e);
    AttachRun::Process p;
    p.dir = std::string(j.string(j.required(o, "dir", e), JsonPath(e, "dir"), 4096));
    p.index = r.index(o, e);
    run.processes.push_back(std::move(p));
  }
  return run;
}

}  // namespace graphscope
