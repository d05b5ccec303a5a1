#include "attach_session.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdint>
#include <cstdlib>

#include "../core/demangle.h"
#include "../core/text.h"

namespace graphscope {

std::vector<std::pair<std::string, std::string>> attach_environment(const AttachConfig& c) {
  std::vector<std::pair<std::string, std::string>> env = {
      {"GRAPHSCOPE_OUT", c.out},
      {"GRAPHSCOPE_MIN_NODES", std::to_string(c.min_nodes)},
      {"GRAPHSCOPE_PROFILE", c.profile ? "1" : "0"},
      {"GRAPHSCOPE_SKIP_REPLAYS", std::to_string(c.skip_replays)},
      {"GRAPHSCOPE_REPLAYS", std::to_string(c.replays)},
  };
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", c.threshold_us);
  env.emplace_back("GRAPHSCOPE_THRESHOLD_US", buf);
  std::snprintf(buf, sizeof buf, "%.17g", c.tolerance_us);
  env.emplace_back("GRAPHSCOPE_TOLERANCE_US", buf);
  if (c.max_graphs) env.emplace_back("GRAPHSCOPE_MAX_GRAPHS", std::to_string(c.max_graphs));
  if (c.let_go_after_s > 0) {
    std::snprintf(buf, sizeof buf, "%.17g", c.let_go_after_s);
    env.emplace_back("GRAPHSCOPE_LET_GO_AFTER", buf);
  }
  if (c.rest_after_s != AttachConfig().rest_after_s) {
    std::snprintf(buf, sizeof buf, "%.17g", c.rest_after_s);
    env.emplace_back("GRAPHSCOPE_REST_AFTER", buf);
  }
  if (!c.exec_ids.empty()) {
    std::string ids;
    for (uint32_t id : c.exec_ids) ids += (ids.empty() ? "" : ",") + std::to_string(id);
    env.emplace_back("GRAPHSCOPE_EXEC_IDS", ids);
  }
  if (c.quiet) env.emplace_back("GRAPHSCOPE_QUIET", "1");
  if (!c.origins) env.emplace_back("GRAPHSCOPE_ORIGINS", "0");
  if (!c.walk_at_destroy) env.emplace_back("GRAPHSCOPE_WALK_AT_DESTROY", "0");
  if (c.eager) env.emplace_back("GRAPHSCOPE_EAGER", "1");
  if (c.liveness != AttachConfig().liveness) env.emplace_back("GRAPHSCOPE_LIVENESS", c.liveness);
  return env;
}

AttachConfig attach_config_from(const std::function<const char*(const char*)>& getenv,
                                std::vector<std::string>& errors) {
  auto number = [&](const char* name, uint64_t fallback) -> uint64_t {
    const char* v = getenv(name);
    if (!v || !*v) return fallback;
    char* end = nullptr;
    errno = 0;
    unsigned long long x = std::strtoull(v, &end, 10);
    if (errno || *end || *v == '-') {
      errors.push_back(std::string(name) + "=" + v + " is not a non-negative integer; using " +
                       std::to_string(fallback));
      return fallback;
    }
    return x;
  };
  auto real = [&](const char* name, double fallback) {
    const char* v = getenv(name);
    if (!v || !*v) return fallback;
    char* end = nullptr;
    double x = std::strtod(v, &end);
    if (*end || !(x >= 0)) {
      errors.push_back(std::string(name) + "=" + v + " is not a non-negative number; using the default");
      return fallback;
    }
    return x;
  };
  AttachConfig c;
  if (const char* o = getenv("GRAPHSCOPE_OUT"); o && *o) c.out = o;
  c.min_nodes = number("GRAPHSCOPE_MIN_NODES", 0);
  c.max_graphs = number("GRAPHSCOPE_MAX_GRAPHS", 0);
  c.let_go_after_s = real("GRAPHSCOPE_LET_GO_AFTER", 0);
  c.rest_after_s = real("GRAPHSCOPE_REST_AFTER", c.rest_after_s);
  c.profile = number("GRAPHSCOPE_PROFILE", 0) != 0;
  c.skip_replays = uint32_t(std::min<uint64_t>(number("GRAPHSCOPE_SKIP_REPLAYS", 1), UINT32_MAX));
  c.replays = uint32_t(std::min<uint64_t>(number("GRAPHSCOPE_REPLAYS", 20), UINT32_MAX));
  c.threshold_us = real("GRAPHSCOPE_THRESHOLD_US", 5);
  c.tolerance_us = real("GRAPHSCOPE_TOLERANCE_US", 2);
  c.quiet = number("GRAPHSCOPE_QUIET", 0) != 0;
  c.origins = number("GRAPHSCOPE_ORIGINS", 1) != 0;
  c.walk_at_destroy = number("GRAPHSCOPE_WALK_AT_DESTROY", 1) != 0;
  c.eager = number("GRAPHSCOPE_EAGER", 0) != 0;
  if (const char* l = getenv("GRAPHSCOPE_LIVENESS"); l && *l) {
    const std::string v = l;
    if (v == "off" || v == "report" || v == "error") c.liveness = v;
    else errors.push_back("GRAPHSCOPE_LIVENESS=" + v + " is not off, report or error; using report");
  }
  if (const char* ids = getenv("GRAPHSCOPE_EXEC_IDS"); ids && *ids) {
    const std::string s = ids;
    for (size_t p = 0; p <= s.size();) {
      size_t q = s.find(',', p);
      if (q == std::string::npos) q = s.size();
      const std::string part = s.substr(p, q - p);
      char* end = nullptr;
      unsigned long v = std::strtoul(part.c_str(), &end, 10);
      if (part.empty() || *end || v > UINT32_MAX || part[0] == '-')
        errors.push_back("GRAPHSCOPE_EXEC_IDS: '" + part + "' is not an id");
      else if (std::find(c.exec_ids.begin(), c.exec_ids.end(), uint32_t(v)) == c.exec_ids.end())
        c.exec_ids.push_back(uint32_t(v));
      p = q + 1;
    }
  }
  return c;
}

namespace {

// A launcher's value: decimal digits only, below 2^31; anything else is
// said in errors and ignored.
std::optional<int64_t> launcher_number(const std::function<const char*(const char*)>& getenv, const char* name,
                                       std::vector<std::string>& errors) {
  const char* v = getenv(name);
  if (!v) return std::nullopt;
  const std::string s = v;
  bool digits = !s.empty() && s.size() <= 10;
  for (char c : s) digits = digits && c >= '0' && c <= '9';
  if (!digits || std::stoll(s) > INT32_MAX) {
    errors.push_back(name + ("='" + s) + "' is not a rank or size (a non-negative integer); ignored");
    return std::nullopt;
  }
  return std::stoll(s);
}

}  // namespace

std::optional<AttachRank> attach_rank_from(const std::function<const char*(const char*)>& getenv,
                                           std::vector<std::string>& errors) {
  struct Family {
    const char *rank, *local, *size;
  };
  static const Family families[] = {
      {"RANK", "LOCAL_RANK", "WORLD_SIZE"},
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE"},
      {"PMI_RANK", nullptr, "PMI_SIZE"},
      {"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"},
  };
  for (const Family& f : families) {
    std::optional<int64_t> rank = launcher_number(getenv, f.rank, errors);
    if (!rank) continue;
    AttachRank r;
    r.rank = *rank;
    r.source = f.rank;
    if (f.local) r.local_rank = launcher_number(getenv, f.local, errors);
    r.world_size = launcher_number(getenv, f.size, errors);
    if (r.world_size && r.rank >= *r.world_size) {
      errors.push_back(std::string(f.rank) + "=" + std::to_string(r.rank) + " is not below " + f.size + "=" +
                       std::to_string(*r.world_size) + "; the size is ignored");
      r.world_size.reset();
    }
    return r;
  }
  return std::nullopt;
}

std::vector<std::string> attach_dir_names(const std::optional<AttachRank>& rank, int64_t pid) {
  const std::string by_pid = "pid-" + std::to_string(pid);
  if (!rank) return {by_pid};
  const std::string by_rank = "rank-" + std::to_string(rank->rank);
  return {by_rank, by_rank + "." + by_pid};
}

AttachSession::AttachSession(AttachConfig config, int64_t pid, std::vector<std::string> command_line)
    : config_(std::move(config)), dir_name_("pid-" + std::to_string(pid)) {
  index_.pid = pid;
  index_.command_line = std::move(command_line);
  index_.profiling = config_.profile;
  index_.profile = config_.profile;
}

std::string AttachSession::dir() const { return config_.out + "/" + dir_name_; }

std::optional<std::string> AttachSession::skip_before_walk(std::optional<uint32_t> exec_id) {
  std::optional<std::string> why;
  if (config_.max_graphs && index_.graphs.size() >= config_.max_graphs) why = "GRAPHSCOPE_MAX_GRAPHS reached";
  else if (!exec_id) why = "no exec graph id (CUPTI unavailable)";
  else if (!config_.exec_ids.empty() &&
           std::find(config_.exec_ids.begin(), config_.exec_ids.end(), *exec_id) == config_.exec_ids.end())
    why = "not in GRAPHSCOPE_EXEC_IDS";
  if (why) index_.skipped.push_back({exec_id, 0, *why});
  return why;
}

bool AttachSession::skip_after_walk(uint32_t exec_id, size_t root_nodes) {
  if (root_nodes >= config_.min_nodes) return false;
  index_.skipped.push_back({exec_id, root_nodes, "fewer than GRAPHSCOPE_MIN_NODES nodes"});
  return true;
}

namespace {

// "" for version 1, ".vN" after: graph-ID.vN.json, profile-ID.vN.json.
std::string version_suffix(const AttachedGraph& g) { return g.version > 1 ? ".v" + std::to_string(g.version) : ""; }

AttachedGraph entry_of(uint32_t exec_id, uint32_t version, const AttachSession::Summary& s) {
  AttachedGraph g;
  g.exec_graph_id = exec_id;
  g.version = version;
  g.file = "graph-" + std::to_string(exec_id) + version_suffix(g) + ".json";
  g.nodes = s.nodes;
  g.nodes_with_bodies = s.nodes_with_bodies;
  for (const auto& k : s.first_kernels) g.first_kernels.push_back(short_kernel_name(k, 60));
  return g;
}

}  // namespace

AttachSession::Summary AttachSession::summary_of(const GraphDocument& doc) {
  Summary s;
  s.nodes = doc.root.nodes.size();
  s.nodes_with_bodies = total_nodes(doc.root);
  for (const auto& n : doc.root.nodes) {
    if (s.first_kernels.size() == 3) break;
    if (n.type == NodeType::kernel) s.first_kernels.push_back(n.kernel_name);
  }
  return s;
}

size_t AttachSession::dumped(uint32_t exec_id, const Summary& summary) {
  index_.graphs.push_back(entry_of(exec_id, 1, summary));
  windows_.emplace_back();
  return index_.graphs.size() - 1;
}

std::optional<size_t> AttachSession::updated(size_t g, const GraphDocument& doc) {
  AttachedGraph& before = index_.graphs[g];
  const uint32_t version = doc.exec_version ? doc.exec_version->version : before.version + 1;
  if (version > kMaxExecVersions) {
    if (before.not_recorded.empty() || before.not_recorded.back().rfind("more than ", 0) != 0)
      before.not_recorded.push_back("more than " + std::to_string(kMaxExecVersions) +
                                    " versions: later updates of this exec graph are not recorded");
    return std::nullopt;
  }
  before.superseded = true;
  AttachedGraph next = entry_of(before.exec_graph_id, version, summary_of(doc));
  if (doc.exec_version) {
    next.updated_by = doc.exec_version->updated_by;
    next.not_recorded = doc.exec_version->not_recorded;
  }
  index_.graphs.push_back(std::move(next));
  windows_.emplace_back();
  return index_.graphs.size() - 1;
}

void AttachSession::unchanged_update(size_t g) { ++index_.graphs[g].unchanged_updates; }
void AttachSession::update_not_recorded(size_t g) { ++index_.graphs[g].updates_not_recorded; }

void AttachSession::counted(size_t g, double when_s) {
  AttachedGraph& x = index_.graphs[g];
  if (!x.launches++) x.first_launch_s = when_s;
  x.last_launch_s = when_s;
}

bool AttachSession::launched(size_t g, uint32_t correlation, double when_s) {
  counted(g, when_s);
  AttachedGraph& x = index_.graphs[g];
  const uint64_t k = x.launches;
  if (k <= config_.skip_replays || k - config_.skip_replays > config_.replays) return false;
  windows_[g].insert(correlation);
  x.replays_analysed = windows_[g].size();
  return true;
}

Trace AttachSession::replays_of(size_t g, const Trace& all, uint64_t dropped_records, std::string* why) const {
  const AttachedGraph& x = index_.graphs[g];
  const auto& window = windows_[g];
  Trace t;
  if (window.empty()) {
    *why = x.launches ? "no replay in the window (GRAPHSCOPE_SKIP_REPLAYS " + std::to_string(config_.skip_replays) +
                            ", " + std::to_string(x.launches) + " launches)"
                      : "never launched";
    return t;
  }
  auto mine = [&](const Activity& a) { return a.graph_id && *a.graph_id == x.exec_graph_id; };
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const auto& a : all.activities)
    if (mine(a) && window.count(a.correlation)) lo = std::min(lo, a.start_ns), hi = std::max(hi, a.end_ns);
  if (lo == UINT64_MAX) {
    *why = "no activity record of its replays (dropped records: " + std::to_string(dropped_records) + ")";
    return t;
  }
  t.source = all.source;
  t.names = all.names;
  t.devices = all.devices;
  for (const auto& a : all.activities) {
    const bool in_window = mine(a) && window.count(a.correlation);
    const bool during = !mine(a) && a.end_ns >= lo && a.start_ns <= hi;
    if (in_window || during) t.activities.push_back(a);
  }
  return t;
}

