#include "walk.h"

#include "capture.h"

#include <cupti.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <optional>
#include <cstddef>
#include <cstring>
#include <thread>
#include <unordered_map>
#include <vector>

#include "clock.h"
#include "cuda_check.h"
#include "driver_api.h"
#include "inspect/core/demangle.h"
#include "inspect/core/io.h"
#include "inspect/formats/nvdot_reader.h"
#include "inspect/core/parallel.h"

namespace graphscope::capture {
namespace {

NodeType map_type(cudaGraphNodeType t) {
  switch (static_cast<int>(t)) {
    case cudaGraphNodeTypeKernel: return NodeType::kernel;
    case cudaGraphNodeTypeMemcpy: return NodeType::memcpy;
    case cudaGraphNodeTypeMemset: return NodeType::memset;
    case cudaGraphNodeTypeHost: return NodeType::host;
    case cudaGraphNodeTypeGraph: return NodeType::child_graph;
    case cudaGraphNodeTypeEmpty: return NodeType::empty;
    case cudaGraphNodeTypeWaitEvent: return NodeType::wait_event;
    case cudaGraphNodeTypeEventRecord: return NodeType::event_record;
    case cudaGraphNodeTypeExtSemaphoreSignal: return NodeType::ext_semas_signal;
    case cudaGraphNodeTypeExtSemaphoreWait: return NodeType::ext_semas_wait;
    case cudaGraphNodeTypeMemAlloc: return NodeType::mem_alloc;
    case cudaGraphNodeTypeMemFree: return NodeType::mem_free;
    case 0x0c: return NodeType::batch_mem_op;  // CU_GRAPH_NODE_TYPE_BATCH_MEM_OP
    case cudaGraphNodeTypeConditional: return NodeType::conditional;
    default: return NodeType::unknown;
  }
}

// The port says when the edge fires: a launch-completion edge may carry
// either dependency type (captured through a launch-completion event it is
// type default, port 2; built by hand it is type programmatic, port 2).
EdgeType map_edge(const cudaGraphEdgeData& e) {
  if (e.from_port == cudaGraphKernelNodePortLaunchCompletion) return EdgeType::launch_completion;
  if (e.type == cudaGraphDependencyTypeProgrammatic || e.from_port == cudaGraphKernelNodePortProgrammatic)
    return EdgeType::programmatic;
  return EdgeType::standard;
}

const char* memcpy_kind(cudaMemcpyKind k) {
  switch (k) {
    case cudaMemcpyHostToHost: return "HtoH";
    case cudaMemcpyHostToDevice: return "HtoD";
    case cudaMemcpyDeviceToHost: return "DtoH";
    case cudaMemcpyDeviceToDevice: return "DtoD";
    default: return nullptr;
  }
}

// Host or device, for copies captured with cudaMemcpyDefault.

// Node handle -> position, for resolving dependencies: an open-addressing
// table over the handles (a std::unordered_map cost a tenth of a 100k-node
// walk in allocations alone).
class HandleIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  explicit HandleIndex(const std::vector<cudaGraphNode_t>& handles) : handles_(handles) {
    size_t cap = 16;
    while (cap < handles.size() * 2) cap <<= 1;
    slots_.assign(cap, kNone);
    mask_ = cap - 1;
    for (uint32_t i = 0; i < handles.size(); ++i) {
      size_t s = hash(handles[i]);
      while (slots_[s] != kNone) s = (s + 1) & mask_;
      slots_[s] = i;
    }
  }
  uint32_t find(cudaGraphNode_t h) const {
    for (size_t s = hash(h);; s = (s + 1) & mask_) {
      uint32_t i = slots_[s];
      if (i == kNone || handles_[i] == h) return i;
    }
  }

