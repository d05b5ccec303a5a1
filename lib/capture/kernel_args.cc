// A kernel's argument layout and values (issue 46): the driver's
// cuFuncGetParamInfo, kept per function for the process, and a launch's
// argument buffer read from its kernelParams or extra, for the walk (every
// kernel node's arguments in its document) and for the per-node setters
// (exec_update.cc).
#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "driver_api.h"
#include "walk.h"

namespace graphscope::capture {

const ParamLayout* param_layout(CUfunction f, CUkernel k) {
  static std::mutex m;
  static auto* kept = new std::unordered_map<const void*, std::optional<ParamLayout>>;  // never freed
  const void* key = f ? static_cast<const void*>(f) : static_cast<const void*>(k);
  if (!key) return nullptr;
  std::lock_guard<std::mutex> lock(m);
  auto it = kept->find(key);
  if (it != kept->end()) return it->second ? &*it->second : nullptr;
  const DriverApi& api = driver_api();
  ParamLayout v;
  bool ok = true;
  for (size_t i = 0; i < 4096; ++i) {
    size_t off = 0, size = 0;
    CUresult e = CUDA_ERROR_NOT_SUPPORTED;
    if (f && api.func_get_param_info) e = api.func_get_param_info(f, i, &off, &size);
    else if (k && api.kernel_get_param_info) e = api.kernel_get_param_info(k, i, &off, &size);
    if (e == CUDA_ERROR_INVALID_VALUE) break;  // past the last argument (or none)
    if (e != CUDA_SUCCESS || off > (1u << 20) || size > (1u << 20)) {
      ok = false;
      break;
    }
    v.emplace_back(uint32_t(off), uint32_t(size));
  }
  if (kept->size() >= (size_t(1) << 16)) return nullptr;
  auto& slot = (*kept)[key];
  if (ok) slot = std::move(v);
  return slot ? &*slot : nullptr;
}

bool read_arguments(const ParamLayout& l, void** params, void** extra, std::string& out) {
  size_t end = 0;
  for (const auto& [off, size] : l) end = std::max(end, size_t(off) + size);
  std::string buf(end, '\0');
  if (params) {
    for (size_t i = 0; i < l.size(); ++i) {
      if (!params[i]) return false;
      std::memcpy(buf.data() + l[i].first, params[i], l[i].second);
    }
  } else if (extra) {
    const void* data = nullptr;
    size_t size = 0;
    for (size_t i = 0; i < 16 && extra[2 * i] != CU_LAUNCH_PARAM_END; ++i) {
      if (extra[2 * i] == CU_LAUNCH_PARAM_BUFFER_POINTER) data = extra[2 * i + 1];
      else if (extra[2 * i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[2 * i + 1])
        size = *static_cast<const size_t*>(extra[2 * i + 1]);
    }
    if (!data || size < end) return false;
    std::memcpy(buf.data(), data, end);
  } else if (end) {
    return false;
  }
  out = std::move(buf);
  return true;
}

std::vector<KernelArg> kernel_args(const ParamLayout& l, const std::string& buf) {
  std::vector<KernelArg> v;
  v.reserve(l.size());
  for (const auto& [off, size] : l) {
    if (size_t(off) + size > buf.size()) return {};
    KernelArg& a = v.emplace_back();
    a.offset = off, a.size = size;
    const auto* b = reinterpret_cast<const unsigned char*>(buf.data()) + off;
    a.value = kernel_arg_value(b, size, off);
    a.raw.assign(reinterpret_cast<const char*>(b), size);
  }
  return v;
}

}  // namespace graphscope::capture
