// mixed: one of each node type that plain stream capture produces.
//
// Graph "mixed" (--n N floats, default 4096), one chain on the captured
// stream, in this order:
//
//   wait_event   cudaStreamWaitEvent(..., cudaEventWaitExternal) on an event
//                that setup recorded: a producer outside the graph
//   memcpy       HtoD from a pinned host buffer (cudaMallocHost in setup)
//   memset       cudaMemsetAsync of the output buffer
//   kernel       mixed_compute
//   host         cudaLaunchHostFunc(mixed_host_tick): counts replays
//   event_record cudaEventRecordWithFlags(..., cudaEventRecordExternal):
//                tells a consumer outside the graph the result is ready
//   memcpy       DtoH into a pinned host buffer
//   memcpy       DtoD into a second device buffer
//
// 8 nodes, 7 default edges. It exists so graphscope shows every non-kernel
// node type that capture makes (except mem_alloc/mem_free: see memalloc.cu)
// with its parameters (copy kind and size, memset value, host function).
#include <cuda_runtime.h>

#include "sample_util.h"

__global__ void mixed_compute(float* out, const float* in, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * in[i] + 1.0f;
}

// A host node's function: no CUDA calls allowed in here.
static void CUDART_CB mixed_host_tick(void* user) { ++*static_cast<volatile int*>(user); }

namespace {

struct State {
  long n = 4096;
  float *h_in = nullptr, *h_out = nullptr;  // pinned
  float *d_in = nullptr, *d_out = nullptr, *d_copy = nullptr;
  cudaEvent_t upstream = nullptr;  // recorded in setup, waited on in the graph
  cudaEvent_t ready = nullptr;     // recorded by the graph
  volatile int host_ticks = 0;
};

void teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (!s) return;
  cudaFreeHost(s->h_in);
  cudaFreeHost(s->h_out);
  cudaFree(s->d_in);
  cudaFree(s->d_out);
  cudaFree(s->d_copy);
  if (s->upstream) cudaEventDestroy(s->upstream);
  if (s->ready) cudaEventDestroy(s->ready);
  delete s;
}

int init(State* s, int argc, char** argv, char* err, size_t err_size) {
  const sample::Option opts[] = {{"n", &s->n, 1, 1L << 28}};
  if (sample::parse_options(argc, argv, opts, err, err_size)) return 1;
  const size_t bytes = s->n * sizeof(float);
  SAMPLE_CHECK(cudaMallocHost(&s->h_in, bytes));
  SAMPLE_CHECK(cudaMallocHost(&s->h_out, bytes));
  for (long i = 0; i < s->n; ++i) s->h_in[i] = 1.0f + 0.25f * (float)(i % 8);
  for (long i = 0; i < s->n; ++i) s->h_out[i] = 1.0f;
  SAMPLE_CHECK(cudaMalloc(&s->d_in, bytes));
  SAMPLE_CHECK(cudaMalloc(&s->d_out, bytes));
  SAMPLE_CHECK(cudaMalloc(&s->d_copy, bytes));
  SAMPLE_CHECK(sample::fill_pattern(s->d_in, s->n));
  SAMPLE_CHECK(sample::fill_pattern(s->d_out, s->n));
  SAMPLE_CHECK(sample::fill_pattern(s->d_copy, s->n));
  SAMPLE_CHECK(cudaEventCreate(&s->upstream));
  SAMPLE_CHECK(cudaEventCreate(&s->ready));
  // The "producer outside the graph": the graph's wait_event node waits on
  // this record each time it is replayed.
  SAMPLE_CHECK(cudaEventRecord(s->upstream, 0));
  SAMPLE_CHECK(cudaDeviceSynchronize());
  return 0;
}

int enqueue(void* state, cudaStream_t stream, char* err, size_t err_size) {
  auto* s = static_cast<State*>(state);
  const size_t bytes = s->n * sizeof(float);
  SAMPLE_CHECK(cudaStreamWaitEvent(stream, s->upstream, cudaEventWaitExternal));
  SAMPLE_CHECK(cudaMemcpyAsync(s->d_in, s->h_in, bytes, cudaMemcpyHostToDevice, stream));
  SAMPLE_CHECK(cudaMemsetAsync(s->d_out, 0, bytes, stream));
  mixed_compute<<<sample::blocks_for(s->n), 256, 0, stream>>>(s->d_out, s->d_in, s->n);
  SAMPLE_CHECK_LAUNCH(mixed_compute);
  SAMPLE_CHECK(cudaLaunchHostFunc(stream, mixed_host_tick, const_cast<int*>(&s->host_ticks)));
  SAMPLE_CHECK(cudaEventRecordWithFlags(s->ready, stream, cudaEventRecordExternal));
  SAMPLE_CHECK(cudaMemcpyAsync(s->h_out, s->d_out, bytes, cudaMemcpyDeviceToHost, stream));
  SAMPLE_CHECK(cudaMemcpyAsync(s->d_copy, s->d_out, bytes, cudaMemcpyDeviceToDevice, stream));
  return 0;
}

const graphscope_graph kGraphs[] = {{"mixed", enqueue}};
const graphscope_workload kWorkload = {
    GRAPHSCOPE_WORKLOAD_ABI,
    "mixed",
    "memcpy (HtoD, DtoH, DtoD), memset, kernel, host function, external event wait and record",
    sample::setup_with<State, init, teardown>,
    teardown,
    kGraphs,
    1,
};

}  // namespace

extern "C" GRAPHSCOPE_EXPORT const graphscope_workload* graphscope_workload_v1(void) {
  return &kWorkload;
}
