// conditional: an IF and a WHILE conditional node added to a stream capture.
//
// Graph "conditional" (--iters K loop trips, default 3; --n N floats, default
// 4096), top level, one chain of 6 nodes and 5 default edges:
//
//   cond_prepare -> cond_decide -> IF -> memset -> WHILE -> cond_finish
//
//   cond_decide   kernel: cudaGraphSetConditional(if_handle, x[0] > 0), so
//                 the IF body runs (the data is positive)
//   IF body       2 kernel nodes, 1 edge: cond_if_scale -> cond_if_shift,
//                 filled by capturing a side stream into the body graph
//                 (cudaStreamBeginCaptureToGraph, relaxed mode)
//   memset        explicit memset node (4-byte element, value K) resetting the
//                 loop counter on every replay
//   WHILE body    2 kernel nodes, 1 edge: cond_while_step -> cond_count_down,
//                 added with cudaGraphAddKernelNode; cond_count_down
//                 decrements the counter and calls cudaGraphSetConditional(
//                 while_handle, counter > 0), so the body runs K times. The
//                 handle's default is 1 (cudaGraphCondAssignDefault), so the
//                 loop is entered on every launch.
//
// The conditional nodes (and the memset) are added the way CUDA's
// documentation shows for capture: cudaGraphConditionalHandleCreate on the
// capturing graph from cudaStreamGetCaptureInfo, cudaGraphAddNode with the
// capture's current dependencies and edge data, then
// cudaStreamUpdateCaptureDependencies (set) to the new node. It exists to
// test conditional nodes and their body graphs, which CUDA 13.0 cannot
// query back from a node.
#include <cuda_runtime.h>

#include "sample_util.h"

__global__ void cond_prepare(float* x, const float* src, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) x[i] = src[i];
}
__global__ void cond_decide(cudaGraphConditionalHandle h, const float* x) {
  if (blockIdx.x == 0 && threadIdx.x == 0) cudaGraphSetConditional(h, x[0] > 0.f ? 1u : 0u);
}
__global__ void cond_if_scale(float* x, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 0.5f;
}
__global__ void cond_if_shift(float* x, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
__global__ void cond_while_step(float* x, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) x[i] = 0.5f * x[i] + 1.0f;
}
__global__ void cond_count_down(cudaGraphConditionalHandle h, int* counter) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    int left = --*counter;
    cudaGraphSetConditional(h, left > 0 ? 1u : 0u);
  }
}
__global__ void cond_finish(float* y, const float* x, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * x[i];
}

namespace {

struct State {
  long n = 4096, iters = 3;
  float *src = nullptr, *x = nullptr, *y = nullptr;
  int* counter = nullptr;
  cudaStream_t body_stream = nullptr;  // captured into the IF body
};

void teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (!s) return;
  cudaFree(s->src);
  cudaFree(s->x);
  cudaFree(s->y);
  cudaFree(s->counter);
  if (s->body_stream) cudaStreamDestroy(s->body_stream);
  delete s;
}

int init(State* s, int argc, char** argv, char* err, size_t err_size) {
  const sample::Option opts[] = {{"n", &s->n, 1, 1L << 28}, {"iters", &s->iters, 1, 1000000}};
  if (sample::parse_options(argc, argv, opts, err, err_size)) return 1;
  float** bufs[] = {&s->src, &s->x, &s->y};
  for (float** b : bufs) {
    SAMPLE_CHECK(cudaMalloc(b, s->n * sizeof(float)));
    SAMPLE_CHECK(sample::fill_pattern(*b, s->n));
  }
  SAMPLE_CHECK(cudaMalloc(&s->counter, sizeof(int)));
  const int start = static_cast<int>(s->iters);
  SAMPLE_CHECK(cudaMemcpy(s->counter, &start, sizeof start, cudaMemcpyHostToDevice));
  SAMPLE_CHECK(cudaStreamCreateWithFlags(&s->body_stream, cudaStreamNonBlocking));
  return 0;
}

// The graph that `stream` is capturing into.
int capturing_graph(cudaStream_t stream, cudaGraph_t* graph, char* err, size_t err_size) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  SAMPLE_CHECK(cudaStreamGetCaptureInfo(stream, &status, nullptr, graph));
  if (status != cudaStreamCaptureStatusActive)
    return sample::fail(err, err_size, "the stream is not capturing; run this under graphscope capture");
  return 0;
}

// Adds a node to the capturing graph after the stream's current dependencies
// (keeping their edge data) and makes it the stream's only dependency.
int add_to_capture(cudaStream_t stream, cudaGraphNodeParams* params, cudaGraphNode_t* node,
                   char* err, size_t err_size) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  const cudaGraphNode_t* deps = nullptr;
  const cudaGraphEdgeData* edges = nullptr;
  size_t num_deps = 0;
  SAMPLE_CHECK(cudaStreamGetCaptureInfo(stream, &status, nullptr, &graph, &deps, &edges, &num_deps));
  if (status != cudaStreamCaptureStatusActive)
    return sample::fail(err, err_size, "the stream is not capturing; run this under graphscope capture");
  SAMPLE_CHECK(cudaGraphAddNode(node, graph, deps, edges, num_deps, params));
  SAMPLE_CHECK(cudaStreamUpdateCaptureDependencies(stream, node, nullptr, 1,
                                                   cudaStreamSetCaptureDependencies));
  return 0;
}