 private:
  size_t hash(cudaGraphNode_t h) const {
    return size_t((reinterpret_cast<uintptr_t>(h) >> 3) * 0x9E3779B97F4A7C15ull >> 17) & mask_;
  }
  const std::vector<cudaGraphNode_t>& handles_;
  std::vector<uint32_t> slots_;
  size_t mask_ = 0;
};

// What the driver says of one node, gathered before the model is built.
struct RawNode {
  cudaGraphNodeType type{};
  uint32_t local_id = 0;
  uint32_t dep_begin = 0, dep_count = 0;  // into the walk's flat dependency arrays
  // Kernels only.
  bool have_params = false;
  CUfunction func = nullptr;
  CUkernel kern = nullptr;
  Dim3 grid, block;
  uint32_t shared = 0;
  Dim3 cluster;
  bool have_cluster = false;
  // Its argument buffer as the driver laid it out (layout: offset and size
  // of each argument), when the driver gave both.
  const ParamLayout* layout = nullptr;
  std::string arg_buf;
  // Into the level's premade nodes and child graphs (QueriedLevel).
  uint32_t premade = UINT32_MAX, child = UINT32_MAX;
};

struct KernelName {
  std::string mangled, demangled;
};

// Demangled names, kept for the process: an attached graphscope walks many
// graphs of the same kernels (a server's start-up graphs, one per batch
// size), and a long template name takes microseconds to demangle.
std::string demangle_kept(const std::string& mangled) {
  static std::mutex m;
  static auto* kept = new std::unordered_map<std::string, std::string>;  // never freed: walks may come late
  {
    std::lock_guard<std::mutex> lock(m);
    auto it = kept->find(mangled);
    if (it != kept->end()) return it->second;
  }
  std::string d = demangle(mangled);
  std::lock_guard<std::mutex> lock(m);
  if (kept->size() < (size_t(1) << 16)) kept->emplace(mangled, d);
  return d;
}

// A kernel's names, kept for the process by its function or kernel handle:
// a server's graphs (one per batch size) launch the same few dozen kernels,
// and making their names again for every graph took 1-2 us each. An entry
// is used only while the driver gives the same name for that handle (a
// module unloaded and another loaded may reuse it). Its demangling still
// goes through demangle_kept, by name, for the handles that share one (a
// kernel in several modules or contexts). name null: the driver gave none
// (both names empty).
std::shared_ptr<const KernelName> kept_kernel_name(const void* handle, const char* name) {
  static std::mutex m;
  static auto* kept = new std::unordered_map<const void*, std::shared_ptr<const KernelName>>;  // never freed
  static const auto none = std::make_shared<const KernelName>();
  if (!name) return none;
  {
    std::lock_guard<std::mutex> lock(m);
    auto it = kept->find(handle);
    if (it != kept->end() && it->second->mangled == name) return it->second;
  }
  auto kn = std::make_shared<KernelName>();
  kn->mangled = name;
  kn->demangled = demangle_kept(kn->mangled);
  if (kn->demangled == kn->mangled) kn->demangled.clear();
  std::lock_guard<std::mutex> lock(m);
  if (kept->size() < (size_t(1) << 16)) (*kept)[handle] = kn;
  return kn;
}

}  // namespace

NodeType node_type_of(CUgraphNodeType t) { return map_type(static_cast<cudaGraphNodeType>(t)); }

namespace {

// Graph and node ids read from cudaGraphDebugDotPrint: the fallback when
// CUPTI cannot be used because another tool (compute-sanitizer, Nsight, a
// profiler) holds it. The verbose DOT names every node's handle beside its
// graph id and local id.
struct DotIds {
  std::unordered_map<uint64_t, std::pair<uint32_t, uint32_t>> node;  // handle -> (graph, local)
  bool loaded = false;
};

void load_dot_ids(cudaGraph_t root, DotIds& ids);

// The driver's types stand in for the runtime's in the queries below.
static_assert(sizeof(CUgraphEdgeData) == sizeof(cudaGraphEdgeData) &&
              offsetof(CUgraphEdgeData, type) == offsetof(cudaGraphEdgeData, type));
static_assert(int(CU_GRAPH_NODE_TYPE_KERNEL) == int(cudaGraphNodeTypeKernel) &&
              int(CU_GRAPH_NODE_TYPE_CONDITIONAL) == int(cudaGraphNodeTypeConditional) &&
              int(CU_GRAPH_NODE_TYPE_MEM_FREE) == int(cudaGraphNodeTypeMemFree));

// Adds the time from its making to its end to one phase of opt.phases,
// when set.
class PhaseTimer {
 public:
  PhaseTimer(WalkPhases* p, WalkPhases::Phase which) : p_(p), which_(which) {
    if (p_) t0_ = now();
  }
  ~PhaseTimer() { stop(); }
  void stop() {
    if (p_) p_->ns[which_] += now() - t0_;
    p_ = nullptr;
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  static uint64_t now() { return monotonic_ns(); }
  WalkPhases* p_;
  WalkPhases::Phase which_;
  uint64_t t0_ = 0;
};

// One graph's answers from the driver (the walk's first half), kept until
// the model is made from them (the second half, which calls nothing of
// CUDA's and may run on another thread). Held by unique_ptr: the handle
// index refers to `nodes`.
struct QueriedLevel {
  static constexpr uint32_t kNone = UINT32_MAX;
  uint32_t graph_id = 0;
  std::vector<cudaGraphNode_t> nodes;
  std::vector<RawNode> raw;
  std::vector<cudaGraphNode_t> deps;
  std::vector<cudaGraphEdgeData> edges;
  std::vector<const KernelName*> names;                 // kernels with the driver's parameters (the walker's)
  std::vector<std::shared_ptr<const Origin>> origins;   // by node, when origins are asked for
  std::vector<Node> premade;                            // other nodes' details (RawNode::premade)
  std::vector<std::unique_ptr<QueriedLevel>> children;  // child graphs' bodies (RawNode::child)
  std::optional<HandleIndex> index;                     // made meanwhile for a large graph,
  std::vector<Node> storage;                            // and its nodes constructed
  QueriedLevel() = default;
  QueriedLevel(const QueriedLevel&) = delete;
  QueriedLevel& operator=(const QueriedLevel&) = delete;
};

class Walker {
 public:
  Walker(const WalkOptions& o, cudaGraph_t root) : opt_(o), api_(driver_api()), root_(root) {}

