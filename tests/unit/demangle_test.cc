#include <doctest/doctest.h>

#include "inspect/core/demangle.h"

using namespace graphscope;

TEST_CASE("mangled kernel names demangle, and plain names pass through") {
  CHECK(demangle("_Z5scalePfif") == "scale(float*, int, float)");
  CHECK(demangle("_ZN2ns4fillIfEEvPT_iS1_") == "void ns::fill<float>(float*, int, float)");
  CHECK(demangle("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n") == "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n");
  CHECK(demangle("_Znot a name") == "_Znot a name");
}

TEST_CASE("short kernel names drop namespaces, templates and parameters") {
  CHECK(short_kernel_name("_Z5scalePfif") == "scale");
  CHECK(short_kernel_name("_ZN2ns4fillIfEEvPT_iS1_") == "fill<float>");
  CHECK(short_kernel_name("_ZN7cutlass7Kernel2I41cutlass_80_simt_sgemm_64x64_8x5_tn_align1EEvNT_6ParamsE", 100) ==
        "Kernel2<cutlass_80_simt_sgemm_64x64_8x5_tn_align1>");
  CHECK(short_kernel_name("_ZN2at6native53_GLOBAL__N__21739cd4_20_layer_norm_kernel_cu_9c5ada8a28vectorized_layer_"
                          "norm_kernelIffEEviT0_PKT_S6_S6_PS3_S7_S7_") == "vectorized_layer_norm_kernel");
  CHECK(short_kernel_name(
            "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_") ==
        "vectorized_elementwise_kernel");
  CHECK(short_kernel_name("a_very_long_kernel_name_that_goes_on_and_on_forever_and_ever", 20).size() == 20);
}
