// fail_hang: a workload that never returns from enqueue.
//
// Graph "main" (--n N floats, default 4096): enqueue launches one kernel
// (fh_work) on the captured stream and then sleeps forever in host code
// (sleep(1) in a loop), as a workload stuck on a lock or waiting for input
// would. Expected from graphscope: its timeout fires, the child process is
// killed, and the capture is reported as timed out during enqueue of "main".
#include <cuda_runtime.h>
#include <unistd.h>

#include "sample_util.h"

__global__ void fh_work(float* x, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

namespace {

struct State {
  long n = 4096;
  float* x = nullptr;
};

void teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (!s) return;
  cudaFree(s->x);
  delete s;
}

int init(State* s, int argc, char** argv, char* err, size_t err_size) {
  const sample::Option opts[] = {{"n", &s->n, 1, 1L << 28}};
  if (sample::parse_options(argc, argv, opts, err, err_size)) return 1;
  SAMPLE_CHECK(cudaMalloc(&s->x, s->n * sizeof(float)));
  SAMPLE_CHECK(sample::fill_pattern(s->x, s->n));
  return 0;
}

int enqueue(void* state, cudaStream_t stream, char* err, size_t err_size) {
  auto* s = static_cast<State*>(state);
  fh_work<<<sample::blocks_for(s->n), 256, 0, stream>>>(s->x, s->n);
  SAMPLE_CHECK_LAUNCH(fh_work);
  for (;;) sleep(1);  // the hang
}

const graphscope_graph kGraphs[] = {{"main", enqueue}};
const graphscope_workload kWorkload = {
    GRAPHSCOPE_WORKLOAD_ABI,
    "fail_hang",
    "fails: enqueue sleeps forever in host code during capture (tests the timeout)",
    sample::setup_with<State, init, teardown>,
    teardown,
    kGraphs,
    1,
};

}  // namespace

extern "C" GRAPHSCOPE_EXPORT const graphscope_workload* graphscope_workload_v1(void) {
  return &kWorkload;
}
