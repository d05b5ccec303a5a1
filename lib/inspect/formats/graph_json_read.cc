// Reading "graphscope.graph/1" (and PyTorch's dict saved as JSON) into the
// model; the writer is graph_json_write.cc.
#include "graph_json.h"

#include <charconv>
#include <limits>
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "../core/error.h"
#include "../analysis/fold.h"
#include "../core/io.h"
#include "../core/json_read.h"
#include "../core/json_tape.h"
#include "../core/json_writer.h"
#include "../core/parallel.h"
#include "../model/validate.h"

namespace graphscope {
namespace {

using Kind = JsonTape::Kind;
constexpr uint32_t kAbsent = UINT32_MAX;
constexpr size_t kMaxStringBytes = size_t(1) << 20;
// Below this many nodes per thread, reading a graph's nodes in parallel
// costs more in threads than it saves.
constexpr size_t kNodesPerReadThread = 20000;

// PyTorch's get_graph_data() names the types it knows as ours ("kernel");
// any other it writes as str() of cuda-python's enum member,
// "cudaGraphNodeType.cudaGraphNodeTypeConditional" (or, where the enum's str
// is its value, "13"). The runtime's and the driver's names, with or without
// the enum's name in front, map to graphscope's kinds.
bool parse_cuda_node_type(std::string_view s, NodeType* out) {
  struct Name {
    std::string_view runtime, driver;
    NodeType type;
    int value;
  };
  static constexpr Name kNames[] = {
      {"Kernel", "KERNEL", NodeType::kernel, 0},
      {"Memcpy", "MEMCPY", NodeType::memcpy, 1},
      {"Memset", "MEMSET", NodeType::memset, 2},
      {"Host", "HOST", NodeType::host, 3},
      {"Graph", "GRAPH", NodeType::child_graph, 4},
      {"Empty", "EMPTY", NodeType::empty, 5},
      {"WaitEvent", "WAIT_EVENT", NodeType::wait_event, 6},
      {"EventRecord", "EVENT_RECORD", NodeType::event_record, 7},
      {"ExtSemaphoreSignal", "EXT_SEMAS_SIGNAL", NodeType::ext_semas_signal, 8},
      {"ExtSemaphoreWait", "EXT_SEMAS_WAIT", NodeType::ext_semas_wait, 9},
      {"MemAlloc", "MEM_ALLOC", NodeType::mem_alloc, 10},
      {"MemFree", "MEM_FREE", NodeType::mem_free, 11},
      {"BatchMemOp", "BATCH_MEM_OP", NodeType::batch_mem_op, 12},
      {"Conditional", "CONDITIONAL", NodeType::conditional, 13},
  };
  // repr(): "<cudaGraphNodeType.cudaGraphNodeTypeKernel: 0>".
  if (s.size() > 2 && s.front() == '<' && s.back() == '>') {
    s = s.substr(1, s.size() - 2);
    s = s.substr(0, s.find(':'));
  }
  for (std::string_view prefix : {"cudaGraphNodeType.", "CUgraphNodeType.", "CUgraphNodeType_enum."})
    if (s.substr(0, prefix.size()) == prefix) s.remove_prefix(prefix.size());
  int value = -1;
  if (auto r = std::from_chars(s.data(), s.data() + s.size(), value); r.ec != std::errc() || r.ptr != s.data() + s.size())
    value = -1;
  for (const Name& n : kNames) {
    if (value == n.value || (s.substr(0, 17) == "cudaGraphNodeType" && s.substr(17) == n.runtime) ||
        (s.substr(0, 19) == "CU_GRAPH_NODE_TYPE_" && s.substr(19) == n.driver)) {
      *out = n.type;
      return true;
    }
  }
  return false;
}

// Converts a tape into the model. Every error names the JSON path.
class Reader {
 public:
  Reader(const JsonTape& t, const std::string& origin) : t_(t), r_(t, origin) {}

