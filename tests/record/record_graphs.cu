// record_graphs: builds a set of CUDA graphs covering every node type that
// graphscope's readers must understand, and writes for each one what the CUDA
// runtime itself says about it:
//   NAME.dot          cudaGraphDebugDotPrint, flags 0 (the default picture)
//   NAME.verbose.dot  cudaGraphDebugDotPrint, cudaGraphDebugDotFlagsVerbose
//   NAME.truth.json   node list (CUPTI graph/node ids, cudaGraphNodeGetType,
//                     cudaFuncGetName), edge list with edge data, read through
//                     the graph API: the ground truth the DOT readers are
//                     tested against.
// It runs on the GPU machine only (tests/record/run-on-device.sh). The files it
// writes are kept in tests/data/ as recordings; nothing here is hand-written.
//
//   record_graphs OUTDIR [--big N]
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#define CK(call)                                                              \
  do {                                                                        \
    cudaError_t e_ = (call);                                                  \
    if (e_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,      \
                   cudaGetErrorString(e_));                                   \
      std::exit(1);                                                           \
    }                                                                         \
  } while (0)
#define CKP(call)                                                             \
  do {                                                                        \
    CUptiResult r_ = (call);                                                  \
    if (r_ != CUPTI_SUCCESS) {                                                \
      const char* s_ = nullptr;                                               \
      cuptiGetResultString(r_, &s_);                                          \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, s_); \
      std::exit(1);                                                           \
    }                                                                         \
  } while (0)

__global__ void scale(float* x, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
__global__ void add(float* y, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}
namespace ns {
template <typename T>
__global__ void fill(T* x, int n, T v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}
}  // namespace ns
__global__ void set_if(cudaGraphConditionalHandle h, const float* x) {
  if (threadIdx.x == 0 && blockIdx.x == 0) cudaGraphSetConditional(h, x[0] > 0.f ? 1u : 0u);
}
__global__ void count_down(cudaGraphConditionalHandle h, int* counter) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    int c = --(*counter);
    cudaGraphSetConditional(h, c > 0 ? 1u : 0u);
  }
}
__global__ void pdl_primary(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.f;
  cudaTriggerProgrammaticLaunchCompletion();
}
__global__ void pdl_secondary(float* y, const float* x, int n) {
  cudaGridDependencySynchronize();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.f * x[i];
}

static void host_fn(void* p) { ++*static_cast<int*>(p); }

static const int N = 1 << 16;
static float *d_a, *d_b, *d_c, *h_a;
static int* d_counter;
static int host_counter;

static const char* type_name(cudaGraphNodeType t) {
  switch (t) {
    case cudaGraphNodeTypeKernel: return "kernel";
    case cudaGraphNodeTypeMemcpy: return "memcpy";
    case cudaGraphNodeTypeMemset: return "memset";
    case cudaGraphNodeTypeHost: return "host";
    case cudaGraphNodeTypeGraph: return "child_graph";
    case cudaGraphNodeTypeEmpty: return "empty";
    case cudaGraphNodeTypeWaitEvent: return "wait_event";
    case cudaGraphNodeTypeEventRecord: return "event_record";
    case cudaGraphNodeTypeExtSemaphoreSignal: return "ext_semas_signal";
    case cudaGraphNodeTypeExtSemaphoreWait: return "ext_semas_wait";
    case cudaGraphNodeTypeMemAlloc: return "mem_alloc";
    case cudaGraphNodeTypeMemFree: return "mem_free";
    case cudaGraphNodeTypeConditional: return "conditional";
    default: return "unknown";
  }
}

struct CondBody {
  cudaGraphNode_t node;
  int type;
  cudaGraph_t body;
};
static std::vector<CondBody> g_cond;

