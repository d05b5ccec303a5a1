// The backend-neutral model of a CUDA graph: what graphscope reads, writes,
// checks and compares. Plain data; no CUDA or CUPTI header is ever included in
// lib/inspect. lib/capture fills these types from a live cudaGraph_t.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace graphscope {

/// Node types, spelled as in PyTorch's get_graph_data() "node_type".
enum class NodeType : uint8_t {
  kernel,
  memcpy,
  memset,
  host,
  child_graph,
  empty,
  wait_event,
  event_record,
  ext_semas_signal,
  ext_semas_wait,
  mem_alloc,
  mem_free,
  conditional,
  batch_mem_op,
  unknown,  // a type this version does not know (kept, never dropped)
};
inline constexpr int kNodeTypeCount = static_cast<int>(NodeType::unknown) + 1;

/// The JSON spelling of a node type ("kernel", "child_graph", ...).
std::string_view to_string(NodeType t);
/// Parses the JSON spelling; false when the string names no type.
bool parse_node_type(std::string_view s, NodeType* out);

/// Edge types of cudaGraphEdgeData: a default (full completion) dependency, a
/// programmatic one (kernel port 1, cudaGridDependencySynchronize) or one
/// triggered at launch completion (kernel port 2).
enum class EdgeType : uint8_t { standard, programmatic, launch_completion };
std::string_view to_string(EdgeType t);
bool parse_edge_type(std::string_view s, EdgeType* out);

/// An optional value kept on the heap: what std::optional offers nodes
/// (has_value, ->, *, =, emplace, reset, ==), in the size of a pointer. For
/// the members most nodes leave empty: inline, a memcpy's, memset's, host
/// function's and allocation's details made every node 216 bytes larger,
/// and large graphs are read into fresh pages (BENCHMARKS.md, 2026-11-26).
template <class T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(std::nullopt_t) {}
  Boxed(const T& v) : p_(std::make_unique<T>(v)) {}
  Boxed(T&& v) : p_(std::make_unique<T>(std::move(v))) {}
  Boxed(const std::optional<T>& v) : p_(v ? std::make_unique<T>(*v) : nullptr) {}
  Boxed(const Boxed& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  Boxed& operator=(std::nullopt_t) {
    p_.reset();
    return *this;
  }
  Boxed& operator=(const T& v) { return *this = Boxed(v); }
  Boxed& operator=(T&& v) { return *this = Boxed(std::move(v)); }
  Boxed& operator=(const std::optional<T>& v) { return *this = Boxed(v); }

  bool has_value() const { return p_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  T* operator->() { return p_.get(); }
  const T* operator->() const { return p_.get(); }
  T& operator*() { return *p_; }
  const T& operator*() const { return *p_; }
  const T& value() const {
    if (!p_) throw std::bad_optional_access();
    return *p_;
  }
  template <class... A>
  T& emplace(A&&... a) {
    p_ = std::make_unique<T>(std::forward<A>(a)...);
    return *p_;
  }
  void reset() { p_.reset(); }

  friend bool operator==(const Boxed& a, const Boxed& b) {
    return a.has_value() == b.has_value() && (!a.has_value() || *a == *b);
  }
  friend bool operator!=(const Boxed& a, const Boxed& b) { return !(a == b); }

 private:
  std::unique_ptr<T> p_;
};

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  friend bool operator==(const Dim3& a, const Dim3& b) {
    return a.x == b.x && a.y == b.y && a.z == b.z;
  }
  friend bool operator!=(const Dim3& a, const Dim3& b) { return !(a == b); }
};

/// One argument of a kernel node, as the driver lays it out
/// (cuFuncGetParamInfo): where it sits in the parameter buffer, its size,
/// and its value as written: "0x..." (the little-endian number) for an
/// argument of 1, 2, 4 or 8 bytes, the bytes in hex for one of at most
/// kMaxHexBytes, else "#" and a 64-bit hash of its bytes (its 8-byte
/// aligned words that hold addresses left out: is_address_word). raw: the bytes
/// themselves, kept in memory by a capture (never written), for the
/// pointers they hold.
struct KernelArg {
  uint32_t offset = 0, size = 0;
  std::string value;
  std::string raw;
  static constexpr uint32_t kMaxHexBytes = 64;
  friend bool operator==(const KernelArg& a, const KernelArg& b) {
    return a.offset == b.offset && a.size == b.size && a.value == b.value;
  }
  friend bool operator!=(const KernelArg& a, const KernelArg& b) { return !(a == b); }
};
/// A word that holds a device or host address, as far as graphscope tells:
/// at least 4 GiB and below the top of a 57-bit user address space.
inline bool is_address_word(uint64_t w) { return w >= (uint64_t(1) << 32) && w < (uint64_t(1) << 57); }
/// KernelArg::value of the `size` bytes of an argument at `offset` in its
/// kernel's parameter buffer (a hash leaves out its aligned address words,
/// so that addresses that moved do not change it).
std::string kernel_arg_value(const unsigned char* bytes, size_t size, size_t offset);

