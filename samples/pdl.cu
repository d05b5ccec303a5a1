// pdl: programmatic dependent launch in stream capture.
//
// Graph "pdl" (--n N floats, default 1 << 16), 7 kernel nodes, 8 edges:
//
//   pdl_primary ==P==> pdl_secondary --> pdl_producer --> pdl_early --> pdl_tail
//                                        pdl_producer ==P==> pdl_consumer --> pdl_tail
//                                        pdl_early ==L==> pdl_overlap --> pdl_tail
//
//   ==P==>  programmatic edge: type cudaGraphDependencyTypeProgrammatic,
//           from_port cudaGraphKernelNodePortProgrammatic (1). Made two ways:
//           * pdl_secondary is launched (cudaLaunchKernelExC) on the same
//             stream with cudaLaunchAttributeProgrammaticStreamSerialization;
//           * pdl_producer is launched with cudaLaunchAttributeProgrammaticEvent
//             (triggerAtBlockStart 0) recording an event that a second stream
//             waits on before launching pdl_consumer.
//           The upstream kernels call cudaTriggerProgrammaticLaunchCompletion,
//           the downstream ones cudaGridDependencySynchronize before reading.
//   ==L==>  launch-completion edge: from_port
//           cudaGraphKernelNodePortLaunchCompletion (2), and type
//           cudaGraphDependencyTypeDefault (0) as capture makes it (seen on an
//           H100, driver 580, CUDA 13.0; the explicit API would also accept
//           type programmatic on this port): pdl_early is launched
//           with cudaLaunchAttributeLaunchCompletionEvent recording an event
//           that a third stream waits on before launching pdl_overlap, which
//           touches none of pdl_early's data and may start once all of
//           pdl_early's blocks have begun.
//   -->     default edges (the two side streams join back through events).
//
// All three forms capture (checked on an H100 with CUDA 13.0): node order
// primary, secondary, producer, consumer, early, overlap, tail; edges
// primary->secondary {type 1, port 1}, secondary->producer,
// producer->consumer {type 1, port 1}, producer->early, early->overlap
// {type 0, port 2}, consumer->tail, early->tail, overlap->tail.
// It exists to test edge data: graphscope must show edge types and ports,
// not just that an edge exists. Needs compute capability 9.0.
#include <cuda_runtime.h>

#include "sample_util.h"

__global__ void pdl_primary(float* x, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
  cudaTriggerProgrammaticLaunchCompletion();
}
__global__ void pdl_secondary(float* y, const float* x, long n) {
  cudaGridDependencySynchronize();
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0.5f * x[i];
}
__global__ void pdl_producer(float* a, const float* y, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) a[i] = y[i] + 1.0f;
  cudaTriggerProgrammaticLaunchCompletion();
}
__global__ void pdl_consumer(float* b, const float* a, long n) {
  cudaGridDependencySynchronize();
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) b[i] = 2.0f * a[i];
}
__global__ void pdl_early(float* c, const float* a, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] - 1.0f;
}
__global__ void pdl_overlap(float* d, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) d[i] = 0.5f * d[i] + 1.0f;
}
__global__ void pdl_tail(float* out, const float* b, const float* c, const float* d, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = b[i] + c[i] + d[i];
}

namespace {

struct State {
  long n = 1L << 16;
  float *x = nullptr, *y = nullptr, *a = nullptr, *b = nullptr, *c = nullptr, *d = nullptr,
        *out = nullptr;
  cudaStream_t consumer_stream = nullptr, overlap_stream = nullptr;
  cudaEvent_t programmatic = nullptr, launch_completion = nullptr;
  cudaEvent_t join_consumer = nullptr, join_overlap = nullptr;
};

void teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (!s) return;
  float* bufs[] = {s->x, s->y, s->a, s->b, s->c, s->d, s->out};
  for (float* p : bufs) cudaFree(p);
  if (s->consumer_stream) cudaStreamDestroy(s->consumer_stream);
  if (s->overlap_stream) cudaStreamDestroy(s->overlap_stream);
  cudaEvent_t events[] = {s->programmatic, s->launch_completion, s->join_consumer, s->join_overlap};
  for (cudaEvent_t e : events)
    if (e) cudaEventDestroy(e);
  delete s;
}

int init(State* s, int argc, char** argv, char* err, size_t err_size) {
  const sample::Option opts[] = {{"n", &s->n, 1, 1L << 28}};
  if (sample::parse_options(argc, argv, opts, err, err_size)) return 1;
  int device = 0, major = 0;
  SAMPLE_CHECK(cudaGetDevice(&device));
  SAMPLE_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major < 9)
    return sample::fail(err, err_size, "programmatic dependent launch needs compute capability 9.0 or newer (device has %d.x)", major);
  float** bufs[] = {&s->x, &s->y, &s->a, &s->b, &s->c, &s->d, &s->out};
  for (float** p : bufs) {
    SAMPLE_CHECK(cudaMalloc(p, s->n * sizeof(float)));
    SAMPLE_CHECK(sample::fill_pattern(*p, s->n));
  }
  SAMPLE_CHECK(cudaStreamCreateWithFlags(&s->consumer_stream, cudaStreamNonBlocking));
  SAMPLE_CHECK(cudaStreamCreateWithFlags(&s->overlap_stream, cudaStreamNonBlocking));
  cudaEvent_t* events[] = {&s->programmatic, &s->launch_completion, &s->join_consumer,
                           &s->join_overlap};
  for (cudaEvent_t* e : events) SAMPLE_CHECK(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
  return 0;
}

