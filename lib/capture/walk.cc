#include "walk.h"

#include <cupti.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <unordered_map>
#include <vector>

#include "cuda_check.h"
#include "driver_api.h"
#include "inspect/demangle.h"
#include "inspect/io.h"
#include "inspect/nvdot_reader.h"

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
char side_of(const void* p) {
  cudaPointerAttributes a{};
  if (!p || cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return 'H';
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged ? 'D' : 'H';
}

struct KernelName {
  std::string mangled, demangled;
};

// Graph and node ids read from cudaGraphDebugDotPrint: the fallback when
// CUPTI cannot be used because another tool (compute-sanitizer, Nsight, a
// profiler) holds it. The verbose DOT names every node's handle beside its
// graph id and local id.
struct DotIds {
  std::unordered_map<uint64_t, std::pair<uint32_t, uint32_t>> node;  // handle -> (graph, local)
  bool loaded = false;
};

void load_dot_ids(cudaGraph_t root, DotIds& ids);

class Walker {
 public:
  Walker(const WalkOptions& o, cudaGraph_t root) : opt_(o), api_(driver_api()), root_(root) {}

  void walk(cudaGraph_t g, Graph& out, int depth) {
    if (depth > 64) throw Error(ExitCode::device, "graph walk", "child graphs nested deeper than 64");
    size_t n = 0;
    GS_CUDA(cudaGraphGetNodes(g, nullptr, &n));
    std::vector<cudaGraphNode_t> nodes(n);
    if (n) GS_CUDA(cudaGraphGetNodes(g, nodes.data(), &n));
    nodes.resize(n);
    out.graph_id = graph_id(g, n ? nodes[0] : nullptr);
    std::unordered_map<cudaGraphNode_t, uint32_t> index;
    index.reserve(n * 2);
    for (uint32_t i = 0; i < n; ++i) index.emplace(nodes[i], i);
    out.nodes.resize(n);
    std::vector<cudaGraphNode_t> deps(16);
    std::vector<cudaGraphEdgeData> edges(16);
    for (uint32_t i = 0; i < n; ++i) {
      Node& node = out.nodes[i];
      cudaGraphNode_t h = nodes[i];
      node.index = i;
      cudaGraphNodeType t;
      GS_CUDA(cudaGraphNodeGetType(h, &t));
      node.type = map_type(t);
      if (node.type == NodeType::unknown) node.type_spelling = "cudaGraphNodeType " + std::to_string(int(t));
      node.node_id = local_id(h);
      node.graph_id = out.graph_id;
      node.template_tools_id = (uint64_t(*out.graph_id) << 32) | node.node_id;
      if (depth == 0) node.tools_id = node.template_tools_id;
      if (opt_.handles) node.handle = reinterpret_cast<uintptr_t>(h);
      // Dependencies with their edge data (without an edge-data array, a
      // node with programmatic edges fails with cudaErrorLossyQuery).
      size_t nd = deps.size();
      GS_CUDA(cudaGraphNodeGetDependencies(h, deps.data(), edges.data(), &nd));
      if (nd >= deps.size()) {
        GS_CUDA(cudaGraphNodeGetDependencies(h, nullptr, nullptr, &nd));
        deps.resize(nd + 1);
        edges.resize(nd + 1);
        GS_CUDA(cudaGraphNodeGetDependencies(h, deps.data(), edges.data(), &nd));
      }
      node.dependencies.resize(nd);
      for (size_t k = 0; k < nd; ++k) {
        auto it = index.find(deps[k]);
        if (it == index.end())
          throw Error(ExitCode::device, "cudaGraphNodeGetDependencies", "a dependency outside the graph");
        Dependency& d = node.dependencies[k];
        d.from = it->second;
        d.type = map_edge(edges[k]);
        d.from_port = edges[k].from_port;
        d.to_port = edges[k].to_port;
      }
      details(h, node, depth);
      if (node.type == NodeType::conditional) has_conditional_ = true;
    }
    link_dependents(out);
  }

  bool has_conditional() const { return has_conditional_; }
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

  const KernelName& kernel_name(CUfunction f, CUkernel k) {
    const void* key = f ? static_cast<const void*>(f) : static_cast<const void*>(k);
    auto it = names_.find(key);
    if (it != names_.end()) return it->second;
    const char* name = nullptr;
    if (f && api_.func_get_name && api_.func_get_name(&name, f) != CUDA_SUCCESS) name = nullptr;
    if (!name && k && api_.kernel_get_name && api_.kernel_get_name(&name, k) != CUDA_SUCCESS) name = nullptr;
    KernelName kn;
    if (name) {
      kn.mangled = name;
      kn.demangled = demangle(kn.mangled);
      if (kn.demangled == kn.mangled) kn.demangled.clear();
    }
    return names_.emplace(key, std::move(kn)).first->second;
  }

  void details(cudaGraphNode_t h, Node& node, int depth) {
    switch (node.type) {
      case NodeType::kernel: kernel(h, node); break;
      case NodeType::child_graph: {
        cudaGraph_t child;
        GS_CUDA(cudaGraphChildGraphNodeGetGraph(h, &child));
        node.bodies.emplace_back();
        walk(child, node.bodies.back(), depth + 1);
        break;
      }
      case NodeType::event_record: {
        cudaEvent_t e;
        GS_CUDA(cudaGraphEventRecordNodeGetEvent(h, &e));
        node.event_ptr = reinterpret_cast<uintptr_t>(e);
        break;
      }
      case NodeType::wait_event: {
        cudaEvent_t e;
        GS_CUDA(cudaGraphEventWaitNodeGetEvent(h, &e));
        node.event_ptr = reinterpret_cast<uintptr_t>(e);
        break;
      }
      default:
        if (opt_.details) other_details(h, node);
    }
  }

  void kernel(cudaGraphNode_t h, Node& node) {
    CUDA_KERNEL_NODE_PARAMS p{};
    KernelInfo k;
    if (api_.graph_kernel_node_get_params &&
        api_.graph_kernel_node_get_params(reinterpret_cast<CUgraphNode>(h), &p) == CUDA_SUCCESS) {
      const KernelName& name = kernel_name(p.func, p.kern);
      node.kernel_name = name.mangled;
      k.demangled = name.demangled;
      k.grid = {p.gridDimX, p.gridDimY, p.gridDimZ};
      k.block = {p.blockDimX, p.blockDimY, p.blockDimZ};
      k.shared_mem_bytes = p.sharedMemBytes;
      if (opt_.handles && p.func) k.function_handle = reinterpret_cast<uintptr_t>(p.func);
    } else {
      // No driver entry point: the runtime's view (names of runtime kernels only).
      cudaKernelNodeParams rp{};
      GS_CUDA(cudaGraphKernelNodeGetParams(h, &rp));
      const char* name = nullptr;
      if (cudaFuncGetName(&name, rp.func) != cudaSuccess || !name) {
        (void)cudaGetLastError();
        name = "";
      }
      node.kernel_name = name;
      k.demangled = demangle(node.kernel_name);
      k.grid = {rp.gridDim.x, rp.gridDim.y, rp.gridDim.z};
      k.block = {rp.blockDim.x, rp.blockDim.y, rp.blockDim.z};
      k.shared_mem_bytes = rp.sharedMemBytes;
    }
    if (opt_.details) {
      cudaLaunchAttributeValue v{};
      if (cudaGraphKernelNodeGetAttribute(h, cudaLaunchAttributeClusterDimension, &v) == cudaSuccess) {
        if (v.clusterDim.x * v.clusterDim.y * v.clusterDim.z > 1)
          k.cluster = Dim3{v.clusterDim.x, v.clusterDim.y, v.clusterDim.z};
      } else {
        (void)cudaGetLastError();
      }
    }
    node.kernel = std::move(k);
  }

  void other_details(cudaGraphNode_t h, Node& node) {
    switch (node.type) {
      case NodeType::memcpy: {
        cudaMemcpy3DParms p{};
        GS_CUDA(cudaGraphMemcpyNodeGetParams(h, &p));
        MemcpyInfo m;
        const void* src = p.srcArray ? nullptr : p.srcPtr.ptr;
        const void* dst = p.dstArray ? nullptr : p.dstPtr.ptr;
        if (const char* kind = memcpy_kind(p.kind)) m.kind = kind;
        else m.kind = std::string(1, p.srcArray ? 'D' : side_of(src)) + "to" + (p.dstArray ? 'D' : side_of(dst));
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
      default: break;
    }
  }

  const WalkOptions& opt_;
  const DriverApi& api_;
  cudaGraph_t root_;
  DotIds dot_;
  std::unordered_map<const void*, KernelName> names_;
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
void attach_conditional_bodies(cudaGraph_t g, Graph& root) {
  GraphDocument dot = debug_dot(g);
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

GraphDocument walk_graph(cudaGraph_t g, const WalkOptions& options) {
  GraphDocument doc;
  doc.source_format = "graphscope";
  Walker w(options, g);
  w.walk(g, doc.root, 0);
  if (w.ids_from_dot())
    doc.extra_json.emplace_back(
        "warnings", "[\"CUPTI is in use by another tool: graph and node ids were read from cudaGraphDebugDotPrint\"]");
  if (w.has_conditional() && options.conditional_bodies) attach_conditional_bodies(g, doc.root);
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

void assign_exec_ids(GraphDocument& doc, uint32_t exec_id) {
  doc.exec_graph_id = exec_id;
  for (auto& n : doc.root.nodes) {
    n.graph_id = exec_id;
    n.tools_id = (uint64_t(exec_id) << 32) | n.node_id;
  }
}

}  // namespace graphscope::capture
