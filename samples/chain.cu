// chain: one long chain of kernels on a single stream.
//
// Graph "chain" (--length L, default 32; --n N elements, default 4096):
//
//   chain_even -> chain_odd -> chain_even -> chain_odd -> ... (L kernels)
//
// L kernel nodes and L-1 default edges, alternating two kernels that
// ping-pong between two buffers (a <- f(b), b <- g(a)). It exists to test the
// deep, narrow case: layout of a long path, critical-path length, and kernel
// names grouped two by two in summaries.
#include <cuda_runtime.h>

#include "sample_util.h"

__global__ void chain_even(float* a, const float* b, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) a[i] = 0.5f * b[i] + 1.0f;
}
__global__ void chain_odd(float* b, const float* a, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) b[i] = 0.75f * a[i] + 0.5f;
}

namespace {

struct State {
  long n = 4096, length = 32;
  float *a = nullptr, *b = nullptr;
};

void teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (!s) return;
  cudaFree(s->a);
  cudaFree(s->b);
  delete s;
}

int init(State* s, int argc, char** argv, char* err, size_t err_size) {
  const sample::Option opts[] = {{"n", &s->n, 1, 1L << 28}, {"length", &s->length, 1, 100000}};
  if (sample::parse_options(argc, argv, opts, err, err_size)) return 1;
  SAMPLE_CHECK(cudaMalloc(&s->a, s->n * sizeof(float)));
  SAMPLE_CHECK(cudaMalloc(&s->b, s->n * sizeof(float)));
  SAMPLE_CHECK(sample::fill_pattern(s->a, s->n));
  SAMPLE_CHECK(sample::fill_pattern(s->b, s->n, 2.0f));
  return 0;
}

int enqueue(void* state, cudaStream_t stream, char* err, size_t err_size) {
  auto* s = static_cast<State*>(state);
  const unsigned grid = sample::blocks_for(s->n);
  for (long k = 0; k < s->length; ++k) {
    if (k % 2 == 0) {
      chain_even<<<grid, 256, 0, stream>>>(s->a, s->b, s->n);
      SAMPLE_CHECK_LAUNCH(chain_even);
    } else {
      chain_odd<<<grid, 256, 0, stream>>>(s->b, s->a, s->n);
      SAMPLE_CHECK_LAUNCH(chain_odd);
    }
  }
  return 0;
}

const graphscope_graph kGraphs[] = {{"chain", enqueue}};
const graphscope_workload kWorkload = {
    GRAPHSCOPE_WORKLOAD_ABI,
    "chain",
    "a chain of --length kernels (default 32) alternating two kernels",
    sample::setup_with<State, init, teardown>,
    teardown,
    kGraphs,
    1,
};

}  // namespace

extern "C" GRAPHSCOPE_EXPORT const graphscope_workload* graphscope_workload_v1(void) {
  return &kWorkload;
}
