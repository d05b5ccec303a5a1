// libgraphscope_preload.so: what lets an attached graphscope take CUPTI back.
//
// While any CUPTI subscriber is attached, every graph launch costs the
// application's thread more (0.3-0.5 us a node on the H200 of 2026-11-27,
// bench/replay_subscriber.cu), and only cuptiFinalize gives that back. So
// `capture --exec --let-go-after` finalizes CUPTI when the process has gone
// idle; but then no callback says when the process makes its next graph.
// This library, preloaded (LD_PRELOAD) beside the injection library, defines
// the calls that begin a graph: beginning a stream capture, creating a
// graph, instantiating one, in the shared CUDA runtime (libcudart.so, as
// PyTorch uses it) and in the driver's exported functions (programs that
// link libcuda). Each forwards to the real function; while graphscope
// rests (graphscope_preload_rest), it first calls graphscope_take_back in
// the injection library, which subscribes to CUPTI again, so the graph's
// nodes and its instantiation are seen as if graphscope had never let go.
//
// It defines the calls that change an exec graph after instantiation too
// (cudaGraphExecUpdate, the per-node setters): an update made while
// graphscope rests takes CUPTI back first, so it is recorded as the graph's
// next version. And while any of these calls runs, it says so to the
// injection library (graphscope_preload_seen): a graph instantiated or
// changed outside them (a statically linked runtime, libcuda reached
// through pointers of its own) is one graphscope could not see while
// resting, and then it does not let go unless asked to (--let-go-after).
//
// It also defines the calls that destroy a graph and launch an exec graph,
// for the run ledger's launch counts (made here while graphscope rests) and
// for walks at destroy: the injection library walks an instantiated graph
// when the application destroys it (PyTorch does so right after
// instantiating), on a thread of its own, instead of on the application's
// thread inside the instantiation. A destroy it takes over returns success
// at once; the graph is destroyed after its walk. A launch first lets a
// walk still to do happen.
//
// It is a library of its own because the injection library links the CUDA
// runtime statically, whose definitions of these names would clash with
// these. It depends on nothing but libc: an application's runtime or driver
// of any version is what it forwards to. A program that links the CUDA
// runtime statically (nvcc's default) calls none of these: after a let go
// its later graphs are not seen, and the index says so.
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace {

std::atomic<bool> resting{false};
using TakeBack = void (*)(const char*);
std::atomic<TakeBack> take_back{nullptr};

// Walks at destroy (graphscope_preload_defer): on while the injection
// library leaves the walk of an instantiated graph until the application
// destroys it or launches it.
std::atomic<bool> deferring{false};
using DestroyHook = int (*)(void*);
using LaunchHook = int (*)(void*);
std::atomic<DestroyHook> destroy_hook{nullptr};
std::atomic<LaunchHook> launch_hook{nullptr};

template <typename Fn>
Fn hook(std::atomic<Fn>& cache, const char* name) {
  Fn f = cache.load(std::memory_order_acquire);
  if (!f) {
    f = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
    cache.store(f, std::memory_order_release);
  }
  return f;
}

// True when the injection library took the graph: it walks it on a thread
// of its own and destroys it then, and the call returns success at once.
bool taken(void* graph) {
  if (!deferring.load(std::memory_order_relaxed)) return false;
  DestroyHook f = hook(destroy_hook, "graphscope_graph_destroy");
  return f && f(graph) != 0;
}

// Before an exec graph's launch: its graph's walk, if still to do, first,
// and the launch counted (the run ledger), also while graphscope rests.
// True: refuse the launch (--liveness=error: it would read or write memory
// freed since its capture).
bool launching(void* exec) {
  LaunchHook f = hook(launch_hook, "graphscope_graph_launch");
  return f && f(exec) != 0;
}
// What a refused launch returns: cudaErrorIllegalState and
// CUDA_ERROR_ILLEGAL_STATE, the same number.
constexpr int kRefused = 401;

// The depth of this thread's launches through the forwarders below: the
// injection library's launch callback, inside the real call, does not count
// these twice.
thread_local int launch_depth = 0;

// The depth of this thread's calls through the forwarders below.
thread_local int seen_depth = 0;
struct Seen {
  Seen() { ++seen_depth; }
  ~Seen() { --seen_depth; }
  Seen(const Seen&) = delete;
  Seen& operator=(const Seen&) = delete;
};

void before(const char* call) {
  if (!resting.load(std::memory_order_relaxed)) return;
  TakeBack f = take_back.load(std::memory_order_acquire);
  if (!f) {
    f = reinterpret_cast<TakeBack>(dlsym(RTLD_DEFAULT, "graphscope_take_back"));
    take_back.store(f, std::memory_order_release);
  }
  if (f) f(call);
}

// The real definition of `name`: the next one after this library in the
// global scope, else the one in a loaded object whose file name contains
// `lib` (a library loaded with RTLD_LOCAL, as Python loads extensions and
// their dependencies, is not in the global scope). No allocation, no C++
// runtime: this library must not bring one into the application.
struct Found {
  const char* lib;
  int n;
  char paths[4][4096];
};

int collect(dl_phdr_info* info, size_t, void* data) {
  auto* f = static_cast<Found*>(data);
  if (f->n < 4 && info->dlpi_name && std::strstr(info->dlpi_name, f->lib) &&
      std::strlen(info->dlpi_name) < sizeof f->paths[0])
    std::strcpy(f->paths[f->n++], info->dlpi_name);
  return 0;
}

pthread_mutex_t found_m = PTHREAD_MUTEX_INITIALIZER;
Found found;  // 16 KiB, under found_m: not on a thread's stack

int count_loaded(const char* lib) {
  pthread_mutex_lock(&found_m);
  found.lib = lib;
  found.n = 0;
  dl_iterate_phdr(collect, &found);
  const int n = found.n;
  pthread_mutex_unlock(&found_m);
  return n;
}

void* find_real(const char* name, const char* lib) {
  if (void* p = dlsym(RTLD_NEXT, name)) return p;
  void* p = nullptr;
  pthread_mutex_lock(&found_m);
  found.lib = lib;
  found.n = 0;
  dl_iterate_phdr(collect, &found);  // (no dlopen while the loader's list is held)
  for (int i = 0; i < found.n && !p; ++i) {
    void* h = dlopen(found.paths[i], RTLD_LAZY | RTLD_NOLOAD);
    if (!h) continue;
    p = dlsym(h, name);
    dlclose(h);  // RTLD_NOLOAD took a reference of its own; the object stays loaded
  }
  pthread_mutex_unlock(&found_m);
  return p;
}

// The real `name`, of type Fn, found once and kept in `cache`; null when no
// loaded object defines it.
template <typename Fn>
Fn real(std::atomic<void*>& cache, const char* name, const char* lib) {
  void* p = cache.load(std::memory_order_acquire);
  if (!p) {
    p = find_real(name, lib);
    cache.store(p, std::memory_order_release);
  }
  return reinterpret_cast<Fn>(p);
}

// The types as the ABI sees them (cuda.h and cuda_runtime_api.h are left
// out: they rename some of these functions by macro). Results and enums are
// ints; handles are pointers.
using Result = int;
constexpr Result kRuntimeMissing = 999;  // cudaErrorUnknown
constexpr Result kDriverMissing = 999;   // CUDA_ERROR_UNKNOWN

}  // namespace

