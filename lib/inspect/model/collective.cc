#include "collective.h"

namespace graphscope {

std::string_view collective_library(std::string_view name) {
  auto has = [&](std::string_view part) { return name.find(part) != std::string_view::npos; };
  // Substrings, not prefixes: a mangled name holds the identifier verbatim
  // after its length ("_Z..21ncclDevKernel_..." or inside template arguments).
  if (has("rccl")) return "rccl";
  if (has("nccl") || has("NCCL")) return "nccl";
  if (has("cross_device_reduce_1stage") || has("cross_device_reduce_2stage")) return "vllm";
  if (has("one_shot_all_reduce") || has("two_shot_all_reduce") || has("multimem_all_reduce"))
    return "torch-symm-mem";
  return {};
}

size_t count_collectives(const Graph& g) {
  size_t n = 0;
  for (const auto& node : g.nodes) {
    if (node.type == NodeType::kernel && is_collective_kernel(node.kernel_name)) ++n;
    for (const auto& b : node.bodies) n += count_collectives(b);
  }
  return n;
}

}  // namespace graphscope