// Writes one graph (and, recursively, its child and conditional body graphs)
// as JSON objects into f.
static void write_truth_graph(FILE* f, cudaGraph_t g, int depth) {
  uint32_t gid = 0;
  CKP(cuptiGetGraphId(g, &gid));
  size_t n = 0;
  CK(cudaGraphGetNodes(g, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  if (n) CK(cudaGraphGetNodes(g, nodes.data(), &n));
  std::fprintf(f, "{\"graph_id\": %u, \"nodes\": [", gid);
  for (size_t i = 0; i < n; ++i) {
    uint64_t nid = 0;
    CKP(cuptiGetGraphNodeId(nodes[i], &nid));
    cudaGraphNodeType t;
    CK(cudaGraphNodeGetType(nodes[i], &t));
    std::fprintf(f, "%s\n  {\"node_id\": %llu, \"local_id\": %llu, \"type\": \"%s\"", i ? "," : "",
                 (unsigned long long)nid, (unsigned long long)(nid & 0xffffffffu), type_name(t));
    if (t == cudaGraphNodeTypeKernel) {
      cudaKernelNodeParams p;
      CK(cudaGraphKernelNodeGetParams(nodes[i], &p));
      const char* name = nullptr;
      CK(cudaFuncGetName(&name, p.func));
      std::fprintf(f, ", \"kernel_name\": \"%s\", \"grid\": [%u, %u, %u], \"block\": [%u, %u, %u], \"shared\": %u",
                   name, p.gridDim.x, p.gridDim.y, p.gridDim.z, p.blockDim.x, p.blockDim.y,
                   p.blockDim.z, p.sharedMemBytes);
    } else if (t == cudaGraphNodeTypeGraph) {
      cudaGraph_t child;
      CK(cudaGraphChildGraphNodeGetGraph(nodes[i], &child));
      std::fprintf(f, ", \"child\": ");
      write_truth_graph(f, child, depth + 1);
    } else if (t == cudaGraphNodeTypeConditional) {
      // CUDA 13.0 has no query for a conditional node's bodies: the recorder
      // remembers them from creation.
      std::fprintf(f, ", \"bodies\": [");
      int nb = 0;
      for (auto& c : g_cond)
        if (c.node == nodes[i]) {
          std::fprintf(f, "%s\"cond_type\": %d, \"graph\": ", nb++ ? "}, {" : "{", c.type);
          write_truth_graph(f, c.body, depth + 1);
        }
      std::fprintf(f, "%s]", nb ? "}" : "");
    }
    std::fprintf(f, "}");
  }
  std::fprintf(f, "],\n \"edges\": [");
  size_t ne = 0;
  CK(cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &ne));
  std::vector<cudaGraphNode_t> from(ne), to(ne);
  std::vector<cudaGraphEdgeData> data(ne);
  if (ne) CK(cudaGraphGetEdges(g, from.data(), to.data(), data.data(), &ne));
  for (size_t i = 0; i < ne; ++i) {
    uint64_t a = 0, b = 0;
    CKP(cuptiGetGraphNodeId(from[i], &a));
    CKP(cuptiGetGraphNodeId(to[i], &b));
    std::fprintf(f, "%s\n  {\"from\": %llu, \"to\": %llu, \"type\": %u, \"from_port\": %u, \"to_port\": %u}",
                 i ? "," : "", (unsigned long long)(a & 0xffffffffu),
                 (unsigned long long)(b & 0xffffffffu), data[i].type, data[i].from_port,
                 data[i].to_port);
  }
  std::fprintf(f, "]}");
}

static std::string g_out, g_device, g_date;
static int g_driver = 0, g_runtime = 0;

static void record(const char* name, cudaGraph_t g, bool small = true) {
  std::string base = g_out + "/" + name;
  CK(cudaGraphDebugDotPrint(g, (base + ".dot").c_str(), 0));
  CK(cudaGraphDebugDotPrint(g, (base + ".verbose.dot").c_str(), cudaGraphDebugDotFlagsVerbose));
  // Instantiate once, so the recording also proves the graph is valid.
  cudaGraphExec_t exec;
  CK(cudaGraphInstantiate(&exec, g, 0));
  uint32_t exec_id = 0;
  CKP(cuptiGetGraphExecId(exec, &exec_id));
  CK(cudaGraphLaunch(exec, 0));
  CK(cudaStreamSynchronize(0));
  if (small) {
    FILE* f = std::fopen((base + ".truth.json").c_str(), "w");
    std::fprintf(f,
                 "{\"recorded_by\": \"tests/record/record_graphs.cu\", \"graph\": \"%s\", "
                 "\"device\": \"%s\", \"driver_version\": %d, \"runtime_version\": %d, "
                 "\"date\": \"%s\", \"exec_graph_id\": %u,\n \"root\": ",
                 name, g_device.c_str(), g_driver, g_runtime, g_date.c_str(), exec_id);
    write_truth_graph(f, g, 0);
    std::fprintf(f, "}\n");
    std::fclose(f);
  }
  CK(cudaGraphExecDestroy(exec));
  std::printf("recorded %s\n", name);
}

static cudaKernelNodeParams kparams(void* func, void** args, unsigned grid, unsigned block) {
  cudaKernelNodeParams p{};
  p.func = func;
  p.gridDim = dim3(grid);
  p.blockDim = dim3(block);
  p.kernelParams = args;
  return p;
}

// Fork-join over four streams by stream capture.
static cudaGraph_t make_forkjoin() {
  cudaStream_t s[4];
  cudaEvent_t fork, join[3];
  for (auto& x : s) CK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
  CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  for (auto& e : join) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  cudaGraph_t g;
  CK(cudaStreamBeginCapture(s[0], cudaStreamCaptureModeGlobal));
  ns::fill<float><<<N / 256, 256, 0, s[0]>>>(d_a, N, 1.f);
  CK(cudaEventRecord(fork, s[0]));
  for (int b = 1; b < 4; ++b) {
    CK(cudaStreamWaitEvent(s[b], fork));
    scale<<<N / 256, 256, 0, s[b]>>>(d_a + b, N - 4, 1.5f);
    add<<<N / 128, 128, 512, s[b]>>>(d_b + b, d_a, N - 4);
    CK(cudaEventRecord(join[b - 1], s[b]));
  }
  scale<<<N / 256, 256, 0, s[0]>>>(d_c, N, 2.f);
  for (auto& e : join) CK(cudaStreamWaitEvent(s[0], e));
  add<<<dim3(16, 4, 1), dim3(32, 8, 1), 0, s[0]>>>(d_c, d_b, N);
  CK(cudaStreamEndCapture(s[0], &g));
  return g;
}

// Memcpy, memset, host function and kernels by stream capture, plus event
// record/wait nodes (external events in capture).
static cudaGraph_t make_mixed() {
  cudaStream_t s, t;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking));
  cudaEvent_t ev, fork;
  CK(cudaEventCreate(&ev));
  CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  cudaGraph_t g;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CK(cudaMemcpyAsync(d_a, h_a, N * sizeof(float), cudaMemcpyHostToDevice, s));
  CK(cudaMemsetAsync(d_b, 0, N * sizeof(float), s));
  CK(cudaEventRecord(fork, s));
  CK(cudaStreamWaitEvent(t, fork));
  CK(cudaMemsetAsync(d_c, 0x7f, 4096, t));
  CK(cudaEventRecordWithFlags(ev, s, cudaEventRecordExternal));
  add<<<N / 256, 256, 0, s>>>(d_b, d_a, N);
  CK(cudaLaunchHostFunc(s, host_fn, &host_counter));
  CK(cudaStreamWaitEvent(s, ev, cudaEventWaitExternal));
  CK(cudaEventRecord(fork, t));
  CK(cudaStreamWaitEvent(s, fork));
  CK(cudaMemcpyAsync(h_a, d_b, N * sizeof(float), cudaMemcpyDeviceToHost, s));
  CK(cudaMemcpyAsync(d_c, d_b, 1024, cudaMemcpyDeviceToDevice, s));
  CK(cudaStreamEndCapture(s, &g));
  return g;
}