  GraphDocument document() {
    uint32_t root = t_.root();
    if (t_.at(root).kind != Kind::object)
      r_.fail("", std::string("the document is ") + JsonTape::kind_name(t_.at(root).kind) +
                   ", not a graph object");
    GraphDocument doc;
    uint32_t schema = t_.find(root, "schema");
    if (schema == kAbsent) {
      doc.source_format = "pytorch";
    } else {
      std::string_view s = r_.string(schema, "schema");
      check_schema(s);
      doc.source_format = "graphscope";
    }
    for (uint32_t i = 0, n = t_.at(root).count; i < n; ++i) {
      std::string_view k = t_.member_key(root, i);
      uint32_t v = t_.member_value(root, i);
      // repeats: derived (fold.h), made again; graphscope_version: of the writer, written anew
      if (k == "schema" || k == "graphscope_version" || k == "nodes" || k == "repeats") continue;
      if (k == "kernel_names") {
        kernel_names = v;
        r_.expect(v, Kind::object, "kernel_names", "an object of mangled to demangled names");
        continue;
      }
      if (k == "exec_graph_id") doc.exec_graph_id = r_.opt_u32(v, "exec_graph_id");
      else if (k == "template_graph_id") doc.root.graph_id = r_.opt_u32(v, "template_graph_id");
      else if (k == "name") doc.name = r_.string(v, "name");
      else if (k == "source_format") {
        std::string_view sf = r_.string(v, "source_format");
        if (!sf.empty()) doc.source_format = std::string(sf);
      } else if (k == "device") doc.device = device(v);
      else if (!capture_extra(k, v, doc)) doc.extra_json.emplace_back(std::string(k), t_.to_json(v));
    }
    uint32_t nodes = t_.find(root, "nodes");
    if (nodes == kAbsent) r_.fail("nodes", "missing: a graph document lists its nodes");
    graph(nodes, "nodes", doc.root, 0);
    if (kernel_names != kAbsent) apply_kernel_names(kernel_names, doc.root);
    return doc;
  }

 private:
  void apply_kernel_names(uint32_t table, Graph& g) {
    if (names_.empty())
      for (uint32_t i = 0, c = t_.at(table).count; i < c; ++i)
        names_.emplace(t_.member_key(table, i), t_.member_value(table, i));
    for (auto& n : g.nodes) {
      if (n.type == NodeType::kernel && !n.kernel_name.empty()) {
        auto it = names_.find(n.kernel_name);
        uint32_t d = it == names_.end() ? kAbsent : it->second;
        if (d != kAbsent) {
          if (!n.kernel) {
            n.kernel.emplace();
            n.kernel->geometry_known = false;
          }
          n.kernel->demangled = std::string(r_.string(d, JsonPath("kernel_names", n.kernel_name)));
        }
      }
      for (auto& b : n.bodies) apply_kernel_names(table, b);
    }
  }

