// fail_capture_illegal: a workload that breaks the capture rules.
//
// Graph "illegal" (--n N floats, default 4096): enqueue launches one kernel
// (fci_work) on the captured stream, then calls cudaMalloc, as code written
// for eager execution often does for a scratch buffer. In the global capture
// mode cudaMalloc is not allowed while any stream is capturing: it fails
// (expected: cudaErrorStreamCaptureUnsupported) and invalidates the capture,
// so cudaStreamEndCapture then fails too (expected:
// cudaErrorStreamCaptureInvalidated). enqueue returns 1 with the CUDA error's
// name in err. Expected from graphscope: a capture failure naming the
// enqueue's error, and no graph.
//
// Under a relaxed capture mode cudaMalloc is legal; then enqueue keeps the
// buffer (teardown frees it) and returns 0, and the graph is one kernel node.
#include <cuda_runtime.h>

#include "sample_util.h"

__global__ void fci_work(float* x, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) x[i] = 2.0f * x[i];
}

namespace {

const int kMaxScratch = 64;

struct State {
  long n = 4096;
  float* x = nullptr;
  void* scratch[kMaxScratch] = {};  // what cudaMalloc returned where it succeeded
  int num_scratch = 0;
};

void teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (!s) return;
  cudaFree(s->x);
  for (int i = 0; i < s->num_scratch; ++i) cudaFree(s->scratch[i]);
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
  fci_work<<<sample::blocks_for(s->n), 256, 0, stream>>>(s->x, s->n);
  SAMPLE_CHECK_LAUNCH(fci_work);
  // The mistake: a synchronous allocation while the stream is capturing.
  void* scratch = nullptr;
  SAMPLE_CHECK_AS(cudaMalloc(&scratch, s->n * sizeof(float)), "cudaMalloc during capture");
  if (s->num_scratch < kMaxScratch)
    s->scratch[s->num_scratch++] = scratch;
  else
    return sample::fail(err, err_size, "too many captures of this workload");
  return 0;
}

const graphscope_graph kGraphs[] = {{"illegal", enqueue}};
const graphscope_workload kWorkload = {
    GRAPHSCOPE_WORKLOAD_ABI,
    "fail_capture_illegal",
    "fails: calls cudaMalloc during capture, which invalidates a global-mode capture",
    sample::setup_with<State, init, teardown>,
    teardown,
    kGraphs,
    1,
};

}  // namespace

extern "C" GRAPHSCOPE_EXPORT const graphscope_workload* graphscope_workload_v1(void) {
  return &kWorkload;
}
