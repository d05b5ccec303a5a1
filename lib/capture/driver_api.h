// Driver entry points graphscope uses, resolved at run time through the
// runtime (cudaGetDriverEntryPointByVersion): graphscope links no libcuda,
// and functions newer than the toolkit it was built with (CUDA 13.1's graph
// ids) are used when the installed driver has them.
#pragma once

#include <cuda.h>

namespace graphscope::capture {

struct DriverApi {
  // CUDA 12.x and later.
  CUresult (*graph_kernel_node_get_params)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS*) = nullptr;
  CUresult (*func_get_name)(const char**, CUfunction) = nullptr;
  CUresult (*kernel_get_name)(const char**, CUkernel) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_get_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  // The walk's per-node queries, straight to the driver: the runtime's
  // wrappers of the same calls add their own checks to each of 100k calls.
  CUresult (*graph_node_get_type)(CUgraphNode, CUgraphNodeType*) = nullptr;
  CUresult (*graph_node_get_dependencies)(CUgraphNode, CUgraphNode*, CUgraphEdgeData*, size_t*) = nullptr;
  CUresult (*graph_kernel_node_get_attribute)(CUgraphNode, CUkernelNodeAttrID, CUkernelNodeAttrValue*) = nullptr;
  // CUDA 12.4: a kernel's argument layout (offset and size of each).
  CUresult (*func_get_param_info)(CUfunction, size_t, size_t*, size_t*) = nullptr;
  CUresult (*kernel_get_param_info)(CUkernel, size_t, size_t*, size_t*) = nullptr;
  CUresult (*get_error_name)(CUresult, const char**) = nullptr;
  // CUDA 13.1: graph and node ids without CUPTI. Null on older drivers.
  CUresult (*graph_node_get_local_id)(CUgraphNode, unsigned int*) = nullptr;
  CUresult (*graph_node_get_tools_id)(CUgraphNode, unsigned long long*) = nullptr;
  CUresult (*graph_get_id)(CUgraph, unsigned int*) = nullptr;
  CUresult (*graph_exec_get_id)(CUgraphExec, unsigned int*) = nullptr;
  int driver_version = 0;  // cudaDriverGetVersion
};

/// Resolves the entry points once (after the runtime is initialized).
const DriverApi& driver_api();

}  // namespace graphscope::capture