// Explicit API: empty node, host node, child graph holding a child graph.
static cudaGraph_t make_child() {
  static void* a1[] = {&d_a, (void*)&N, nullptr};
  static float two = 2.f;
  a1[2] = &two;
  static void* a2[] = {&d_b, &d_a, (void*)&N};
  cudaGraph_t inner, mid, g;
  CK(cudaGraphCreate(&inner, 0));
  cudaGraphNode_t i0, i1;
  cudaKernelNodeParams p = kparams((void*)scale, a1, N / 256, 256);
  CK(cudaGraphAddKernelNode(&i0, inner, nullptr, 0, &p));
  p = kparams((void*)add, a2, N / 256, 256);
  CK(cudaGraphAddKernelNode(&i1, inner, &i0, 1, &p));
  CK(cudaGraphCreate(&mid, 0));
  cudaGraphNode_t m0, m1;
  CK(cudaGraphAddChildGraphNode(&m0, mid, nullptr, 0, inner));
  p = kparams((void*)scale, a1, N / 128, 128);
  CK(cudaGraphAddKernelNode(&m1, mid, &m0, 1, &p));
  CK(cudaGraphCreate(&g, 0));
  cudaGraphNode_t root, c1, c2, h, e;
  CK(cudaGraphAddEmptyNode(&root, g, nullptr, 0));
  CK(cudaGraphAddChildGraphNode(&c1, g, &root, 1, mid));
  CK(cudaGraphAddChildGraphNode(&c2, g, &root, 1, inner));
  cudaHostNodeParams hp{host_fn, &host_counter};
  cudaGraphNode_t deps[2] = {c1, c2};
  CK(cudaGraphAddHostNode(&h, g, deps, 2, &hp));
  CK(cudaGraphAddEmptyNode(&e, g, &h, 1));
  return g;
}

