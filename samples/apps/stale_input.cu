// stale_input: a native CUDA program whose graph reads an input the program
// has freed (issue 46, "stale graph inputs"). It knows nothing of graphscope;
// tests run it under `graphscope capture --exec`, with and without
// --liveness=error (tests/gpu/device_why.sh), and compare graphscope's
// findings with what it prints.
//
// Both modes allocate an input of N = 1<<20 floats in make_input, fill it,
// and capture on a non-blocking stream a graph of two nodes: the kernel
// scale(in, out, n, k), then a cudaMemcpyAsync device to device of out into
// out2. The graph is instantiated and replayed 3 times, out2 == in*k checked
// after each. Then:
//
//   stale_input ok     the input kept: refilled with other values by
//                      cudaMemcpy, replayed 2 more times, each checked
//   stale_input free   drop_input cudaFree's the input; reuse_memory
//                      cudaMalloc's a buffer of the same size (printing
//                      whether it got the same address) and fills it with
//                      other values; replayed 2 more times, each printing
//                      what out2 holds: the new buffer's values times k
//                      ("replay N read the reallocated buffer: yes") means
//                      the replay read memory the program freed
//   stale_input free_idle   the same after 3 s without a new graph (an
//                      attached graphscope rests meanwhile: the free and
//                      the allocation reach it through its preload library)
//
// One line per replay; a last line `replays R`, the replays that launched.
// Exit codes: 0 done (in free mode whatever the stale replays read), 1 wrong
// result (a replay while the input is live disagrees with in*k), 2 usage,
// 3 CUDA error, 4 cudaGraphLaunch refused a replay (graphscope's
// --liveness=error does so for a graph that reads freed memory): it prints
// `replay N: cudaGraphLaunch failed: <cudaGetErrorString>`, then `replays R`.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <string>
#include <vector>

#define CK(call)                                                                             \
  do {                                                                                       \
    cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "stale_input: %s: %s (line %d)\n", #call, cudaGetErrorString(e_), \
                   __LINE__);                                                                \
      std::exit(3);                                                                          \
    }                                                                                        \
  } while (0)

// out[i] = in[i] * k; one thread per element.
__global__ void scale(const float* in, float* out, int n, float k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * k;
}

namespace {

constexpr int kN = 1 << 20;
constexpr int kBlock = 256;
constexpr float kScale = 2.0f;

// Small integers, exact in float and after scaling by 2.
std::vector<float> values(int seed) {
  std::vector<float> h(kN);
  for (int i = 0; i < kN; ++i) h[i] = static_cast<float>((i * 7 + seed) % 1000);
  return h;
}

void fill(float* d, const std::vector<float>& h) {
  CK(cudaMemcpy(d, h.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
}

// True when d holds src * kScale, element for element.
bool holds_scaled(const std::vector<float>& d, const std::vector<float>& src) {
  for (int i = 0; i < kN; ++i)
    if (d[i] != src[i] * kScale) return false;
  return true;
}

}  // namespace

// The allocation, the free and the reuse each in a function of their own
// (not inlined, outside the anonymous namespace) so that the host stacks
// graphscope records name them.
__attribute__((noinline)) float* make_input(const std::vector<float>& h) {
  float* in = nullptr;
  CK(cudaMalloc(&in, kN * sizeof(float)));
  fill(in, h);
  return in;
}

__attribute__((noinline)) void drop_input(float* in) { CK(cudaFree(in)); }

__attribute__((noinline)) float* reuse_memory(const std::vector<float>& h) {
  float* p = nullptr;
  CK(cudaMalloc(&p, kN * sizeof(float)));
  fill(p, h);
  return p;
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (argc != 2 || (mode != "ok" && mode != "free" && mode != "free_idle")) {
    std::fprintf(stderr, "usage: stale_input ok|free|free_idle\n");
    return 2;
  }
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const std::vector<float> first = values(0), second = values(500);
  float* in = make_input(first);
  float *out = nullptr, *out2 = nullptr;
  CK(cudaMalloc(&out, kN * sizeof(float)));
  CK(cudaMalloc(&out2, kN * sizeof(float)));

  cudaGraph_t g = nullptr;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  scale<<<(kN + kBlock - 1) / kBlock, kBlock, 0, s>>>(in, out, kN, kScale);
  CK(cudaGetLastError());
  CK(cudaMemcpyAsync(out2, out, kN * sizeof(float), cudaMemcpyDeviceToDevice, s));
  CK(cudaStreamEndCapture(s, &g));
  cudaGraphExec_t e = nullptr;
  CK(cudaGraphInstantiate(&e, g, 0));
  std::printf("graph: scale(in %p, out %p, n %d, k %g), memcpy out -> out2 %p\n",
              static_cast<void*>(in), static_cast<void*>(out), kN, kScale, static_cast<void*>(out2));

  int replays = 0, wrong = 0;
  std::vector<float> h(kN);
  // One replay; false when cudaGraphLaunch refused it.
  auto replay = [&]() {
    cudaError_t err = cudaGraphLaunch(e, s);
    if (err != cudaSuccess) {
      std::printf("replay %d: cudaGraphLaunch failed: %s\n", replays + 1, cudaGetErrorString(err));
      std::printf("replays %d\n", replays);
      return false;
    }
    ++replays;
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(h.data(), out2, kN * sizeof(float), cudaMemcpyDeviceToHost));
    return true;
  };
  auto checked = [&](const std::vector<float>& src, const char* what) {
    if (!replay()) return false;
    const bool ok = holds_scaled(h, src);
    std::printf("replay %d (%s): out2 == in*k: %s\n", replays, what, ok ? "ok" : "WRONG");
    wrong += !ok;
    return true;
  };

  for (int r = 0; r < 3; ++r)
    if (!checked(first, "input live")) return 4;

  if (mode == "ok") {
    fill(in, second);  // the same buffer, other values: what the graph should read
    for (int r = 0; r < 2; ++r)
      if (!checked(second, "input refilled")) return 4;
  } else {
    // free_idle: 3 s without a new graph first, as a server idle between
    // requests (an attached graphscope lets go of CUPTI after 2 s).
    if (mode == "free_idle") sleep(3);
    const void* old = in;
    drop_input(in);
    in = nullptr;
    float* reused = reuse_memory(second);
    std::printf("reuse_memory: new buffer %p, the freed input's address: %s\n",
                static_cast<void*>(reused), static_cast<const void*>(reused) == old ? "yes" : "no");
    for (int r = 0; r < 2; ++r) {
      if (!replay()) return 4;
      const bool now = holds_scaled(h, second), before = holds_scaled(h, first);
      std::printf("replay %d read the reallocated buffer: %s (out2[1] = %g; %s)\n", replays,
                  now ? "yes" : "no", h[1],
                  now ? "the new values times k" : before ? "the freed input's values times k" : "other values");
    }
    CK(cudaFree(reused));
  }
  std::printf("replays %d\n", replays);
  CK(cudaGraphExecDestroy(e));
  CK(cudaGraphDestroy(g));
  if (in) CK(cudaFree(in));
  CK(cudaFree(out));
  CK(cudaFree(out2));
  CK(cudaStreamDestroy(s));
  return wrong ? 1 : 0;
}
