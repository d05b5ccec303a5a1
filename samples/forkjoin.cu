// forkjoin: fork-join over several streams by events.
//
// Graph "forkjoin" (--branches B, default 4; --n N elements per branch,
// default 4096):
//
//   fj_load ──┬─> fj_scale ─> fj_square ──┐            (branch 0)
//             ├─> fj_scale ─> fj_square ──┼─> fj_join  (branch 1)
//             └─> ...                     ┘            (branch B-1)
//
// 2B+2 kernel nodes and 3B edges, all of the default type. fj_load runs on the
// captured stream, which records one fork event; each branch's stream waits on
// it, runs its two kernels on its slice of the buffer and records its own join
// event; the captured stream waits on every join event and runs fj_join.
// It exists as the basic multi-stream capture: the shape graphscope must
// show as B parallel chains between one source and one sink.
#include <cuda_runtime.h>

#include "sample_util.h"

__global__ void fj_load(float* x, const float* src, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) x[i] = src[i];
}
__global__ void fj_scale(float* x, long n, float a) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
__global__ void fj_square(float* x, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * x[i];
}
__global__ void fj_join(float* y, const float* x, long n, int branches) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  float sum = 0.f;
  for (int b = 0; b < branches; ++b) sum += x[b * n + i];
  y[i] = sum;
}

namespace {

struct State {
  long n = 4096, branches = 4;
  float *src = nullptr, *x = nullptr, *y = nullptr;
  cudaStream_t* streams = nullptr;  // one per branch
  cudaEvent_t fork = nullptr;
  cudaEvent_t* joins = nullptr;  // one per branch
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
  const sample::Option opts[] = {{"n", &s->n, 1, 1L << 26}, {"branches", &s->branches, 1, 256}};
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
  fj_load<<<sample::blocks_for(total), 256, 0, stream>>>(s->x, s->src, total);
  SAMPLE_CHECK_LAUNCH(fj_load);
  SAMPLE_CHECK(cudaEventRecord(s->fork, stream));
  for (long b = 0; b < s->branches; ++b) {
    cudaStream_t t = s->streams[b];
    float* slice = s->x + b * n;
    SAMPLE_CHECK(cudaStreamWaitEvent(t, s->fork, 0));
    fj_scale<<<sample::blocks_for(n), 256, 0, t>>>(slice, n, 0.5f + 0.25f * (float)b);
    SAMPLE_CHECK_LAUNCH(fj_scale);
    fj_square<<<sample::blocks_for(n), 256, 0, t>>>(slice, n);
    SAMPLE_CHECK_LAUNCH(fj_square);
    SAMPLE_CHECK(cudaEventRecord(s->joins[b], t));
  }
  for (long b = 0; b < s->branches; ++b) SAMPLE_CHECK(cudaStreamWaitEvent(stream, s->joins[b], 0));
  fj_join<<<sample::blocks_for(n), 256, 0, stream>>>(s->y, s->x, n, (int)s->branches);
  SAMPLE_CHECK_LAUNCH(fj_join);
  return 0;
}

const graphscope_graph kGraphs[] = {{"forkjoin", enqueue}};
const graphscope_workload kWorkload = {
    GRAPHSCOPE_WORKLOAD_ABI,
    "forkjoin",
    "fork-join over --branches streams (default 4), two kernels a branch",
    sample::setup_with<State, init, teardown>,
    teardown,
    kGraphs,
    1,
};

}  // namespace

extern "C" GRAPHSCOPE_EXPORT const graphscope_workload* graphscope_workload_v1(void) {
  return &kWorkload;
}
