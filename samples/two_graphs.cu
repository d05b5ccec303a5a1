// two_graphs: one workload, two graphs ("forward" and "backward") sharing
// buffers, the way torch.cuda.make_graphed_callables captures a module.
//
// setup creates one memory pool (cudaMemPoolCreate) and allocates every
// shared buffer from it with cudaMallocFromPoolAsync, outside capture: the
// input x, the weights w, the saved activation y, the incoming gradient dy,
// and the gradients g, dx, dw. --n N floats each (default 1 << 16).
//
// Graph "forward", y = tanh(w * x + 0.1), 4 nodes, 3 default edges:
//
//   mem_alloc(pre) -> fwd_linear -> fwd_activation -> mem_free(pre)
//
//   the pre-activation is a temporary taken from the same pool during capture
//   (cudaMallocFromPoolAsync: a mem_alloc node; the graph owns that memory).
//
// Graph "backward", reads forward's saved output y, 4 kernels, 4 edges:
//
//   bwd_activation_grad ─┬─> bwd_input_grad ───┬─> bwd_sgd_step
//                        └─> bwd_weight_grad ──┘   (side stream, event fork/join)
//
//   g = dy * (1 - y^2); dx = g * w; dw = g * x; w -= 0.01 * dw.
//
// It exists to test workloads of several graphs: --name selection, one
// setup shared by both captures, and output naming per graph.
#include <cuda_runtime.h>

#include "sample_util.h"

__global__ void fwd_linear(float* pre, const float* x, const float* w, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) pre[i] = w[i] * x[i] + 0.1f;
}
__global__ void fwd_activation(float* y, const float* pre, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = tanhf(pre[i]);
}
__global__ void bwd_activation_grad(float* g, const float* dy, const float* y, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) g[i] = dy[i] * (1.0f - y[i] * y[i]);
}
__global__ void bwd_input_grad(float* dx, const float* g, const float* w, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) dx[i] = g[i] * w[i];
}
__global__ void bwd_weight_grad(float* dw, const float* g, const float* x, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) dw[i] = g[i] * x[i];
}
__global__ void bwd_sgd_step(float* w, const float* dw, float lr, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * dw[i];
}

namespace {

struct State {
  long n = 1L << 16;
  cudaMemPool_t pool = nullptr;
  cudaStream_t setup_stream = nullptr, side = nullptr;
  cudaEvent_t fork = nullptr, join = nullptr;
  float *x = nullptr, *w = nullptr, *y = nullptr, *dy = nullptr, *g = nullptr, *dx = nullptr,
        *dw = nullptr;
};

void teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (!s) return;
  if (s->setup_stream) {
    float* bufs[] = {s->x, s->w, s->y, s->dy, s->g, s->dx, s->dw};
    for (float* p : bufs)
      if (p) cudaFreeAsync(p, s->setup_stream);
    cudaStreamSynchronize(s->setup_stream);
    cudaStreamDestroy(s->setup_stream);
  }
  if (s->pool) cudaMemPoolDestroy(s->pool);
  if (s->side) cudaStreamDestroy(s->side);
  if (s->fork) cudaEventDestroy(s->fork);
  if (s->join) cudaEventDestroy(s->join);
  delete s;
}

int init(State* s, int argc, char** argv, char* err, size_t err_size) {
  const sample::Option opts[] = {{"n", &s->n, 1, 1L << 28}};
  if (sample::parse_options(argc, argv, opts, err, err_size)) return 1;
  int device = 0;
  SAMPLE_CHECK(cudaGetDevice(&device));
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  SAMPLE_CHECK(cudaMemPoolCreate(&s->pool, &props));
  SAMPLE_CHECK(cudaStreamCreateWithFlags(&s->setup_stream, cudaStreamNonBlocking));
  SAMPLE_CHECK(cudaStreamCreateWithFlags(&s->side, cudaStreamNonBlocking));
  SAMPLE_CHECK(cudaEventCreateWithFlags(&s->fork, cudaEventDisableTiming));
  SAMPLE_CHECK(cudaEventCreateWithFlags(&s->join, cudaEventDisableTiming));
  const size_t bytes = s->n * sizeof(float);
  float** bufs[] = {&s->x, &s->w, &s->y, &s->dy, &s->g, &s->dx, &s->dw};
  for (float** p : bufs)
    SAMPLE_CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(p), bytes, s->pool, s->setup_stream));
  SAMPLE_CHECK(cudaStreamSynchronize(s->setup_stream));
  for (float** p : bufs) SAMPLE_CHECK(sample::fill_pattern(*p, s->n, p == &s->w ? 0.5f : 1.0f));
  return 0;
}

int forward(void* state, cudaStream_t stream, char* err, size_t err_size) {
  auto* s = static_cast<State*>(state);
  const long n = s->n;
  const unsigned grid = sample::blocks_for(n);
  float* pre = nullptr;
  SAMPLE_CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&pre), n * sizeof(float), s->pool, stream));
  fwd_linear<<<grid, 256, 0, stream>>>(pre, s->x, s->w, n);
  SAMPLE_CHECK_LAUNCH(fwd_linear);
  fwd_activation<<<grid, 256, 0, stream>>>(s->y, pre, n);
  SAMPLE_CHECK_LAUNCH(fwd_activation);
  SAMPLE_CHECK(cudaFreeAsync(pre, stream));
  return 0;
}

int backward(void* state, cudaStream_t stream, char* err, size_t err_size) {
  auto* s = static_cast<State*>(state);
  const long n = s->n;
  const unsigned grid = sample::blocks_for(n);
  bwd_activation_grad<<<grid, 256, 0, stream>>>(s->g, s->dy, s->y, n);
  SAMPLE_CHECK_LAUNCH(bwd_activation_grad);
  SAMPLE_CHECK(cudaEventRecord(s->fork, stream));
  SAMPLE_CHECK(cudaStreamWaitEvent(s->side, s->fork, 0));
  bwd_input_grad<<<grid, 256, 0, stream>>>(s->dx, s->g, s->w, n);
  SAMPLE_CHECK_LAUNCH(bwd_input_grad);
  bwd_weight_grad<<<grid, 256, 0, s->side>>>(s->dw, s->g, s->x, n);
  SAMPLE_CHECK_LAUNCH(bwd_weight_grad);
  SAMPLE_CHECK(cudaEventRecord(s->join, s->side));
  SAMPLE_CHECK(cudaStreamWaitEvent(stream, s->join, 0));
  bwd_sgd_step<<<grid, 256, 0, stream>>>(s->w, s->dw, 0.01f, n);
  SAMPLE_CHECK_LAUNCH(bwd_sgd_step);
  return 0;
}

const graphscope_graph kGraphs[] = {{"forward", forward}, {"backward", backward}};
const graphscope_workload kWorkload = {
    GRAPHSCOPE_WORKLOAD_ABI,
    "two_graphs",
    "forward and backward graphs sharing buffers from one memory pool (make_graphed_callables style)",
    sample::setup_with<State, init, teardown>,
    teardown,
    kGraphs,
    2,
};

}  // namespace

extern "C" GRAPHSCOPE_EXPORT const graphscope_workload* graphscope_workload_v1(void) {
  return &kWorkload;
}
