// wide: many independent branches between one fork and one join.
//
// Graph "wide" (--branches B, default 64; --n N elements per branch, default
// 1024):
//
//   wide_source ─┬─> wide_branch (stream 0) ──┐
//                ├─> wide_branch (stream 1) ──┼─> wide_sink
//                └─> ... B of them            ┘
//
// B+2 kernel nodes and 2B default edges. Each branch runs on its own stream
// (created in setup) that waits on the fork event and records its own join
// event. It exists to test layout and summaries of a wide graph: one node with
// B successors, one with B predecessors, and B nodes on one rank.
#include <cuda_runtime.h>

#include "sample_util.h"

__global__ void wide_source(float* x, const float* src, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) x[i] = src[i];
}
__global__ void wide_branch(float* x, long n, float a) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i] + 1.0f;
}
__global__ void wide_sink(float* y, const float* x, long n, int branches) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  float sum = 0.f;
  for (int b = 0; b < branches; ++b) sum += x[b * n + i];
  y[i] = sum / (float)branches;
}

namespace {

struct State {
  long n = 1024, branches = 64;
  float *src = nullptr, *x = nullptr, *y = nullptr;
  cudaStream_t* streams = nullptr;
  cudaEvent_t fork = nullptr;
  cudaEvent_t* joins = nullptr;
};

void teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (!s) return;
  cudaFree(s->src);
  cudaFree(s->x);
  cudaFree(s->y);
  for (long b = 0; s->streams && b < s->branches; ++b)
    if (s->streams[b]) cudaStreamDestroy(s->streams[b]);
  for (long b = 0; s->joins && b < s->branches; ++b)
    if (s->joins[b]) cudaEventDestroy(s->joins[b]);
  if (s->fork) cudaEventDestroy(s->fork);
  delete[] s->streams;
  delete[] s->joins;
  delete s;
}

int init(State* s, int argc, char** argv, char* err, size_t err_size) {
  const sample::Option opts[] = {{"n", &s->n, 1, 1L << 24}, {"branches", &s->branches, 1, 4096}};
  if (sample::parse_options(argc, argv, opts, err, err_size)) return 1;
  if (s->n * s->branches > (1L << 28))
    return sample::fail(err, err_size, "--n times --branches must be at most 2^28");
  s->streams = new (std::nothrow) cudaStream_t[s->branches]();
  s->joins = new (std::nothrow) cudaEvent_t[s->branches]();
  if (!s->streams || !s->joins) return sample::fail(err, err_size, "out of host memory");
  size_t total = static_cast<size_t>(s->n * s->branches);
  SAMPLE_CHECK(cudaMalloc(&s->src, total * sizeof(float)));
  SAMPLE_CHECK(cudaMalloc(&s->x, total * sizeof(float)));
  SAMPLE_CHECK(cudaMalloc(&s->y, s->n * sizeof(float)));
  SAMPLE_CHECK(sample::fill_pattern(s->src, total));
  SAMPLE_CHECK(sample::fill_pattern(s->x, total));
  SAMPLE_CHECK(sample::fill_pattern(s->y, s->n));
  SAMPLE_CHECK(cudaEventCreateWithFlags(&s->fork, cudaEventDisableTiming));
  for (long b = 0; b < s->branches; ++b) {
    SAMPLE_CHECK(cudaStreamCreateWithFlags(&s->streams[b], cudaStreamNonBlocking));
    SAMPLE_CHECK(cudaEventCreateWithFlags(&s->joins[b], cudaEventDisableTiming));
  }
  return 0;
}

int enqueue(void* state, cudaStream_t stream, char* err, size_t err_size) {
  auto* s = static_cast<State*>(state);
  const long n = s->n, total = n * s->branches;
  wide_source<<<sample::blocks_for(total), 256, 0, stream>>>(s->x, s->src, total);
  SAMPLE_CHECK_LAUNCH(wide_source);
  SAMPLE_CHECK(cudaEventRecord(s->fork, stream));
  for (long b = 0; b < s->branches; ++b) {
    cudaStream_t t = s->streams[b];
    SAMPLE_CHECK(cudaStreamWaitEvent(t, s->fork, 0));
    wide_branch<<<sample::blocks_for(n), 256, 0, t>>>(s->x + b * n, n, 1.0f / (float)(b + 1));
    SAMPLE_CHECK_LAUNCH(wide_branch);
    SAMPLE_CHECK(cudaEventRecord(s->joins[b], t));
  }
  for (long b = 0; b < s->branches; ++b) SAMPLE_CHECK(cudaStreamWaitEvent(stream, s->joins[b], 0));
  wide_sink<<<sample::blocks_for(n), 256, 0, stream>>>(s->y, s->x, n, (int)s->branches);
  SAMPLE_CHECK_LAUNCH(wide_sink);
  return 0;
}

const graphscope_graph kGraphs[] = {{"wide", enqueue}};
const graphscope_workload kWorkload = {
    GRAPHSCOPE_WORKLOAD_ABI,
    "wide",
    "--branches independent one-kernel branches (default 64) between a fork and a join",
    sample::setup_with<State, init, teardown>,
    teardown,
    kGraphs,
    1,
};

}  // namespace

extern "C" GRAPHSCOPE_EXPORT const graphscope_workload* graphscope_workload_v1(void) {
  return &kWorkload;
}
