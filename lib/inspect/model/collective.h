// Collective communication kernels (all-reduce, all-gather, ...) recognised
// by their kernel names: what `graphscope ranks` counts and compares across
// the ranks of a multi-GPU job, what `dump` lists in a graph's summary and
// what a merged trace marks.
#pragma once

#include <cstddef>
#include <string_view>

#include "graph.h"

namespace graphscope {

/// The library of a collective kernel, from its name (mangled or
/// demangled): "nccl" (ncclKernel_*, ncclDevKernel_*, any name containing
/// "nccl"), "rccl", "vllm" (custom all-reduce cross_device_reduce_1stage /
/// _2stage), "torch-symm-mem" (PyTorch symmetric memory one_shot_all_reduce,
/// two_shot_all_reduce, multimem_all_reduce); empty for any other kernel.
std::string_view collective_library(std::string_view kernel_name);

/// Whether the kernel name is a collective's (collective_library is not empty).
inline bool is_collective_kernel(std::string_view kernel_name) { return !collective_library(kernel_name).empty(); }

/// Kernel nodes of the graph that are collectives, nested bodies included.
size_t count_collectives(const Graph& g);

}  // namespace graphscope