  // A capture's own record (warnings, capture, timings, graph_memory) into
  // its typed member; false (the caller keeps it as passed-through JSON)
  // for any other key, or a value of another shape than capture writes.
  bool capture_extra(std::string_view k, uint32_t v, GraphDocument& doc) const {
    const Kind kind = t_.at(v).kind;
    auto number = [&](uint32_t x, double* out) {
      const auto& val = t_.at(x);
      if (val.kind == Kind::real) *out = val.d;
      else if (val.kind == Kind::unsigned_integer) *out = double(val.u);
      else if (val.kind == Kind::integer) *out = double(val.i);
      else return false;
      return true;
    };
    auto count = [&](uint32_t x, uint64_t* out) {
      // "-0" is a count too: JSON has it, and written back it is "0".
      if (t_.at(x).kind == Kind::integer && t_.at(x).i == 0) return *out = 0, true;
      if (t_.at(x).kind != Kind::unsigned_integer) return false;
      *out = t_.at(x).u;
      return true;
    };
    auto text = [&](uint32_t x, std::string* out) {
      if (t_.at(x).kind != Kind::string || t_.at(x).s.len > kMaxStringBytes) return false;
      *out = std::string(t_.str(x));
      return true;
    };
    // Every member of object v through f(key, value); false when one fails.
    auto members = [&](auto f) {
      if (kind != Kind::object) return false;
      for (uint32_t i = 0; i < t_.at(v).count; ++i)
        if (!f(t_.member_key(v, i), t_.member_value(v, i))) return false;
      return true;
    };
    if (k == "warnings") {
      if (kind != Kind::array || !doc.warnings.empty()) return false;
      std::vector<std::string> w(t_.at(v).count);
      for (uint32_t i = 0; i < w.size(); ++i)
        if (!text(t_.element(v, i), &w[i])) return false;
      doc.warnings = std::move(w);
      return true;
    }
    if (k == "capture") {
      CaptureInfo c;
      bool ok = members([&](std::string_view m, uint32_t x) {
        if (m == "workload") return text(x, &c.workload);
        if (m == "workload_name") return text(x, &c.workload_name);
        if (m == "mode") return text(x, &c.mode);
        if (m == "instantiate") return text(x, &c.instantiate);
        if (m != "args" || t_.at(x).kind != Kind::array) return false;
        c.args.resize(t_.at(x).count);
        for (uint32_t i = 0; i < c.args.size(); ++i)
          if (!text(t_.element(x, i), &c.args[i])) return false;
        return true;
      });
      if (ok && !doc.capture) doc.capture = std::move(c);
      return ok;
    }
    if (k == "timings") {
      CaptureTimings c;
      bool ok = members([&](std::string_view m, uint32_t x) {
        std::optional<double>* f = m == "capture_ms"         ? &c.capture_ms
                                   : m == "instantiate_ms"   ? &c.instantiate_ms
                                   : m == "walk_ms"          ? &c.walk_ms
                                   : m == "first_replay_ms"  ? &c.first_replay_ms
                                   : m == "steady_replay_ms" ? &c.steady_replay_ms
                                                             : nullptr;
        double d = 0;
        uint64_t n = 0;
        if (f) return !*f && number(x, &d) && (*f = d, true);
        if (m == "steady_replays") return !c.steady_replays && count(x, &n) && (c.steady_replays = n, true);
        return false;
      });
      if (ok && !doc.timings) doc.timings = c;
      return ok;
    }
    if (k == "graph_memory") {
      GraphMemory g;
      int seen = 0;
      bool ok = members([&](std::string_view m, uint32_t x) {
        uint64_t* f = m == "used_current"       ? &g.used_current
                      : m == "used_high"        ? &g.used_high
                      : m == "reserved_current" ? &g.reserved_current
                      : m == "reserved_high"    ? &g.reserved_high
                                                : nullptr;
        ++seen;
        return f && count(x, f);
      });
      ok = ok && seen == 4;
      if (ok && !doc.graph_memory) doc.graph_memory = g;
      return ok;
    }
    if (k == "exec_version") {
      ExecVersion e;
      bool have_version = false;
      auto texts = [&](uint32_t x, std::vector<std::string>* out) {
        if (t_.at(x).kind != Kind::array || !out->empty()) return false;
        out->resize(t_.at(x).count);
        for (uint32_t i = 0; i < out->size(); ++i)
          if (!text(t_.element(x, i), &(*out)[i])) return false;
        return true;
      };
      bool ok = members([&](std::string_view m, uint32_t x) {
        uint64_t n = 0;
        if (m == "version") return !have_version && count(x, &n) && n >= 1 && n <= UINT32_MAX &&
                                   (e.version = uint32_t(n), have_version = true);
        if (m == "updated_by") return texts(x, &e.updated_by);
        if (m == "not_recorded") return texts(x, &e.not_recorded);
        if (m == "disabled_nodes") {
          if (t_.at(x).kind != Kind::array || !e.disabled_nodes.empty()) return false;
          for (uint32_t i = 0; i < t_.at(x).count; ++i) {
            if (!count(t_.element(x, i), &n) || n > UINT32_MAX) return false;
            e.disabled_nodes.push_back(uint32_t(n));
          }
          return true;
        }
        return false;
      });
      if (ok && have_version && !doc.exec_version) doc.exec_version = std::move(e);
      return ok && have_version;
    }
    return false;
  }

  uint32_t kernel_names = kAbsent;
  std::unordered_map<std::string_view, uint32_t> names_;

