// walk_own_graph: captures a small graph on this process's own stream and
// walks it with graphscope::capture, printing its graphscope.graph/1 JSON.
#include <cuda_runtime_api.h>

#include <graphscope/capture/walk.h>
#include <graphscope/inspect/core/error.h>
#include <graphscope/inspect/formats/graph_json.h>

#include <cstdio>

int main() {
  cudaStream_t s;
  if (cudaStreamCreate(&s) != cudaSuccess) {
    std::fprintf(stderr, "walk_own_graph: no CUDA device\n");
    return 4;
  }
  void* buf = nullptr;
  cudaMalloc(&buf, 1 << 20);
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaMemsetAsync(buf, 0, 1 << 20, s);
  cudaMemsetAsync(buf, 1, 1 << 19, s);
  cudaStreamEndCapture(s, &g);
  try {
    std::fputs(graphscope::write_graph_json(graphscope::capture::walk_graph(g)).c_str(), stdout);
  } catch (const graphscope::Error& e) {
    std::fprintf(stderr, "walk_own_graph: %s\n", e.what());
    return static_cast<int>(e.code());
  }
  cudaGraphDestroy(g);
  cudaFree(buf);
  return 0;
}
