// Walk + JSON of a 100k-node graph (target: at most 150 ms) and the whole
// dump (walk, JSON, write the file) against the anchor, cudaGraphDebugDotPrint
// of the same graph to a file (target: at least 10x faster), side by side in
// one run on the GPU machine. The graph is built with the explicit API in the
// shape of the recorded benchmark graph (fork, four branches, join, chained;
// a memset every 50 blocks), plus, with --pdl, programmatic edges.
//
//   bench_capture [NODES] [REPEATS] [OUTDIR]
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_util.h"
#include "capture/cuda_check.h"
#include "capture/driver_api.h"
#include "capture/origin.h"
#include "capture/walk.h"
#include "inspect/core/io.h"
#include "inspect/formats/graph_json.h"
#include "inspect/core/json_writer.h"

using namespace graphscope;

__global__ void scale(float* x, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
__global__ void add(float* y, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}

static float *d_a, *d_b;
static int N = 1 << 16;
static float factor = 1.0001f;

static cudaGraph_t make_graph(int target) {
  static void* a1[] = {&d_a, &N, &factor};
  static void* a2[] = {&d_b, &d_a, &N};
  cudaGraph_t g;
  GS_CUDA(cudaGraphCreate(&g, 0));
  cudaGraphNode_t prev = nullptr;
  int count = 0, block = 0;
  auto kp = [](void* f, void** args, unsigned grid, unsigned blk) {
    cudaKernelNodeParams p{};
    p.func = f;
    p.gridDim = dim3(grid);
    p.blockDim = dim3(blk);
    p.kernelParams = args;
    return p;
  };
  while (count < target) {
    if (count + 6 > target) {
      cudaKernelNodeParams p = kp((void*)scale, a1, 1, 32);
      cudaGraphNode_t n;
      GS_CUDA(cudaGraphAddKernelNode(&n, g, prev ? &prev : nullptr, prev ? 1 : 0, &p));
      prev = n;
      ++count;
      continue;
    }
    cudaGraphNode_t fork, br[4], join;
    cudaKernelNodeParams p = kp((void*)scale, a1, N / 256, 256);
    GS_CUDA(cudaGraphAddKernelNode(&fork, g, prev ? &prev : nullptr, prev ? 1 : 0, &p));
    for (int b = 0; b < 4; ++b) {
      if (block % 50 == 49 && b == 3) {
        cudaMemsetParams mp{};
        mp.dst = d_b;
        mp.elementSize = 4;
        mp.width = 1024;
        mp.height = 1;
        GS_CUDA(cudaGraphAddMemsetNode(&br[b], g, &fork, 1, &mp));
      } else {
        p = kp(b % 2 ? (void*)add : (void*)scale, b % 2 ? a2 : a1, N / 256 / (b + 1), 256);
        GS_CUDA(cudaGraphAddKernelNode(&br[b], g, &fork, 1, &p));
      }
    }
    p = kp((void*)add, a2, N / 512, 512);
    GS_CUDA(cudaGraphAddKernelNode(&join, g, br, 4, &p));
    prev = join;
    count += 6;
    ++block;
  }
  return g;
}

int main(int argc, char** argv) {
  int nodes = argc > 1 ? std::atoi(argv[1]) : 100000;
  int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  std::string dir = argc > 3 ? argv[3] : "/tmp";
  try {
    GS_CUDA(cudaMalloc(&d_a, N * sizeof(float)));
    GS_CUDA(cudaMalloc(&d_b, N * sizeof(float)));
    cudaGraph_t g = make_graph(nodes);
    cudaGraphExec_t exec;
    auto inst = bench::time_ms([&] { GS_CUDA(cudaGraphInstantiate(&exec, g, 0)); });
    uint32_t exec_id = capture::exec_graph_id(exec).value_or(0);
    std::vector<double> walk, json, pieces, dump, nv;
    size_t bytes = 0;
    for (int r = 0; r < reps; ++r) {
      GraphDocument doc;
      std::string text;
      walk.push_back(bench::time_ms([&] {
        doc = capture::walk_graph(g);
        capture::assign_exec_ids(doc, exec_id);
      }));
      json.push_back(bench::time_ms([&] { text = write_graph_json(doc); }));
      bytes = text.size();
      // The JSON as the dump writes it: in pieces, the node slices not joined.
      pieces.push_back(bench::time_ms([&] { (void)write_graph_json_pieces(doc); }));
      // The whole dump: walk, JSON, and the file written (atomically).
      dump.push_back(bench::time_ms([&] {
        GraphDocument d = capture::walk_graph(g);
        capture::assign_exec_ids(d, exec_id);
        write_graph_json_file(dir + "/bench_capture.json", d);
      }));
      nv.push_back(bench::time_ms(
          [&] { GS_CUDA(cudaGraphDebugDotPrint(g, (dir + "/bench_capture.dot").c_str(), cudaGraphDebugDotFlagsVerbose)); }));
    }
    // Where a walk's time goes: each per-node query alone over all nodes.
    size_t n = 0;
    GS_CUDA(cudaGraphGetNodes(g, nullptr, &n));
    std::vector<cudaGraphNode_t> hs(n);
    double t_nodes = bench::time_ms([&] { GS_CUDA(cudaGraphGetNodes(g, hs.data(), &n)); });
    double t_type = bench::time_ms([&] {
      for (auto h : hs) {
        cudaGraphNodeType t;
        GS_CUDA(cudaGraphNodeGetType(h, &t));
      }
    });
    double t_cupti = bench::time_ms([&] {
      for (auto h : hs) {
        uint64_t id;
        GS_CUPTI(cuptiGetGraphNodeId(reinterpret_cast<CUgraphNode>(h), &id));
      }
    });
    double t_deps = bench::time_ms([&] {
      cudaGraphNode_t d[16];
      cudaGraphEdgeData e[16];
      for (auto h : hs) {
        size_t k = 16;
        GS_CUDA(cudaGraphNodeGetDependencies(h, d, e, &k));
      }
    });
    const auto& api = capture::driver_api();
    double t_kparams = bench::time_ms([&] {
      for (auto h : hs) {
        CUDA_KERNEL_NODE_PARAMS p{};
        api.graph_kernel_node_get_params(reinterpret_cast<CUgraphNode>(h), &p);
      }
    });
    double t_cluster = bench::time_ms([&] {
      for (auto h : hs) {
        cudaLaunchAttributeValue v{};
        cudaGraphKernelNodeGetAttribute(h, cudaLaunchAttributeClusterDimension, &v);
      }
      (void)cudaGetLastError();
    });
    // The same three queries straight to the driver (what the walk uses).
    double d_type = -1, d_deps = -1, d_cluster = -1;
    if (api.graph_node_get_type && api.graph_node_get_dependencies && api.graph_kernel_node_get_attribute) {
      d_type = bench::time_ms([&] {
        for (auto h : hs) {
          CUgraphNodeType t;
          api.graph_node_get_type(reinterpret_cast<CUgraphNode>(h), &t);
        }
      });
      d_deps = bench::time_ms([&] {
        CUgraphNode d[16];
        CUgraphEdgeData e[16];
        for (auto h : hs) {
          size_t k = 16;
          api.graph_node_get_dependencies(reinterpret_cast<CUgraphNode>(h), d, e, &k);
        }
      });
      d_cluster = bench::time_ms([&] {
        for (auto h : hs) {
          CUkernelNodeAttrValue v{};
          api.graph_kernel_node_get_attribute(reinterpret_cast<CUgraphNode>(h), CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &v);
        }
      });
    }
    std::printf("through the driver's entry points (ms): GetType %.1f, GetDependencies %.1f, cluster attribute %.1f\n",
                d_type, d_deps, d_cluster);
    capture::WalkOptions lean;
    lean.details = false;
    double t_lean = bench::time_ms([&] { capture::walk_graph(g, lean); });
    std::printf("per-query cost over %zu nodes (ms): GetNodes %.1f, GetType %.1f, cuptiGetGraphNodeId %.1f, "
                "GetDependencies %.1f, kernel params %.1f, cluster attribute %.1f; walk without details %.1f\n",
                n, t_nodes, t_type, t_cupti, t_deps, t_kparams, t_cluster, t_lean);
    // The phases of whole walks (the timers cost a little themselves).
    {
      capture::WalkPhases ph;
      capture::WalkOptions timed;
      timed.phases = &ph;
      const int k = 3;
      for (int r = 0; r < k; ++r) capture::walk_graph(g, timed);
      std::printf("walk phases, mean of %d walks (ms):", k);
      for (int p = 0; p < capture::WalkPhases::phases; ++p)
        std::printf("%s %s %.1f", p ? "," : "", capture::WalkPhases::name(p), ph.ns[p] / 1e6 / k);
      std::printf("\n");
    }
    auto w = bench::stats(walk), j = bench::stats(json), d = bench::stats(dump), a = bench::stats(nv);
    std::printf("capture walk: %d nodes, JSON %.1f MB, instantiate %.0f ms, %d repeats\n", nodes, bytes / 1e6, inst,
                reps);
    std::printf("%-40s %9s %9s\n", "step", "best ms", "median");
    std::printf("%-40s %9.1f %9.1f\n", "walk_graph + exec ids", w.best, w.median);
    std::printf("%-40s %9.1f %9.1f\n", "write_graph_json", j.best, j.median);
    std::printf("%-40s %9.1f %9.1f\n", "walk + JSON", w.best + j.best, w.median + j.median);
    auto jp = bench::stats(pieces);
    std::printf("%-40s %9.1f %9.1f\n", "write_graph_json_pieces (formatting)", jp.best, jp.median);
    std::printf("%-40s %9.1f %9.1f  (target <= 100)\n", "walk + JSON in pieces", w.best + jp.best,
                w.median + jp.median);
    std::printf("%-40s %9.1f %9.1f\n", "whole dump (walk, JSON, write file)", d.best, d.median);
    std::printf("%-40s %9.1f %9.1f\n", "anchor: cudaGraphDebugDotPrint verbose", a.best, a.median);
    std::printf("%-40s %19.1fx  (target >= 15x)\n", "anchor / whole dump (medians)", a.median / d.median);
    // The walk as an attached graphscope makes it: with a CUPTI subscriber
    // whose origin callbacks are enabled (the walk's own queries are not
    // among them, but pass through CUPTI).
    if (capture::OriginRecorder::instance().subscribe()) {
      std::vector<double> sub;
      for (int r = 0; r < reps; ++r) sub.push_back(bench::time_ms([&] { capture::walk_graph(g); }));
      auto ss = bench::stats(sub);
      std::printf("%-40s %9.1f %9.1f\n", "walk_graph with a CUPTI subscriber", ss.best, ss.median);
    }
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "bench_capture: %s\n", e.what());
    return 4;
  }
}