  void check_schema(std::string_view s) {
    constexpr std::string_view prefix = "graphscope.graph/";
    if (s.substr(0, prefix.size()) != prefix)
      r_.fail("schema", "\"" + std::string(s.substr(0, 64)) + "\" is not a graph document (expected " +
                         std::string(kGraphSchema) + ")");
    std::string_view ver = s.substr(prefix.size());
    size_t dot = ver.find('.');
    std::string_view major = ver.substr(0, dot);
    unsigned m = 0;
    auto r = std::from_chars(major.data(), major.data() + major.size(), m);
    if (major.empty() || r.ec != std::errc() || r.ptr != major.data() + major.size())
      r_.fail("schema", "bad version in \"" + std::string(s.substr(0, 64)) + "\"");
    if (m != 1)
      r_.fail("schema", "unknown major version " + std::string(major) + " (this graphscope reads " +
                         std::string(kGraphSchema) + ")");
  }

  Dim3 dim3(uint32_t v, const JsonPath& path) const {
    r_.expect(v, Kind::array, path, "an array of 3 integers");
    if (t_.at(v).count != 3) r_.fail(path, "has " + std::to_string(t_.at(v).count) + " elements, expected 3");
    Dim3 d;
    d.x = r_.u32(t_.element(v, 0), JsonPath(path, uint32_t(0)));
    d.y = r_.u32(t_.element(v, 1), JsonPath(path, uint32_t(1)));
    d.z = r_.u32(t_.element(v, 2), JsonPath(path, uint32_t(2)));
    return d;
  }

  DeviceInfo device(uint32_t v) const {
    r_.expect(v, Kind::object, "device", "an object");
    DeviceInfo d;
    uint32_t x;
    if ((x = t_.find(v, "name")) != kAbsent) d.name = std::string(r_.string(x, "device.name"));
    if ((x = t_.find(v, "driver_version")) != kAbsent)
      d.driver_version = int(r_.u32(x, "device.driver_version") & 0x7fffffff);
    if ((x = t_.find(v, "runtime_version")) != kAbsent)
      d.runtime_version = int(r_.u32(x, "device.runtime_version") & 0x7fffffff);
    if ((x = t_.find(v, "compute_capability")) != kAbsent) {
      r_.expect(x, Kind::array, "device.compute_capability", "an array of 2 integers");
      if (t_.at(x).count != 2) r_.fail("device.compute_capability", "expected 2 integers");
      d.cc_major = int(r_.u32(t_.element(x, 0), "device.compute_capability[0]") & 0xffff);
      d.cc_minor = int(r_.u32(t_.element(x, 1), "device.compute_capability[1]") & 0xffff);
    }
    return d;
  }

  void graph(uint32_t v, const JsonPath& path, Graph& g, int depth) {
    if (depth > kMaxNesting) r_.fail(path, "graphs nested deeper than " + std::to_string(kMaxNesting));
    r_.expect(v, Kind::array, path, "an array of nodes");
    uint32_t n = t_.at(v).count;
    g.nodes.resize(n);
    auto slice = [&](size_t begin, size_t end) {
      bool any = false;
      for (uint32_t i = uint32_t(begin); i < end; ++i) {
        JsonPath p(path, i);
        any |= node(t_.element(v, i), p, g.nodes[i], depth);
        // Written only when it is not the obvious (template graph id << 32) | node_id.
        if (!g.nodes[i].template_tools_id && g.graph_id)
          g.nodes[i].template_tools_id = (uint64_t(*g.graph_id) << 32) | g.nodes[i].node_id;
        if (g.nodes[i].index != i)
          r_.fail(JsonPath(p, "index"), "is " + std::to_string(g.nodes[i].index) + ", expected " +
                                            std::to_string(i) + " (nodes are listed in index order)");
      }
      return any;
    };
    // A large graph's nodes are built in slices, each node from its own
    // part of the tape alone. Should any slice fail, the nodes are read
    // again in order, so the error named is the first one, as always.
    bool any_dependents = false;
    const unsigned workers = depth == 0 ? worker_count(n, kNodesPerReadThread) : 1;
    if (workers > 1) {
      std::vector<char> any(workers, 0);
      try {
        parallel_slices(n, workers, [&](unsigned w, size_t b, size_t e) { any[w] = slice(b, e); });
      } catch (const Error&) {
        any.assign(workers, 0);
        for (auto& node : g.nodes) node = Node{};
        any[0] = slice(0, n);
      }
      for (char a : any) any_dependents |= a != 0;
    } else {
      any_dependents = slice(0, n);
    }
    // A writer that leaves out every dependents list gets them computed; when
    // any node has one, all are checked against the dependencies.
    if (!any_dependents) link_dependents(g);
  }

