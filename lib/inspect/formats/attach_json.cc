#include "attach_json.h"

#include "../core/error.h"
#include "../core/json_read.h"
#include "../core/json_tape.h"
#include "../core/json_writer.h"

namespace graphscope {
namespace {

using Kind = JsonTape::Kind;

void strings(JsonWriter& w, const char* key, const std::vector<std::string>& v) {
  w.key(key).begin_array();
  for (const auto& s : v) w.value(s);
  w.end_array();
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
    if (!g.not_recorded.empty()) strings(w, "not_recorded", g.not_recorded);
    if (x.profiling) {
      w.key("launches").value(g.launches);
      w.key("replays_analysed").value(g.replays_analysed);
      if (g.profiled) {
        w.key("profile").value(g.profile_file).key("trace").value(g.trace_file);
        w.key("fake").value(g.fake).key("blocking").value(g.blocking);
        w.key("makespan_us").value(g.makespan_us).key("critical_path_us").value(g.critical_path_us);
      } else if (!g.profile_error.empty()) {
        w.key("profile_error").value(g.profile_error);
      }
    }
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
      if (uint32_t v = r_.find(g, "not_recorded"); v != kJsonAbsent)
        a.not_recorded = strings(v, JsonPath(e, "not_recorded"));
      if (r_.find(g, "launches") != kJsonAbsent) {
        x.profiling = true;
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
    x.errors = strings(r_.required(o, "errors", at), JsonPath(at, "errors"));
    if (uint32_t u = r_.find(o, "unindexed"); u != kJsonAbsent) x.unindexed = strings(u, JsonPath(at, "unindexed"));
    return x;
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
