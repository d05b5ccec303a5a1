// attach_stress: a native CUDA program that does what real applications do
// to graphs and what an attached graphscope must survive (issue 17, "Safe
// inside real applications"). It knows nothing of graphscope; tests run it
// under `graphscope capture --exec` and `profile --exec`
// (tests/gpu/attach_native.sh) and check the output directory.
//
//   attach_stress threads [GRAPHS]   4 threads capture at once (thread-local
//                                    capture mode), each its own shape, and
//                                    destroy every graph right after
//                                    instantiating it
//   attach_stress update [REPLAYS] [PAUSE]
//                                    one exec graph changed after
//                                    instantiation: cudaGraphExecUpdate with
//                                    a graph of other grids, then per-node
//                                    setters (kernel, memset), then a setter
//                                    that changes nothing; PAUSE seconds
//                                    (default 0) before each change, as a
//                                    server idle between them
//   attach_stress fork               fork() without exec after graphs ran;
//                                    the child exits 7 without touching CUDA
//   attach_stress reset [1]          cudaDeviceReset between two graphs (1: and
//                                    right after a third graph's template
//                                    is destroyed, never launched);
//                                    exits 5
//   attach_stress kill               two graphs, then SIGKILL to itself
//   attach_stress idle [SECONDS]     a graph of 200 kernels replayed 500
//                                    times, then SECONDS (default 2) with
//                                    no new graph, the same replays again
//                                    (each batch's time per replay
//                                    printed), then a second graph; SECONDS
//                                    more, then 4 threads capture a graph
//                                    each at once, as `threads 1` does
//
// Every mode checks the results the GPU computed and prints one line per
// check; a wrong result exits 1. Exit codes: 0 (5 for reset), 1 wrong
// result, 2 usage, 3 CUDA error.
#include <cuda_runtime.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#define CK(call)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (call);                                                                  \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "attach_stress: %s: %s (line %d)\n", #call, cudaGetErrorString(e_), \
                   __LINE__);                                                                 \
      std::exit(3);                                                                           \
    }                                                                                         \
  } while (0)

// Adds `add` to each of n elements; one thread per element of the grid.
__global__ void add_kernel(int* p, int n, int add) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += add;
}

// A second kernel, so that shapes differ by name too.
__global__ void scale_kernel(int* p, int n, int mul) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= mul;
}

