#include "json_reader.h"

#include <charconv>
#include <limits>
#include <unordered_map>

#include "error.h"
#include "json_tape.h"
#include "json_writer.h"
#include "validate.h"

namespace graphscope {
namespace {

using Kind = JsonTape::Kind;
constexpr uint32_t kAbsent = UINT32_MAX;
constexpr size_t kMaxStringBytes = size_t(1) << 20;

// A JSON path built on the stack and turned into text only for a message
// ("nodes[3].kernel.grid[1]"), so the happy path allocates nothing for it.
struct Path {
  const Path* parent = nullptr;
  std::string_view key;
  int64_t index = -1;
  Path(const char* k) : key(k) {}
  Path(const Path& p, std::string_view k) : parent(&p), key(k) {}
  Path(const Path& p, uint32_t i) : parent(&p), index(i) {}
  std::string str() const {
    std::string s = parent ? parent->str() : std::string();
    if (index >= 0) return s + "[" + std::to_string(index) + "]";
    if (!s.empty() && !key.empty()) s += ".";
    return s.append(key);
  }
};

// Converts a tape into the model. Every error names the JSON path.
class Reader {
 public:
  Reader(const JsonTape& t, const std::string& origin) : t_(t), origin_(origin) {}

  GraphDocument document() {
    uint32_t root = t_.root();
    if (t_.at(root).kind != Kind::object)
      fail("", std::string("the document is ") + JsonTape::kind_name(t_.at(root).kind) +
                   ", not a graph object");
    GraphDocument doc;
    uint32_t schema = t_.find(root, "schema");
    if (schema == kAbsent) {
      doc.source_format = "pytorch";
    } else {
      std::string_view s = string(schema, "schema");
      check_schema(s);
      doc.source_format = "graphscope";
    }
    for (uint32_t i = 0, n = t_.at(root).count; i < n; ++i) {
      std::string_view k = t_.member_key(root, i);
      uint32_t v = t_.member_value(root, i);
      if (k == "schema" || k == "nodes") continue;
      if (k == "kernel_names") {
        kernel_names = v;
        expect(v, Kind::object, "kernel_names", "an object of mangled to demangled names");
        continue;
      }
      if (k == "exec_graph_id") doc.exec_graph_id = opt_u32(v, "exec_graph_id");
      else if (k == "template_graph_id") doc.root.graph_id = opt_u32(v, "template_graph_id");
      else if (k == "name") doc.name = string(v, "name");
      else if (k == "source_format") {
        std::string_view sf = string(v, "source_format");
        if (!sf.empty()) doc.source_format = std::string(sf);
      } else if (k == "device") doc.device = device(v);
      else doc.extra_json.emplace_back(std::string(k), t_.to_json(v));
    }
    uint32_t nodes = t_.find(root, "nodes");
    if (nodes == kAbsent) fail("nodes", "missing: a graph document lists its nodes");
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
          n.kernel->demangled = std::string(string(d, Path("kernel_names", n.kernel_name)));
        }
      }
      for (auto& b : n.bodies) apply_kernel_names(table, b);
    }
  }

  uint32_t kernel_names = kAbsent;
  std::unordered_map<std::string_view, uint32_t> names_;

  [[noreturn]] void fail(const Path& path, const std::string& why) const {
    std::string where = path.str();
    throw_input(origin_, where.empty() ? why : where + ": " + why);
  }

  void check_schema(std::string_view s) {
    constexpr std::string_view prefix = "graphscope.graph/";
    if (s.substr(0, prefix.size()) != prefix)
      fail("schema", "\"" + std::string(s.substr(0, 64)) + "\" is not a graph document (expected " +
                         std::string(kGraphSchema) + ")");
    std::string_view ver = s.substr(prefix.size());
    size_t dot = ver.find('.');
    std::string_view major = ver.substr(0, dot);
    unsigned m = 0;
    auto r = std::from_chars(major.data(), major.data() + major.size(), m);
    if (major.empty() || r.ec != std::errc() || r.ptr != major.data() + major.size())
      fail("schema", "bad version in \"" + std::string(s.substr(0, 64)) + "\"");
    if (m != 1)
      fail("schema", "unknown major version " + std::string(major) + " (this graphscope reads " +
                         std::string(kGraphSchema) + ")");
  }

  [[noreturn]] void wrong(uint32_t v, const Path& path, const char* want) const {
    fail(path, std::string("is ") + JsonTape::kind_name(t_.at(v).kind) + ", expected " + want);
  }

  std::string_view string(uint32_t v, const Path& path) const {
    if (t_.at(v).kind != Kind::string) wrong(v, path, "a string");
    std::string_view s = t_.str(v);
    // No name or spelling in a graph comes near this; a longer one is hostile.
    if (s.size() > kMaxStringBytes) fail(path, "string of " + std::to_string(s.size()) + " bytes (limit 1 MiB)");
    return s;
  }

  uint64_t u64(uint32_t v, const Path& path) const {
    const auto& x = t_.at(v);
    if (x.kind == Kind::unsigned_integer) return x.u;
    if (x.kind == Kind::integer) {
      if (x.i < 0) fail(path, "is negative (" + std::to_string(x.i) + ")");
      return uint64_t(x.i);
    }
    if (x.kind == Kind::real) fail(path, "is not an integer or too large for 64 bits");
    wrong(v, path, "an integer");
  }

  uint32_t u32(uint32_t v, const Path& path) const {
    uint64_t x = u64(v, path);
    if (x > std::numeric_limits<uint32_t>::max())
      fail(path, std::to_string(x) + " is larger than 32 bits");
    return uint32_t(x);
  }

  std::optional<uint32_t> opt_u32(uint32_t v, const Path& path) const {
    if (t_.at(v).kind == Kind::null) return std::nullopt;
    return u32(v, path);
  }
  std::optional<uint64_t> opt_u64(uint32_t v, const Path& path) const {
    if (t_.at(v).kind == Kind::null) return std::nullopt;
    return u64(v, path);
  }

  void expect(uint32_t v, Kind k, const Path& path, const char* want) const {
    if (t_.at(v).kind != k) wrong(v, path, want);
  }

  Dim3 dim3(uint32_t v, const Path& path) const {
    expect(v, Kind::array, path, "an array of 3 integers");
    if (t_.at(v).count != 3) fail(path, "has " + std::to_string(t_.at(v).count) + " elements, expected 3");
    Dim3 d;
    d.x = u32(t_.element(v, 0), Path(path, uint32_t(0)));
    d.y = u32(t_.element(v, 1), Path(path, uint32_t(1)));
    d.z = u32(t_.element(v, 2), Path(path, uint32_t(2)));
    return d;
  }

  DeviceInfo device(uint32_t v) const {
    expect(v, Kind::object, "device", "an object");
    DeviceInfo d;
    uint32_t x;
    if ((x = t_.find(v, "name")) != kAbsent) d.name = std::string(string(x, "device.name"));
    if ((x = t_.find(v, "driver_version")) != kAbsent)
      d.driver_version = int(u32(x, "device.driver_version") & 0x7fffffff);
    if ((x = t_.find(v, "runtime_version")) != kAbsent)
      d.runtime_version = int(u32(x, "device.runtime_version") & 0x7fffffff);
    if ((x = t_.find(v, "compute_capability")) != kAbsent) {
      expect(x, Kind::array, "device.compute_capability", "an array of 2 integers");
      if (t_.at(x).count != 2) fail("device.compute_capability", "expected 2 integers");
      d.cc_major = int(u32(t_.element(x, 0), "device.compute_capability[0]") & 0xffff);
      d.cc_minor = int(u32(t_.element(x, 1), "device.compute_capability[1]") & 0xffff);
    }
    return d;
  }

  void graph(uint32_t v, const Path& path, Graph& g, int depth) {
    if (depth > kMaxNesting) fail(path, "graphs nested deeper than " + std::to_string(kMaxNesting));
    expect(v, Kind::array, path, "an array of nodes");
    uint32_t n = t_.at(v).count;
    g.nodes.resize(n);
    bool any_dependents = false;
    for (uint32_t i = 0; i < n; ++i) {
      Path p(path, i);
      any_dependents |= node(t_.element(v, i), p, g.nodes[i], depth);
      // Written only when it is not the obvious (template graph id << 32) | node_id.
      if (!g.nodes[i].template_tools_id && g.graph_id)
        g.nodes[i].template_tools_id = (uint64_t(*g.graph_id) << 32) | g.nodes[i].node_id;
      if (g.nodes[i].index != i)
        fail(Path(p, "index"), "is " + std::to_string(g.nodes[i].index) + ", expected " + std::to_string(i) +
                               " (nodes are listed in index order)");
    }
    // A writer that leaves out every dependents list gets them computed; when
    // any node has one, all are checked against the dependencies.
    if (!any_dependents) link_dependents(g);
  }

  void indices(uint32_t v, const Path& path, std::vector<uint32_t>& out) const {
    expect(v, Kind::array, path, "an array of node indices");
    uint32_t n = t_.at(v).count;
    out.resize(n);
    for (uint32_t i = 0; i < n; ++i) out[i] = u32(t_.element(v, i), Path(path, i));
  }

  // Returns whether the node carried a dependents list.
  bool node(uint32_t v, const Path& path, Node& n, int depth) {
    expect(v, Kind::object, path, "a node object");
    bool have_index = false, have_type = false, have_deps = false, have_dependents = false;
    std::vector<uint32_t> deps;
    uint32_t types = kAbsent, ports = kAbsent;
    for (uint32_t i = 0, c = t_.at(v).count; i < c; ++i) {
      std::string_view k = t_.member_key(v, i);
      uint32_t x = t_.member_value(v, i);
      Path p(path, k);
      if (k == "index") n.index = u32(x, p), have_index = true;
      else if (k == "node_type") {
        std::string_view s = string(x, p);
        if (!parse_node_type(s, &n.type)) {
          n.type = NodeType::unknown;
          n.type_spelling = std::string(s.substr(0, 256));
        }
        have_type = true;
      } else if (k == "node_type_spelling") {
        n.type_spelling = std::string(string(x, p).substr(0, 256));
      } else if (k == "tools_id") n.tools_id = opt_u64(x, p);
      else if (k == "graph_id") n.graph_id = opt_u32(x, p);
      else if (k == "node_id") n.node_id = u32(x, p);
      else if (k == "kernel_name") {
        if (t_.at(x).kind != Kind::null) n.kernel_name = std::string(string(x, p));
      } else if (k == "event_ptr") {
        if (t_.at(x).kind != Kind::null) n.event_ptr = u64(x, p);
      } else if (k == "dependencies") indices(x, p, deps), have_deps = true;
      else if (k == "dependents") indices(x, p, n.dependents), have_dependents = true;
      else if (k == "dependency_types") types = x;
      else if (k == "dependency_ports") ports = x;
      else if (k == "template_tools_id") n.template_tools_id = opt_u64(x, p);
      else if (k == "handle") n.handle = opt_u64(x, p);
      else if (k == "kernel") n.kernel = kernel(x, p);
      else if (k == "memcpy") n.memcpy = memcpy_info(x, p);
      else if (k == "memset") n.memset = memset_info(x, p);
      else if (k == "host") n.host = host_info(x, p);
      else if (k == "mem_alloc") {
        expect(x, Kind::object, p, "an object");
        MemAllocInfo m;
        uint32_t y;
        if ((y = t_.find(x, "bytes")) != kAbsent) m.bytes = u64(y, Path(p, "bytes"));
        if ((y = t_.find(x, "dptr")) != kAbsent) m.dptr = opt_u64(y, Path(p, "dptr"));
        n.mem_alloc = m;
      } else if (k == "mem_free") {
        expect(x, Kind::object, p, "an object");
        uint32_t y = t_.find(x, "dptr");
        n.mem_free_dptr = y == kAbsent ? std::optional<uint64_t>(0) : opt_u64(y, Path(p, "dptr"));
      } else if (k == "conditional") {
        expect(x, Kind::object, p, "an object");
        uint32_t y;
        if ((y = t_.find(x, "type")) != kAbsent) {
          std::string_view ct = string(y, Path(p, "type"));
          if (ct != "if" && ct != "while" && ct != "switch")
            fail(Path(p, "type"), "\"" + std::string(ct.substr(0, 32)) + "\" is not if, while or switch");
          n.conditional_type = std::string(ct);
        }
        if ((y = t_.find(x, "handle")) != kAbsent) n.conditional_handle = opt_u64(y, Path(p, "handle"));
      } else if (k == "bodies") {
        expect(x, Kind::array, p, "an array of graphs");
        uint32_t nb = t_.at(x).count;
        n.bodies.resize(nb);
        for (uint32_t b = 0; b < nb; ++b) {
          Path bp(p, b);
          uint32_t bo = t_.element(x, b);
          expect(bo, Kind::object, bp, "a graph object");
          uint32_t y;
          if ((y = t_.find(bo, "graph_id")) != kAbsent) n.bodies[b].graph_id = opt_u32(y, Path(bp, "graph_id"));
          if ((y = t_.find(bo, "nodes")) == kAbsent) fail(bp, "has no nodes");
          graph(y, Path(bp, "nodes"), n.bodies[b], depth + 1);
        }
      }
      // Other keys are extensions of a newer writer or of PyTorch: ignored.
    }
    if (!have_index) fail(path, "has no index");
    if (!have_type) fail(path, "has no node_type");
    if (!have_deps) fail(path, "has no dependencies");
    n.dependencies.resize(deps.size());
    for (size_t i = 0; i < deps.size(); ++i) n.dependencies[i].from = deps[i];
    if (types != kAbsent) {
      Path p(path, "dependency_types");
      expect(types, Kind::array, p, "an array of edge types");
      if (t_.at(types).count != deps.size()) fail(p, "has a different length than dependencies");
      for (uint32_t i = 0; i < deps.size(); ++i) {
        Path ep(p, i);
        std::string_view s = string(t_.element(types, i), ep);
        if (!parse_edge_type(s, &n.dependencies[i].type))
          fail(ep, "\"" + std::string(s.substr(0, 32)) + "\" is not default, programmatic or launch_completion");
      }
    }
    if (ports != kAbsent) {
      Path p(path, "dependency_ports");
      expect(ports, Kind::array, p, "an array of [from_port, to_port] pairs");
      if (t_.at(ports).count != deps.size()) fail(p, "has a different length than dependencies");
      for (uint32_t i = 0; i < deps.size(); ++i) {
        Path ep(p, i);
        uint32_t pair = t_.element(ports, i);
        expect(pair, Kind::array, ep, "a [from_port, to_port] pair");
        if (t_.at(pair).count != 2) fail(ep, "expected 2 ports");
        uint32_t a = u32(t_.element(pair, 0), Path(ep, uint32_t(0))), b = u32(t_.element(pair, 1), Path(ep, uint32_t(1)));
        if (a > 255 || b > 255) fail(ep, "port larger than 255");
        n.dependencies[i].from_port = uint8_t(a);
        n.dependencies[i].to_port = uint8_t(b);
      }
    }
    return have_dependents;
  }

  KernelInfo kernel(uint32_t v, const Path& path) const {
    expect(v, Kind::object, path, "an object");
    KernelInfo k;
    k.geometry_known = false;
    uint32_t x;
    if ((x = t_.find(v, "demangled")) != kAbsent) k.demangled = std::string(string(x, Path(path, "demangled")));
    if ((x = t_.find(v, "grid")) != kAbsent) k.grid = dim3(x, Path(path, "grid")), k.geometry_known = true;
    if ((x = t_.find(v, "block")) != kAbsent) k.block = dim3(x, Path(path, "block")), k.geometry_known = true;
    if ((x = t_.find(v, "cluster")) != kAbsent) k.cluster = dim3(x, Path(path, "cluster"));
    if ((x = t_.find(v, "shared_mem_bytes")) != kAbsent) k.shared_mem_bytes = u32(x, Path(path, "shared_mem_bytes"));
    if ((x = t_.find(v, "function_handle")) != kAbsent) k.function_handle = opt_u64(x, Path(path, "function_handle"));
    return k;
  }

  MemcpyInfo memcpy_info(uint32_t v, const Path& path) const {
    expect(v, Kind::object, path, "an object");
    MemcpyInfo m;
    uint32_t x;
    if ((x = t_.find(v, "kind")) != kAbsent) m.kind = std::string(string(x, Path(path, "kind")).substr(0, 64));
    if ((x = t_.find(v, "bytes")) != kAbsent) m.bytes = u64(x, Path(path, "bytes"));
    if ((x = t_.find(v, "src")) != kAbsent) m.src = opt_u64(x, Path(path, "src"));
    if ((x = t_.find(v, "dst")) != kAbsent) m.dst = opt_u64(x, Path(path, "dst"));
    return m;
  }

  MemsetInfo memset_info(uint32_t v, const Path& path) const {
    expect(v, Kind::object, path, "an object");
    MemsetInfo m;
    uint32_t x;
    if ((x = t_.find(v, "value")) != kAbsent) m.value = u64(x, Path(path, "value"));
    if ((x = t_.find(v, "element_size")) != kAbsent) m.element_size = u32(x, Path(path, "element_size"));
    if ((x = t_.find(v, "width")) != kAbsent) m.width = u64(x, Path(path, "width"));
    if ((x = t_.find(v, "height")) != kAbsent) m.height = u64(x, Path(path, "height"));
    if ((x = t_.find(v, "bytes")) != kAbsent) m.bytes = u64(x, Path(path, "bytes"));
    if ((x = t_.find(v, "dst")) != kAbsent) m.dst = opt_u64(x, Path(path, "dst"));
    return m;
  }

  HostInfo host_info(uint32_t v, const Path& path) const {
    expect(v, Kind::object, path, "an object");
    HostInfo h;
    uint32_t x;
    if ((x = t_.find(v, "symbol")) != kAbsent) h.symbol = std::string(string(x, Path(path, "symbol")));
    if ((x = t_.find(v, "fn")) != kAbsent) h.fn = opt_u64(x, Path(path, "fn"));
    if ((x = t_.find(v, "user_data")) != kAbsent) h.user_data = opt_u64(x, Path(path, "user_data"));
    return h;
  }

  const JsonTape& t_;
  const std::string& origin_;
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
