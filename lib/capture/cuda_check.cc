#include "cuda_check.h"

#include <dlfcn.h>

#include <string>

namespace graphscope::capture {
namespace {

std::string where(const char* file, int line) {
  std::string f = file;
  size_t slash = f.rfind('/');
  if (slash != std::string::npos) f = f.substr(slash + 1);
  return f + ":" + std::to_string(line);
}

}  // namespace

void throw_cuda(cudaError_t e, const char* call, const char* file, int line) {
  throw Error(ExitCode::device, call,
              std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e) + ", at " + where(file, line));
}

void throw_cu(CUresult e, const char* call, const char* file, int line) {
  // graphscope does not link libcuda (it must start without a driver), so
  // the driver's own error names are looked up in the already loaded driver.
  using NameFn = CUresult (*)(CUresult, const char**);
  const char* name = nullptr;
  const char* text = nullptr;
  if (void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD)) {
    auto get_name = reinterpret_cast<NameFn>(dlsym(lib, "cuGetErrorName"));
    auto get_text = reinterpret_cast<NameFn>(dlsym(lib, "cuGetErrorString"));
    if (get_name && get_name(e, &name) != CUDA_SUCCESS) name = nullptr;
    if (get_text && get_text(e, &text) != CUDA_SUCCESS) text = nullptr;
    dlclose(lib);
  }
  std::string why = name ? name : "CUresult " + std::to_string(int(e));
  if (text) why += std::string(": ") + text;
  throw Error(ExitCode::device, call, why + ", at " + where(file, line));
}

void throw_cupti(CUptiResult e, const char* call, const char* file, int line) {
  const char* text = nullptr;
  if (cuptiGetResultString(e, &text) != CUPTI_SUCCESS || !text) text = "unknown CUPTI error";
  throw Error(ExitCode::device, call, std::string(text) + " (CUPTI " + std::to_string(int(e)) + "), at " +
                                          where(file, line));
}

}  // namespace graphscope::capture