cudaLaunchConfig_t launch_config(long n, cudaStream_t stream, cudaLaunchAttribute* attr) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(sample::blocks_for(n));
  cfg.blockDim = dim3(256);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = stream;
  cfg.attrs = attr;
  cfg.numAttrs = attr ? 1 : 0;
  return cfg;
}

int enqueue(void* state, cudaStream_t stream, char* err, size_t err_size) {
  auto* s = static_cast<State*>(state);
  const long n = s->n;
  const unsigned grid = sample::blocks_for(n);

  // 1. Programmatic stream serialization: primary ==P==> secondary.
  pdl_primary<<<grid, 256, 0, stream>>>(s->x, n);
  SAMPLE_CHECK_LAUNCH(pdl_primary);
  cudaLaunchAttribute serial{};
  serial.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  serial.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = launch_config(n, stream, &serial);
  {
    float* y = s->y;
    const float* x = s->x;
    void* args[] = {&y, &x, (void*)&n};
    SAMPLE_CHECK_AS(cudaLaunchKernelExC(&cfg, (const void*)pdl_secondary, args),
                    "cudaLaunchKernelExC(pdl_secondary, ProgrammaticStreamSerialization)");
  }

  // 2. Programmatic event: producer ==P==> consumer on another stream.
  cudaLaunchAttribute prog_event{};
  prog_event.id = cudaLaunchAttributeProgrammaticEvent;
  prog_event.val.programmaticEvent.event = s->programmatic;
  prog_event.val.programmaticEvent.flags = 0;
  prog_event.val.programmaticEvent.triggerAtBlockStart = 0;
  cfg = launch_config(n, stream, &prog_event);
  {
    float* a = s->a;
    const float* y = s->y;
    void* args[] = {&a, &y, (void*)&n};
    SAMPLE_CHECK_AS(cudaLaunchKernelExC(&cfg, (const void*)pdl_producer, args),
                    "cudaLaunchKernelExC(pdl_producer, ProgrammaticEvent)");
  }
  SAMPLE_CHECK(cudaStreamWaitEvent(s->consumer_stream, s->programmatic, 0));
  pdl_consumer<<<grid, 256, 0, s->consumer_stream>>>(s->b, s->a, n);
  SAMPLE_CHECK_LAUNCH(pdl_consumer);
  SAMPLE_CHECK(cudaEventRecord(s->join_consumer, s->consumer_stream));

  // 3. Launch-completion event: early ==L==> overlap on a third stream.
  cudaLaunchAttribute completion{};
  completion.id = cudaLaunchAttributeLaunchCompletionEvent;
  completion.val.launchCompletionEvent.event = s->launch_completion;
  completion.val.launchCompletionEvent.flags = 0;
  cfg = launch_config(n, stream, &completion);
  {
    float* c = s->c;
    const float* a = s->a;
    void* args[] = {&c, &a, (void*)&n};
    SAMPLE_CHECK_AS(cudaLaunchKernelExC(&cfg, (const void*)pdl_early, args),
                    "cudaLaunchKernelExC(pdl_early, LaunchCompletionEvent)");
  }
  SAMPLE_CHECK(cudaStreamWaitEvent(s->overlap_stream, s->launch_completion, 0));
  pdl_overlap<<<grid, 256, 0, s->overlap_stream>>>(s->d, n);
  SAMPLE_CHECK_LAUNCH(pdl_overlap);
  SAMPLE_CHECK(cudaEventRecord(s->join_overlap, s->overlap_stream));

  // Join both side streams back.
  SAMPLE_CHECK(cudaStreamWaitEvent(stream, s->join_consumer, 0));
  SAMPLE_CHECK(cudaStreamWaitEvent(stream, s->join_overlap, 0));
  pdl_tail<<<grid, 256, 0, stream>>>(s->out, s->b, s->c, s->d, n);
  SAMPLE_CHECK_LAUNCH(pdl_tail);
  return 0;
}

const graphscope_graph kGraphs[] = {{"pdl", enqueue}};
const graphscope_workload kWorkload = {
    GRAPHSCOPE_WORKLOAD_ABI,
    "pdl",
    "programmatic dependent launch: programmatic and launch-completion edges from capture",
    sample::setup_with<State, init, teardown>,
    teardown,
    kGraphs,
    1,
};

}  // namespace

extern "C" GRAPHSCOPE_EXPORT const graphscope_workload* graphscope_workload_v1(void) {
  return &kWorkload;
}
