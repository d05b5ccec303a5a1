// Profiled replay against bare CUPTI tracing (target: at most 1.05x), side by
// side in one run on the GPU machine. One graph of tiny kernels (fork, four
// branches, join, chained) is replayed R times three ways, alternating:
//   plain      no tracing
//   bare       CUPTI CONCURRENT_KERNEL/MEMCPY/MEMCPY2/MEMSET with buffer callbacks
//              that only hand the buffers back: no record is looked at
//   graphscope lib/capture's ActivityCollector: the same kinds, every record
//              converted into the trace model
// Each timed from the first launch to the end of the synchronize (the replay
// window); the flush and graphscope's conversion after it are printed beside.
// CUPTI's buffer callbacks are registered once per process, so each of these
// ways runs in a process of its own; bench/replay_overhead.sh alternates them.
//
// Between processes the anchor itself drifts by 25-30%, more than the 5%
// to resolve. So a fourth way, `paired`, measures both in one process,
// round after round:
//   bare round        the kinds enabled with no collector running: the
//                     registered callbacks (the collector's) only recycle
//                     the buffers, no record is looked at
//   graphscope round  an ActivityCollector started and stopped around it
// in alternating order (bare first in even rounds, graphscope first in odd),
// and reports the median of the rounds' ratios with their spread.
//
//   bench_replay plain|bare|graphscope|paired [NODES] [REPLAYS] [ROUNDS]
#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_util.h"
#include "capture/activity.h"
#include "capture/cuda_check.h"

using namespace graphscope;

__global__ void tiny(float* x) {
  if (threadIdx.x == 0) x[blockIdx.x] += 1.f;
}

static float* d_x;

static cudaGraph_t make_graph(int target) {
  static void* args[] = {&d_x};
  cudaGraph_t g;
  GS_CUDA(cudaGraphCreate(&g, 0));
  cudaKernelNodeParams p{};
  p.func = (void*)tiny;
  p.gridDim = dim3(1);
  p.blockDim = dim3(32);
  p.kernelParams = args;
  cudaGraphNode_t prev = nullptr;
  for (int count = 0; count + 6 <= target; count += 6) {
    cudaGraphNode_t fork, br[4], join;
    GS_CUDA(cudaGraphAddKernelNode(&fork, g, prev ? &prev : nullptr, prev ? 1 : 0, &p));
    for (auto& b : br) GS_CUDA(cudaGraphAddKernelNode(&b, g, &fork, 1, &p));
    GS_CUDA(cudaGraphAddKernelNode(&join, g, br, 4, &p));
    prev = join;
  }
  return g;
}

// Bare CUPTI: buffers handed out and taken back untouched.
static void CUPTIAPI bare_request(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 8 << 20;
  *buffer = static_cast<uint8_t*>(aligned_alloc(8, *size));
  *max_records = 0;
}
static void CUPTIAPI bare_complete(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t) { free(buffer); }

// The kinds ActivityCollector enables (MEMCPY2: peer copies), so that the
// anchor traces exactly what graphscope traces.
static const CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                            CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET};

