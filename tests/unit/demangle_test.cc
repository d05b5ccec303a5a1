#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "inspect/analysis/diff.h"
#include "inspect/analysis/summary.h"
#include "inspect/core/demangle.h"
#include "inspect/formats/load.h"
#include "inspect/render/diff_report.h"
#include "inspect/runs/ranks.h"
#include "test_data.h"

using namespace graphscope;

namespace {

// Kernel names as recorded in tests/data (the graph documents' kernel_name).
const char* kGelu =  // tests/data/ranks/r_act/rank-1/graph-2.json, node 3 (torch.nn.GELU)
    "_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_18GeluCUDAKernelImplERNS_18TensorIteratorBaseENS0_"
    "8GeluTypeEENKUlvE0_clEvENKUlvE0_clEvEUlfE_St5arrayIPcLm2EEEEviT0_T1_";
const char* kRelu =  // tests/data/ranks/r_act/rank-0/graph-2.json, node 3 (torch.nn.ReLU: clamp_min)
    "_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_49_GLOBAL__N__d2ba64fb_16_TensorCompare_cu_71e06f4e19"
    "launch_clamp_scalarERNS_18TensorIteratorBaseEN3c106ScalarES6_NS0_6detail11ClampLimitsEENKUlvE_clEvENKUlvE5_"
    "clEvEUlfE_St5arrayIPcLm2EEEEviT0_T1_";
const char* kSilu =  // tests/data/origins/llama8.graph.json (LlamaMLP's act_fn)
    "_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_62_GLOBAL__N__7d4ed096_23_ActivationSiluKernel_cu_"
    "751192d7_1559511silu_kernelERNS_18TensorIteratorBaseEENKUlvE_clEvENKUlvE0_clEvEUlfE_St5arrayIPcLm2EEEEviT0_T1_";
const char* kMul =  // llama8: 66 nodes
    "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastINS0_13BinaryFunctorIfffNS0_15binary_"
    "internal10MulFunctorIfEEEEEEvRNS_18TensorIteratorBaseERKT_EUliE_EEviT1_";
const char* kAdd =  // llama8
    "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastINS0_15CUDAFunctor_addIfEEEEvRNS_"
    "18TensorIteratorBaseERKT_EUliE_EEviT1_";
const char* kVecMulScalar =  // tests/data/python/llama.graph_data.json: tensor * scalar
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13AUnaryFunctorIfffNS0_15binary_internal10MulFunctorIfEEEES"
    "t5arrayIPcLm2EEEEviT0_T1_";
const char* kVecMul =  // llama8: tensor * tensor
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIfffNS0_15binary_internal10MulFunctorIfEEEES"
    "t5arrayIPcLm3EEEEviT0_T1_";
const char* kMean = "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_7MeanOpsIffffEEjfLi4ELi4EEEEEvT1_";
const char* kCopyLong =  // tests/data/python/llama.graph_data.json
    "_ZN2at6native27unrolled_elementwise_kernelIZZZNS0_23direct_copy_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE1_"
    "clEvENKUlvE2_clEvEUllE_St5arrayIPcLm2EELi4E23TrivialOffsetCalculatorILi1EjESB_NS0_6memory12LoadWithCastILi1EEENSC_"
    "13StoreWithCastILi1EEEEEviT_T0_T2_T3_T4_T5_";
const char* kCopyFloat =
    "_ZN2at6native27unrolled_elementwise_kernelIZZZNS0_23direct_copy_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE1_"
    "clEvENKUlvE5_clEvEUlfE_St5arrayIPcLm2EELi4E23TrivialOffsetCalculatorILi1EjESB_NS0_6memory12LoadWithCastILi1EEENSC_"
    "13StoreWithCastILi1EEEEEviT_T0_T2_T3_T4_T5_";
const char* kGemm =  // llama8: 57 nodes each, the two rows that read alike before
    "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel__5x_"
    "cublas";
const char* kGemmSplitK =
    "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_split_k_"
    "kernel__5x_cublas";
const char* kGemm64 =  // tests/data/profiles/cublas_gemm.c1.graph.json
    "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_kernel__5x_"
    "cublas";
const char* kGemm64SplitK =
    "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_split_k_"
    "kernel__5x_cublas";
const char* kNccl = "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE";
const char* kTriton3 =  // tests/data/origins/compile8.1.graph.json
    "triton_poi_fused__scaled_dot_product_efficient_attention__unsafe_view_add_arange_bitwise_and_bmm_cat_cos_eq_expand_"
    "index_le_mul_neg_new_ones_scalar_tensor_sin_slice_transpose_unsqueeze_view_where_3";
const char* kTriton4 =
    "triton_poi_fused__scaled_dot_product_efficient_attention__unsafe_view_add_arange_bitwise_and_bmm_cat_cos_eq_expand_"
    "index_le_mul_neg_new_ones_scalar_tensor_sin_slice_transpose_unsqueeze_view_where_4";

// Every graph document in tests/data that reads (load_graph), with its kernel names.
std::map<std::string, std::set<std::string>> recorded_kernels() {
  std::map<std::string, std::set<std::string>> out;
  namespace fs = std::filesystem;
  for (const auto& e : fs::recursive_directory_iterator(test::data_path(""))) {
    const std::string p = e.path().string();
    const bool graph = p.size() > 11 && (p.rfind(".graph.json") == p.size() - 11 || p.rfind("graph_data.json") == p.size() - 15 ||
                                         (p.find("/graph-") != std::string::npos && p.rfind(".json") == p.size() - 5));
    if (!e.is_regular_file() || !graph) continue;
    GraphDocument doc;
    try {
      doc = load_graph(p);
    } catch (const std::exception&) {
      continue;  // hostile inputs kept next to recordings
    }
    std::vector<const Graph*> todo{&doc.root};
    while (!todo.empty()) {
      const Graph* g = todo.back();
      todo.pop_back();
      for (const Node& n : g->nodes) {
        if (n.type == NodeType::kernel && !n.kernel_name.empty()) out[p].insert(n.kernel_name);
        for (const Graph& b : n.bodies) todo.push_back(&b);
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("mangled kernel names demangle, and plain names pass through") {
  CHECK(demangle("_Z5scalePfif") == "scale(float*, int, float)");
  CHECK(demangle("_ZN2ns4fillIfEEvPT_iS1_") == "void ns::fill<float>(float*, int, float)");
  CHECK(demangle("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n") == "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n");
  CHECK(demangle("_Znot a name") == "_Znot a name");
}

TEST_CASE("short kernel names drop namespaces, return types and parameters, and keep plain templates whole") {
  CHECK(short_kernel_name("_Z5scalePfif") == "scale");
  CHECK(short_kernel_name("_ZN2ns4fillIfEEvPT_iS1_") == "fill<float>");
  CHECK(short_kernel_name("_ZN7cutlass7Kernel2I41cutlass_80_simt_sgemm_64x64_8x5_tn_align1EEvNT_6ParamsE", 100) ==
        "Kernel2<cutlass_80_simt_sgemm_64x64_8x5_tn_align1>");
  CHECK(short_kernel_name("_ZN2at6native53_GLOBAL__N__21739cd4_20_layer_norm_kernel_cu_9c5ada8a28vectorized_layer_"
                          "norm_kernelIffEEviT0_PKT_S6_S6_PS3_S7_S7_") ==
        "vectorized_layer_norm_kernel<float, float>");
  CHECK(short_kernel_name(kNccl) == "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  CHECK(short_kernel_name("a_very_long_kernel_name_that_goes_on_and_on_forever_and_ever", 20).size() == 20);
}

TEST_CASE("short kernel names keep the functor or op their template arguments carry") {
  CHECK(short_kernel_name(kGelu, 64) == "vectorized_elementwise_kernel<GeluCUDAKernelImpl(float)>");
  CHECK(short_kernel_name(kRelu, 64) == "vectorized_elementwise_kernel<launch_clamp_scalar(float)>");
  CHECK(short_kernel_name(kSilu, 64) == "vectorized_elementwise_kernel<silu_kernel(float)>");
  CHECK(short_kernel_name(kMul, 64) == "elementwise_kernel<MulFunctor<float>>");
  CHECK(short_kernel_name(kAdd, 64) == "elementwise_kernel<CUDAFunctor_add<float>>");
  CHECK(short_kernel_name(kMean, 64) == "reduce_kernel<MeanOps<float>>");
  CHECK(short_kernel_name(kCopyLong, 64) == "unrolled_elementwise_kernel<direct_copy_kernel_cuda(long)>");
  CHECK(short_kernel_name(kCopyFloat, 64) == "unrolled_elementwise_kernel<direct_copy_kernel_cuda(float)>");
  // Too long for the width: the launcher's name is elided, not the op.
  const std::string gelu = short_kernel_name(kGelu, 40), relu = short_kernel_name(kRelu, 40);
  CHECK(gelu.size() <= 40);
  CHECK(gelu.find("GeluCUDAKernelImpl(float)>") != std::string::npos);
  CHECK(relu.find("launch_clamp_scalar(float)>") != std::string::npos);
}

TEST_CASE("cuBLAS names keep their tile and split-k, losing alignment, warp and stage words") {
  CHECK(short_kernel_name(kGemm, 64) == "sm80_xmma_gemm_f32_tn_n_tile32x32x8_ffma");
  CHECK(short_kernel_name(kGemmSplitK, 64) == "sm80_xmma_gemm_f32_tn_n_tile32x32x8_ffma_split_k");
  CHECK(short_kernel_name(kGemm64, 64) == "sm80_xmma_gemm_f32_nn_n_tile64x64x8_ffma");
  // Narrower: the math instruction and "xmma" go before the tile does.
  CHECK(short_kernel_name(kGemmSplitK, 40) == "sm80_gemm_f32_tn_n_tile32x32x8_split_k");
  // A long generated name keeps its number, elided in its middle.
  const std::string t3 = short_kernel_name(kTriton3, 52), t4 = short_kernel_name(kTriton4, 52);
  CHECK(t3.size() == 52);
  CHECK(t3 != t4);
  CHECK(t3.substr(t3.size() - 2) == "_3");
}

TEST_CASE("a table's names: kernels that read alike get their wrapper, parameters or a tag") {
  KernelNamer names(64);
  for (const char* k : {kVecMul, kVecMulScalar, kMul, "_Z11pdl_primaryPfi", "_Z11pdl_primaryPfl"}) names.add(k);
  // tensor * tensor and tensor * scalar run the same functor through different wrappers.
  CHECK(short_kernel_name(kVecMul, 64) == short_kernel_name(kVecMulScalar, 64));
  CHECK(names(kVecMul) == "vectorized_elementwise_kernel<BinaryFunctor<MulFunctor<float>>>");
  CHECK(names(kVecMulScalar) == "vectorized_elementwise_kernel<AUnaryFunctor<MulFunctor<float>>>");
  CHECK(names(kMul) == "elementwise_kernel<MulFunctor<float>>");
  // Overloads (tests/data/nvidia/pdl.dot against tests/data/profiles/pdl.c1.graph.json).
  CHECK(names("_Z11pdl_primaryPfi") == "pdl_primary(float*, int)");
  CHECK(names("_Z11pdl_primaryPfl") == "pdl_primary(float*, long)");
  // Too narrow for any longer form: a tag of the name, the same in every table.
  KernelNamer narrow(24), other(24);
  narrow.add(kGemmSplitK), narrow.add(kGemm64SplitK);
  other.add(kGemm64SplitK), other.add(kMul), other.add(kGemmSplitK);
  CHECK(short_kernel_name(kGemmSplitK, 24) == short_kernel_name(kGemm64SplitK, 24));
  CHECK(narrow(kGemmSplitK) != narrow(kGemm64SplitK));
  CHECK(narrow(kGemmSplitK).size() <= 24);
  CHECK(narrow(kGemmSplitK).find(" #") != std::string::npos);
  CHECK(other(kGemmSplitK) == narrow(kGemmSplitK));
  // A name that was not added is its short name.
  CHECK(names(kGelu) == short_kernel_name(kGelu, 64));
}

TEST_CASE("every recording in tests/data: no two different kernels of one document read the same") {
  const auto docs = recorded_kernels();
  REQUIRE(docs.size() >= 40);
  size_t kernels = 0, alike_before = 0;
  for (const auto& [path, names] : docs) {
    for (size_t width : {24, 36, 48, 64}) {
      KernelNamer namer(width);
      for (const auto& k : names) namer.add(k);
      std::map<std::string, std::string> by_shown;
      for (const auto& k : names) {
        const std::string shown = namer(k);
        CAPTURE(path);
        CAPTURE(k);
        CHECK(shown.size() <= width);
        CHECK(shown.find("....") == std::string::npos);  // one elision at a time (a tag once followed two)
        CHECK(short_kernel_name(k, width).size() <= width);
        auto [it, fresh] = by_shown.emplace(shown, k);
        CHECK_MESSAGE(fresh, "'" << shown << "' names both " << it->second << " and " << k);
      }
    }
    kernels += names.size();
    std::set<std::string> bare;  // the names as they were before: no template arguments
    for (const auto& k : names) {
      std::string d = short_kernel_name(k, 1000);
      bare.insert(d.substr(0, d.find('<')));
    }
    alike_before += names.size() - bare.size();
  }
  MESSAGE(kernels << " kernels in " << docs.size() << " documents; " << alike_before
                  << " read like another of their document without their template arguments");
  CHECK(alike_before > 0);
}

TEST_CASE("hostile kernel names: unbalanced brackets, empty and huge names stay within the width") {
  for (std::string s : {std::string("_ZN"), std::string("f<<<<"), std::string("g(((("), std::string(">>>)))}}}"),
                        std::string(""), std::string(5000, '<'), std::string("a<b(c)::{lambda(") + std::string(300, 'x'),
                        std::string("void k<") + std::string(2000, '1') + ">(int)",
                        "void k<" + [] { std::string s; for (int i = 0; i < 3000; ++i) s += "a<"; return s + std::string(3000, '>'); }() + ">(int)"}) {
    CHECK(short_kernel_name(s, 30).size() <= 30);
    KernelNamer n(30);
    n.add(s);
    CHECK(n(s).size() <= 30);
  }
}

// ---- the names as printed: summary, diff and ranks of real recordings

TEST_CASE("the summary of the recorded Llamas names every kernel apart: functors and GEMM tiles") {
  for (const char* f : {"origins/llama8.graph.json", "python/llama.graph_data.json"}) {
    CAPTURE(f);
    const GraphDocument doc = load_graph(test::data_path(f));
    const GraphSummary all = summarize(doc, SIZE_MAX);
    REQUIRE(all.top_kernel_names.size() == all.top_kernels.size());
    REQUIRE(all.top_kernels.size() > 20);
    std::set<std::string> shown(all.top_kernel_names.begin(), all.top_kernel_names.end());
    CHECK(shown.size() == all.top_kernels.size());
    const std::string text = format_summary(doc, summarize(doc), f);
    CHECK(text.find("  elementwise_kernel<MulFunctor<float>>  ") != std::string::npos);
    CHECK(text.find("  sm80_xmma_gemm_f32_tn_n_tile32x32x8_ffma  ") != std::string::npos);
    CHECK(text.find("  sm80_xmma_gemm_f32_tn_n_tile32x32x8_ffma_split_k  ") != std::string::npos);
    CHECK(text.find("  vectorized_elementwise_kernel  ") == std::string::npos);
  }
}

TEST_CASE("a diff of two ranks, GELU against ReLU, names both kernels and where they came from") {
  // tests/data/ranks/r_act: rank 0 ran ReLU where rank 1 ran GELU (ranks_app.py line 40).
  const GraphDocument a = load_graph(test::data_path("ranks/r_act/rank-0/graph-2.json"));
  const GraphDocument b = load_graph(test::data_path("ranks/r_act/rank-1/graph-2.json"));
  const GraphDiff d = diff_graphs(a, b);
  REQUIRE(d.root.removed.size() == 1);
  REQUIRE(d.root.added.size() == 1);
  CHECK(d.root.removed[0].origin == "ranks_app.py:40 in forward");
  const std::string text = format_diff(d, "a", "b");
  CHECK(text.find("vectorized_elementwise_kernel<launch_clamp_scalar(float)>") != std::string::npos);
  CHECK(text.find("vectorized_elementwise_kernel<GeluCUDAKernelImpl(float)>") != std::string::npos);
  CHECK(text.find("node 3 (ranks_app.py:40 in forward)") != std::string::npos);
  const std::vector<std::string> lines = rank_diff_lines(d);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "+1 node 3 vectorized_elementwise_kernel<GeluCUDAKernelImpl(float)> (ranks_app.py:40 in forward)");
  CHECK(lines[1] == "-1 node 3 vectorized_elementwise_kernel<launch_clamp_scalar(float)> (ranks_app.py:40 in forward)");
  // graphscope ranks of the run says the same.
  const std::string ranks = format_ranks(compare_ranks(test::data_path("ranks/r_act")));
  CHECK(ranks.find(lines[0]) != std::string::npos);
  CHECK(ranks.find(lines[1]) != std::string::npos);
}

TEST_CASE("a diff of the 2-layer and 8-layer Llama: each added kernel once, with its module") {
  const GraphDocument a = load_graph(test::data_path("python/llama.graph_data.json"));
  const GraphDocument b = load_graph(test::data_path("origins/llama8.graph.json"));
  const GraphDiff d = diff_graphs(a, b);
  REQUIRE(d.root.added.size() > 10);
  const std::string text = format_diff(d, "a", "b", 100);
  KernelNamer names(64);
  for (const NodeGroup& g : d.root.added) names.add(g.kind.name);
  std::set<std::string> rows;
  for (const NodeGroup& g : d.root.added) {
    CAPTURE(g.kind.name);
    CHECK(rows.insert(names(g.kind.name)).second);
    CHECK(g.origin.rfind("model.layers.*", 0) == 0);  // layers 2..7, B's only
    CHECK(text.find(names(g.kind.name)) != std::string::npos);
  }
  CHECK(text.find("vectorized_elementwise_kernel<silu_kernel(float)>") != std::string::npos);
  CHECK(text.find("(model.layers.*.mlp.act_fn)") != std::string::npos);
}