/// Launch of a kernel node.
struct KernelInfo {
  std::string demangled;  // demangled name; may be empty: see
                          // GraphDocument::kernel_names, else demangle()
  bool geometry_known = true;  // false: grid, block and shared memory unknown
                               // (a default-flags cudaGraphDebugDotPrint)
  Dim3 grid, block;
  std::optional<Dim3> cluster;
  uint32_t shared_mem_bytes = 0;
  std::optional<uint64_t> function_handle;
  // Its arguments, when the driver gave their layout and values (empty:
  // not known, or none).
  std::vector<KernelArg> args;
};

/// A memcpy node. kind is "HtoD", "DtoH", "DtoD", "HtoH" or "default".
struct MemcpyInfo {
  std::string kind;
  uint64_t bytes = 0;  // width * height * depth of the copied extent
  std::optional<uint64_t> src, dst;
};

/// A memset node. bytes = element_size * width * height.
struct MemsetInfo {
  uint64_t value = 0;
  uint32_t element_size = 1;
  uint64_t width = 0, height = 1;
  uint64_t bytes = 0;
  std::optional<uint64_t> dst;
};

struct HostInfo {
  std::string symbol;  // dladdr name of the host function, when known
  std::optional<uint64_t> fn, user_data;
};

struct MemAllocInfo {
  uint64_t bytes = 0;
  std::optional<uint64_t> dptr;
};

/// Where a node came from: what the capturing thread was doing when the
/// node was made (graphscope.graph/1 "origin", recorded by capture and
/// --exec; see the man page). Every part is optional.
struct SourceFrame {
  std::string file;
  uint32_t line = 0;
  std::string function;
};
/// An open NVTX range of the capturing thread: pushed (nvtxRangePush*) or
/// started (nvtxRangeStart*) and not yet ended.
struct NvtxRange {
  std::string domain;  // empty: the default domain
  std::string message;
  bool started = false;
};
/// One module on the Python stack (PyTorch nn.Module): its fully qualified
/// name from the outermost module ("" for that one) and its class.
struct ModuleFrame {
  std::string name;
  std::string type;
};
struct NativeFrame {
  std::string function;  // demangled, when the object exports it
  std::string object;    // the shared object or executable
  uint64_t offset = 0;   // of the return address in the object
};
struct Origin {
  std::vector<NvtxRange> nvtx;        // outermost first
  std::vector<ModuleFrame> modules;   // outermost first
  std::vector<SourceFrame> python;    // innermost first, outside the framework
  std::string op;                     // e.g. "aten::mm", when known
  std::optional<NativeFrame> native;  // the launching native frame (no Python)
  /// The innermost module's qualified name; the outermost one's class when
  /// only it is on the stack; "" without modules.
  std::string module() const;
  bool empty() const { return nvtx.empty() && modules.empty() && python.empty() && op.empty() && !native; }
  /// One line for a person: module, else NVTX ranges, else file:line, else
  /// the native function ("" when there is nothing).
  std::string describe() const;
};

struct Graph;

/// A dependency of a node: the index of the upstream node (in the same
/// graph) and the edge data.
struct Dependency {
  uint32_t from = 0;
  EdgeType type = EdgeType::standard;
  uint8_t from_port = 0, to_port = 0;
  friend bool operator==(const Dependency& a, const Dependency& b) {
    return a.from == b.from && a.type == b.type && a.from_port == b.from_port &&
           a.to_port == b.to_port;
  }
};

