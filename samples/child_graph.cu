// child_graph: a graph built with the explicit API, spliced into a capture as
// a child graph node, with a second child graph nested inside it.
//
// Graph "child_graph" (--n N floats, default 4096):
//
//   child_pre ─> [child graph] ─> child_post          (top level: 3 nodes)
//
//   [child graph]:  child_body_a ─┬─> [nested child graph] ─┬─> child_body_c
//                                 └─> child_body_b ─────────┘
//                   (4 nodes, 4 edges)
//
//   [nested child graph]:  child_inner_a ─> child_inner_b   (2 nodes, 1 edge)
//
// During capture, enqueue reads the capturing graph and its current
// dependencies with cudaStreamGetCaptureInfo, builds the child graph with
// cudaGraphCreate / cudaGraphAddKernelNode / cudaGraphAddChildGraphNode, adds
// it to the capturing graph with cudaGraphAddChildGraphNode (which clones it)
// and makes the new node the stream's only dependency with
// cudaStreamUpdateCaptureDependencies, so child_post is captured after it.
// This is how libraries splice pre-built graphs into a user's capture. It
// exists to test nesting: node ids inside child graphs, recursion in the
// viewers, and edges that cross no graph boundary.
#include <cuda_runtime.h>

#include "sample_util.h"

__global__ void child_pre(float* x, const float* src, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) x[i] = src[i];
}
__global__ void child_body_a(float* x, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 0.5f;
}
__global__ void child_body_b(float* y, const float* x, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + 1.0f;
}
__global__ void child_body_c(float* out, const float* y, const float* z, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = y[i] + z[i];
}
__global__ void child_inner_a(float* z, const float* x, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) z[i] = 3.0f * x[i];
}
__global__ void child_inner_b(float* z, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) z[i] += 1.0f;
}
__global__ void child_post(float* out, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) out[i] *= 0.5f;
}

namespace {

struct State {
  long n = 4096;
  float *src = nullptr, *x = nullptr, *y = nullptr, *z = nullptr, *out = nullptr;
};

// Destroys a graph made here when enqueue returns, on every path.
struct GraphGuard {
  cudaGraph_t g = nullptr;
  ~GraphGuard() {
    if (g) cudaGraphDestroy(g);
  }
};

cudaKernelNodeParams kernel_params(void* func, void** args, long n) {
  cudaKernelNodeParams p{};
  p.func = func;
  p.gridDim = dim3(sample::blocks_for(n));
  p.blockDim = dim3(256);
  p.sharedMemBytes = 0;
  p.kernelParams = args;
  p.extra = nullptr;
  return p;
}

void teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (!s) return;
  cudaFree(s->src);
  cudaFree(s->x);
  cudaFree(s->y);
  cudaFree(s->z);
  cudaFree(s->out);
  delete s;
}

int init(State* s, int argc, char** argv, char* err, size_t err_size) {
  const sample::Option opts[] = {{"n", &s->n, 1, 1L << 28}};
  if (sample::parse_options(argc, argv, opts, err, err_size)) return 1;
  float** bufs[] = {&s->src, &s->x, &s->y, &s->z, &s->out};
  for (float** b : bufs) {
    SAMPLE_CHECK(cudaMalloc(b, s->n * sizeof(float)));
    SAMPLE_CHECK(sample::fill_pattern(*b, s->n));
  }
  return 0;
}

// Builds the nested graph: child_inner_a -> child_inner_b.
int build_inner(State* s, cudaGraph_t* out, char* err, size_t err_size) {
  SAMPLE_CHECK(cudaGraphCreate(out, 0));
  float *x = s->x, *z = s->z;
  long n = s->n;
  void* a_args[] = {&z, &x, &n};
  void* b_args[] = {&z, &n};
  cudaGraphNode_t a, b;
  cudaKernelNodeParams p = kernel_params((void*)child_inner_a, a_args, n);
  SAMPLE_CHECK(cudaGraphAddKernelNode(&a, *out, nullptr, 0, &p));
  p = kernel_params((void*)child_inner_b, b_args, n);
  SAMPLE_CHECK(cudaGraphAddKernelNode(&b, *out, &a, 1, &p));
  return 0;
}

// Builds the child graph: body_a -> {nested, body_b} -> body_c.
int build_body(State* s, cudaGraph_t inner, cudaGraph_t* out, char* err, size_t err_size) {
  SAMPLE_CHECK(cudaGraphCreate(out, 0));
  float *x = s->x, *y = s->y, *z = s->z, *o = s->out;
  long n = s->n;
  void* a_args[] = {&x, &n};
  void* b_args[] = {&y, &x, &n};
  void* c_args[] = {&o, &y, &z, &n};
  cudaGraphNode_t a, mid[2], c;
  cudaKernelNodeParams p = kernel_params((void*)child_body_a, a_args, n);
  SAMPLE_CHECK(cudaGraphAddKernelNode(&a, *out, nullptr, 0, &p));
  SAMPLE_CHECK(cudaGraphAddChildGraphNode(&mid[0], *out, &a, 1, inner));
  p = kernel_params((void*)child_body_b, b_args, n);
  SAMPLE_CHECK(cudaGraphAddKernelNode(&mid[1], *out, &a, 1, &p));
  p = kernel_params((void*)child_body_c, c_args, n);
  SAMPLE_CHECK(cudaGraphAddKernelNode(&c, *out, mid, 2, &p));
  return 0;
}

int enqueue(void* state, cudaStream_t stream, char* err, size_t err_size) {
  auto* s = static_cast<State*>(state);
  const unsigned grid = sample::blocks_for(s->n);
  child_pre<<<grid, 256, 0, stream>>>(s->x, s->src, s->n);
  SAMPLE_CHECK_LAUNCH(child_pre);

  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t capturing = nullptr;
  const cudaGraphNode_t* deps = nullptr;
  size_t num_deps = 0;
  SAMPLE_CHECK(cudaStreamGetCaptureInfo(stream, &status, nullptr, &capturing, &deps, nullptr,
                                        &num_deps));
  if (status != cudaStreamCaptureStatusActive)
    return sample::fail(err, err_size, "the stream is not capturing; run this under graphscope capture");

  GraphGuard inner, body;
  if (build_inner(s, &inner.g, err, err_size)) return 1;
  if (build_body(s, inner.g, &body.g, err, err_size)) return 1;
  cudaGraphNode_t node;
  SAMPLE_CHECK(cudaGraphAddChildGraphNode(&node, capturing, deps, num_deps, body.g));
  SAMPLE_CHECK(cudaStreamUpdateCaptureDependencies(stream, &node, nullptr, 1,
                                                   cudaStreamSetCaptureDependencies));

  child_post<<<grid, 256, 0, stream>>>(s->out, s->n);
  SAMPLE_CHECK_LAUNCH(child_post);
  return 0;
}

const graphscope_graph kGraphs[] = {{"child_graph", enqueue}};
const graphscope_workload kWorkload = {
    GRAPHSCOPE_WORKLOAD_ABI,
    "child_graph",
    "an explicitly built graph (with a nested child graph) spliced into the capture",
    sample::setup_with<State, init, teardown>,
    teardown,
    kGraphs,
    1,
};

}  // namespace

extern "C" GRAPHSCOPE_EXPORT const graphscope_workload* graphscope_workload_v1(void) {
  return &kWorkload;
}
