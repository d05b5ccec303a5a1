#include "driver_api.h"

#include <cuda_runtime_api.h>

namespace graphscope::capture {
namespace {

template <typename F>
void resolve(const char* name, unsigned version, F* out) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &status) == cudaSuccess &&
      status == cudaDriverEntryPointSuccess && fn)
    *out = reinterpret_cast<F>(fn);
  else
    (void)cudaGetLastError();  // a missing symbol is not an error to keep
}

DriverApi load() {
  DriverApi api;
  cudaDriverGetVersion(&api.driver_version);
  resolve("cuGraphKernelNodeGetParams", 12000, &api.graph_kernel_node_get_params);
  resolve("cuFuncGetName", 12030, &api.func_get_name);
  resolve("cuKernelGetName", 12030, &api.kernel_get_name);
  resolve("cuDeviceGet", 12000, &api.device_get);
  resolve("cuDeviceGetAttribute", 12000, &api.device_get_attribute);
  resolve("cuGraphNodeGetType", 12000, &api.graph_node_get_type);
  resolve("cuGraphNodeGetDependencies", 12030, &api.graph_node_get_dependencies);
  resolve("cuGraphKernelNodeGetAttribute", 12000, &api.graph_kernel_node_get_attribute);
  resolve("cuFuncGetParamInfo", 12040, &api.func_get_param_info);
  resolve("cuKernelGetParamInfo", 12040, &api.kernel_get_param_info);
  resolve("cuGetErrorName", 12000, &api.get_error_name);
  if (api.driver_version >= 13010) {
    resolve("cuGraphNodeGetLocalId", 13010, &api.graph_node_get_local_id);
    resolve("cuGraphNodeGetToolsId", 13010, &api.graph_node_get_tools_id);
    resolve("cuGraphGetId", 13010, &api.graph_get_id);
    resolve("cuGraphExecGetId", 13010, &api.graph_exec_get_id);
  }
  return api;
}

}  // namespace

const DriverApi& driver_api() {
  static const DriverApi api = load();
  return api;
}

}  // namespace graphscope::capture