  void indices(uint32_t v, const JsonPath& path, std::vector<uint32_t>& out) const {
    r_.expect(v, Kind::array, path, "an array of node indices");
    uint32_t n = t_.at(v).count;
    out.resize(n);
    for (uint32_t i = 0; i < n; ++i) out[i] = r_.u32(t_.element(v, i), JsonPath(path, i));
  }

  // Straight into the node's edges (their types and ports come later).
  void dependencies(uint32_t v, const JsonPath& path, std::vector<Dependency>& out) const {
    r_.expect(v, Kind::array, path, "an array of node indices");
    uint32_t n = t_.at(v).count;
    out.resize(n);
    for (uint32_t i = 0; i < n; ++i) out[i].from = r_.u32(t_.element(v, i), JsonPath(path, i));
  }

  // Returns whether the node carried a dependents list.
  bool node(uint32_t v, const JsonPath& path, Node& n, int depth) {
    r_.expect(v, Kind::object, path, "a node object");
    bool have_index = false, have_type = false, have_deps = false, have_dependents = false;
    uint32_t types = kAbsent, ports = kAbsent;
    std::optional<Dim3> grid_dim, block_dim;  // PyTorch's launch geometry
    for (uint32_t i = 0, c = t_.at(v).count; i < c; ++i) {
      std::string_view k = t_.member_key(v, i);
      uint32_t x = t_.member_value(v, i);
      JsonPath p(path, k);
      if (k == "index") n.index = r_.u32(x, p), have_index = true;
      else if (k == "node_type") {
        std::string_view s = r_.string(x, p);
        if (!parse_node_type(s, &n.type) && !parse_cuda_node_type(s, &n.type)) {
          n.type = NodeType::unknown;
          n.type_spelling = std::string(s.substr(0, 256));
        }
        have_type = true;
      } else if (k == "node_type_spelling") {
        n.type_spelling = std::string(r_.string(x, p).substr(0, 256));
      } else if (k == "tools_id") n.tools_id = r_.opt_u64(x, p);
      else if (k == "graph_id") n.graph_id = r_.opt_u32(x, p);
      else if (k == "node_id") n.node_id = r_.u32(x, p);
      else if (k == "kernel_name") {
        if (t_.at(x).kind != Kind::null) n.kernel_name = std::string(r_.string(x, p));
      } else if (k == "event_ptr") {
        if (t_.at(x).kind != Kind::null) n.event_ptr = r_.u64(x, p);
      } else if (k == "dependencies") dependencies(x, p, n.dependencies), have_deps = true;
      else if (k == "dependents") indices(x, p, n.dependents), have_dependents = true;
      else if (k == "dependency_types") types = x;
      else if (k == "dependency_ports") ports = x;
      else if (k == "template_tools_id") n.template_tools_id = r_.opt_u64(x, p);
      else if (k == "grid_dim") {
        if (t_.at(x).kind != Kind::null) grid_dim = dim3(x, p);
      } else if (k == "block_dim") {
        if (t_.at(x).kind != Kind::null) block_dim = dim3(x, p);
      }
      else if (k == "handle") n.handle = r_.opt_u64(x, p);
      else if (k == "kernel") n.kernel = kernel(x, p);
      else if (k == "memcpy") n.memcpy = memcpy_info(x, p);
      else if (k == "memset") n.memset = memset_info(x, p);
      else if (k == "host") n.host = host_info(x, p);
      else if (k == "origin") n.origin = origin(x, p);
      else if (k == "mem_alloc") {
        r_.expect(x, Kind::object, p, "an object");
        MemAllocInfo m;
        uint32_t y;
        if ((y = t_.find(x, "bytes")) != kAbsent) m.bytes = r_.u64(y, JsonPath(p, "bytes"));
        if ((y = t_.find(x, "dptr")) != kAbsent) m.dptr = r_.opt_u64(y, JsonPath(p, "dptr"));
        n.mem_alloc = m;
      } else if (k == "mem_free") {
        r_.expect(x, Kind::object, p, "an object");
        uint32_t y = t_.find(x, "dptr");
        n.mem_free_dptr = y == kAbsent ? std::optional<uint64_t>(0) : r_.opt_u64(y, JsonPath(p, "dptr"));
      } else if (k == "conditional") {
        r_.expect(x, Kind::object, p, "an object");
        uint32_t y;
        if ((y = t_.find(x, "type")) != kAbsent) {
          std::string_view ct = r_.string(y, JsonPath(p, "type"));
          if (ct != "if" && ct != "while" && ct != "switch")
            r_.fail(JsonPath(p, "type"), "\"" + std::string(ct.substr(0, 32)) + "\" is not if, while or switch");
          n.conditional_type = std::string(ct);
        }
        if ((y = t_.find(x, "handle")) != kAbsent) n.conditional_handle = r_.opt_u64(y, JsonPath(p, "handle"));
      } else if (k == "bodies") {
        r_.expect(x, Kind::array, p, "an array of graphs");
        uint32_t nb = t_.at(x).count;
        n.bodies.resize(nb);
        for (uint32_t b = 0; b < nb; ++b) {
          JsonPath bp(p, b);
          uint32_t bo = t_.element(x, b);
          r_.expect(bo, Kind::object, bp, "a graph object");
          uint32_t y;
          if ((y = t_.find(bo, "graph_id")) != kAbsent) n.bodies[b].graph_id = r_.opt_u32(y, JsonPath(bp, "graph_id"));
          if ((y = t_.find(bo, "nodes")) == kAbsent) r_.fail(bp, "has no nodes");
          graph(y, JsonPath(bp, "nodes"), n.bodies[b], depth + 1);
        }
      }
      // Other keys are extensions of a newer writer or of PyTorch: ignored.
    }
    if (!have_index) r_.fail(path, "has no index");
    if (!have_type) r_.fail(path, "has no node_type");
    // PyTorch's "grid_dim" and "block_dim" (newer get_graph_data()) are the
    // launch geometry, where graphscope's own "kernel" object gives none.
    if ((grid_dim || block_dim) && n.type == NodeType::kernel && !(n.kernel && n.kernel->geometry_known)) {
      if (!n.kernel) {
        n.kernel = KernelInfo{};
        n.kernel->geometry_known = false;
      }
      if (grid_dim) n.kernel->grid = *grid_dim, n.kernel->geometry_known = true;
      if (block_dim) n.kernel->block = *block_dim, n.kernel->geometry_known = true;
    }
    if (!have_deps) r_.fail(path, "has no dependencies");
    const size_t deps = n.dependencies.size();
    if (types != kAbsent) {
      JsonPath p(path, "dependency_types");
      r_.expect(types, Kind::array, p, "an array of edge types");
      if (t_.at(types).count != deps) r_.fail(p, "has a different length than dependencies");
      for (uint32_t i = 0; i < deps; ++i) {
        JsonPath ep(p, i);
        std::string_view s = r_.string(t_.element(types, i), ep);
        if (!parse_edge_type(s, &n.dependencies[i].type))
          r_.fail(ep, "\"" + std::string(s.substr(0, 32)) + "\" is not default, programmatic or launch_completion");
      }
    }
    if (ports != kAbsent) {
      JsonPath p(path, "dependency_ports");
      r_.expect(ports, Kind::array, p, "an array of [from_port, to_port] pairs");
      if (t_.at(ports).count != deps) r_.fail(p, "has a different length than dependencies");
      for (uint32_t i = 0; i < deps; ++i) {
        JsonPath ep(p, i);
        uint32_t pair = t_.element(ports, i);
        r_.expect(pair, Kind::array, ep, "a [from_port, to_port] pair");
        if (t_.at(pair).count != 2) r_.fail(ep, "expected 2 ports");
        uint32_t a = r_.u32(t_.element(pair, 0), JsonPath(ep, uint32_t(0))), b = r_.u32(t_.element(pair, 1), JsonPath(ep, uint32_t(1)));
        if (a > 255 || b > 255) r_.fail(ep, "port larger than 255");
        n.dependencies[i].from_port = uint8_t(a);
        n.dependencies[i].to_port = uint8_t(b);
      }
    }
    return have_dependents;
  }

