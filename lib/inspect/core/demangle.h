// Kernel names: demangling (the C++ ABI's demangler, no CUDA needed) and the
// short forms used in pictures, tables and summaries.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

namespace graphscope {

/// Demangles an Itanium-ABI name; returns the input unchanged when it is not
/// a mangled name (extern "C" kernels, cuBLAS's plain names).
std::string demangle(std::string_view mangled);

/// A name readable at a glance that keeps what tells kernels apart: the
/// demangled name without its return type, parameter list, namespaces and
/// lambda scopes, with the functor or op its template arguments carry
/// ("at::native::vectorized_elementwise_kernel<4, at::native::
/// GeluCUDAKernelImpl(...)::{lambda(float)#1}, ...>(int, ...)" becomes
/// "vectorized_elementwise_kernel<GeluCUDAKernelImpl(float)>",
/// "elementwise_kernel<128, 2, gpu_kernel_impl_nocast<BinaryFunctor<float,
/// float, float, MulFunctor<float>>>...>" becomes
/// "elementwise_kernel<MulFunctor<float>>"); a template without a functor
/// keeps all its arguments ("fill<float>"). A cuBLAS or CUTLASS name reads
/// by its tile, without its alignment, warp, stage and filler words
/// ("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8_stage3_warpsize
/// 1x2x1_ffma_aligna4_alignc4_execute_split_k_kernel__5x_cublas" becomes
/// "sm80_xmma_gemm_f32_tn_n_tile32x32x8_ffma_split_k"). Never longer than
/// max_len: elided with "...", the base name before the functor, and a
/// plain name in its middle (its end often numbers it).
std::string short_kernel_name(std::string_view name, size_t max_len = 48);

/// The names of the kernels of one table, picture or report: each
/// short_kernel_name(), except where two different kernels would read the
/// same: then a longer form (every template argument, the functor's wrapper,
/// a cuBLAS name's words), and where that is not enough either a tag of the
/// name's hash (" #3fa2", the same for the same kernel in every table), so
/// that no two kernels of one table read alike.
class KernelNamer {
 public:
  explicit KernelNamer(size_t max_len = 64) : max_len_(max_len) {}
  /// A kernel of the table, as recorded (mangled or not); duplicates are fine.
  void add(std::string_view name);
  /// The name shown for a kernel added before (short_kernel_name() for one
  /// that was not).
  std::string operator()(std::string_view name) const;

 private:
  void resolve() const;
  size_t max_len_;
  mutable std::map<std::string, std::string, std::less<>> shown_;
  mutable bool resolved_ = true;
};

}  // namespace graphscope
