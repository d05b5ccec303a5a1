// exec_update: a native CUDA program that updates an instantiated graph in
// place, with updates CUDA refuses and updates that change nothing (issue
// 46, "failed exec-graph updates"). It knows nothing of graphscope; tests
// run it under `graphscope capture --exec` (tests/gpu/device_why.sh) and
// compare graphscope's findings with what it prints.
//
// Its graphs are chains on a non-blocking stream over a buffer of N ints:
// k1(out, n, k) writes out[i] = i*k (and the grid's size into out[N]),
// k2(out, n, 1) adds 1, k3(out, n) doubles.
//
//   exec_update fail   graph A (k1 -> k2) instantiated; cudaGraphExecUpdate
//                      with graph B (k1 -> k2 -> k3: topology changed), then
//                      with graph C (k1 -> memset: node type changed); each
//                      failure printed (the error, resultInfo.result by name,
//                      whether errorNode and errorFromNode are set) and A's
//                      exec graph replayed and checked after it; then B
//                      instantiated on its own, replayed and checked
//   exec_update ok     A instantiated, then 6 updates that succeed: 5 with
//                      graphs of another k and another output buffer, the
//                      6th with another grid; 20 no-op updates (the 6th graph
//                      again) and 10 cudaGraphExecKernelNodeSetParams giving
//                      k1 the parameters it already has; a replay checked
//                      after each
//
// One line per update (`update N: ok (...)`, or what failed) and per check;
// a last line `updates ok U failed F no-op N`: U updates that changed the
// exec graph, F that failed, N that changed nothing (no-op updates and
// setters together). Exit codes: 0 every update behaved as expected (fail:
// both failed with the expected result), 1 a wrong result or an unexpected
// update outcome, 2 usage, 3 CUDA error.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CK(call)                                                                             \
  do {                                                                                       \
    cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "exec_update: %s: %s (line %d)\n", #call, cudaGetErrorString(e_), \
                   __LINE__);                                                                \
      std::exit(3);                                                                          \
    }                                                                                        \
  } while (0)

// Grid-stride loops: every grid covers all n elements.
__global__ void k1(int* out, int n, int k) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = i * k;
  if (blockIdx.x == 0 && threadIdx.x == 0) out[n] = gridDim.x;  // which grid ran
}

__global__ void k2(int* out, int n, int add) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] += add;
}

__global__ void k3(int* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] *= 2;
}

