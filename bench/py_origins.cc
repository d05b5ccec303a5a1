// The Python half of origins without a GPU: a library that a Python program
// loads with ctypes (PyDLL, or CDLL to launch with the GIL let go) and calls
// where a framework would launch a kernel. Each call plays the CUPTI
// callbacks a stream-captured launch brings (runtime API entry, a node
// created, exit) into OriginRecorder, timing the entry (where the thread's
// Python stack is read), and hands back the node's origin as the graph JSON
// writes it. bench/py_origins.py drives it: timings, and with --check the
// tests origins.python_walk and origins.python_walk_threads (every cached
// read against a read without caches). Thread-safe: each thread has its
// own last launch.
#include <cupti.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "capture/origin.h"

using graphscope::capture::OriginRecorder;

namespace {

std::atomic<uint64_t> g_next_node{0x1000};
std::atomic<uint64_t> g_next_graph{0x10};
thread_local uint64_t t_node = 0;   // this thread's last launch
thread_local uint64_t t_graph = 0;  // the graph this thread's capture makes
thread_local std::string t_last;

void api(const char* name, CUpti_ApiCallbackSite site, int rv) {
  CUpti_CallbackData d{};
  d.callbackSite = site;
  d.functionName = name;
  d.functionReturnValue = &rv;
  OriginRecorder::instance().on_callback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                         &d);
}

}  // namespace

extern "C" {

// A stream capture begins (the recorder reads Python only while one runs),
// into a graph of its own.
void gs_begin_capture() {
  t_graph = g_next_graph.fetch_add(16) + 16;
  api("cudaStreamBeginCapture", CUPTI_API_ENTER, 0);
  api("cudaStreamBeginCapture", CUPTI_API_EXIT, 0);
}

// It ends: the recorder forgets what it learnt of Python objects. The
// graph is then destroyed, as PyTorch destroys the template right after
// instantiating it, and its nodes' entries go (not timed).
void gs_end_capture() {
  api("cudaStreamEndCapture", CUPTI_API_ENTER, 0);
  api("cudaStreamEndCapture", CUPTI_API_EXIT, 0);
  CUpti_GraphData g{};
  g.graph = reinterpret_cast<CUgraph>(t_graph);
  CUpti_ResourceData rd{};
  rd.resourceDescriptor = &g;
  OriginRecorder::instance().on_callback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING, &rd);
  t_graph = 0;
}

// Writes every cache line of a buffer of kb KiB, as the work between two
// launches of a real program (the framework's dispatch, the driver, CUPTI)
// pushes the stack and the recorder's caches out of the CPU's caches
// (bench/py_origins.py --cold). Not timed.
void gs_evict(int kb) {
  static std::vector<unsigned char> buf;
  const size_t n = size_t(kb > 0 ? kb : 0) << 10;
  if (buf.size() < n) buf.resize(n);
  for (size_t i = 0; i < n; i += 64) buf[i] = static_cast<unsigned char>(buf[i] + 1);
}

// One launch inside the capture; returns the nanoseconds its callbacks
// took (the stack is read in the node-created one: by this thread when it
// holds the GIL or the caches answer, else by the recorder's proxy).
int64_t gs_launch() {
  CUpti_GraphData g{};
  t_node = g_next_node.fetch_add(16) + 16;
  g.node = reinterpret_cast<CUgraphNode>(t_node);
  g.graph = reinterpret_cast<CUgraph>(t_graph);
  CUpti_ResourceData rd{};
  rd.resourceDescriptor = &g;
  // The launch's own API callbacks come only once reads at the entry are
  // on: until then the recorder leaves them off (OriginRecorder::enable).
  const bool entry = OriginRecorder::instance().reads_at_entry();
  auto t0 = std::chrono::steady_clock::now();
  if (entry) api("cuLaunchKernel", CUPTI_API_ENTER, 0);
  OriginRecorder::instance().on_callback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, &rd);
  if (entry) api("cuLaunchKernel", CUPTI_API_EXIT, 0);
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
}

// 1 once stacks are read at the entry of launches
// (OriginRecorder::reads_at_entry: the proxy could not be used).
int gs_reads_at_entry() { return OriginRecorder::instance().reads_at_entry() ? 1 : 0; }

// The reads so far (OriginRecorder::read_counts): 0 from the caches, 1 in
// full by the launching thread, 2 by the proxy, 3 given up, 4 of the cached
// the stack of the read before, 5 of the cached made from known facts, 6 of
// the cached the stack of the capture before's read at the same place.
uint64_t gs_reads(int which) {
  const auto r = OriginRecorder::instance().read_counts();
  return which == 0   ? r.cached
         : which == 1 ? r.full
         : which == 2 ? r.proxied
         : which == 3 ? r.late
         : which == 4 ? r.same
         : which == 5 ? r.made
                      : r.prior;
}

// The proxy counts as unavailable: launches without the GIL turn on reads
// at the entry of launches (OriginRecorder::proxy_off_for_tests).
void gs_proxy_off() { OriginRecorder::instance().proxy_off_for_tests(); }

// How long a launch without the GIL waits for the proxy (ms).
void gs_proxy_wait(int ms) { OriginRecorder::instance().proxy_wait_for_tests(ms); }

// The origin of the last launch: its modules (qualified name and class),
// then its Python frames, one per line; valid until the next call.
const char* gs_last_origin() {
  t_last.clear();
  auto o = OriginRecorder::instance().origin_of(t_node);
  if (!o) return "";
  for (const auto& m : o->modules) t_last += "module " + m.name + " " + m.type + "\n";
  for (const auto& f : o->python) t_last += "frame " + f.file + ":" + std::to_string(f.line) + " " + f.function + "\n";
  return t_last.c_str();
}

// 1: every read takes the long way, without the recorder's caches (what
// the cached reads must agree with).
void gs_uncached(int on) { OriginRecorder::uncached_for_tests(on != 0); }

}  // extern "C"
