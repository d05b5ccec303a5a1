// fail_error: a workload whose enqueue reports an error of its own.
//
// Graph "main" (--n N floats, default 0): setup succeeds whatever N is (it
// allocates nothing for N = 0); enqueue validates N before putting any work
// on the stream, and for N = 0 returns 1 with the message
//
//   requested size 0 is not supported
//
// so by default it fails, with nothing captured. Expected from graphscope: a
// capture failure quoting that message, teardown still run, no graph. With
// --n 1024 or any positive N it succeeds: one kernel node (fe_scale).
#include <cuda_runtime.h>

#include "sample_util.h"

__global__ void fe_scale(float* x, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 0.5f;
}

namespace {

struct State {
  long n = 0;
  float* x = nullptr;
};

void teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (!s) return;
  cudaFree(s->x);
  delete s;
}

int init(State* s, int argc, char** argv, char* err, size_t err_size) {
  const sample::Option opts[] = {{"n", &s->n, 0, 1L << 28}};
  if (sample::parse_options(argc, argv, opts, err, err_size)) return 1;
  if (s->n > 0) {
    SAMPLE_CHECK(cudaMalloc(&s->x, s->n * sizeof(float)));
    SAMPLE_CHECK(sample::fill_pattern(s->x, s->n));
  }
  return 0;
}

int enqueue(void* state, cudaStream_t stream, char* err, size_t err_size) {
  auto* s = static_cast<State*>(state);
  if (s->n == 0) return sample::fail(err, err_size, "requested size %ld is not supported", s->n);
  fe_scale<<<sample::blocks_for(s->n), 256, 0, stream>>>(s->x, s->n);
  SAMPLE_CHECK_LAUNCH(fe_scale);
  return 0;
}

const graphscope_graph kGraphs[] = {{"main", enqueue}};
const graphscope_workload kWorkload = {
    GRAPHSCOPE_WORKLOAD_ABI,
    "fail_error",
    "fails by default: enqueue rejects --n 0 (the default) with an error message",
    sample::setup_with<State, init, teardown>,
    teardown,
    kGraphs,
    1,
};

}  // namespace

extern "C" GRAPHSCOPE_EXPORT const graphscope_workload* graphscope_workload_v1(void) {
  return &kWorkload;
}