// Bare and graphscope rounds in one process (see the top).
template <typename Replay>
int paired(Replay& replay, int nodes, int replays, int rounds) {
  {
    capture::ActivityCollector warm;  // registers the collector's callbacks
    warm.start();
    replay();
    warm.stop();
  }
  auto bare_round = [&](double& window, double& after) {
    for (auto kind : kKinds) GS_CUPTI(cuptiActivityEnable(kind));
    window = bench::time_ms(replay);
    after = bench::time_ms([&] {
      for (auto kind : kKinds) GS_CUPTI(cuptiActivityDisable(kind));
      GS_CUPTI(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    });
  };
  size_t records = 0;
  std::vector<double> flush, drain, join, sort;
  auto graphscope_round = [&](double& window, double& after) {
    capture::ActivityCollector c;
    c.start();
    window = bench::time_ms(replay);
    after = bench::time_ms([&] { c.stop(); });
    records = c.trace().activities.size();
    const auto& st = c.stop_times();
    flush.push_back(st.flush), drain.push_back(st.drain), join.push_back(st.join), sort.push_back(st.sort);
  };
  std::vector<double> bare, gs, bare_after, gs_after, ratio, total_ratio;
  for (int k = 0; k < rounds; ++k) {
    double bw, ba, gw, ga;
    if (k % 2 == 0) bare_round(bw, ba), graphscope_round(gw, ga);
    else graphscope_round(gw, ga), bare_round(bw, ba);
    bare.push_back(bw), gs.push_back(gw), bare_after.push_back(ba), gs_after.push_back(ga);
    ratio.push_back(gw / bw);
    total_ratio.push_back((gw + ga) / (bw + ba));
  }
  auto b = bench::stats(bare), g = bench::stats(gs), r = bench::stats(ratio), t = bench::stats(total_ratio);
  // How sure the median is: a bootstrap of the rounds (2,000 resamples).
  std::vector<double> medians;
  std::mt19937 pick(1);
  std::vector<double> sample(ratio.size());
  for (int k = 0; k < 2000; ++k) {
    for (auto& x : sample) x = ratio[pick() % ratio.size()];
    medians.push_back(bench::stats(sample).median);
  }
  std::sort(medians.begin(), medians.end());
  std::sort(ratio.begin(), ratio.end());
  auto at = [&](double q) { return ratio[size_t(q * double(ratio.size() - 1) + 0.5)]; };
  std::printf("paired %d nodes x %d replays, %d rounds, %zu records a round\n", nodes, replays, rounds, records);
  std::printf("  replay window: bare CUPTI median %.1f ms, graphscope median %.1f ms\n", b.median, g.median);
  std::printf("  graphscope / bare, round by round: median %.3fx, quartiles %.3fx-%.3fx, min %.3fx, max %.3fx "
              "(target <= 1.05)\n", r.median, at(0.25), at(0.75), ratio.front(), ratio.back());
  std::printf("  95%% interval of that median (bootstrap): %.3fx-%.3fx\n", medians[50], medians[1949]);
  std::printf("  graphscope's stop(), medians: flush %.1f ms, converter finishing %.1f ms, joining %.1f ms, "
              "sorting %.1f ms\n", bench::stats(flush).median, bench::stats(drain).median, bench::stats(join).median,
              bench::stats(sort).median);
  std::printf("  with the flush and graphscope's conversion after the replays: bare %.1f ms, graphscope %.1f ms "
              "after; total ratio median %.3fx\n", bench::stats(bare_after).median, bench::stats(gs_after).median,
              t.median);
  return 0;
}

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "graphscope";
  int nodes = argc > 2 ? std::atoi(argv[2]) : 10000;
  int replays = argc > 3 ? std::atoi(argv[3]) : 20;
  int rounds = argc > 4 ? std::atoi(argv[4]) : 5;
  try {
    GS_CUDA(cudaMalloc(&d_x, 1024 * sizeof(float)));
    cudaGraph_t g = make_graph(nodes);
    cudaGraphExec_t exec;
    GS_CUDA(cudaGraphInstantiate(&exec, g, 0));
    cudaStream_t s;
    GS_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    auto replay = [&] {
      for (int r = 0; r < replays; ++r) GS_CUDA(cudaGraphLaunch(exec, s));
      GS_CUDA(cudaStreamSynchronize(s));
    };
    replay();  // warm up
    // The replay window (first launch to the end of the synchronize) with
    // tracing on, and the processing after it (disable, flush, conversion).
    std::vector<double> times, after;
    size_t records = 0;
    if (mode == "paired") return paired(replay, nodes, replays, rounds);
    if (mode == "bare") GS_CUPTI(cuptiActivityRegisterCallbacks(bare_request, bare_complete));
    for (int k = 0; k < rounds; ++k) {
      if (mode == "plain") {
        times.push_back(bench::time_ms(replay));
        after.push_back(0);
      } else if (mode == "bare") {
        for (auto kind : kKinds) GS_CUPTI(cuptiActivityEnable(kind));
        times.push_back(bench::time_ms(replay));
        after.push_back(bench::time_ms([&] {
          for (auto kind : kKinds) GS_CUPTI(cuptiActivityDisable(kind));
          GS_CUPTI(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
        }));
      } else {
        capture::ActivityCollector c;
        c.start();
        times.push_back(bench::time_ms(replay));
        after.push_back(bench::time_ms([&] { c.stop(); }));
        records = c.trace().activities.size();
      }
    }
    auto st = bench::stats(times), af = bench::stats(after);
    std::printf("%s %d nodes x %d replays: best %.1f ms, median %.1f ms, then %.1f ms flush/processing, %zu records\n",
                mode.c_str(), nodes, replays, st.best, st.median, af.median, records);
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "bench_replay: %s\n", e.what());
    return 4;
  }
}
