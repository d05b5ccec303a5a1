// nvtx_layers: a small "model" that annotates itself with NVTX, the way
// Megatron, TransformerEngine or vLLM do, to show graphscope's origins.
//
// Graph "model" (--layers L, default 4; --n N elements, default 4096):
//
//   embed -> L x [ norm -> attn_qk -> attn_v -> norm -> mlp_up -> mlp_down ] -> head
//
// A chain of 2 + 6L kernel nodes. Each layer runs inside an NVTX range
// "layer K" of the domain "nvtx_layers", with pushed ranges "attention" and
// "mlp" of the default domain inside it; the whole forward runs inside a
// started range "forward". Captured by graphscope, every node's origin holds
// that stack: "forward", "layer 2", "mlp".
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <string>

#include "sample_util.h"

__global__ void embed(float* a, const float* b, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) a[i] = b[i] * 0.5f;
}
__global__ void norm(float* a, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] / (1.0f + fabsf(a[i]));
}
__global__ void attn_qk(float* b, const float* a, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i] * a[(i + 1) % n];
}
__global__ void attn_v(float* a, const float* b, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) a[i] += 0.25f * b[i];
}
__global__ void mlp_up(float* b, const float* a, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) b[i] = fmaxf(a[i], 0.0f) * 2.0f;
}
__global__ void mlp_down(float* a, const float* b, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) a[i] += 0.5f * b[i];
}
__global__ void head(float* b, const float* a, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i] + 1.0f;
}

namespace {

struct State {
  long n = 4096, layers = 4;
  float *a = nullptr, *b = nullptr;
  nvtxDomainHandle_t domain = nullptr;
};

void teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (!s) return;
  cudaFree(s->a);
  cudaFree(s->b);
  if (s->domain) nvtxDomainDestroy(s->domain);
  delete s;
}

int init(State* s, int argc, char** argv, char* err, size_t err_size) {
  const sample::Option opts[] = {{"n", &s->n, 1, 1L << 28}, {"layers", &s->layers, 1, 10000}};
  if (sample::parse_options(argc, argv, opts, err, err_size)) return 1;
  SAMPLE_CHECK(cudaMalloc(&s->a, s->n * sizeof(float)));
  SAMPLE_CHECK(cudaMalloc(&s->b, s->n * sizeof(float)));
  SAMPLE_CHECK(sample::fill_pattern(s->a, s->n));
  SAMPLE_CHECK(sample::fill_pattern(s->b, s->n, 2.0f));
  s->domain = nvtxDomainCreateA("nvtx_layers");
  return 0;
}

void push(nvtxDomainHandle_t d, const std::string& message) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message.c_str();
  nvtxDomainRangePushEx(d, &a);
}

int enqueue(void* state, cudaStream_t stream, char* err, size_t err_size) {
  auto* s = static_cast<State*>(state);
  const unsigned grid = sample::blocks_for(s->n);
  nvtxRangeId_t forward = nvtxRangeStartA("forward");
  embed<<<grid, 256, 0, stream>>>(s->a, s->b, s->n);
  SAMPLE_CHECK_LAUNCH(embed);
  for (long k = 0; k < s->layers; ++k) {
    push(s->domain, "layer " + std::to_string(k));
    nvtxRangePushA("attention");
    norm<<<grid, 256, 0, stream>>>(s->a, s->n);
    SAMPLE_CHECK_LAUNCH(norm);
    attn_qk<<<grid, 256, 0, stream>>>(s->b, s->a, s->n);
    SAMPLE_CHECK_LAUNCH(attn_qk);
    attn_v<<<grid, 256, 0, stream>>>(s->a, s->b, s->n);
    SAMPLE_CHECK_LAUNCH(attn_v);
    nvtxRangePop();
    nvtxRangePushA("mlp");
    norm<<<grid, 256, 0, stream>>>(s->a, s->n);
    SAMPLE_CHECK_LAUNCH(norm);
    mlp_up<<<grid, 256, 0, stream>>>(s->b, s->a, s->n);
    SAMPLE_CHECK_LAUNCH(mlp_up);
    mlp_down<<<grid, 256, 0, stream>>>(s->a, s->b, s->n);
    SAMPLE_CHECK_LAUNCH(mlp_down);
    nvtxRangePop();
    nvtxDomainRangePop(s->domain);
  }
  head<<<grid, 256, 0, stream>>>(s->b, s->a, s->n);
  SAMPLE_CHECK_LAUNCH(head);
  nvtxRangeEnd(forward);
  return 0;
}

const graphscope_graph kGraphs[] = {{"model", enqueue}};
const graphscope_workload kWorkload = {
    GRAPHSCOPE_WORKLOAD_ABI,
    "nvtx_layers",
    "a chain of --layers layers (default 4) of six kernels, annotated with NVTX ranges",
    sample::setup_with<State, init, teardown>,
    teardown,
    kGraphs,
    1,
};

}  // namespace

extern "C" GRAPHSCOPE_EXPORT const graphscope_workload* graphscope_workload_v1(void) {
  return &kWorkload;
}