namespace {

constexpr int kBlock = 64;

int read_back(const int* d, int n, std::vector<int>& h) {
  h.resize(n);
  CK(cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
  return h.empty() ? 0 : h[0];
}

bool all_equal(const std::vector<int>& h, int n, int want) {
  for (int i = 0; i < n; ++i)
    if (h[i] != want) return false;
  return true;
}

// One graph: memset p to 0, then `kernels` add_kernel launches of `grid`
// blocks, each adding 1: every element covered ends at `kernels`.
cudaGraph_t capture_chain(cudaStream_t s, int* p, int grid, int kernels, cudaStreamCaptureMode mode) {
  cudaGraph_t g = nullptr;
  CK(cudaStreamBeginCapture(s, mode));
  CK(cudaMemsetAsync(p, 0, grid * kBlock * sizeof(int), s));
  for (int k = 0; k < kernels; ++k) add_kernel<<<grid, kBlock, 0, s>>>(p, grid * kBlock, 1);
  CK(cudaGetLastError());
  CK(cudaStreamEndCapture(s, &g));
  return g;
}

int run_threads(int graphs) {
  constexpr int kThreads = 4;
  std::vector<int> bad(kThreads, 0);
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([t, graphs, &bad] {
      // Thread t: grid t+1, t+2 kernels; its graphs are unlike any other thread's.
      const int grid = t + 1, kernels = t + 2, n = grid * kBlock;
      cudaStream_t s;
      CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      int* p = nullptr;
      CK(cudaMalloc(&p, n * sizeof(int)));
      std::vector<int> h;
      for (int i = 0; i < graphs; ++i) {
        cudaGraph_t g = capture_chain(s, p, grid, kernels, cudaStreamCaptureModeThreadLocal);
        cudaGraphExec_t e = nullptr;
        CK(cudaGraphInstantiate(&e, g, 0));
        CK(cudaGraphDestroy(g));  // right after instantiation
        CK(cudaGraphLaunch(e, s));
        CK(cudaStreamSynchronize(s));
        CK(cudaGraphExecDestroy(e));
        read_back(p, n, h);
        if (!all_equal(h, n, kernels)) ++bad[t];
      }
      CK(cudaFree(p));
      CK(cudaStreamDestroy(s));
    });
  for (auto& t : ts) t.join();
  int wrong = 0;
  for (int t = 0; t < kThreads; ++t) {
    std::printf("thread %d: %d graphs, grid %d, %d kernels: %s\n", t, graphs, t + 1, t + 2,
                bad[t] ? "WRONG" : "ok");
    wrong += bad[t];
  }
  return wrong ? 1 : 0;
}

int run_update(int replays, int pause) {
  auto idle = [pause] {
    if (pause > 0) std::this_thread::sleep_for(std::chrono::seconds(pause));
  };
  const int n = 4 * kBlock;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int* p = nullptr;
  CK(cudaMalloc(&p, n * sizeof(int)));
  std::vector<int> h;
  int wrong = 0;
  auto replay = [&](cudaGraphExec_t e, const char* what, int want_first, int want_last) {
    for (int r = 0; r < replays; ++r) CK(cudaGraphLaunch(e, s));
    CK(cudaStreamSynchronize(s));
    read_back(p, n, h);
    bool ok = h[0] == want_first && h[n - 1] == want_last;
    std::printf("%s: p[0]=%d p[%d]=%d: %s\n", what, h[0], n - 1, h[n - 1], ok ? "ok" : "WRONG");
    wrong += !ok;
  };
  // Version 1: grid 1 (elements 0..63), three kernels.
  cudaGraph_t g1 = capture_chain(s, p, 1, 3, cudaStreamCaptureModeGlobal);
  cudaGraphExec_t e = nullptr;
  CK(cudaGraphInstantiate(&e, g1, 0));
  CK(cudaMemset(p, 0, n * sizeof(int)));
  replay(e, "version 1 (grid 1)", 3, 0);
  // Version 2: the same topology with grid 4 (all 256 elements).
  cudaGraph_t g2 = capture_chain(s, p, 4, 3, cudaStreamCaptureModeGlobal);
  idle();
  cudaGraphExecUpdateResultInfo info{};
  CK(cudaGraphExecUpdate(e, g2, &info));
  replay(e, "version 2 (cudaGraphExecUpdate, grid 4)", 3, 3);
  // Version 3: per-node setters on g1's nodes (the graph e was made from):
  // the memset writes 10, the first kernel becomes scale_kernel x2 over grid 4.
  size_t count = 0;
  CK(cudaGraphGetNodes(g1, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  CK(cudaGraphGetNodes(g1, nodes.data(), &count));
  cudaGraphNode_t memset_node = nullptr, first_kernel = nullptr;
  for (cudaGraphNode_t x : nodes) {
    cudaGraphNodeType t;
    CK(cudaGraphNodeGetType(x, &t));
    if (t == cudaGraphNodeTypeMemset && !memset_node) memset_node = x;
    if (t == cudaGraphNodeTypeKernel && !first_kernel) {
      // The kernel that depends on the memset: the chain's first.
      size_t nd = 0;
      CK(cudaGraphNodeGetDependencies(x, nullptr, nullptr, &nd));
      if (nd == 1) {
        cudaGraphNode_t dep;
        CK(cudaGraphNodeGetDependencies(x, &dep, nullptr, &nd));
        cudaGraphNodeType dt;
        CK(cudaGraphNodeGetType(dep, &dt));
        if (dt == cudaGraphNodeTypeMemset) first_kernel = x;
      }
    }
  }
  if (!memset_node || !first_kernel) {
    std::fprintf(stderr, "attach_stress: graph has no memset or first kernel\n");
    return 1;
  }
  cudaMemsetParams mp{};
  mp.dst = p;
  mp.value = 10;
  mp.elementSize = sizeof(int);
  mp.width = n;
  mp.height = 1;
  idle();
  CK(cudaGraphExecMemsetNodeSetParams(e, memset_node, &mp));
  int mul = 2, nn = n;
  void* args[] = {&p, &nn, &mul};
  cudaKernelNodeParams kp{};
  kp.func = reinterpret_cast<void*>(&scale_kernel);
  kp.gridDim = dim3(4);
  kp.blockDim = dim3(kBlock);
  kp.sharedMemBytes = 0;
  kp.kernelParams = args;
  CK(cudaGraphExecKernelNodeSetParams(e, first_kernel, &kp));
  replay(e, "version 3 (memset 10, first kernel scale x2)", 22, 22);
  // A setter that changes only an argument (same function, grid, block):
  // a version whose document shows the new argument value.
  mul = 3;
  idle();
  CK(cudaGraphExecKernelNodeSetParams(e, first_kernel, &kp));
  replay(e, "same shape, argument changed (x3)", 32, 32);
  CK(cudaGraphExecDestroy(e));
  CK(cudaGraphDestroy(g1));
  CK(cudaGraphDestroy(g2));
  CK(cudaFree(p));
  CK(cudaStreamDestroy(s));
  return wrong ? 1 : 0;
}

// One graph of `kernels` kernels run once; true when the result is right.
bool one_graph(int grid, int kernels) {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int* p = nullptr;
  const int n = grid * kBlock;
  CK(cudaMalloc(&p, n * sizeof(int)));
  cudaGraph_t g = capture_chain(s, p, grid, kernels, cudaStreamCaptureModeGlobal);
  cudaGraphExec_t e = nullptr;
  CK(cudaGraphInstantiate(&e, g, 0));
  CK(cudaGraphLaunch(e, s));
  CK(cudaStreamSynchronize(s));
  std::vector<int> h;
  read_back(p, n, h);
  CK(cudaGraphExecDestroy(e));
  CK(cudaGraphDestroy(g));
  CK(cudaFree(p));
  CK(cudaStreamDestroy(s));
  return all_equal(h, n, kernels);
}

int run_fork() {
  bool ok = one_graph(2, 3);
  std::printf("before fork: %s\n", ok ? "ok" : "WRONG");
  std::fflush(stdout);
  pid_t child = fork();
  if (child < 0) {
    std::perror("attach_stress: fork");
    return 3;
  }
  if (child == 0) std::exit(7);  // exit handlers run; no CUDA in the child
  int status = 0;
  waitpid(child, &status, 0);
  bool child_ok = WIFEXITED(status) && WEXITSTATUS(status) == 7;
  std::printf("child: %s (status %d)\n", child_ok ? "exited 7, ok" : "WRONG", status);
  bool after = one_graph(3, 2);
  std::printf("after fork: %s\n", after ? "ok" : "WRONG");
  return ok && child_ok && after ? 0 : 1;
}

int run_reset(bool handoff) {
  bool before = one_graph(2, 3);
  std::printf("before reset: %s\n", before ? "ok" : "WRONG");
  if (handoff) {
    // A graph instantiated, its template destroyed at once (an attached
    // graphscope may be walking it on its own thread, walks at destroy) and
    // the device reset right after, before anything waits for that walk.
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int* p = nullptr;
    CK(cudaMalloc(&p, 2 * kBlock * sizeof(int)));
    cudaGraph_t g = capture_chain(s, p, 2, 3, cudaStreamCaptureModeGlobal);
    cudaGraphExec_t e = nullptr;
    CK(cudaGraphInstantiate(&e, g, 0));
    CK(cudaGraphDestroy(g));
    std::printf("handed over, resetting\n");
  }
  CK(cudaDeviceReset());
  bool after = one_graph(3, 4);
  std::printf("after reset: %s\n", after ? "ok" : "WRONG");
  return before && after ? 5 : 1;
}

int run_kill() {
  bool a = one_graph(1, 2), b = one_graph(2, 3);
  std::printf("two graphs: %s; killing myself\n", a && b ? "ok" : "WRONG");
  std::fflush(stdout);
  raise(SIGKILL);
  return 1;
}

// What a server does: graphs at start-up, then replays for a long time.
// Prints the time per replay of one batch before and one after the pause
// (an attached graphscope may let go of CUPTI meanwhile).
int run_idle(int seconds) {
  constexpr int kKernels = 200, kReplays = 500, kGrid = 2;
  const int n = kGrid * kBlock;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int* p = nullptr;
  CK(cudaMalloc(&p, n * sizeof(int)));
  cudaGraph_t g = capture_chain(s, p, kGrid, kKernels, cudaStreamCaptureModeGlobal);
  cudaGraphExec_t e = nullptr;
  CK(cudaGraphInstantiate(&e, g, 0));
  CK(cudaGraphDestroy(g));
  std::vector<int> h;
  int wrong = 0;
  auto batch = [&](const char* when) {
    CK(cudaGraphLaunch(e, s));  // warm
    CK(cudaStreamSynchronize(s));
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < kReplays; ++r) CK(cudaGraphLaunch(e, s));
    CK(cudaStreamSynchronize(s));
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    read_back(p, n, h);
    const bool ok = all_equal(h, n, kKernels);
    std::printf("replays %s: %.1f us each: %s\n", when, us / kReplays, ok ? "ok" : "WRONG");
    wrong += !ok;
  };
  batch("before the pause");
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  batch("after the pause");
  CK(cudaGraphExecDestroy(e));
  CK(cudaFree(p));
  CK(cudaStreamDestroy(s));
  const bool second = one_graph(3, 4);
  std::printf("second graph: %s\n", second ? "ok" : "WRONG");
  // Idle again, then four threads begin graphs at once (an attached
  // graphscope that let go meanwhile is asked to take CUPTI back by all of
  // them together).
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  const int threads = run_threads(1);
  return wrong || !second || threads ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const int arg = argc > 2 ? std::atoi(argv[2]) : 0;
  if (mode == "threads") return run_threads(arg > 0 ? arg : 5);
  if (mode == "update") return run_update(arg > 0 ? arg : 3, argc > 3 ? std::atoi(argv[3]) : 0);
  if (mode == "fork") return run_fork();
  if (mode == "reset") return run_reset(arg == 1);
  if (mode == "kill") return run_kill();
  if (mode == "idle") return run_idle(arg > 0 ? arg : 2);
  std::fprintf(stderr, "usage: attach_stress threads|update|fork|reset|kill|idle [N]\n");
  return 2;
}