// Conditional nodes: an if with one body and a while loop counting down.
static cudaGraph_t make_conditional() {
  cudaGraph_t g;
  CK(cudaGraphCreate(&g, 0));
  cudaGraphConditionalHandle hif, hwhile;
  CK(cudaGraphConditionalHandleCreate(&hif, g, 0, 0));
  CK(cudaGraphConditionalHandleCreate(&hwhile, g, 1, cudaGraphCondAssignDefault));
  static void* sa[2];
  sa[0] = &hif;
  sa[1] = &d_a;
  cudaGraphNode_t set, cif, reset, cwhile;
  cudaKernelNodeParams p = kparams((void*)set_if, sa, 1, 32);
  CK(cudaGraphAddKernelNode(&set, g, nullptr, 0, &p));
  cudaGraphNodeParams cp{};
  cp.type = cudaGraphNodeTypeConditional;
  cp.conditional.handle = hif;
  cp.conditional.type = cudaGraphCondTypeIf;
  cp.conditional.size = 1;
  CK(cudaGraphAddNode(&cif, g, &set, nullptr, 1, &cp));
  g_cond.push_back({cif, (int)cp.conditional.type, cp.conditional.phGraph_out[0]});
  cudaGraph_t body = cp.conditional.phGraph_out[0];
  static void* a1[3];
  static float half = 0.5f;
  a1[0] = &d_b;
  a1[1] = (void*)&N;
  a1[2] = &half;
  cudaGraphNode_t b0, b1;
  p = kparams((void*)scale, a1, N / 256, 256);
  CK(cudaGraphAddKernelNode(&b0, body, nullptr, 0, &p));
  static void* a2[] = {&d_c, &d_b, (void*)&N};
  p = kparams((void*)add, a2, N / 256, 256);
  CK(cudaGraphAddKernelNode(&b1, body, &b0, 1, &p));
  cudaMemsetParams mp{};
  mp.dst = d_counter;
  mp.value = 3;
  mp.elementSize = 4;
  mp.width = 1;
  mp.height = 1;
  CK(cudaGraphAddMemsetNode(&reset, g, &cif, 1, &mp));
  cudaGraphNodeParams wp{};
  wp.type = cudaGraphNodeTypeConditional;
  wp.conditional.handle = hwhile;
  wp.conditional.type = cudaGraphCondTypeWhile;
  wp.conditional.size = 1;
  CK(cudaGraphAddNode(&cwhile, g, &reset, nullptr, 1, &wp));
  g_cond.push_back({cwhile, (int)wp.conditional.type, wp.conditional.phGraph_out[0]});
  static void* ca[2];
  ca[0] = &hwhile;
  ca[1] = &d_counter;
  cudaGraphNode_t w0;
  p = kparams((void*)count_down, ca, 1, 32);
  CK(cudaGraphAddKernelNode(&w0, wp.conditional.phGraph_out[0], nullptr, 0, &p));
  return g;
}

// cudaMallocAsync / cudaFreeAsync in capture: mem_alloc and mem_free nodes.
static cudaGraph_t make_memalloc() {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t g;
  float* tmp = nullptr;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CK(cudaMallocAsync(&tmp, N * sizeof(float), s));
  ns::fill<float><<<N / 256, 256, 0, s>>>(tmp, N, 3.f);
  add<<<N / 256, 256, 0, s>>>(d_a, tmp, N);
  CK(cudaFreeAsync(tmp, s));
  ns::fill<int><<<1, 32, 0, s>>>(d_counter, 1, 0);
  CK(cudaStreamEndCapture(s, &g));
  return g;
}

// Programmatic dependent launch: a programmatic edge (captured with
// ProgrammaticStreamSerialization) and a launch-completion edge (explicit API).
static cudaGraph_t make_pdl() {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t g;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  pdl_primary<<<N / 256, 256, 0, s>>>(d_a, N);
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(N / 256);
  cfg.blockDim = dim3(256);
  cfg.stream = s;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  CK(cudaLaunchKernelEx(&cfg, pdl_secondary, d_b, (const float*)d_a, N));
  CK(cudaStreamEndCapture(s, &g));
  // Append a launch-completion edge by hand.
  static void* pa[] = {&d_c, (void*)&N};
  static void* sa[] = {&d_a, &d_c, (void*)&N};
  cudaGraphNode_t k0, k1;
  cudaKernelNodeParams p = kparams((void*)pdl_primary, pa, N / 256, 256);
  CK(cudaGraphAddKernelNode(&k0, g, nullptr, 0, &p));
  p = kparams((void*)pdl_secondary, sa, N / 256, 256);
  CK(cudaGraphAddKernelNode(&k1, g, nullptr, 0, &p));
  cudaGraphEdgeData ed{};
  ed.type = cudaGraphDependencyTypeProgrammatic;
  ed.from_port = cudaGraphKernelNodePortLaunchCompletion;
  CK(cudaGraphAddDependencies(g, &k0, &k1, &ed, 1));
  return g;
}