  // The first half: every query of the driver, for g and its child graphs.
  std::unique_ptr<QueriedLevel> query_level(cudaGraph_t g, int depth) {
    if (depth > 64) throw Error(ExitCode::device, "graph walk", "child graphs nested deeper than 64");
    auto level = std::make_unique<QueriedLevel>();
    QueriedLevel& q = *level;
    std::vector<cudaGraphNode_t>& nodes = q.nodes;
    size_t n = 0;
    {
      PhaseTimer t(opt_.phases, WalkPhases::get_nodes);
      // Asking for the count costs the driver as much as the list (7.5-8
      // ms each for 100k nodes on the H100): a root graph is first asked
      // for into room for a little more than this thread's last root graph
      // had (a server's graphs come in similar sizes), and only when that
      // is filled up are the count and the list asked for.
      thread_local size_t room = 0;
      bool have = false;
      if (depth == 0 && room) {
        nodes.resize(room);
        n = room;
        // (A driver that refuses a short list is asked the long way.)
        const cudaError_t rc = cudaGraphGetNodes(g, nodes.data(), &n);
        if (rc != cudaSuccess) (void)cudaGetLastError();
        have = rc == cudaSuccess && n < room;
      }
      if (!have) {
        GS_CUDA(cudaGraphGetNodes(g, nullptr, &n));
        nodes.resize(n);
        if (n) GS_CUDA(cudaGraphGetNodes(g, nodes.data(), &n));
      }
      nodes.resize(n);
      if (depth == 0) room = n + n / 16 + 16;
    }
    if (depth == 0 && opt_.root_handles) {
      opt_.root_handles->resize(n);
      for (size_t i = 0; i < n; ++i) (*opt_.root_handles)[i] = reinterpret_cast<uintptr_t>(nodes[i]);
    }
    q.graph_id = graph_id(g, n ? nodes[0] : nullptr);
    // A helper thread builds the handle index and the node array of a large
    // graph meanwhile (constructing 100k nodes costs as much as a third of
    // the queries). The driver is only ever called from here.
    std::thread prepare;
    if (n >= 8192)
      prepare = std::thread([&q, n] {
        q.index.emplace(q.nodes);
        q.storage.resize(n);
      });
    try {
      q.raw.resize(n);
      q.deps.reserve(n * 2);
      q.edges.reserve(n * 2);
      for (uint32_t i = 0; i < n; ++i) query(nodes[i], q.raw[i], q.deps, q.edges);
      // Kernel names come from the driver through the walk's cache.
      q.names.assign(n, nullptr);
      {
        PhaseTimer t(opt_.phases, WalkPhases::names);
        for (uint32_t i = 0; i < n; ++i)
          if (q.raw[i].type == cudaGraphNodeTypeKernel && q.raw[i].have_params)
            q.names[i] = &kernel_name(q.raw[i].func, q.raw[i].kern);
      }
      // Origins go with their graph, which the application may destroy as
      // soon as it is instantiated: looked up now.
      if (opt_.origins_of) {
        PhaseTimer t(opt_.phases, WalkPhases::origins);
        q.origins.resize(n);
        static_assert(sizeof(cudaGraphNode_t) == sizeof(uint64_t));
        opt_.origins_of(reinterpret_cast<const uint64_t*>(nodes.data()), n, q.origins.data());
      } else if (opt_.origin_of) {
        PhaseTimer t(opt_.phases, WalkPhases::origins);
        q.origins.resize(n);
        for (uint32_t i = 0; i < n; ++i) q.origins[i] = opt_.origin_of(reinterpret_cast<uintptr_t>(nodes[i]));
      }
      PhaseTimer rest(opt_.phases, WalkPhases::details);
      // What needs the driver again: kernels without the driver's
      // parameters, and every other node's details (child graphs are
      // queried from here).
      for (uint32_t i = 0; i < n; ++i) {
        RawNode& r = q.raw[i];
        if (r.type == cudaGraphNodeTypeKernel) {
          if (!r.have_params) {
            r.premade = uint32_t(q.premade.size());
            q.premade.emplace_back().kernel_name = runtime_kernel_name(r);
          }
        } else if (r.type == cudaGraphNodeTypeGraph) {
          cudaGraph_t child;
          GS_CUDA(cudaGraphChildGraphNodeGetGraph(nodes[i], &child));
          r.child = uint32_t(q.children.size());
          q.children.push_back(query_level(child, depth + 1));
        } else {
          Node node;
          node.type = map_type(r.type);
          if (details(nodes[i], node)) {
            r.premade = uint32_t(q.premade.size());
            q.premade.push_back(std::move(node));
          }
          if (r.type == cudaGraphNodeTypeConditional) has_conditional_ = true;
        }
      }
    } catch (...) {
      if (prepare.joinable()) prepare.join();
      throw;
    }
    if (prepare.joinable()) prepare.join();
    return level;
  }

