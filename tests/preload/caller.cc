// A library that calls the CUDA runtime (shared libcudart.so) the way
// PyTorch's libraries do: the preload test (run.sh) loads it with
// RTLD_LOCAL, as Python loads extensions, or RTLD_GLOBAL. Without a GPU each
// call fails the same way with or without graphscope's preload library in
// front of it (but a destroy the injection library takes over, which
// succeeds); run.sh compares the results.
#include <cuda_runtime_api.h>

#include <cstdio>

extern "C" __attribute__((visibility("default"))) void gs_preload_calls() {
  cudaStream_t s = nullptr;
  cudaGraph_t g = nullptr;
  cudaGraphExec_t e = nullptr;
  std::printf("cudaStreamBeginCapture %d\n", int(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal)));
  std::printf("cudaGraphCreate %d\n", int(cudaGraphCreate(&g, 0)));
  std::printf("cudaGraphInstantiate %d\n", int(cudaGraphInstantiate(&e, g, 0)));
  std::printf("cudaGraphInstantiateWithFlags %d\n", int(cudaGraphInstantiateWithFlags(&e, g, 0)));
  cudaGraphInstantiateParams p = {};
  std::printf("cudaGraphInstantiateWithParams %d\n", int(cudaGraphInstantiateWithParams(&e, g, &p)));
  std::printf("cudaStreamBeginCaptureToGraph %d\n",
              int(cudaStreamBeginCaptureToGraph(s, g, nullptr, nullptr, 0, cudaStreamCaptureModeGlobal)));
  // Changes of an exec graph after instantiation.
  cudaGraphExecUpdateResultInfo info = {};
  std::printf("cudaGraphExecUpdate %d\n", int(cudaGraphExecUpdate(e, g, &info)));
  cudaKernelNodeParams kp = {};
  std::printf("cudaGraphExecKernelNodeSetParams %d\n",
              int(cudaGraphExecKernelNodeSetParams(e, nullptr, &kp)));
  std::printf(
      "cudaGraphExecMemcpyNodeSetParams1D %d\n",
      int(cudaGraphExecMemcpyNodeSetParams1D(e, nullptr, nullptr, nullptr, 4, cudaMemcpyDeviceToDevice)));
  std::printf("cudaGraphNodeSetEnabled %d\n", int(cudaGraphNodeSetEnabled(e, nullptr, 1)));
  // Walks at destroy: a launch, and two graphs destroyed, the first of which
  // the stand-in injection library takes over (main.cc).
  std::printf("cudaGraphLaunch %d\n", int(cudaGraphLaunch(reinterpret_cast<cudaGraphExec_t>(0x2000), s)));
  std::printf("cudaGraphDestroy taken %d\n", int(cudaGraphDestroy(reinterpret_cast<cudaGraph_t>(0x1000))));
  std::printf("cudaGraphDestroy other %d\n", int(cudaGraphDestroy(reinterpret_cast<cudaGraph_t>(0x3000))));
}