namespace {

constexpr int kN = 4096, kBlock = 128;

enum class Shape { a, b_three_kernels, c_memset };

cudaStream_t s;
int wrong = 0;

// k1 -> k2 (a), k1 -> k2 -> k3 (b), k1 -> memset (c), over out.
cudaGraph_t capture(Shape shape, int* out, int k, int grid) {
  cudaGraph_t g = nullptr;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  k1<<<grid, kBlock, 0, s>>>(out, kN, k);
  if (shape == Shape::c_memset)
    CK(cudaMemsetAsync(out, 0, kN * sizeof(int), s));
  else
    k2<<<grid, kBlock, 0, s>>>(out, kN, 1);
  if (shape == Shape::b_three_kernels) k3<<<grid, kBlock, 0, s>>>(out, kN);
  CK(cudaGetLastError());
  CK(cudaStreamEndCapture(s, &g));
  return g;
}

// Replays e once over out (first set to -1) and checks out[i] == (i*k+1)*mul
// and out[N] == grid; prints one line.
void check(cudaGraphExec_t e, const char* what, int* out, int k, int grid, int mul) {
  CK(cudaMemset(out, 0xff, (kN + 1) * sizeof(int)));
  CK(cudaGraphLaunch(e, s));
  CK(cudaStreamSynchronize(s));
  std::vector<int> h(kN + 1);
  CK(cudaMemcpy(h.data(), out, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
  bool ok = h[kN] == grid;
  for (int i = 0; i < kN && ok; ++i) ok = h[i] == (i * k + 1) * mul;
  std::printf("  replay %s: out[1]=%d out[N]=%d: %s\n", what, h[1], h[kN], ok ? "ok" : "WRONG");
  wrong += !ok;
}

const char* result_name(cudaGraphExecUpdateResult r) {
  switch (r) {
    case cudaGraphExecUpdateSuccess: return "cudaGraphExecUpdateSuccess";
    case cudaGraphExecUpdateError: return "cudaGraphExecUpdateError";
    case cudaGraphExecUpdateErrorTopologyChanged: return "cudaGraphExecUpdateErrorTopologyChanged";
    case cudaGraphExecUpdateErrorNodeTypeChanged: return "cudaGraphExecUpdateErrorNodeTypeChanged";
    case cudaGraphExecUpdateErrorFunctionChanged: return "cudaGraphExecUpdateErrorFunctionChanged";
    case cudaGraphExecUpdateErrorParametersChanged: return "cudaGraphExecUpdateErrorParametersChanged";
    case cudaGraphExecUpdateErrorNotSupported: return "cudaGraphExecUpdateErrorNotSupported";
    case cudaGraphExecUpdateErrorUnsupportedFunctionChange: return "cudaGraphExecUpdateErrorUnsupportedFunctionChange";
    case cudaGraphExecUpdateErrorAttributesChanged: return "cudaGraphExecUpdateErrorAttributesChanged";
  }
  return "unknown";
}

// One cudaGraphExecUpdate expected to fail with `want`; prints what CUDA
// returned; true when it failed as expected.
bool failing_update(int n, const char* what, cudaGraphExec_t e, cudaGraph_t g, cudaGraphExecUpdateResult want) {
  cudaGraphExecUpdateResultInfo info{};
  const cudaError_t err = cudaGraphExecUpdate(e, g, &info);
  (void)cudaGetLastError();  // the failure is the runtime's last error too: clear it
  const bool as_expected = err == cudaErrorGraphExecUpdateFailure && info.result == want;
  std::printf("update %d (%s): %s (%s), result %s, errorNode %s, errorFromNode %s: %s\n", n, what,
              cudaGetErrorName(err), cudaGetErrorString(err), result_name(info.result),
              info.errorNode ? "set" : "null", info.errorFromNode ? "set" : "null",
              as_expected ? "failed as expected" : "UNEXPECTED");
  return as_expected;
}

int run_fail() {
  int* out = nullptr;
  CK(cudaMalloc(&out, (kN + 1) * sizeof(int)));
  const int k = 3, grid = 8;
  cudaGraph_t a = capture(Shape::a, out, k, grid);
  cudaGraphExec_t ea = nullptr;
  CK(cudaGraphInstantiate(&ea, a, 0));
  check(ea, "A (k1 -> k2)", out, k, grid, 1);
  cudaGraph_t b = capture(Shape::b_three_kernels, out, k, grid);
  int failed = 0, expected = 0;
  expected += failing_update(1, "A's exec graph from B, k1 -> k2 -> k3", ea, b,
                             cudaGraphExecUpdateErrorTopologyChanged);
  ++failed;
  check(ea, "A after the failed update", out, k, grid, 1);
  cudaGraph_t c = capture(Shape::c_memset, out, k, grid);
  expected += failing_update(2, "A's exec graph from C, k1 -> memset", ea, c,
                             cudaGraphExecUpdateErrorNodeTypeChanged);
  ++failed;
  check(ea, "A after the failed update", out, k, grid, 1);
  cudaGraphExec_t eb = nullptr;
  CK(cudaGraphInstantiate(&eb, b, 0));
  check(eb, "B instantiated on its own (k1 -> k2 -> k3)", out, k, grid, 2);
  std::printf("updates ok 0 failed %d no-op 0\n", failed);
  CK(cudaGraphExecDestroy(eb));
  CK(cudaGraphExecDestroy(ea));
  for (cudaGraph_t g : {a, b, c}) CK(cudaGraphDestroy(g));
  CK(cudaFree(out));
  return wrong || expected != 2 ? 1 : 0;
}

// k1's node in g: the kernel node nothing precedes.
cudaGraphNode_t first_kernel(cudaGraph_t g) {
  size_t count = 0;
  CK(cudaGraphGetNodes(g, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  CK(cudaGraphGetNodes(g, nodes.data(), &count));
  for (cudaGraphNode_t x : nodes) {
    cudaGraphNodeType t;
    CK(cudaGraphNodeGetType(x, &t));
    size_t deps = 0;
    CK(cudaGraphNodeGetDependencies(x, nullptr, nullptr, &deps));
    if (t == cudaGraphNodeTypeKernel && deps == 0) return x;
  }
  std::fprintf(stderr, "exec_update: graph has no root kernel\n");
  std::exit(1);
}

int run_ok() {
  constexpr int kBuffers = 6;
  std::vector<int*> out(kBuffers);
  for (int*& p : out) CK(cudaMalloc(&p, (kN + 1) * sizeof(int)));
  cudaGraph_t a = capture(Shape::a, out[0], 1, 8);
  cudaGraphExec_t e = nullptr;
  CK(cudaGraphInstantiate(&e, a, 0));
  check(e, "instantiated (k 1, out buffer 0, grid 8)", out[0], 1, 8, 1);
  int ok = 0, failed = 0, noop = 0, n = 0;
  std::vector<cudaGraph_t> graphs;
  // Updates 1-5: another k and another buffer each; update 6: another grid.
  for (int u = 1; u <= 6; ++u) {
    const int k = u < 6 ? u + 1 : 6, buf = u < 6 ? u : 5, grid = u < 6 ? 8 : 16;
    graphs.push_back(capture(Shape::a, out[buf], k, grid));
    cudaGraphExecUpdateResultInfo info{};
    const cudaError_t err = cudaGraphExecUpdate(e, graphs.back(), &info);
    ++n;
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      std::printf("update %d: FAILED: %s, result %s\n", n, cudaGetErrorName(err), result_name(info.result));
      ++failed;
      continue;
    }
    ++ok;
    std::printf("update %d: ok (k %d, out buffer %d, grid %d)\n", n, k, buf, grid);
    check(e, "after it", out[buf], k, grid, 1);
  }
  // The exec graph now is the 6th graph: k 6, buffer 5, grid 16.
  cudaGraph_t last = graphs.back();
  for (int i = 0; i < 20; ++i) {
    cudaGraphExecUpdateResultInfo info{};
    const cudaError_t err = cudaGraphExecUpdate(e, last, &info);
    ++n;
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      std::printf("update %d: FAILED (no-op, the same graph again): %s\n", n, cudaGetErrorName(err));
      ++failed;
      continue;
    }
    ++noop;
    std::printf("update %d: ok (no-op: cudaGraphExecUpdate with the same graph again)\n", n);
    check(e, "after it", out[5], 6, 16, 1);
  }
  // k1's node of the graph e was instantiated from, given what it has now.
  cudaGraphNode_t node = first_kernel(a);
  int* p = out[5];
  int nn = kN, k = 6;
  void* args[] = {&p, &nn, &k};
  cudaKernelNodeParams kp{};
  kp.func = reinterpret_cast<void*>(&k1);
  kp.gridDim = dim3(16);
  kp.blockDim = dim3(kBlock);
  kp.sharedMemBytes = 0;
  kp.kernelParams = args;
  for (int i = 0; i < 10; ++i) {
    CK(cudaGraphExecKernelNodeSetParams(e, node, &kp));
    ++n;
    ++noop;
    std::printf("update %d: ok (no-op: cudaGraphExecKernelNodeSetParams, k1's own parameters)\n", n);
    check(e, "after it", out[5], 6, 16, 1);
  }
  std::printf("updates ok %d failed %d no-op %d\n", ok, failed, noop);
  CK(cudaGraphExecDestroy(e));
  CK(cudaGraphDestroy(a));
  for (cudaGraph_t g : graphs) CK(cudaGraphDestroy(g));
  for (int* q : out) CK(cudaFree(q));
  return wrong || failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 2 ? argv[1] : "";
  if (mode != "fail" && mode != "ok") {
    std::fprintf(stderr, "usage: exec_update fail|ok\n");
    return 2;
  }
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int rc = mode == "fail" ? run_fail() : run_ok();
  CK(cudaStreamDestroy(s));
  return rc;
}