// A large graph through the explicit API: blocks of fork (1) - 4 branches -
// join (1), chained, with a memset node every 50 blocks. Used for the reader
// benchmark; its DOT is recorded, its truth is not (cudaGraphGetEdges is slow).
static cudaGraph_t make_big(int target) {
  static void* a1[3];
  static float f = 1.0001f;
  a1[0] = &d_a;
  a1[1] = (void*)&N;
  a1[2] = &f;
  static void* a2[] = {&d_b, &d_a, (void*)&N};
  cudaGraph_t g;
  CK(cudaGraphCreate(&g, 0));
  cudaGraphNode_t prev = nullptr;
  int count = 0, block = 0;
  while (count + 6 <= target) {
    cudaGraphNode_t fork, br[4], join;
    cudaKernelNodeParams p = kparams((void*)scale, a1, N / 256, 256);
    CK(cudaGraphAddKernelNode(&fork, g, prev ? &prev : nullptr, prev ? 1 : 0, &p));
    for (int b = 0; b < 4; ++b) {
      if (block % 50 == 49 && b == 3) {
        cudaMemsetParams mp{};
        mp.dst = d_c;
        mp.value = 0;
        mp.elementSize = 4;
        mp.width = 1024;
        mp.height = 1;
        CK(cudaGraphAddMemsetNode(&br[b], g, &fork, 1, &mp));
      } else {
        p = kparams(b % 2 ? (void*)add : (void*)scale, b % 2 ? a2 : a1, N / 256 / (b + 1), 256);
        CK(cudaGraphAddKernelNode(&br[b], g, &fork, 1, &p));
      }
    }
    p = kparams((void*)add, a2, N / 512, 512);
    CK(cudaGraphAddKernelNode(&join, g, br, 4, &p));
    prev = join;
    count += 6;
    ++block;
  }
  while (count < target) {
    cudaKernelNodeParams p = kparams((void*)scale, a1, 1, 32);
    cudaGraphNode_t n;
    CK(cudaGraphAddKernelNode(&n, g, prev ? &prev : nullptr, prev ? 1 : 0, &p));
    prev = n;
    ++count;
  }
  return g;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: record_graphs OUTDIR [--big N]\n");
    return 2;
  }
  g_out = argv[1];
  int big = 0;
  if (argc >= 4 && std::strcmp(argv[2], "--big") == 0) big = std::atoi(argv[3]);
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  g_device = prop.name;
  CK(cudaDriverGetVersion(&g_driver));
  CK(cudaRuntimeGetVersion(&g_runtime));
  char buf[32];
  std::time_t now = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
  g_date = buf;
  CK(cudaMalloc(&d_a, N * sizeof(float)));
  CK(cudaMalloc(&d_b, N * sizeof(float)));
  CK(cudaMalloc(&d_c, N * sizeof(float)));
  CK(cudaMalloc(&d_counter, sizeof(int)));
  CK(cudaMallocHost(&h_a, N * sizeof(float)));
  for (int i = 0; i < N; ++i) h_a[i] = 1.f;
  CK(cudaMemcpy(d_a, h_a, N * sizeof(float), cudaMemcpyHostToDevice));

  record("forkjoin", make_forkjoin());
  record("mixed", make_mixed());
  record("child", make_child());
  record("conditional", make_conditional());
  record("memalloc", make_memalloc());
  record("pdl", make_pdl());
  if (big > 0) {
    cudaGraph_t g = make_big(big);
    std::string base = g_out + "/big" + std::to_string(big);
    cudaEvent_t t0, t1;
    auto ms = [](timespec a, timespec b) {
      return (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
    };
    timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    CK(cudaGraphDebugDotPrint(g, (base + ".verbose.dot").c_str(), cudaGraphDebugDotFlagsVerbose));
    clock_gettime(CLOCK_MONOTONIC, &b);
    std::printf("big: %d nodes, verbose DebugDotPrint %.1f ms\n", big, ms(a, b));
    clock_gettime(CLOCK_MONOTONIC, &a);
    CK(cudaGraphDebugDotPrint(g, (base + ".dot").c_str(), 0));
    clock_gettime(CLOCK_MONOTONIC, &b);
    std::printf("big: default DebugDotPrint %.1f ms\n", ms(a, b));
    (void)t0;
    (void)t1;
  }
  CK(cudaDeviceSynchronize());
  std::printf("device %s driver %d runtime %d\n", g_device.c_str(), g_driver, g_runtime);
  return 0;
}