void AttachSession::profiled(size_t g, const ProfileReport& r) {
  AttachedGraph& x = index_.graphs[g];
  x.profiled = true;
  x.profile_file = "profile-" + std::to_string(x.exec_graph_id) + version_suffix(x) + ".json";
  x.trace_file = "trace-" + std::to_string(x.exec_graph_id) + version_suffix(x) + ".json";
  x.fake = r.fake;
  x.blocking = r.blocking;
  x.makespan_us = r.makespan_us;
  x.critical_path_us = r.critical_path_us;
}

void AttachSession::not_profiled(size_t g, std::string why) { index_.graphs[g].profile_error = std::move(why); }

std::string AttachSession::report_text(const std::function<std::string(size_t g)>& report_of) const {
  std::string out;
  for (size_t g = 0; g < index_.graphs.size(); ++g) {
    const AttachedGraph& x = index_.graphs[g];
    out += "== pid " + std::to_string(index_.pid) + ", exec graph " + std::to_string(x.exec_graph_id) +
           (x.version > 1 ? " version " + std::to_string(x.version) : std::string()) + " (" +
           std::to_string(x.nodes) + " nodes, " + std::to_string(x.launches) + " launches)\n";
    // The reason may quote a name or a path from the process: one line,
    // escaped; the report keeps its lines, nothing in it reaches the
    // terminal raw.
    out += x.profiled ? terminal_safe(report_of(g)) : "not profiled: " + printable(x.profile_error) + "\n";
    out += "\n";
  }
  return out;
}

bool AttachSession::error(std::string e) {
  const bool first = index_.errors.empty();
  if (index_.errors.size() < 100) index_.errors.push_back(std::move(e));
  return first;
}

}  // namespace graphscope