// Fills the IF body by capturing body_stream into it.
int fill_if_body(State* s, cudaGraph_t body, char* err, size_t err_size) {
  SAMPLE_CHECK(cudaStreamBeginCaptureToGraph(s->body_stream, body, nullptr, nullptr, 0,
                                             cudaStreamCaptureModeRelaxed));
  const unsigned grid = sample::blocks_for(s->n);
  cond_if_scale<<<grid, 256, 0, s->body_stream>>>(s->x, s->n);
  cudaError_t launch = cudaGetLastError();
  if (launch == cudaSuccess) {
    cond_if_shift<<<grid, 256, 0, s->body_stream>>>(s->x, s->n);
    launch = cudaGetLastError();
  }
  cudaGraph_t captured = nullptr;
  cudaError_t end = cudaStreamEndCapture(s->body_stream, &captured);
  SAMPLE_CHECK_AS(launch, "launch of the IF body's kernels");
  SAMPLE_CHECK_AS(end, "cudaStreamEndCapture(body_stream)");
  return 0;
}

// Fills the WHILE body with explicit kernel nodes.
int fill_while_body(State* s, cudaGraph_t body, cudaGraphConditionalHandle handle, char* err,
                    size_t err_size) {
  float* x = s->x;
  long n = s->n;
  int* counter = s->counter;
  void* step_args[] = {&x, &n};
  void* count_args[] = {&handle, &counter};
  cudaKernelNodeParams p{};
  p.func = (void*)cond_while_step;
  p.gridDim = dim3(sample::blocks_for(n));
  p.blockDim = dim3(256);
  p.kernelParams = step_args;
  cudaGraphNode_t step, count;
  SAMPLE_CHECK(cudaGraphAddKernelNode(&step, body, nullptr, 0, &p));
  p.func = (void*)cond_count_down;
  p.gridDim = dim3(1);
  p.blockDim = dim3(32);
  p.kernelParams = count_args;
  SAMPLE_CHECK(cudaGraphAddKernelNode(&count, body, &step, 1, &p));
  return 0;
}

int enqueue(void* state, cudaStream_t stream, char* err, size_t err_size) {
  auto* s = static_cast<State*>(state);
  const unsigned grid = sample::blocks_for(s->n);
  cudaGraph_t graph = nullptr;
  if (capturing_graph(stream, &graph, err, err_size)) return 1;

  cond_prepare<<<grid, 256, 0, stream>>>(s->x, s->src, s->n);
  SAMPLE_CHECK_LAUNCH(cond_prepare);

  // IF: decided by a kernel upstream of the node.
  cudaGraphConditionalHandle if_handle;
  SAMPLE_CHECK(cudaGraphConditionalHandleCreate(&if_handle, graph, 0, 0));
  cond_decide<<<1, 32, 0, stream>>>(if_handle, s->x);
  SAMPLE_CHECK_LAUNCH(cond_decide);
  cudaGraphNodeParams if_params{};
  if_params.type = cudaGraphNodeTypeConditional;
  if_params.conditional.handle = if_handle;
  if_params.conditional.type = cudaGraphCondTypeIf;
  if_params.conditional.size = 1;
  cudaGraphNode_t if_node;
  if (add_to_capture(stream, &if_params, &if_node, err, err_size)) return 1;
  if (fill_if_body(s, if_params.conditional.phGraph_out[0], err, err_size)) return 1;

  // Reset the loop counter to --iters (a 4-byte memset node).
  cudaGraphNodeParams memset_params{};
  memset_params.type = cudaGraphNodeTypeMemset;
  memset_params.memset.dst = s->counter;
  memset_params.memset.pitch = 0;
  memset_params.memset.value = static_cast<unsigned>(s->iters);
  memset_params.memset.elementSize = 4;
  memset_params.memset.width = 1;
  memset_params.memset.height = 1;
  cudaGraphNode_t memset_node;
  if (add_to_capture(stream, &memset_params, &memset_node, err, err_size)) return 1;

  // WHILE: entered with the default value 1, continued by cond_count_down.
  cudaGraphConditionalHandle while_handle;
  SAMPLE_CHECK(cudaGraphConditionalHandleCreate(&while_handle, graph, 1, cudaGraphCondAssignDefault));
  cudaGraphNodeParams while_params{};
  while_params.type = cudaGraphNodeTypeConditional;
  while_params.conditional.handle = while_handle;
  while_params.conditional.type = cudaGraphCondTypeWhile;
  while_params.conditional.size = 1;
  cudaGraphNode_t while_node;
  if (add_to_capture(stream, &while_params, &while_node, err, err_size)) return 1;
  if (fill_while_body(s, while_params.conditional.phGraph_out[0], while_handle, err, err_size))
    return 1;

  cond_finish<<<grid, 256, 0, stream>>>(s->y, s->x, s->n);
  SAMPLE_CHECK_LAUNCH(cond_finish);
  return 0;
}

const graphscope_graph kGraphs[] = {{"conditional", enqueue}};
const graphscope_workload kWorkload = {
    GRAPHSCOPE_WORKLOAD_ABI,
    "conditional",
    "IF and WHILE conditional nodes in a capture; the loop runs --iters times (default 3)",
    sample::setup_with<State, init, teardown>,
    teardown,
    kGraphs,
    1,
};

}  // namespace

extern "C" GRAPHSCOPE_EXPORT const graphscope_workload* graphscope_workload_v1(void) {
  return &kWorkload;
}
