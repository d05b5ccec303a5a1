// memalloc: stream-ordered allocation inside capture (mem_alloc / mem_free).
//
// Graph "memalloc" (--n N floats, default 1 << 20, so each temporary is 4 MiB),
// one chain of 7 nodes and 6 default edges:
//
//   mem_alloc(t1) -> ma_stage -> mem_alloc(t2) -> ma_combine -> mem_free(t1)
//     -> ma_consume -> mem_free(t2)
//
// cudaMallocAsync / cudaFreeAsync on the captured stream become mem_alloc and
// mem_free nodes; the two temporaries have overlapping lifetimes, and the
// kernels between them read and write them. The graph owns the memory: each
// replay gets the same addresses. It exists to test allocation nodes (size,
// address, which free matches which alloc).
#include <cuda_runtime.h>

#include "sample_util.h"

__global__ void ma_stage(float* t1, const float* x, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) t1[i] = 2.0f * x[i];
}
__global__ void ma_combine(float* t2, const float* t1, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) t2[i] = t1[i] + 1.0f;
}
__global__ void ma_consume(float* y, const float* t2, const float* x, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = t2[i] * x[i];
}

namespace {

struct State {
  long n = 1L << 20;
  float *x = nullptr, *y = nullptr;
};

void teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (!s) return;
  cudaFree(s->x);
  cudaFree(s->y);
  delete s;
}

int init(State* s, int argc, char** argv, char* err, size_t err_size) {
  const sample::Option opts[] = {{"n", &s->n, 1, 1L << 28}};
  if (sample::parse_options(argc, argv, opts, err, err_size)) return 1;
  SAMPLE_CHECK(cudaMalloc(&s->x, s->n * sizeof(float)));
  SAMPLE_CHECK(cudaMalloc(&s->y, s->n * sizeof(float)));
  SAMPLE_CHECK(sample::fill_pattern(s->x, s->n));
  SAMPLE_CHECK(sample::fill_pattern(s->y, s->n));
  return 0;
}

int enqueue(void* state, cudaStream_t stream, char* err, size_t err_size) {
  auto* s = static_cast<State*>(state);
  const long n = s->n;
  const size_t bytes = n * sizeof(float);
  const unsigned grid = sample::blocks_for(n);
  float *t1 = nullptr, *t2 = nullptr;
  SAMPLE_CHECK(cudaMallocAsync(&t1, bytes, stream));
  ma_stage<<<grid, 256, 0, stream>>>(t1, s->x, n);
  SAMPLE_CHECK_LAUNCH(ma_stage);
  SAMPLE_CHECK(cudaMallocAsync(&t2, bytes, stream));
  ma_combine<<<grid, 256, 0, stream>>>(t2, t1, n);
  SAMPLE_CHECK_LAUNCH(ma_combine);
  SAMPLE_CHECK(cudaFreeAsync(t1, stream));
  ma_consume<<<grid, 256, 0, stream>>>(s->y, t2, s->x, n);
  SAMPLE_CHECK_LAUNCH(ma_consume);
  SAMPLE_CHECK(cudaFreeAsync(t2, stream));
  return 0;
}

const graphscope_graph kGraphs[] = {{"memalloc", enqueue}};
const graphscope_workload kWorkload = {
    GRAPHSCOPE_WORKLOAD_ABI,
    "memalloc",
    "cudaMallocAsync / cudaFreeAsync in capture: two temporaries with overlapping lifetimes",
    sample::setup_with<State, init, teardown>,
    teardown,
    kGraphs,
    1,
};

}  // namespace

extern "C" GRAPHSCOPE_EXPORT const graphscope_workload* graphscope_workload_v1(void) {
  return &kWorkload;
}
