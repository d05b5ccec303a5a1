// cublas_gemm: cuBLAS calls captured on two handles and two streams.
//
// Graph "cublas_gemm" (--n N, square matrices, default 512):
//
//   captured stream (handle 1):  C = A*B -> D = C*B -> E = D*A ─┐
//                                                                ├─> E += G (saxpy)
//   side stream (handle 2):      G = A*B ────────────────────────┘
//
// Four SGEMMs and one SAXPY, all as cuBLAS's own kernels; cuBLAS chooses
// names, counts and launch shapes for the GPU. On an H100 with cuBLAS 13.0
// each SGEMM was two kernel nodes (sm80_xmma_gemm_f32f32_..., grids 8x8x4
// then 8x8x2 at --n 512) and the SAXPY one (axpy_kernel_val<float, float>):
// 9 kernel nodes, 8 edges (side GEMM pair -> saxpy, main chain of six ->
// saxpy). Other GPUs or versions may add helper kernels or memsets. The side
// stream forks from the captured stream through an event and joins back
// through another before the SAXPY. Both handles use workspaces allocated in
// setup (cublasSetWorkspace, called again after every cublasSetStream, which
// resets the workspace), so cuBLAS allocates nothing during capture; setup
// also runs the sequence once uncaptured to warm cuBLAS up. It exists to show
// graphscope real library kernels with long mangled names.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "sample_util.h"

#define SAMPLE_CUBLAS(call)                                                               \
  do {                                                                                    \
    cublasStatus_t st_ = (call);                                                          \
    if (st_ != CUBLAS_STATUS_SUCCESS)                                                     \
      return sample::fail(err, err_size, "%s: %s: %s", #call, cublasGetStatusName(st_),   \
                          cublasGetStatusString(st_));                                    \
  } while (0)

namespace {

const size_t kWorkspaceBytes = 32u << 20;  // cuBLAS's recommendation for Hopper

struct State {
  long n = 512;
  float *A = nullptr, *B = nullptr, *C = nullptr, *D = nullptr, *E = nullptr, *G = nullptr;
  void *ws_main = nullptr, *ws_side = nullptr;
  cublasHandle_t h_main = nullptr, h_side = nullptr;
  cudaStream_t side = nullptr;
  cudaEvent_t fork = nullptr, join = nullptr;
};

void teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (!s) return;
  if (s->h_main) cublasDestroy(s->h_main);
  if (s->h_side) cublasDestroy(s->h_side);
  float* mats[] = {s->A, s->B, s->C, s->D, s->E, s->G};
  for (float* m : mats) cudaFree(m);
  cudaFree(s->ws_main);
  cudaFree(s->ws_side);
  if (s->side) cudaStreamDestroy(s->side);
  if (s->fork) cudaEventDestroy(s->fork);
  if (s->join) cudaEventDestroy(s->join);
  delete s;
}

int enqueue(void* state, cudaStream_t stream, char* err, size_t err_size) {
  auto* s = static_cast<State*>(state);
  const int n = static_cast<int>(s->n);
  const float alpha = 1.0f / static_cast<float>(n), beta = 0.0f, one = 1.0f;
  SAMPLE_CUBLAS(cublasSetStream(s->h_main, stream));
  SAMPLE_CUBLAS(cublasSetWorkspace(s->h_main, s->ws_main, kWorkspaceBytes));
  SAMPLE_CUBLAS(cublasSetStream(s->h_side, s->side));
  SAMPLE_CUBLAS(cublasSetWorkspace(s->h_side, s->ws_side, kWorkspaceBytes));

  SAMPLE_CHECK(cudaEventRecord(s->fork, stream));
  SAMPLE_CHECK(cudaStreamWaitEvent(s->side, s->fork, 0));
  SAMPLE_CUBLAS(cublasSgemm(s->h_side, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, s->A, n, s->B,
                            n, &beta, s->G, n));
  SAMPLE_CHECK(cudaEventRecord(s->join, s->side));

  SAMPLE_CUBLAS(cublasSgemm(s->h_main, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, s->A, n, s->B,
                            n, &beta, s->C, n));
  SAMPLE_CUBLAS(cublasSgemm(s->h_main, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, s->C, n, s->B,
                            n, &beta, s->D, n));
  SAMPLE_CUBLAS(cublasSgemm(s->h_main, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, s->D, n, s->A,
                            n, &beta, s->E, n));
  SAMPLE_CHECK(cudaStreamWaitEvent(stream, s->join, 0));
  SAMPLE_CUBLAS(cublasSaxpy(s->h_main, n * n, &one, s->G, 1, s->E, 1));
  return 0;
}

int init(State* s, int argc, char** argv, char* err, size_t err_size) {
  const sample::Option opts[] = {{"n", &s->n, 1, 8192}};
  if (sample::parse_options(argc, argv, opts, err, err_size)) return 1;
  const size_t elems = static_cast<size_t>(s->n * s->n);
  float** mats[] = {&s->A, &s->B, &s->C, &s->D, &s->E, &s->G};
  for (float** m : mats) {
    SAMPLE_CHECK(cudaMalloc(m, elems * sizeof(float)));
    SAMPLE_CHECK(sample::fill_pattern(*m, elems));
  }
  SAMPLE_CHECK(cudaMalloc(&s->ws_main, kWorkspaceBytes));
  SAMPLE_CHECK(cudaMalloc(&s->ws_side, kWorkspaceBytes));
  SAMPLE_CUBLAS(cublasCreate(&s->h_main));
  SAMPLE_CUBLAS(cublasCreate(&s->h_side));
  SAMPLE_CHECK(cudaStreamCreateWithFlags(&s->side, cudaStreamNonBlocking));
  SAMPLE_CHECK(cudaEventCreateWithFlags(&s->fork, cudaEventDisableTiming));
  SAMPLE_CHECK(cudaEventCreateWithFlags(&s->join, cudaEventDisableTiming));
  // Warm-up: run the sequence once, uncaptured, so cuBLAS does its one-time
  // work (loading kernels, choosing algorithms) outside capture.
  cudaStream_t warm = nullptr;
  SAMPLE_CHECK(cudaStreamCreateWithFlags(&warm, cudaStreamNonBlocking));
  int rc = enqueue(s, warm, err, err_size);
  cudaError_t sync = cudaStreamSynchronize(warm);
  cudaStreamDestroy(warm);
  if (rc) return rc;
  SAMPLE_CHECK_AS(sync, "warm-up: cudaStreamSynchronize");
  SAMPLE_CHECK_AS(cudaStreamSynchronize(s->side), "warm-up: cudaStreamSynchronize(side)");
  return 0;
}

const graphscope_graph kGraphs[] = {{"cublas_gemm", enqueue}};
const graphscope_workload kWorkload = {
    GRAPHSCOPE_WORKLOAD_ABI,
    "cublas_gemm",
    "three chained cuBLAS SGEMMs of --n (default 512) plus one on a second handle and stream",
    sample::setup_with<State, init, teardown>,
    teardown,
    kGraphs,
    1,
};

}  // namespace

extern "C" GRAPHSCOPE_EXPORT const graphscope_workload* graphscope_workload_v1(void) {
  return &kWorkload;
}
