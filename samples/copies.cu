// copies: independent host-to-device copies, one per branch.
//
// Graph "copies" (--copies C, default 4; --mb M megabytes each, default 64):
// C memcpy HtoD nodes from pinned host buffers, each on its own branch of a
// fork from an empty start: no graph edge orders them. SPEC.md measured on an
// H100 that such copies run one after another, each on its own copy channel
// (real contention no edge explains): graphscope profile should call them
// blocking fake dependencies caused by the copy engine.
#include <cuda_runtime.h>

#include <vector>

#include "sample_util.h"

namespace {

struct State {
  long copies = 4, mb = 64;
  std::vector<float*> host, dev;
  std::vector<cudaStream_t> streams;
  cudaEvent_t fork = nullptr;
  std::vector<cudaEvent_t> joins;
};

void teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (!s) return;
  for (float* p : s->host) cudaFreeHost(p);
  for (float* p : s->dev) cudaFree(p);
  for (cudaStream_t t : s->streams) cudaStreamDestroy(t);
  for (cudaEvent_t e : s->joins) cudaEventDestroy(e);
  if (s->fork) cudaEventDestroy(s->fork);
  delete s;
}

int init(State* s, int argc, char** argv, char* err, size_t err_size) {
  const sample::Option opts[] = {{"copies", &s->copies, 1, 64}, {"mb", &s->mb, 1, 4096}};
  if (sample::parse_options(argc, argv, opts, err, err_size)) return 1;
  const size_t bytes = size_t(s->mb) << 20;
  for (long c = 0; c < s->copies; ++c) {
    float *h = nullptr, *d = nullptr;
    SAMPLE_CHECK(cudaMallocHost(&h, bytes));
    s->host.push_back(h);
    SAMPLE_CHECK(cudaMalloc(&d, bytes));
    s->dev.push_back(d);
    std::memset(h, 1 + int(c), bytes);
    cudaStream_t t;
    SAMPLE_CHECK(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking));
    s->streams.push_back(t);
    cudaEvent_t e;
    SAMPLE_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    s->joins.push_back(e);
  }
  SAMPLE_CHECK(cudaEventCreateWithFlags(&s->fork, cudaEventDisableTiming));
  return 0;
}

int enqueue(void* state, cudaStream_t stream, char* err, size_t err_size) {
  auto* s = static_cast<State*>(state);
  const size_t bytes = size_t(s->mb) << 20;
  SAMPLE_CHECK(cudaEventRecord(s->fork, stream));
  for (size_t c = 0; c < s->streams.size(); ++c) {
    SAMPLE_CHECK(cudaStreamWaitEvent(s->streams[c], s->fork, 0));
    SAMPLE_CHECK(cudaMemcpyAsync(s->dev[c], s->host[c], bytes, cudaMemcpyHostToDevice, s->streams[c]));
    SAMPLE_CHECK(cudaEventRecord(s->joins[c], s->streams[c]));
  }
  for (cudaEvent_t e : s->joins) SAMPLE_CHECK(cudaStreamWaitEvent(stream, e, 0));
  return 0;
}

const graphscope_graph kGraphs[] = {{"copies", enqueue}};
const graphscope_workload kWorkload = {
    GRAPHSCOPE_WORKLOAD_ABI,
    "copies",
    "--copies independent host-to-device copies of --mb MB each (default 4 x 64)",
    sample::setup_with<State, init, teardown>,
    teardown,
    kGraphs,
    1,
};

}  // namespace

extern "C" GRAPHSCOPE_EXPORT const graphscope_workload* graphscope_workload_v1(void) {
  return &kWorkload;
}
