// Collective kernels recognised by name (collective.h).
#include <doctest/doctest.h>

#include "graph_builder.h"
#include "inspect/model/collective.h"

using namespace graphscope;

TEST_CASE("NCCL, RCCL and in-graph all-reduce kernels are collectives, mangled or not") {
  CHECK(collective_library("ncclDevKernel_AllReduce_Sum_f32_RING_LL") == "nccl");
  CHECK(collective_library("_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE") == "nccl");
  CHECK(collective_library("ncclKernel_AllGather_RING_LL_Sum_int8_t") == "nccl");
  CHECK(collective_library("rcclGenericKernel") == "rccl");
  CHECK(collective_library("_ZN4vllm26cross_device_reduce_1stageI6__halfLi2EEEvPNS_8RankDataE") == "vllm");
  CHECK(collective_library("void vllm::cross_device_reduce_2stage<float, 8>(...)") == "vllm");
  CHECK(collective_library("c10d::symmetric_memory::one_shot_all_reduce_kernel<float>") == "torch-symm-mem");
  CHECK(collective_library("two_shot_all_reduce_kernel") == "torch-symm-mem");
  CHECK(collective_library("multimem_all_reduce_kernel") == "torch-symm-mem");
}

TEST_CASE("ordinary kernels are not collectives") {
  CHECK_FALSE(is_collective_kernel("_Z4spinPfx"));
  CHECK_FALSE(is_collective_kernel("Kernel2<cutlass_80_simt_sgemm_64x64_8x5_tn_align1>"));
  CHECK_FALSE(is_collective_kernel("all_reduce_local_sum"));  // not a known in-graph all-reduce
  CHECK_FALSE(is_collective_kernel(""));
}

TEST_CASE("collectives are counted in the root graph and its nested bodies") {
  GraphDocument doc = test::make_doc({{NodeType::kernel, "_Z4spinPfx", {}},
                                      {NodeType::kernel, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", {0}},
                                      {NodeType::child_graph, "", {1}}});
  GraphDocument body = test::make_doc({{NodeType::kernel, "ncclKernel_AllGather", {}}});
  doc.root.nodes[2].bodies.push_back(body.root);
  CHECK(count_collectives(doc.root) == 2);
}
