// One wrapper per API, as libkineto and nvbench do: every CUDA runtime,
// driver and CUPTI call goes through GS_CUDA / GS_CU / GS_CUPTI, which throw
// graphscope::Error(ExitCode::device) naming the call, the error's name and
// text, and the file and line. Nothing here is CUDA-version specific.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include "inspect/core/error.h"

namespace graphscope::capture {

/// Throws for a failed runtime call; `call` is the source text.
[[noreturn]] void throw_cuda(cudaError_t e, const char* call, const char* file, int line);
/// Throws for a failed driver call.
[[noreturn]] void throw_cu(CUresult e, const char* call, const char* file, int line);
/// Throws for a failed CUPTI call.
[[noreturn]] void throw_cupti(CUptiResult e, const char* call, const char* file, int line);

}  // namespace graphscope::capture

#define GS_CUDA(call)                                                                   \
  do {                                                                                  \
    cudaError_t gs_e_ = (call);                                                         \
    if (gs_e_ != cudaSuccess) ::graphscope::capture::throw_cuda(gs_e_, #call, __FILE__, __LINE__); \
  } while (0)
#define GS_CU(call)                                                                     \
  do {                                                                                  \
    CUresult gs_e_ = (call);                                                            \
    if (gs_e_ != CUDA_SUCCESS) ::graphscope::capture::throw_cu(gs_e_, #call, __FILE__, __LINE__); \
  } while (0)
#define GS_CUPTI(call)                                                                  \
  do {                                                                                  \
    CUptiResult gs_e_ = (call);                                                         \
    if (gs_e_ != CUPTI_SUCCESS) ::graphscope::capture::throw_cupti(gs_e_, #call, __FILE__, __LINE__); \
  } while (0)