  // The second half: the model, from the answers alone (no CUDA call), each
  // node from its own facts, so a large graph's nodes are filled in
  // parallel slices.
  void build_level(QueriedLevel& q, Graph& out, int depth, WalkPhases* phases) {
    PhaseTimer t(phases, WalkPhases::fill);
    const size_t n = q.nodes.size();
    out.graph_id = q.graph_id;
    if (q.index) {
      out.nodes = std::move(q.storage);
    } else {
      q.index.emplace(q.nodes);
      out.nodes.resize(n);
    }
    const HandleIndex& index = *q.index;
    auto fill = [&](unsigned, size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        Node& node = out.nodes[i];
        const RawNode& r = q.raw[i];
        if (r.premade != QueriedLevel::kNone) node = std::move(q.premade[r.premade]);
        node.index = uint32_t(i);
        node.type = map_type(r.type);
        if (node.type == NodeType::unknown) node.type_spelling = "cudaGraphNodeType " + std::to_string(int(r.type));
        node.node_id = r.local_id;
        node.graph_id = out.graph_id;
        node.template_tools_id = (uint64_t(*out.graph_id) << 32) | node.node_id;
        if (depth == 0) node.tools_id = node.template_tools_id;
        if (opt_.handles) node.handle = reinterpret_cast<uintptr_t>(q.nodes[i]);
        if (!q.origins.empty()) node.origin = std::move(q.origins[i]);
        node.dependencies.resize(r.dep_count);
        for (uint32_t k = 0; k < r.dep_count; ++k) {
          uint32_t from = index.find(q.deps[r.dep_begin + k]);
          if (from == HandleIndex::kNone)
            throw Error(ExitCode::device, "cudaGraphNodeGetDependencies", "a dependency outside the graph");
          const cudaGraphEdgeData& e = q.edges[r.dep_begin + k];
          node.dependencies[k] = Dependency{from, map_edge(e), e.from_port, e.to_port};
        }
        if (q.names[i]) {
          kernel(r, node, q.names[i]->mangled);
        } else if (node.type == NodeType::kernel) {
          const std::string name = std::move(node.kernel_name);  // the runtime's (premade)
          kernel(r, node, name);
        }
      }
    };
    parallel_slices(n, n >= 20000 ? worker_count(n, 5000, 16) : 1, fill);
    for (size_t i = 0; i < n; ++i)
      if (q.raw[i].child != QueriedLevel::kNone) {
        out.nodes[i].bodies.emplace_back();
        build_level(*q.children[q.raw[i].child], out.nodes[i].bodies.back(), depth + 1, nullptr);
      }
    link_dependents(out);
  }

