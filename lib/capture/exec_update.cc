#include "exec_update.h"

#include <dlfcn.h>

#include "driver_api.h"
#include "inspect/core/demangle.h"
#include "walk.h"

namespace graphscope::capture {

namespace {

template <typename P>
const P& params(const CUpti_CallbackData* cb) {
  return *static_cast<const P*>(cb->functionParams);
}

void kernel_update(NodeUpdate& u, CUfunction func, CUkernel kern, unsigned gx, unsigned gy, unsigned gz,
                   unsigned bx, unsigned by, unsigned bz, unsigned smem) {
  u.type = NodeType::kernel;
  const DriverApi& api = driver_api();
  const char* name = nullptr;
  if (func && api.func_get_name && api.func_get_name(&name, func) != CUDA_SUCCESS) name = nullptr;
  if (!name && kern && api.kernel_get_name && api.kernel_get_name(&name, kern) != CUDA_SUCCESS) name = nullptr;
  if (name) {
    u.kernel_name = name;
    u.demangled = demangle(u.kernel_name);
    if (u.demangled == u.kernel_name) u.demangled.clear();
  }
  KernelInfo k;
  k.grid = {gx, gy, gz};
  k.block = {bx, by, bz};
  k.shared_mem_bytes = smem;
  if (func) k.function_handle = reinterpret_cast<uintptr_t>(func);
  u.kernel = k;
}

template <typename K>
void kernel_update(NodeUpdate& u, const K* p, CUkernel kern) {
  if (!p) return;
  kernel_update(u, p->func, kern, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY, p->blockDimZ,
                p->sharedMemBytes);
  // The new arguments, where the driver lays them out.
  std::string buf;
  if (const ParamLayout* l = param_layout(p->func, kern))
    if (read_arguments(*l, p->kernelParams, p->extra, buf)) u.kernel->args = kernel_args(*l, buf);
}

char side(CUmemorytype t, const void* host, CUdeviceptr dev) {
  switch (t) {
    case CU_MEMORYTYPE_HOST: return 'H';
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_ARRAY: return 'D';
    default: return pointer_side(host ? host : reinterpret_cast<const void*>(dev));
  }
}

void memcpy_update(NodeUpdate& u, const CUDA_MEMCPY3D* p) {
  u.type = NodeType::memcpy;
  if (!p) return;
  MemcpyInfo m;
  const char s = side(p->srcMemoryType, p->srcHost, p->srcDevice);
  const char d = side(p->dstMemoryType, p->dstHost, p->dstDevice);
  m.kind = std::string(1, s) + "to" + d;
  const uint64_t height = p->Height ? p->Height : 1, depth = p->Depth ? p->Depth : 1;
  m.bytes = uint64_t(p->WidthInBytes) * height * depth;
  auto address = [](CUmemorytype t, const void* host, CUdeviceptr dev) -> std::optional<uint64_t> {
    if (t == CU_MEMORYTYPE_ARRAY) return std::nullopt;
    if (t == CU_MEMORYTYPE_HOST) return reinterpret_cast<uintptr_t>(host);
    return uint64_t(dev);
  };
  m.src = address(p->srcMemoryType, p->srcHost, p->srcDevice);
  m.dst = address(p->dstMemoryType, p->dstHost, p->dstDevice);
  u.memcpy = m;
}

template <typename M>
void memset_update(NodeUpdate& u, const M* p) {
  u.type = NodeType::memset;
  if (!p) return;
  MemsetInfo m;
  m.value = p->value;
  m.element_size = p->elementSize;
  m.width = p->width;
  m.height = p->height ? p->height : 1;
  m.bytes = uint64_t(p->elementSize) * p->width * m.height;
  m.dst = uint64_t(p->dst);
  u.memset = m;
}

template <typename H>
void host_update(NodeUpdate& u, const H* p) {
  u.type = NodeType::host;
  if (!p) return;
  HostInfo h;
  h.fn = reinterpret_cast<uintptr_t>(p->fn);
  h.user_data = reinterpret_cast<uintptr_t>(p->userData);
  Dl_info dl{};
  if (dladdr(reinterpret_cast<void*>(p->fn), &dl) && dl.dli_sname) h.symbol = demangle(dl.dli_sname);
  u.host = h;
}

void not_read(NodeUpdate& u, const char* what) {
  u.type = NodeType::unknown;
  u.why_not = std::string("graphscope does not read the new parameters of ") + what;
}

}  // namespace

const std::vector<CUpti_CallbackId>& exec_change_callbacks() {
  static const std::vector<CUpti_CallbackId> ids = {
      CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate,
      CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate_v2,
      CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams,
      CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams_v2,
      CUPTI_DRIVER_TRACE_CBID_cuGraphExecMemcpyNodeSetParams,
      CUPTI_DRIVER_TRACE_CBID_cuGraphExecMemsetNodeSetParams,
      CUPTI_DRIVER_TRACE_CBID_cuGraphExecHostNodeSetParams,
      CUPTI_DRIVER_TRACE_CBID_cuGraphExecChildGraphNodeSetParams,
      CUPTI_DRIVER_TRACE_CBID_cuGraphExecEventRecordNodeSetEvent,
      CUPTI_DRIVER_TRACE_CBID_cuGraphExecEventWaitNodeSetEvent,
      CUPTI_DRIVER_TRACE_CBID_cuGraphExecExternalSemaphoresSignalNodeSetParams,
      CUPTI_DRIVER_TRACE_CBID_cuGraphExecExternalSemaphoresWaitNodeSetParams,
      CUPTI_DRIVER_TRACE_CBID_cuGraphNodeSetEnabled,
      CUPTI_DRIVER_TRACE_CBID_cuGraphExecBatchMemOpNodeSetParams,
      CUPTI_DRIVER_TRACE_CBID_cuGraphExecNodeSetParams,
  };
  return ids;
}

namespace {

// What the call asked to change, whether or not the driver did.
std::optional<ExecChange> read_change(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  ExecChange c;
  NodeUpdate u;
  u.call = cb->functionName ? cb->functionName : "?";
  auto node = [&](CUgraphExec exec, CUgraphNode n) {
    c.exec = exec;
    u.node = reinterpret_cast<uintptr_t>(n);
  };
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate: {
      const auto& p = params<cuGraphExecUpdate_params>(cb);
      c.exec = p.hGraphExec;
      c.whole = p.hGraph;
      return c;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate_v2: {
      const auto& p = params<cuGraphExecUpdate_v2_params>(cb);
      c.exec = p.hGraphExec;
      c.whole = p.hGraph;
      return c;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams: {
      const auto& p = params<cuGraphExecKernelNodeSetParams_params>(cb);
      node(p.hGraphExec, p.hNode);
      kernel_update(u, p.nodeParams, nullptr);
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams_v2: {
      const auto& p = params<cuGraphExecKernelNodeSetParams_v2_params>(cb);
      node(p.hGraphExec, p.hNode);
      kernel_update(u, p.nodeParams, p.nodeParams ? p.nodeParams->kern : nullptr);
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecMemcpyNodeSetParams: {
      const auto& p = params<cuGraphExecMemcpyNodeSetParams_params>(cb);
      node(p.hGraphExec, p.hNode);
      memcpy_update(u, p.copyParams);
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecMemsetNodeSetParams: {
      const auto& p = params<cuGraphExecMemsetNodeSetParams_params>(cb);
      node(p.hGraphExec, p.hNode);
      memset_update(u, p.memsetParams);
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecHostNodeSetParams: {
      const auto& p = params<cuGraphExecHostNodeSetParams_params>(cb);
      node(p.hGraphExec, p.hNode);
      host_update(u, p.nodeParams);
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecEventRecordNodeSetEvent: {
      const auto& p = params<cuGraphExecEventRecordNodeSetEvent_params>(cb);
      node(p.hGraphExec, p.hNode);
      u.type = NodeType::event_record;
      u.event_ptr = reinterpret_cast<uintptr_t>(p.event);
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecEventWaitNodeSetEvent: {
      const auto& p = params<cuGraphExecEventWaitNodeSetEvent_params>(cb);
      node(p.hGraphExec, p.hNode);
      u.type = NodeType::wait_event;
      u.event_ptr = reinterpret_cast<uintptr_t>(p.event);
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphNodeSetEnabled: {
      const auto& p = params<cuGraphNodeSetEnabled_params>(cb);
      node(p.hGraphExec, p.hNode);
      u.enabled = p.isEnabled != 0;
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecChildGraphNodeSetParams: {
      const auto& p = params<cuGraphExecChildGraphNodeSetParams_params>(cb);
      node(p.hGraphExec, p.hNode);
      not_read(u, "child graph nodes");
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecExternalSemaphoresSignalNodeSetParams: {
      const auto& p = params<cuGraphExecExternalSemaphoresSignalNodeSetParams_params>(cb);
      node(p.hGraphExec, p.hNode);
      not_read(u, "external semaphore nodes");
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecExternalSemaphoresWaitNodeSetParams: {
      const auto& p = params<cuGraphExecExternalSemaphoresWaitNodeSetParams_params>(cb);
      node(p.hGraphExec, p.hNode);
      not_read(u, "external semaphore nodes");
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecBatchMemOpNodeSetParams: {
      const auto& p = params<cuGraphExecBatchMemOpNodeSetParams_params>(cb);
      node(p.hGraphExec, p.hNode);
      not_read(u, "batch memory operation nodes");
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecNodeSetParams: {
      const auto& p = params<cuGraphExecNodeSetParams_params>(cb);
      node(p.hGraphExec, p.hNode);
      const CUgraphNodeParams* np = p.nodeParams;
      if (!np) {
        not_read(u, "this node (no parameters)");
        break;
      }
      switch (np->type) {
        case CU_GRAPH_NODE_TYPE_KERNEL: kernel_update(u, &np->kernel, np->kernel.kern); break;
        case CU_GRAPH_NODE_TYPE_MEMCPY: memcpy_update(u, &np->memcpy.copyParams); break;
        case CU_GRAPH_NODE_TYPE_MEMSET: memset_update(u, &np->memset); break;
        case CU_GRAPH_NODE_TYPE_HOST: host_update(u, &np->host); break;
        case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
          u.type = NodeType::event_record;
          u.event_ptr = reinterpret_cast<uintptr_t>(np->eventRecord.event);
          break;
        case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
          u.type = NodeType::wait_event;
          u.event_ptr = reinterpret_cast<uintptr_t>(np->eventWait.event);
          break;
        default: not_read(u, "nodes of this type (cuGraphExecNodeSetParams)");
      }
      break;
    }
    default: return std::nullopt;
  }
  c.node = std::move(u);
  return c;
}

}  // namespace

std::optional<ExecChange> exec_change(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  if (!cb || cb->callbackSite != CUPTI_API_EXIT || !cb->functionParams || !cb->functionReturnValue) return std::nullopt;
  if (*static_cast<const CUresult*>(cb->functionReturnValue) != CUDA_SUCCESS) return std::nullopt;
  return read_change(cbid, cb);
}

const char* update_result_name(CUgraphExecUpdateResult r) {
  switch (r) {
    case CU_GRAPH_EXEC_UPDATE_SUCCESS: return "CU_GRAPH_EXEC_UPDATE_SUCCESS";
    case CU_GRAPH_EXEC_UPDATE_ERROR: return "CU_GRAPH_EXEC_UPDATE_ERROR";
    case CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED: return "CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED";
    case CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED: return "CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED";
    case CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED: return "CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED";
    case CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED: return "CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED";
    case CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED: return "CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED";
    case CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE:
      return "CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE";
    case CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED: return "CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED";
  }
  return nullptr;
}

std::optional<ExecFailure> exec_failure(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  if (!cb || cb->callbackSite != CUPTI_API_EXIT || !cb->functionParams || !cb->functionReturnValue) return std::nullopt;
  const CUresult e = *static_cast<const CUresult*>(cb->functionReturnValue);
  if (e == CUDA_SUCCESS) return std::nullopt;
  std::optional<ExecChange> c = read_change(cbid, cb);
  if (!c) return std::nullopt;
  ExecFailure f;
  f.exec = c->exec;
  f.call = cb->functionName ? cb->functionName : "?";
  f.error = e;
  if (c->node) f.from_node = reinterpret_cast<CUgraphNode>(uintptr_t(c->node->node));
  if (cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate_v2) {
    const auto& p = params<cuGraphExecUpdate_v2_params>(cb);
    f.offered = p.hGraph;
    if (const CUgraphExecUpdateResultInfo* info = p.resultInfo) {
      f.result = info->result;
      f.has_result = true;
      f.node = info->errorNode;
      f.from_node = info->errorFromNode;
    }
  } else if (cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate) {
    const auto& p = params<cuGraphExecUpdate_params>(cb);
    f.offered = p.hGraph;
    if (p.updateResult_out) f.result = *p.updateResult_out, f.has_result = true;
    if (p.hErrorNode_out) f.node = *p.hErrorNode_out;
  }
  return f;
}

}  // namespace graphscope::capture