  // A kernel argument's value as KernelArg says it is written.
  static bool arg_value_fits(const std::string& v, uint32_t size) {
    auto hex = [&](size_t from) {
      return v.find_first_not_of("0123456789abcdef", from) == std::string::npos;
    };
    if (size == 1 || size == 2 || size == 4 || size == 8)
      return v.size() > 2 && v.size() <= 2 + 2 * size_t(size) && v[0] == '0' && v[1] == 'x' && hex(2);
    if (size <= KernelArg::kMaxHexBytes) return v.size() == 2 * size_t(size) && hex(0);
    return v.size() == 17 && v[0] == '#' && hex(1);
  }

  KernelInfo kernel(uint32_t v, const JsonPath& path) const {
    r_.expect(v, Kind::object, path, "an object");
    KernelInfo k;
    k.geometry_known = false;
    uint32_t x;
    if ((x = t_.find(v, "demangled")) != kAbsent) k.demangled = std::string(r_.string(x, JsonPath(path, "demangled")));
    if ((x = t_.find(v, "grid")) != kAbsent) k.grid = dim3(x, JsonPath(path, "grid")), k.geometry_known = true;
    if ((x = t_.find(v, "block")) != kAbsent) k.block = dim3(x, JsonPath(path, "block")), k.geometry_known = true;
    if ((x = t_.find(v, "cluster")) != kAbsent) k.cluster = dim3(x, JsonPath(path, "cluster"));
    if ((x = t_.find(v, "shared_mem_bytes")) != kAbsent) k.shared_mem_bytes = r_.u32(x, JsonPath(path, "shared_mem_bytes"));
    if ((x = t_.find(v, "function_handle")) != kAbsent) k.function_handle = r_.opt_u64(x, JsonPath(path, "function_handle"));
    if ((x = t_.find(v, "args")) != kAbsent) {
      JsonPath p(path, "args");
      r_.expect(x, Kind::array, p, "an array of [offset, size, value] arguments");
      const uint32_t n = t_.at(x).count;
      k.args.resize(n);
      for (uint32_t i = 0; i < n; ++i) {
        JsonPath ap(p, i);
        const uint32_t a = t_.element(x, i);
        r_.expect(a, Kind::array, ap, "an [offset, size, value] argument");
        if (t_.at(a).count != 3) r_.fail(ap, "expected [offset, size, value]");
        k.args[i].offset = r_.u32(t_.element(a, 0), JsonPath(ap, uint32_t(0)));
        k.args[i].size = r_.u32(t_.element(a, 1), JsonPath(ap, uint32_t(1)));
        k.args[i].value = std::string(r_.string(t_.element(a, 2), JsonPath(ap, uint32_t(2)), 256));
        if (!arg_value_fits(k.args[i].value, k.args[i].size))
          r_.fail(JsonPath(ap, uint32_t(2)), "is not a value of " + std::to_string(k.args[i].size) +
                                                 " bytes (0x and a number, the bytes in hex, or # and a hash)");
      }
    }
    return k;
  }