  bool has_conditional() const { return has_conditional_; }
  /// Demangled names of every kernel seen, once each.
  void names(std::vector<std::pair<std::string, std::string>>& out) const {
    for (const auto& [key, kn] : names_)
      if (!kn->demangled.empty()) out.emplace_back(kn->mangled, kn->demangled);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  bool ids_from_dot() const { return dot_.loaded; }

 private:
  // CUPTI refuses when another tool holds it; then ids come from the DOT.
  bool cupti_unusable(CUptiResult r) {
    if (r == CUPTI_SUCCESS) return false;
    if (r != CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && r != CUPTI_ERROR_NOT_INITIALIZED &&
        r != CUPTI_ERROR_NOT_COMPATIBLE)
      return false;
    if (!dot_.loaded) load_dot_ids(root_, dot_);
    return true;
  }

  const std::pair<uint32_t, uint32_t>& dot_id(cudaGraphNode_t h) {
    auto it = dot_.node.find(reinterpret_cast<uintptr_t>(h));
    if (it == dot_.node.end())
      throw Error(ExitCode::device, "graph ids", "a node is missing from cudaGraphDebugDotPrint's output");
    return it->second;
  }

  uint32_t graph_id(cudaGraph_t g, cudaGraphNode_t first) {
    unsigned int id = 0;
    if (api_.graph_get_id && api_.graph_get_id(reinterpret_cast<CUgraph>(g), &id) == CUDA_SUCCESS) return id;
    if (!dot_.loaded) {
      uint32_t cid = 0;
      CUptiResult r = cuptiGetGraphId(reinterpret_cast<CUgraph>(g), &cid);
      if (r == CUPTI_SUCCESS) return cid;
      if (!cupti_unusable(r)) throw_cupti(r, "cuptiGetGraphId(graph, &id)", __FILE__, __LINE__);
    }
    return first ? dot_id(first).first : 0;  // an empty graph prints no id
  }

  uint32_t local_id(cudaGraphNode_t h) {
    unsigned int id = 0;
    if (api_.graph_node_get_local_id &&
        api_.graph_node_get_local_id(reinterpret_cast<CUgraphNode>(h), &id) == CUDA_SUCCESS)
      return id;
    if (!dot_.loaded) {
      uint64_t tools = 0;
      CUptiResult r = cuptiGetGraphNodeId(reinterpret_cast<CUgraphNode>(h), &tools);
      if (r == CUPTI_SUCCESS) return uint32_t(tools & 0xffffffffu);
      if (!cupti_unusable(r)) throw_cupti(r, "cuptiGetGraphNodeId(node, &id)", __FILE__, __LINE__);
    }
    return dot_id(h).second;
  }

  // A kernel's names: asked of the driver once per walk and function, and
  // made (a string each, the demangling) once per process while the driver
  // gives the same name for it (kept_kernel_name).
  const KernelName& kernel_name(CUfunction f, CUkernel k) {
    const void* key = f ? static_cast<const void*>(f) : static_cast<const void*>(k);
    auto it = names_.find(key);
    if (it != names_.end()) return *it->second;
    const char* name = nullptr;
    if (f && api_.func_get_name && api_.func_get_name(&name, f) != CUDA_SUCCESS) name = nullptr;
    if (!name && k && api_.kernel_get_name && api_.kernel_get_name(&name, k) != CUDA_SUCCESS) name = nullptr;
    return *names_.emplace(key, kept_kernel_name(key, name)).first->second;
  }

  // A node's details other than a kernel's or a child graph's: whether
  // there were any.
  bool details(cudaGraphNode_t h, Node& node) {
    switch (node.type) {
      case NodeType::event_record: {
        cudaEvent_t e;
        GS_CUDA(cudaGraphEventRecordNodeGetEvent(h, &e));
        node.event_ptr = reinterpret_cast<uintptr_t>(e);
        return true;
      }
      case NodeType::wait_event: {
        cudaEvent_t e;
        GS_CUDA(cudaGraphEventWaitNodeGetEvent(h, &e));
        node.event_ptr = reinterpret_cast<uintptr_t>(e);
        return true;
      }
      default:
        return opt_.details && other_details(h, node);
    }
  }

  // All driver queries of one node (the walk's first phase).
  void query(cudaGraphNode_t h, RawNode& r, std::vector<cudaGraphNode_t>& deps,
             std::vector<cudaGraphEdgeData>& edges) {
    // The driver's entry points where it has them; a driver call that fails
    // is made again through the runtime, whose error the walk reports.
    const auto ch = reinterpret_cast<CUgraphNode>(h);
    {
      PhaseTimer t(opt_.phases, WalkPhases::type);
      CUgraphNodeType type{};
      if (api_.graph_node_get_type && api_.graph_node_get_type(ch, &type) == CUDA_SUCCESS)
        r.type = cudaGraphNodeType(type);
      else
        GS_CUDA(cudaGraphNodeGetType(h, &r.type));
    }
    {
      PhaseTimer t(opt_.phases, WalkPhases::ids);
      r.local_id = local_id(h);
    }
    PhaseTimer deps_time(opt_.phases, WalkPhases::dependencies);
    // Dependencies with their edge data (without an edge-data array, a node
    // with programmatic edges fails with cudaErrorLossyQuery).
    r.dep_begin = uint32_t(deps.size());
    auto get_deps = [&](cudaGraphNode_t* d, cudaGraphEdgeData* e, size_t* count) {
      if (api_.graph_node_get_dependencies &&
          api_.graph_node_get_dependencies(ch, reinterpret_cast<CUgraphNode*>(d), reinterpret_cast<CUgraphEdgeData*>(e),
                                           count) == CUDA_SUCCESS)
        return;
      GS_CUDA(cudaGraphNodeGetDependencies(h, d, e, count));
    };
    size_t nd = 16;
    deps.resize(r.dep_begin + nd);
    edges.resize(r.dep_begin + nd);
    get_deps(deps.data() + r.dep_begin, edges.data() + r.dep_begin, &nd);
    if (nd >= 16) {
      get_deps(nullptr, nullptr, &nd);
      deps.resize(r.dep_begin + nd);
      edges.resize(r.dep_begin + nd);
      get_deps(deps.data() + r.dep_begin, edges.data() + r.dep_begin, &nd);
    }
    deps.resize(r.dep_begin + nd);
    edges.resize(r.dep_begin + nd);
    r.dep_count = uint32_t(nd);
    deps_time.stop();
    if (r.type != cudaGraphNodeTypeKernel) return;
    PhaseTimer params_time(opt_.phases, WalkPhases::params);
    CUDA_KERNEL_NODE_PARAMS p{};
    if (api_.graph_kernel_node_get_params &&
        api_.graph_kernel_node_get_params(reinterpret_cast<CUgraphNode>(h), &p) == CUDA_SUCCESS) {
      r.have_params = true;
      r.func = p.func;
      r.kern = p.kern;
      r.grid = {p.gridDimX, p.gridDimY, p.gridDimZ};
      r.block = {p.blockDimX, p.blockDimY, p.blockDimZ};
      r.shared = p.sharedMemBytes;
      if (opt_.details) arguments(r, p);
    } else {
      // No driver entry point: the runtime's view (names of runtime kernels only).
      cudaKernelNodeParams rp{};
      GS_CUDA(cudaGraphKernelNodeGetParams(h, &rp));
      r.func = reinterpret_cast<CUfunction>(const_cast<void*>(rp.func));
      r.grid = {rp.gridDim.x, rp.gridDim.y, rp.gridDim.z};
      r.block = {rp.blockDim.x, rp.blockDim.y, rp.blockDim.z};
      r.shared = rp.sharedMemBytes;
    }
    params_time.stop();
    if (opt_.details) {
      PhaseTimer t(opt_.phases, WalkPhases::cluster);
      cudaLaunchAttributeValue v{};
      bool got = false;
      if (api_.graph_kernel_node_get_attribute) {
        CUkernelNodeAttrValue dv{};
        got = api_.graph_kernel_node_get_attribute(ch, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &dv) == CUDA_SUCCESS;
        if (got) v.clusterDim = {dv.clusterDim.x, dv.clusterDim.y, dv.clusterDim.z};
      }
      if (got || cudaGraphKernelNodeGetAttribute(h, cudaLaunchAttributeClusterDimension, &v) == cudaSuccess) {
        if (v.clusterDim.x * v.clusterDim.y * v.clusterDim.z > 1) {
          r.cluster = Dim3{v.clusterDim.x, v.clusterDim.y, v.clusterDim.z};
          r.have_cluster = true;
        }
      } else {
        (void)cudaGetLastError();
      }
    }
  }

  // A kernel's argument layout, once per walk and function (param_layout
  // keeps it for the process).
  const ParamLayout* layout(CUfunction f, CUkernel k) {
    const void* key = f ? static_cast<const void*>(f) : static_cast<const void*>(k);
    auto it = layouts_.find(key);
    if (it != layouts_.end()) return it->second;
    return layouts_[key] = param_layout(f, k);
  }

  void arguments(RawNode& r, const CUDA_KERNEL_NODE_PARAMS& p) {
    const ParamLayout* l = layout(p.func, p.kern);
    if (l && read_arguments(*l, p.kernelParams, p.extra, r.arg_buf)) r.layout = l;
  }

  // Without the driver's parameters: the runtime's name of its own kernels.
  static std::string runtime_kernel_name(const RawNode& r) {
    const char* name = nullptr;
    if (cudaFuncGetName(&name, reinterpret_cast<const void*>(r.func)) != cudaSuccess || !name) {
      (void)cudaGetLastError();
      name = "";
    }
    return name;
  }

  // Mangled: demangled once per kernel (see names()).
  void kernel(const RawNode& r, Node& node, const std::string& name) const {
    KernelInfo k;
    node.kernel_name = name;
    k.grid = r.grid;
    k.block = r.block;
    k.shared_mem_bytes = r.shared;
    if (r.have_cluster) k.cluster = r.cluster;
    if (opt_.handles && r.func) k.function_handle = reinterpret_cast<uintptr_t>(r.func);
    if (r.layout) k.args = kernel_args(*r.layout, r.arg_buf);
    node.kernel = std::move(k);
  }

  bool other_details(cudaGraphNode_t h, Node& node) {
    switch (node.type) {
      case NodeType::memcpy: {
        cudaMemcpy3DParms p{};
        GS_CUDA(cudaGraphMemcpyNodeGetParams(h, &p));
        MemcpyInfo m;
        const void* src = p.srcArray ? nullptr : p.srcPtr.ptr;
        const void* dst = p.dstArray ? nullptr : p.dstPtr.ptr;
        if (const char* kind = memcpy_kind(p.kind)) m.kind = kind;
        else m.kind = std::string(1, p.srcArray ? 'D' : pointer_side(src)) + "to" + (p.dstArray ? 'D' : pointer_side(dst));
        uint64_t depth = p.extent.depth ? p.extent.depth : 1, height = p.extent.height ? p.extent.height : 1;
        m.bytes = uint64_t(p.extent.width) * height * depth;
        if (src) m.src = reinterpret_cast<uintptr_t>(src);
        if (dst) m.dst = reinterpret_cast<uintptr_t>(dst);
        node.memcpy = m;
        break;
      }
      case NodeType::memset: {
        cudaMemsetParams p{};
        GS_CUDA(cudaGraphMemsetNodeGetParams(h, &p));
        MemsetInfo m;
        m.value = p.value;
        m.element_size = p.elementSize;
        m.width = p.width;
        m.height = p.height ? p.height : 1;
        m.bytes = uint64_t(p.elementSize) * p.width * m.height;
        m.dst = reinterpret_cast<uintptr_t>(p.dst);
        node.memset = m;
        break;
      }
      case NodeType::host: {
        cudaHostNodeParams p{};
        GS_CUDA(cudaGraphHostNodeGetParams(h, &p));
        HostInfo info;
        info.fn = reinterpret_cast<uintptr_t>(p.fn);
        info.user_data = reinterpret_cast<uintptr_t>(p.userData);
        Dl_info dl{};
        if (dladdr(reinterpret_cast<void*>(p.fn), &dl) && dl.dli_sname) info.symbol = demangle(dl.dli_sname);
        node.host = info;
        break;
      }
      case NodeType::mem_alloc: {
        cudaMemAllocNodeParams p{};
        GS_CUDA(cudaGraphMemAllocNodeGetParams(h, &p));
        node.mem_alloc = MemAllocInfo{p.bytesize, reinterpret_cast<uintptr_t>(p.dptr)};
        break;
      }
      case NodeType::mem_free: {
        void* dptr = nullptr;
        GS_CUDA(cudaGraphMemFreeNodeGetParams(h, &dptr));
        node.mem_free_dptr = reinterpret_cast<uintptr_t>(dptr);
        break;
      }
      default:
        return false;
    }
    return true;
  }

  const WalkOptions& opt_;
  const DriverApi& api_;
  cudaGraph_t root_;
  DotIds dot_;
  std::unordered_map<const void*, std::shared_ptr<const KernelName>> names_;
  std::unordered_map<const void*, const ParamLayout*> layouts_;
  bool has_conditional_ = false;
};

// cudaGraphDebugDotPrint of g (verbose) read back through graphscope's DOT
// reader; the temporary file is removed on every path.
GraphDocument debug_dot(cudaGraph_t g) {
  char path[] = "/tmp/graphscope-walk-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) throw Error(ExitCode::device, "cudaGraphDebugDotPrint", "cannot create a temporary file");
  close(fd);
  cudaError_t e = cudaGraphDebugDotPrint(g, path, cudaGraphDebugDotFlagsVerbose);
  std::string text;
  try {
    if (e == cudaSuccess) text = read_file(path);
  } catch (...) {
    unlink(path);
    throw;
  }
  unlink(path);
  if (e != cudaSuccess)
    throw_cuda(e, "cudaGraphDebugDotPrint(graph, path, cudaGraphDebugDotFlagsVerbose)", __FILE__, __LINE__);
  return read_nvidia_dot(text, "cudaGraphDebugDotPrint of the captured graph");
}

void load_dot_ids(cudaGraph_t root, DotIds& ids) {
  GraphDocument dot = debug_dot(root);
  struct Indexer {
    DotIds& ids;
    void go(const Graph& g) {
      for (const auto& n : g.nodes) {
        if (n.handle && g.graph_id) ids.node.emplace(*n.handle, std::make_pair(*g.graph_id, n.node_id));
        for (const auto& b : n.bodies) go(b);
      }
    }
  } indexer{ids};
  indexer.go(dot.root);
  ids.loaded = true;
}

// Conditional bodies from cudaGraphDebugDotPrint: the DOT names every graph by
// the same id CUPTI gives it, so each conditional node of the walk finds its
// node in the DOT by (graph id, local id) and takes its bodies from there.
void attach_conditional_bodies(const GraphDocument& dot, Graph& root) {
  // Index the DOT's graphs by id.
  std::unordered_map<uint32_t, const Graph*> by_id;
  struct Indexer {
    std::unordered_map<uint32_t, const Graph*>& m;
    void go(const Graph& g) {
      if (g.graph_id) m.emplace(*g.graph_id, &g);
      for (const auto& n : g.nodes)
        for (const auto& b : n.bodies) go(b);
    }
  } indexer{by_id};
  indexer.go(dot.root);
  struct Attacher {
    std::unordered_map<uint32_t, const Graph*>& m;
    void go(Graph& g) {
      auto it = g.graph_id ? m.find(*g.graph_id) : m.end();
      for (auto& n : g.nodes) {
        if (n.type == NodeType::conditional && it != m.end()) {
          for (const auto& dn : it->second->nodes)
            if (dn.node_id == n.node_id) {
              n.bodies = dn.bodies;
              n.conditional_type = dn.conditional_type;
              n.conditional_handle = dn.conditional_handle;
            }
        }
        for (auto& b : n.bodies) go(b);
      }
    }
  } attacher{by_id};
  attacher.go(root);
}

}  // namespace

struct QueriedGraph::Impl {
  WalkOptions options;  // a copy: the walker refers to it
  Walker walker;
  std::unique_ptr<QueriedLevel> root;
  std::optional<GraphDocument> dot;  // conditional bodies' source
  Impl(const WalkOptions& o, cudaGraph_t g) : options(o), walker(options, g) {}
};

QueriedGraph::QueriedGraph() = default;
QueriedGraph::QueriedGraph(QueriedGraph&&) noexcept = default;
QueriedGraph& QueriedGraph::operator=(QueriedGraph&&) noexcept = default;
QueriedGraph::~QueriedGraph() = default;

size_t QueriedGraph::nodes() const {
  return impl_ && impl_->root ? impl_->root->nodes.size() : 0;
}

bool QueriedGraph::has_conditional() const {
  return impl_ && impl_->walker.has_conditional();
}

size_t QueriedGraph::nodes_with_bodies() const {
  struct Count {
    size_t go(const QueriedLevel& q) const {
      size_t n = q.nodes.size();
      for (const auto& c : q.children) n += go(*c);
      return n;
    }
  };
  return impl_ && impl_->root ? Count{}.go(*impl_->root) : 0;
}

std::vector<std::string> QueriedGraph::first_kernel_names(size_t most) const {
  std::vector<std::string> out;
  if (!impl_ || !impl_->root) return out;
  const QueriedLevel& q = *impl_->root;
  for (size_t i = 0; i < q.nodes.size() && out.size() < most; ++i) {
    if (q.raw[i].type != cudaGraphNodeTypeKernel) continue;
    if (q.names[i])
      out.push_back(q.names[i]->mangled);
    else
      out.push_back(q.premade[q.raw[i].premade].kernel_name);
  }
  return out;
}

GraphDocument QueriedGraph::build(WalkPhases* phases) && {
  if (!impl_ || !impl_->root) throw Error(ExitCode::device, "graph walk", "its model was made already");
  std::unique_ptr<Impl> impl = std::move(impl_);
  GraphDocument doc;
  doc.source_format = "graphscope";
  impl->walker.build_level(*impl->root, doc.root, 0, phases);
  impl->walker.names(doc.kernel_names);
  if (impl->walker.ids_from_dot())
    doc.warnings.push_back("CUPTI is in use by another tool: graph and node ids were read from cudaGraphDebugDotPrint");
  if (impl->dot) attach_conditional_bodies(*impl->dot, doc.root);
  return doc;
}

QueriedGraph query_graph(cudaGraph_t g, const WalkOptions& options) {
  PhaseTimer t(options.phases, WalkPhases::whole);
  QueriedGraph q;
  q.impl_ = std::make_unique<QueriedGraph::Impl>(options, g);
  QueriedGraph::Impl& impl = *q.impl_;
  impl.root = impl.walker.query_level(g, 0);
  if (impl.walker.has_conditional() && options.conditional_bodies) impl.dot = debug_dot(g);
  // What only the queries use.
  impl.options.origin_of = nullptr;
  impl.options.root_handles = nullptr;
  impl.options.phases = nullptr;
  return q;
}

GraphDocument walk_graph(cudaGraph_t g, const WalkOptions& options) {
  QueriedGraph q = query_graph(g, options);
  PhaseTimer t(options.phases, WalkPhases::whole);
  return std::move(q).build(options.phases);
}

GraphDocument walk_cuda_graph(uintptr_t graph, uintptr_t exec, const WalkOptions& options) {
  if (graph == 0) throw Error(ExitCode::usage, "the graph handle", "is null");
  GraphDocument doc = walk_graph(reinterpret_cast<cudaGraph_t>(graph), options);
  if (exec) {
    if (auto id = exec_graph_id(reinterpret_cast<cudaGraphExec_t>(exec))) assign_exec_ids(doc, *id);
    else doc.warnings.push_back("CUPTI is in use by another tool: the exec graph's id is unknown, ids are the template's");
  }
  return doc;
}

std::optional<uint32_t> exec_graph_id(cudaGraphExec_t exec) {
  const DriverApi& api = driver_api();
  unsigned int id = 0;
  if (api.graph_exec_get_id && api.graph_exec_get_id(reinterpret_cast<CUgraphExec>(exec), &id) == CUDA_SUCCESS)
    return id;
  uint32_t cid = 0;
  CUptiResult r = cuptiGetGraphExecId(reinterpret_cast<CUgraphExec>(exec), &cid);
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) return std::nullopt;  // another tool holds CUPTI
  if (r != CUPTI_SUCCESS) throw_cupti(r, "cuptiGetGraphExecId(exec, &id)", __FILE__, __LINE__);
  return cid;
}

char pointer_side(const void* p) {
  cudaPointerAttributes a{};
  if (!p || cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return 'H';
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged ? 'D' : 'H';
}

void assign_exec_ids(GraphDocument& doc, uint32_t exec_id) {
  doc.exec_graph_id = exec_id;
  for (auto& n : doc.root.nodes) {
    n.graph_id = exec_id;
    n.tools_id = (uint64_t(exec_id) << 32) | n.node_id;
  }
}

}  // namespace graphscope::capture
