// Kernel names: demangling (the C++ ABI's demangler, no CUDA needed) and the
// short form used in pictures and summaries.
#pragma once

#include <string>
#include <string_view>

namespace graphscope {

/// Demangles an Itanium-ABI name; returns the input unchanged when it is not
/// a mangled name (extern "C" kernels, cuBLAS's plain names).
std::string demangle(std::string_view mangled);

/// A name readable at a glance: the demangled name without its parameter
/// list, template arguments and namespaces ("at::native::
/// vectorized_elementwise_kernel<4, ...>(int, ...)" becomes
/// "vectorized_elementwise_kernel"). Never longer than max_len (elided with
/// "...").
std::string short_kernel_name(std::string_view name, size_t max_len = 48);

}  // namespace graphscope