  MemcpyInfo memcpy_info(uint32_t v, const JsonPath& path) const {
    r_.expect(v, Kind::object, path, "an object");
    MemcpyInfo m;
    uint32_t x;
    if ((x = t_.find(v, "kind")) != kAbsent) m.kind = std::string(r_.string(x, JsonPath(path, "kind")).substr(0, 64));
    if ((x = t_.find(v, "bytes")) != kAbsent) m.bytes = r_.u64(x, JsonPath(path, "bytes"));
    if ((x = t_.find(v, "src")) != kAbsent) m.src = r_.opt_u64(x, JsonPath(path, "src"));
    if ((x = t_.find(v, "dst")) != kAbsent) m.dst = r_.opt_u64(x, JsonPath(path, "dst"));
    return m;
  }

  MemsetInfo memset_info(uint32_t v, const JsonPath& path) const {
    r_.expect(v, Kind::object, path, "an object");
    MemsetInfo m;
    uint32_t x;
    if ((x = t_.find(v, "value")) != kAbsent) m.value = r_.u64(x, JsonPath(path, "value"));
    if ((x = t_.find(v, "element_size")) != kAbsent) m.element_size = r_.u32(x, JsonPath(path, "element_size"));
    if ((x = t_.find(v, "width")) != kAbsent) m.width = r_.u64(x, JsonPath(path, "width"));
    if ((x = t_.find(v, "height")) != kAbsent) m.height = r_.u64(x, JsonPath(path, "height"));
    if ((x = t_.find(v, "bytes")) != kAbsent) m.bytes = r_.u64(x, JsonPath(path, "bytes"));
    if ((x = t_.find(v, "dst")) != kAbsent) m.dst = r_.opt_u64(x, JsonPath(path, "dst"));
    return m;
  }

