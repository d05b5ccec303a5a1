// What a CUPTI subscriber costs graph replays, and what gives it back
// (issue 17: "the application's own time per replay unchanged";
// BENCHMARKS.md, "Tenth pass"). One process steps through CUPTI's states and
// makes a graph of KERNELS tiny kernels in each; at each step it times the
// graph made first and the one made at that step: a replay queued behind
// others (median of 3 batches of REPLAYS launches), the launch call alone
// (the host's part of those), and a replay waited for alone (launch +
// synchronize, as a server's decode step; median of REPLAYS), and counts the
// node-created and exec-created callbacks the step's capture brought.
//
//   replay_subscriber [KERNELS] [REPLAYS]
//
// Steps: no CUPTI; subscribed (exec-created and node-created callbacks on);
// unsubscribed; cuptiFinalize; subscribed again; unsubscribed and finalized
// on another thread; subscribed again; unsubscribed and finalized.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#define CK(call)                                                                                   \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "replay_subscriber: %s: %s (line %d)\n", #call, cudaGetErrorString(e_), \
                   __LINE__);                                                                      \
      std::exit(3);                                                                                \
    }                                                                                              \
  } while (0)
#define CU(call)                                                                 \
  do {                                                                           \
    CUptiResult r_ = (call);                                                     \
    if (r_ != CUPTI_SUCCESS) {                                                   \
      const char* s_ = nullptr;                                                  \
      cuptiGetResultString(r_, &s_);                                             \
      std::fprintf(stderr, "replay_subscriber: %s: %s\n", #call, s_ ? s_ : "?"); \
      std::exit(3);                                                              \
    }                                                                            \
  } while (0)

__global__ void add_one(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}

namespace {

std::atomic<int> nodes_made{0}, execs_made{0};
void CUPTIAPI counting(void*, CUpti_CallbackDomain d, CUpti_CallbackId id, const void*) {
  if (d != CUPTI_CB_DOMAIN_RESOURCE) return;
  if (id == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) ++nodes_made;
  if (id == CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED) ++execs_made;
}

void subscribe(CUpti_SubscriberHandle& h) {
  CU(cuptiSubscribe(&h, counting, nullptr));
  CU(cuptiEnableCallback(1, h, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED));
  CU(cuptiEnableCallback(1, h, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED));
}

cudaGraphExec_t make_graph(cudaStream_t s, int* p, int n, int kernels) {
  cudaGraph_t g = nullptr;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int k = 0; k < kernels; ++k) add_one<<<(n + 63) / 64, 64, 0, s>>>(p, n);
  CK(cudaStreamEndCapture(s, &g));
  cudaGraphExec_t e = nullptr;
  CK(cudaGraphInstantiate(&e, g, 0));
  CK(cudaGraphDestroy(g));
  return e;
}

struct Times {
  double replay, call, single;
};

// Us a replay queued behind others and us a launch call (the host's part;
// medians of 3 batches of `replays`), and us a replay waited for alone
// (launch + synchronize, as a server's decode step; median of `replays`).
Times time_replays(cudaGraphExec_t e, cudaStream_t s, int replays) {
  std::vector<double> batches, calls, singles;
  CK(cudaGraphLaunch(e, s));
  CK(cudaStreamSynchronize(s));
  for (int b = 0; b < 3; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < replays; ++r) CK(cudaGraphLaunch(e, s));
    const auto t1 = std::chrono::steady_clock::now();
    CK(cudaStreamSynchronize(s));
    const auto t2 = std::chrono::steady_clock::now();
    batches.push_back(std::chrono::duration<double, std::micro>(t2 - t0).count() / replays);
    calls.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / replays);
  }
  for (int r = 0; r < replays; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    CK(cudaGraphLaunch(e, s));
    CK(cudaStreamSynchronize(s));
    singles.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  for (auto* v : {&batches, &calls, &singles}) std::sort(v->begin(), v->end());
  return {batches[1], calls[1], singles[singles.size() / 2]};
}

}  // namespace

int main(int argc, char** argv) {
  const int kernels = argc > 1 ? std::atoi(argv[1]) : 200, replays = argc > 2 ? std::atoi(argv[2]) : 500;
  const int n = 128;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int* p = nullptr;
  CK(cudaMalloc(&p, n * sizeof(int)));
  CUpti_SubscriberHandle sub = nullptr;
  struct Step {
    const char* name;
    void (*act)(CUpti_SubscriberHandle&);
  };
  const Step steps[] = {
      {"none", [](CUpti_SubscriberHandle&) {}},
      {"subscribed", [](CUpti_SubscriberHandle& h) { subscribe(h); }},
      {"unsubscribed", [](CUpti_SubscriberHandle& h) { CU(cuptiUnsubscribe(h)); }},
      {"finalized", [](CUpti_SubscriberHandle&) { CU(cuptiFinalize()); }},
      {"again subscr.", [](CUpti_SubscriberHandle& h) { subscribe(h); }},
      {"final. (thr.)",
       [](CUpti_SubscriberHandle& h) {
         std::thread([&h] {
           CU(cuptiUnsubscribe(h));
           CU(cuptiFinalize());
         }).join();
       }},
      {"again subscr.", [](CUpti_SubscriberHandle& h) { subscribe(h); }},
      {"unsub.+final.",
       [](CUpti_SubscriberHandle& h) {
         CU(cuptiUnsubscribe(h));
         CU(cuptiFinalize());
       }},
  };
  std::vector<cudaGraphExec_t> graphs;
  std::printf(
      "%d kernels a graph; us: the step itself; a replay queued (median of 3 x %d), a launch call, a replay "
      "alone (launch + synchronize), for the graph made first and the one made at this step\n",
      kernels, replays);
  std::printf("%-14s %9s %7s %7s   %7s %7s %7s   %7s %7s %7s\n", "step", "step us", "nodes", "execs",
              "queued", "call", "alone", "queued", "call", "alone");
  for (const Step& st : steps) {
    const auto t0 = std::chrono::steady_clock::now();
    st.act(sub);
    const double step_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    nodes_made = 0;
    execs_made = 0;
    graphs.push_back(make_graph(s, p, n, kernels));
    const int nodes = nodes_made, execs = execs_made;
    const Times a = time_replays(graphs.front(), s, replays), b = time_replays(graphs.back(), s, replays);
    std::printf("%-14s %9.1f %7d %7d   %7.1f %7.1f %7.1f   %7.1f %7.1f %7.1f\n", st.name, step_us, nodes,
                execs, a.replay, a.call, a.single, b.replay, b.call, b.single);
    std::fflush(stdout);
  }
  for (cudaGraphExec_t e : graphs) CK(cudaGraphExecDestroy(e));
  CK(cudaFree(p));
  return 0;
}