// One forwarder: `name` with `params`, calling the real one with `args`;
// `missing` where no definition exists (a call the program could not have
// made without this library: its symbol would not have been found).
#define GS_FORWARD(ret, lib, missing, name, params, args)             \
  extern "C" __attribute__((visibility("default"))) ret name params { \
    static std::atomic<void*> cache{nullptr};                         \
    Seen seen;                                                        \
    before(#name);                                                    \
    auto f = real<ret(*) params>(cache, #name, lib);                  \
    return f ? f args : missing;                                      \
  }
#define GS_RUNTIME(name, params, args) GS_FORWARD(Result, "libcudart.so", kRuntimeMissing, name, params, args)
#define GS_DRIVER(name, params, args) GS_FORWARD(Result, "libcuda.so", kDriverMissing, name, params, args)

// cudaStreamBeginCapture(stream, mode) and its per-thread-stream twin.
GS_RUNTIME(cudaStreamBeginCapture, (void* s, int mode), (s, mode))
GS_RUNTIME(cudaStreamBeginCapture_ptsz, (void* s, int mode), (s, mode))
// cudaStreamBeginCaptureToGraph(stream, graph, dependencies, edge data, count, mode).
GS_RUNTIME(cudaStreamBeginCaptureToGraph,
           (void* s, void* g, const void* d, const void* e, size_t n, int mode), (s, g, d, e, n, mode))
GS_RUNTIME(cudaStreamBeginCaptureToGraph_ptsz,
           (void* s, void* g, const void* d, const void* e, size_t n, int mode), (s, g, d, e, n, mode))
// cudaGraphCreate(graph out, flags).
GS_RUNTIME(cudaGraphCreate, (void* g, unsigned flags), (g, flags))
// cudaGraphInstantiate and ...WithFlags(exec out, graph, flags); ...WithParams(exec out, graph, params).
GS_RUNTIME(cudaGraphInstantiate, (void* e, void* g, unsigned long long flags), (e, g, flags))
GS_RUNTIME(cudaGraphInstantiateWithFlags, (void* e, void* g, unsigned long long flags), (e, g, flags))
GS_RUNTIME(cudaGraphInstantiateWithParams, (void* e, void* g, void* p), (e, g, p))
GS_RUNTIME(cudaGraphInstantiateWithParams_ptsz, (void* e, void* g, void* p), (e, g, p))

// The driver's exported functions of the same calls (cuda.h names
// cuStreamBeginCapture cuStreamBeginCapture_v2).
GS_DRIVER(cuStreamBeginCapture_v2, (void* s, int mode), (s, mode))
GS_DRIVER(cuStreamBeginCapture_v2_ptsz, (void* s, int mode), (s, mode))
GS_DRIVER(cuStreamBeginCaptureToGraph, (void* s, void* g, const void* d, const void* e, size_t n, int mode),
          (s, g, d, e, n, mode))
GS_DRIVER(cuStreamBeginCaptureToGraph_ptsz,
          (void* s, void* g, const void* d, const void* e, size_t n, int mode), (s, g, d, e, n, mode))
GS_DRIVER(cuGraphCreate, (void* g, unsigned flags), (g, flags))
GS_DRIVER(cuGraphInstantiateWithFlags, (void* e, void* g, unsigned long long flags), (e, g, flags))
GS_DRIVER(cuGraphInstantiateWithParams, (void* e, void* g, void* p), (e, g, p))
GS_DRIVER(cuGraphInstantiateWithParams_ptsz, (void* e, void* g, void* p), (e, g, p))

// The calls that change an exec graph after instantiation (those whose
// driver callbacks lib/capture/exec_update.cc follows), each (exec graph,
// node, ...) except the updates (exec graph, graph, result).
// (exec, graph, result info); before CUDA 12 (exec, graph, error node out,
// result out): the fourth forwarded as it came either way.
GS_RUNTIME(cudaGraphExecUpdate, (void* e, void* g, void* a, void* b), (e, g, a, b))
GS_RUNTIME(cudaGraphExecKernelNodeSetParams, (void* e, void* n, const void* p), (e, n, p))
GS_RUNTIME(cudaGraphExecMemcpyNodeSetParams, (void* e, void* n, const void* p), (e, n, p))
// (exec, node, dst, src, count, kind); ...ToSymbol and ...FromSymbol (exec,
// node, symbol or dst, src or symbol, count, offset, kind).
GS_RUNTIME(cudaGraphExecMemcpyNodeSetParams1D, (void* e, void* n, void* d, const void* s, size_t c, int k),
           (e, n, d, s, c, k))
GS_RUNTIME(cudaGraphExecMemcpyNodeSetParamsToSymbol,
           (void* e, void* n, const void* y, const void* s, size_t c, size_t o, int k), (e, n, y, s, c, o, k))
GS_RUNTIME(cudaGraphExecMemcpyNodeSetParamsFromSymbol,
           (void* e, void* n, void* d, const void* y, size_t c, size_t o, int k), (e, n, d, y, c, o, k))
GS_RUNTIME(cudaGraphExecMemsetNodeSetParams, (void* e, void* n, const void* p), (e, n, p))
GS_RUNTIME(cudaGraphExecHostNodeSetParams, (void* e, void* n, const void* p), (e, n, p))
GS_RUNTIME(cudaGraphExecChildGraphNodeSetParams, (void* e, void* n, void* g), (e, n, g))
GS_RUNTIME(cudaGraphExecEventRecordNodeSetEvent, (void* e, void* n, void* ev), (e, n, ev))
GS_RUNTIME(cudaGraphExecEventWaitNodeSetEvent, (void* e, void* n, void* ev), (e, n, ev))
GS_RUNTIME(cudaGraphExecExternalSemaphoresSignalNodeSetParams, (void* e, void* n, const void* p), (e, n, p))
GS_RUNTIME(cudaGraphExecExternalSemaphoresWaitNodeSetParams, (void* e, void* n, const void* p), (e, n, p))
GS_RUNTIME(cudaGraphNodeSetEnabled, (void* e, void* n, unsigned on), (e, n, on))
GS_RUNTIME(cudaGraphExecNodeSetParams, (void* e, void* n, void* p), (e, n, p))
// The driver's: cuda.h names cuGraphExecUpdate and
// cuGraphExecKernelNodeSetParams their _v2; the unsuffixed symbols are the
// older calls ((exec, graph, error node out, result out) for the update).
GS_DRIVER(cuGraphExecUpdate, (void* e, void* g, void* node, void* result), (e, g, node, result))
GS_DRIVER(cuGraphExecUpdate_v2, (void* e, void* g, void* info), (e, g, info))
GS_DRIVER(cuGraphExecKernelNodeSetParams, (void* e, void* n, const void* p), (e, n, p))
GS_DRIVER(cuGraphExecKernelNodeSetParams_v2, (void* e, void* n, const void* p), (e, n, p))
// (exec, node, params, context).
GS_DRIVER(cuGraphExecMemcpyNodeSetParams, (void* e, void* n, const void* p, void* c), (e, n, p, c))
GS_DRIVER(cuGraphExecMemsetNodeSetParams, (void* e, void* n, const void* p, void* c), (e, n, p, c))
GS_DRIVER(cuGraphExecHostNodeSetParams, (void* e, void* n, const void* p), (e, n, p))
GS_DRIVER(cuGraphExecChildGraphNodeSetParams, (void* e, void* n, void* g), (e, n, g))
GS_DRIVER(cuGraphExecEventRecordNodeSetEvent, (void* e, void* n, void* ev), (e, n, ev))
GS_DRIVER(cuGraphExecEventWaitNodeSetEvent, (void* e, void* n, void* ev), (e, n, ev))
GS_DRIVER(cuGraphExecExternalSemaphoresSignalNodeSetParams, (void* e, void* n, const void* p), (e, n, p))
GS_DRIVER(cuGraphExecExternalSemaphoresWaitNodeSetParams, (void* e, void* n, const void* p), (e, n, p))
GS_DRIVER(cuGraphNodeSetEnabled, (void* e, void* n, unsigned on), (e, n, on))
GS_DRIVER(cuGraphExecBatchMemOpNodeSetParams, (void* e, void* n, const void* p), (e, n, p))
GS_DRIVER(cuGraphExecNodeSetParams, (void* e, void* n, void* p), (e, n, p))

// The calls that end a graph's wait for its walk (walks at destroy): a
// graph's destruction, which the injection library may take over, and an
// exec graph's launch.
#define GS_DESTROY(ret, lib, missing, name)                                 \
  extern "C" __attribute__((visibility("default"))) ret name(void* graph) { \
    static std::atomic<void*> cache{nullptr};                               \
    if (taken(graph)) return 0;                                             \
    auto f = real<ret (*)(void*)>(cache, #name, lib);                       \
    return f ? f(graph) : missing;                                          \
  }
#define GS_LAUNCH(ret, lib, missing, name)                                               \
  extern "C" __attribute__((visibility("default"))) ret name(void* exec, void* stream) { \
    static std::atomic<void*> cache{nullptr};                                            \
    if (launching(exec)) return kRefused;                                                \
    auto f = real<ret (*)(void*, void*)>(cache, #name, lib);                             \
    if (!f) return missing;                                                              \
    ++launch_depth;                                                                      \
    ret r = f(exec, stream);                                                             \
    --launch_depth;                                                                      \
    return r;                                                                            \
  }
GS_DESTROY(Result, "libcudart.so", kRuntimeMissing, cudaGraphDestroy)
GS_DESTROY(Result, "libcuda.so", kDriverMissing, cuGraphDestroy)
GS_LAUNCH(Result, "libcudart.so", kRuntimeMissing, cudaGraphLaunch)
GS_LAUNCH(Result, "libcudart.so", kRuntimeMissing, cudaGraphLaunch_ptsz)
GS_LAUNCH(Result, "libcuda.so", kDriverMissing, cuGraphLaunch)
GS_LAUNCH(Result, "libcuda.so", kDriverMissing, cuGraphLaunch_ptsz)

// Allocations and frees while graphscope rests (CUPTI let go, so its
// callbacks do not see them): handed to the injection library's input
// liveness (graphscope_rest_memory); while attached, CUPTI's callbacks see
// them and these forward alone. A free is told before the real call (the
// allocation is still there), an allocation after it.
using MemoryHook = void (*)(int, unsigned long long, unsigned long long);
static std::atomic<MemoryHook> memory_hook{nullptr};
static void memory(int alloc, unsigned long long ptr, unsigned long long size) {
  if (!resting.load(std::memory_order_relaxed) || !ptr) return;
  if (MemoryHook f = hook(memory_hook, "graphscope_rest_memory")) f(alloc, ptr, size);
}
extern "C" __attribute__((visibility("default"))) Result cudaMalloc(void** p, size_t size) {
  static std::atomic<void*> cache{nullptr};
  auto f = real<Result (*)(void**, size_t)>(cache, "cudaMalloc", "libcudart.so");
  if (!f) return kRuntimeMissing;
  const Result r = f(p, size);
  if (r == 0 && p) memory(1, reinterpret_cast<uintptr_t>(*p), size);
  return r;
}
extern "C" __attribute__((visibility("default"))) Result cudaFree(void* p) {
  static std::atomic<void*> cache{nullptr};
  memory(0, reinterpret_cast<uintptr_t>(p), 0);
  auto f = real<Result (*)(void*)>(cache, "cudaFree", "libcudart.so");
  return f ? f(p) : kRuntimeMissing;
}
extern "C" __attribute__((visibility("default"))) Result cuMemAlloc_v2(unsigned long long* p, size_t size) {
  static std::atomic<void*> cache{nullptr};
  auto f = real<Result (*)(unsigned long long*, size_t)>(cache, "cuMemAlloc_v2", "libcuda.so");
  if (!f) return kDriverMissing;
  const Result r = f(p, size);
  if (r == 0 && p) memory(1, *p, size);
  return r;
}
extern "C" __attribute__((visibility("default"))) Result cuMemFree_v2(unsigned long long p) {
  static std::atomic<void*> cache{nullptr};
  memory(0, p, 0);
  auto f = real<Result (*)(unsigned long long)>(cache, "cuMemFree_v2", "libcuda.so");
  return f ? f(p) : kDriverMissing;
}

// Called by the injection library: walks at destroy on or off.
extern "C" __attribute__((visibility("default"))) void graphscope_preload_defer(int on) {
  deferring.store(on != 0, std::memory_order_relaxed);
}

// Called by the injection library: on while it has let go of CUPTI, off
// once it has it again.
extern "C" __attribute__((visibility("default"))) void graphscope_preload_rest(int on) {
  resting.store(on != 0, std::memory_order_relaxed);
}

// Called by the injection library inside a CUPTI callback: whether this
// thread is inside one of the calls above (the graph instantiated or changed
// is one this library would have seen while graphscope rested).
extern "C" __attribute__((visibility("default"))) int graphscope_preload_seen() {
  return seen_depth > 0 ? 1 : 0;
}

// Called by the injection library's launch callback: whether this thread is
// inside one of the graph launches above (that launch is counted already).
extern "C" __attribute__((visibility("default"))) int graphscope_preload_in_launch() {
  return launch_depth > 0 ? 1 : 0;
}

// Whether a call of the CUDA runtime or driver can reach this library: true
// when the process has libcudart.so or libcuda loaded as a shared object
// (the injection library asks before it lets go, and says in the index
// whether it can take CUPTI back).
extern "C" __attribute__((visibility("default"))) int graphscope_preload_covers() {
  return count_loaded("libcudart.so") > 0 ? 1 : 0;
}