  // A node's "origin" (graph.h's Origin). Strings are cut at 4 KiB and lists
  // refused beyond 256 entries: an origin is a few lines of a stack.
  std::shared_ptr<const Origin> origin(uint32_t v, const JsonPath& path) const {
    r_.expect(v, Kind::object, path, "an object");
    auto o = std::make_shared<Origin>();
    constexpr size_t kText = 4096;
    auto text = [&](uint32_t obj, const char* key, const JsonPath& p) {
      uint32_t x = t_.find(obj, key);
      return x == kAbsent ? std::string() : std::string(r_.string(x, JsonPath(p, key)).substr(0, kText));
    };
    auto each = [&](const char* key, auto&& one) {
      uint32_t x = t_.find(v, key);
      if (x == kAbsent) return;
      JsonPath p(path, key);
      r_.array(x, p, "an array of objects");
      uint32_t n = t_.at(x).count;
      if (n > 256) r_.wrong(x, p, "at most 256 entries");
      for (uint32_t i = 0; i < n; ++i) {
        JsonPath pi(p, i);
        uint32_t e = t_.element(x, i);
        r_.expect(e, Kind::object, pi, "an object");
        one(e, pi);
      }
    };
    each("modules", [&](uint32_t e, const JsonPath& p) {
      o->modules.push_back({text(e, "name", p), text(e, "type", p)});
    });
    if (o->modules.empty()) {
      std::string m = text(v, "module", path);
      if (!m.empty()) o->modules.push_back({m, ""});
    }
    each("python", [&](uint32_t e, const JsonPath& p) {
      SourceFrame f{text(e, "file", p), 0, text(e, "function", p)};
      if (uint32_t x = t_.find(e, "line"); x != kAbsent) f.line = r_.u32(x, JsonPath(p, "line"));
      o->python.push_back(std::move(f));
    });
    each("nvtx", [&](uint32_t e, const JsonPath& p) {
      std::string kind = text(e, "kind", p);
      if (!kind.empty() && kind != "push" && kind != "start")
        r_.wrong(t_.find(e, "kind"), JsonPath(p, "kind"), "\"push\" or \"start\"");
      o->nvtx.push_back({text(e, "domain", p), text(e, "message", p), kind == "start"});
    });
    o->op = text(v, "op", path);
    if (uint32_t x = t_.find(v, "native"); x != kAbsent) {
      JsonPath p(path, "native");
      r_.expect(x, Kind::object, p, "an object");
      NativeFrame f{text(x, "function", p), text(x, "object", p), 0};
      if (uint32_t y = t_.find(x, "offset"); y != kAbsent) f.offset = r_.u64(y, JsonPath(p, "offset"));
      o->native = std::move(f);
    }
    return o;
  }

  HostInfo host_info(uint32_t v, const JsonPath& path) const {
    r_.expect(v, Kind::object, path, "an object");
    HostInfo h;
    uint32_t x;
    if ((x = t_.find(v, "symbol")) != kAbsent) h.symbol = std::string(r_.string(x, JsonPath(path, "symbol")));
    if ((x = t_.find(v, "fn")) != kAbsent) h.fn = r_.opt_u64(x, JsonPath(path, "fn"));
    if ((x = t_.find(v, "user_data")) != kAbsent) h.user_data = r_.opt_u64(x, JsonPath(path, "user_data"));
    return h;
  }

  const JsonTape& t_;
  JsonRead r_;
};

}  // namespace

GraphDocument read_graph_json(std::string_view text, const std::string& origin) {
  // Deep enough for the deepest graph accepted, as the writer writes it: a
  // nested graph takes 4 levels (node, "bodies", body, "nodes").
  constexpr int kMaxJsonDepth = 8 + 4 * kMaxNesting;
  JsonTape tape = JsonTape::parse(text, origin, kMaxJsonDepth);
  return Reader(tape, origin).document();
}

}  // namespace graphscope
