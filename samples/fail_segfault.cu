// fail_segfault: a workload that crashes in host code during capture.
//
// Graph "main" (--n N floats, default 4096): enqueue launches one kernel
// (fs_work) on the captured stream and then writes through a null host
// pointer, so the process dies of SIGSEGV in the middle of a capture.
// Expected from graphscope: the child process running the workload is
// reported as killed by signal 11 (SIGSEGV) during enqueue of "main", and
// graphscope itself survives.
#include <cuda_runtime.h>

#include "sample_util.h"

__global__ void fs_work(float* x, long n) {
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
  fs_work<<<sample::blocks_for(s->n), 256, 0, stream>>>(s->x, s->n);
  SAMPLE_CHECK_LAUNCH(fs_work);
  // The bug: a null host pointer written through. The pointer itself is
  // volatile so the compiler cannot prove it null and must emit the store.
  volatile int* volatile p = nullptr;
  *p = 1;
  return 0;
}

const graphscope_graph kGraphs[] = {{"main", enqueue}};
const graphscope_workload kWorkload = {
    GRAPHSCOPE_WORKLOAD_ABI,
    "fail_segfault",
    "fails: enqueue writes through a null host pointer (SIGSEGV) during capture",
    sample::setup_with<State, init, teardown>,
    teardown,
    kGraphs,
    1,
};

}  // namespace

extern "C" GRAPHSCOPE_EXPORT const graphscope_workload* graphscope_workload_v1(void) {
  return &kWorkload;
}