struct Node {
  uint32_t index = 0;  // position in Graph::nodes
  NodeType type = NodeType::unknown;
  std::string type_spelling;  // the original spelling when type == unknown
  // Ids as PyTorch's get_graph_data writes them: tools_id is
  // (graph_id << 32) | node_id, where graph_id is the exec graph id once the
  // graph was instantiated, else the template graph id. Nodes of nested
  // graphs (child graphs, conditional bodies) are renumbered when the exec
  // graph inlines them, so they carry no tools_id, only template ids.
  std::optional<uint64_t> tools_id;
  std::optional<uint32_t> graph_id;
  uint32_t node_id = 0;  // local id within its (template) graph
  std::optional<uint64_t> template_tools_id;
  std::string kernel_name;  // mangled, as cudaFuncGetName returns it
  uint64_t event_ptr = 0;
  std::optional<uint64_t> handle;  // cudaGraphNode_t, when known
  std::vector<Dependency> dependencies;
  std::vector<uint32_t> dependents;
  std::optional<KernelInfo> kernel;
  // Most nodes have none of these four: boxed, not inline.
  Boxed<MemcpyInfo> memcpy;
  Boxed<MemsetInfo> memset;
  Boxed<HostInfo> host;
  Boxed<MemAllocInfo> mem_alloc;
  std::optional<uint64_t> mem_free_dptr;
  // Conditional nodes: "if", "while" or "switch", the handle, and one body
  // per branch in `bodies`. Child graph nodes: exactly one body.
  std::string conditional_type;
  std::optional<uint64_t> conditional_handle;
  std::vector<Graph> bodies;
  // Where the node came from (capture with origins on), shared: nodes of one
  // line of code often have the same one.
  std::shared_ptr<const Origin> origin;
};

struct Graph {
  std::optional<uint32_t> graph_id;  // template graph id (CUPTI), when known
  std::vector<Node> nodes;
};

struct DeviceInfo {
  std::string name;
  std::optional<int> driver_version, runtime_version;
  std::optional<int> cc_major, cc_minor;
};

/// How `graphscope capture` made the graph: the workload, its arguments and
/// the capture and instantiation modes.
struct CaptureInfo {
  std::string workload, workload_name;
  std::vector<std::string> args;
  std::string mode, instantiate;
};

/// What a capture measured, in milliseconds (steady_replays: how many
/// replays the steady-state median is of). Each figure is optional.
struct CaptureTimings {
  std::optional<double> capture_ms, instantiate_ms, walk_ms, first_replay_ms, steady_replay_ms;
  std::optional<uint64_t> steady_replays;
};

/// The device's graph memory pool after instantiation, in bytes
/// (cudaDeviceGetGraphMemAttribute).
struct GraphMemory {
  uint64_t used_current = 0, used_high = 0, reserved_current = 0, reserved_high = 0;
};

/// One graph document: the root graph plus what is known about where it came
/// from. Extensions beyond PyTorch's dict are optional.
/// An exec graph changed after instantiation (cudaGraphExecUpdate, per-node
/// setters such as cudaGraphExecKernelNodeSetParams): which version of it a
/// document shows. Version 1 is the graph as instantiated.
struct ExecVersion {
  uint32_t version = 1;
  std::vector<std::string> updated_by;    // the calls that made it from the version before, once each, in order
  std::vector<std::string> not_recorded;  // changes this document does not show, each with why
  std::vector<uint32_t> disabled_nodes;   // root nodes cudaGraphNodeSetEnabled turned off (they do not run)
};

struct GraphDocument {
  std::optional<uint32_t> exec_graph_id;  // null when never instantiated
  Graph root;
  std::string name;           // workload graph name, when several
  std::string source_format;  // "graphscope", "pytorch", "nvidia-dot"
  std::optional<DeviceInfo> device;
  // Demangled kernel names by mangled name, once per kernel (the walker
  // fills this instead of every node's KernelInfo::demangled).
  std::vector<std::pair<std::string, std::string>> kernel_names;
  // What a capture recorded about itself (graphscope documents only).
  std::vector<std::string> warnings;  // e.g. ids read another way than usual
  std::optional<CaptureInfo> capture;
  std::optional<CaptureTimings> timings;
  std::optional<GraphMemory> graph_memory;
  std::optional<ExecVersion> exec_version;  // set when the exec graph was updated (attach)
  // Top-level keys this version does not know, as JSON text, passed through
  // unchanged (written after the known ones). A known key whose value has
  // another shape than this version writes (an unknown member, a wrong type)
  // is kept here too, whole, rather than refused or half-read.
  std::vector<std::pair<std::string, std::string>> extra_json;
};

/// Fills every node's `dependents` from the `dependencies` lists (sorted,
/// in index order), recursively.
void link_dependents(Graph& g);

/// Counts nodes of g and all nested bodies.
size_t total_nodes(const Graph& g);

}  // namespace graphscope
