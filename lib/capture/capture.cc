#include "capture.h"
#include "capture_hooks.h"

#include <dlfcn.h>
#include <graphscope/workload.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ftw.h>

#include "child.h"
#include "cuda_check.h"
#include "origin.h"
#include "inspect/core/io.h"
#include "inspect/formats/graph_json.h"
#include "inspect/core/json_writer.h"
#include "inspect/model/validate.h"

namespace graphscope::capture {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// What the child reports: files in a private temporary directory.
//   error        "<exit code> <message>" when it failed
//   N.json       graph N's document
//   N.nvidia.dot graph N's cudaGraphDebugDotPrint
struct Scratch {
  std::string dir;
  Scratch() {
    char tmpl[] = "/tmp/graphscope-capture-XXXXXX";
    if (!mkdtemp(tmpl)) throw Error(ExitCode::workload, "capture", "cannot create a temporary directory");
    dir = tmpl;
  }
  ~Scratch() {
    nftw(dir.c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); }, 16,
         FTW_DEPTH | FTW_PHYS);
  }
  std::string path(const std::string& name) const { return dir + "/" + name; }
};

// Errors inside the child carry their class out through the error file.
[[noreturn]] void child_fail(ExitCode code, const std::string& what, const std::string& why) {
  throw Error(code, what, why);
}

const graphscope_workload* load(const CaptureOptions& o) {
  void* lib = dlopen(o.workload.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    child_fail(ExitCode::bad_input, o.workload, std::string("cannot load: ") + (e ? e : "dlopen failed"));
  }
  using Entry = const graphscope_workload* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(lib, "graphscope_workload_v1"));
  if (!entry)
    child_fail(ExitCode::bad_input, o.workload,
               "not a graphscope workload: it exports no graphscope_workload_v1 (see graphscope/workload.h)");
  const graphscope_workload* w = entry();
  if (!w) child_fail(ExitCode::workload, o.workload, "graphscope_workload_v1 returned null");
  if (w->abi_version != GRAPHSCOPE_WORKLOAD_ABI)
    child_fail(ExitCode::bad_input, o.workload,
               "workload ABI version " + std::to_string(w->abi_version) + ", this graphscope reads version " +
                   std::to_string(GRAPHSCOPE_WORKLOAD_ABI));
  if (w->num_graphs == 0 || !w->graphs) child_fail(ExitCode::workload, o.workload, "the workload declares no graphs");
  for (uint32_t i = 0; i < w->num_graphs; ++i)
    if (!w->graphs[i].name || !w->graphs[i].enqueue)
      child_fail(ExitCode::workload, o.workload, "graph " + std::to_string(i) + " has no name or no enqueue function");
  return w;
}

void init_device(const CaptureOptions& o, DeviceInfo& info) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaErrorNoDevice || (e == cudaSuccess && count == 0))
    child_fail(ExitCode::device, "no CUDA device", std::string(cudaGetErrorName(e == cudaSuccess ? cudaErrorNoDevice : e)) +
                                                       ": no CUDA-capable device is detected");
  if (e == cudaErrorInsufficientDriver) {
    int drv = 0;
    cudaDriverGetVersion(&drv);
    child_fail(ExitCode::device, "no usable NVIDIA driver",
               drv ? "the driver supports CUDA " + std::to_string(drv / 1000) + "." + std::to_string(drv % 1000 / 10) +
                         ", graphscope needs " + std::to_string(CUDART_VERSION / 1000) + "." +
                         std::to_string(CUDART_VERSION % 1000 / 10)
                   : "cudaErrorInsufficientDriver: no driver is installed or it cannot be loaded");
  }
  GS_CUDA(e);
  if (o.device >= count)
    child_fail(ExitCode::device, "device " + std::to_string(o.device), "only " + std::to_string(count) + " present");
  GS_CUDA(cudaSetDevice(o.device));
  GS_CUDA(cudaFree(nullptr));  // create the context outside any capture
  cudaDeviceProp p{};
  GS_CUDA(cudaGetDeviceProperties(&p, o.device));
  info.name = p.name;
  info.cc_major = p.major;
  info.cc_minor = p.minor;
  int v = 0;
  GS_CUDA(cudaDriverGetVersion(&v));
  info.driver_version = v;
  GS_CUDA(cudaRuntimeGetVersion(&v));
  info.runtime_version = v;
}

cudaStreamCaptureMode mode_of(const std::string& m) {
  if (m == "thread_local") return cudaStreamCaptureModeThreadLocal;
  if (m == "relaxed") return cudaStreamCaptureModeRelaxed;
  return cudaStreamCaptureModeGlobal;
}

const char* instantiate_name(Instantiate i) {
  return i == Instantiate::now ? "now" : i == Instantiate::later ? "later" : "never";
}

// Captures, instantiates, replays and walks one graph; writes its files.
void capture_one(const CaptureOptions& o, const detail::CaptureHooks& hooks, const graphscope_workload* w,
                 const graphscope_graph& gd, void* state, const DeviceInfo& dev, const Scratch& scratch, int index) {
  cudaStream_t stream;
  GS_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  char err[1024] = {0};
  auto t0 = Clock::now();
  GS_CUDA(cudaStreamBeginCapture(stream, mode_of(o.capture_mode)));
  int rc = gd.enqueue(state, stream, err, sizeof err);
  cudaGraph_t graph = nullptr;
  cudaError_t end = cudaStreamEndCapture(stream, &graph);
  double capture_ms = ms_since(t0);
  std::string what = std::string(w->name ? w->name : "workload") + " graph " + gd.name;
  if (rc != 0) {
    err[sizeof err - 1] = 0;
    std::string why = err[0] ? err : "enqueue returned " + std::to_string(rc);
    if (end != cudaSuccess) why += "; capture ended with " + std::string(cudaGetErrorName(end));
    (void)cudaGetLastError();
    child_fail(ExitCode::workload, what, "enqueue failed: " + why);
  }
  if (end != cudaSuccess) {
    (void)cudaGetLastError();
    child_fail(ExitCode::workload, what,
               std::string("capture failed: ") + cudaGetErrorName(end) + ": " + cudaGetErrorString(end));
  }
  CaptureTimings timings;
  timings.capture_ms = capture_ms;
  cudaGraphExec_t exec = nullptr;
  auto instantiate = [&] {
    auto t = Clock::now();
    GS_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    timings.instantiate_ms = ms_since(t);
  };
  if (o.instantiate == Instantiate::now) instantiate();
  auto tw = Clock::now();
  WalkOptions wo = o.walk;
  if (o.origins) wo.origin_of = [](uint64_t h) { return OriginRecorder::instance().origin_of(h); };
  GraphDocument doc = walk_graph(graph, wo);
  double walk_ms = ms_since(tw);
  if (o.instantiate == Instantiate::later) instantiate();
  timings.walk_ms = walk_ms;
  GraphMemory memory;
  if (exec) {
    if (auto id = exec_graph_id(exec)) {
      assign_exec_ids(doc, *id);
    } else {
      doc.warnings.push_back(
          "CUPTI is in use by another tool: the exec graph id cannot be read (CUDA 13.0 has no other call for it); "
          "ids are the template graph's");
    }
    auto t = Clock::now();
    GS_CUDA(cudaGraphLaunch(exec, stream));
    GS_CUDA(cudaStreamSynchronize(stream));
    timings.first_replay_ms = ms_since(t);
    std::vector<double> steady;
    for (int r = 0; r < o.replays; ++r) {
      auto s = Clock::now();
      GS_CUDA(cudaGraphLaunch(exec, stream));
      GS_CUDA(cudaStreamSynchronize(stream));
      steady.push_back(ms_since(s));
    }
    if (!steady.empty()) {
      std::sort(steady.begin(), steady.end());
      timings.steady_replay_ms = steady[steady.size() / 2];
      timings.steady_replays = steady.size();
    }
    const std::pair<uint64_t*, cudaGraphMemAttributeType> attrs[] = {
        {&memory.used_current, cudaGraphMemAttrUsedMemCurrent},
        {&memory.used_high, cudaGraphMemAttrUsedMemHigh},
        {&memory.reserved_current, cudaGraphMemAttrReservedMemCurrent},
        {&memory.reserved_high, cudaGraphMemAttrReservedMemHigh}};
    for (const auto& [field, attr] : attrs) {
      GS_CUDA(cudaDeviceGetGraphMemAttribute(o.device, attr, field));
    }
  }
  doc.name = gd.name;
  doc.device = dev;
  doc.capture = CaptureInfo{o.workload, w->name ? w->name : "", o.args, o.capture_mode,
                            std::string(instantiate_name(o.instantiate))};
  doc.timings = timings;
  if (exec) doc.graph_memory = memory;
  write_graph_json_file(scratch.path(std::to_string(index) + ".json"), doc);
  if (o.nvidia_dot) {
    GS_CUDA(cudaGraphDebugDotPrint(graph, scratch.path(std::to_string(index) + ".nvidia.dot").c_str(),
                                   o.nvidia_dot_flags));
  }
  if (exec && hooks.after_graph) hooks.after_graph(doc, exec, stream, scratch.dir, index);
  if (exec) GS_CUDA(cudaGraphExecDestroy(exec));
  GS_CUDA(cudaGraphDestroy(graph));
  GS_CUDA(cudaStreamDestroy(stream));
}

int child_main(const CaptureOptions& o, const detail::CaptureHooks& hooks, const Scratch& scratch) {
  // Whatever the workload prints goes to stderr: stdout carries our output.
  dup2(STDERR_FILENO, STDOUT_FILENO);
  try {
    if (hooks.before_cuda) hooks.before_cuda();
    // Origins: NVTX pointed at CUPTI before the workload can call it, and a
    // subscriber for the callbacks (nothing else subscribes in the child).
    if (o.origins) OriginRecorder::inject_nvtx();
    const graphscope_workload* w = load(o);
    std::vector<uint32_t> chosen;
    for (uint32_t i = 0; i < w->num_graphs; ++i)
      if (o.graph.empty() || o.graph == w->graphs[i].name) chosen.push_back(i);
    if (chosen.empty()) {
      std::string names;
      for (uint32_t i = 0; i < w->num_graphs; ++i) names += (i ? ", " : "") + std::string(w->graphs[i].name);
      child_fail(ExitCode::usage, "--name " + o.graph, "the workload has no such graph (it has: " + names + ")");
    }
    DeviceInfo dev;
    init_device(o, dev);
    // The subscriber for origins, before the workload's set-up can make
    // NVTX domains or graphs.
    if (o.origins && !OriginRecorder::instance().subscribe())
      std::fprintf(stderr, "graphscope: origins are not recorded (CUPTI is in use by another tool)\n");
    std::vector<std::string> arg_store;
    arg_store.push_back(o.workload);
    for (const auto& a : o.args) arg_store.push_back(a);
    std::vector<char*> argv;
    for (auto& a : arg_store) argv.push_back(a.data());
    argv.push_back(nullptr);
    void* state = nullptr;
    if (w->setup) {
      char err[1024] = {0};
      int rc = w->setup(int(arg_store.size()), argv.data(), &state, err, sizeof err);
      err[sizeof err - 1] = 0;
      if (rc != 0)
        child_fail(ExitCode::workload, std::string(w->name ? w->name : "workload") + " setup",
                   err[0] ? err : "returned " + std::to_string(rc));
    }
    for (size_t k = 0; k < chosen.size(); ++k)
      capture_one(o, hooks, w, w->graphs[chosen[k]], state, dev, scratch, int(k));
    if (w->teardown) w->teardown(state);
    GS_CUDA(cudaDeviceSynchronize());
    return 0;
  } catch (const Error& e) {
    std::string line = std::to_string(int(e.code())) + " " + e.what();
    for (char& c : line)
      if (c == '\n') c = ' ';
    try {
      write_output(scratch.path("error"), line);
    } catch (...) {
    }
    return int(e.code());
  }
}

}  // namespace

std::vector<CapturedGraph> capture_workload(const CaptureOptions& o) { return detail::run_capture(o, {}); }

std::vector<CapturedGraph> detail::run_capture(const CaptureOptions& o, const CaptureHooks& hooks) {
  if (access(o.workload.c_str(), R_OK) != 0)
    throw Error(ExitCode::bad_input, o.workload, std::strerror(errno));
  Scratch scratch;
  ChildStatus st = run_in_child([&] { return child_main(o, hooks, scratch); }, o.timeout_s);
  if (st.timed_out)
    throw Error(ExitCode::workload, o.workload,
                "timed out: still running after " + std::to_string(int(o.timeout_s)) + " s (--timeout), killed");
  if (st.signaled) throw Error(ExitCode::workload, o.workload, "crashed with " + describe_signal(st.signal));
  if (st.exit_code != 0) {
    std::string line;
    try {
      line = read_file(scratch.path("error"));
    } catch (const Error&) {
      throw Error(ExitCode::workload, o.workload, "exited with status " + std::to_string(st.exit_code));
    }
    size_t sp = line.find(' ');
    int code = std::atoi(line.substr(0, sp).c_str());
    std::string msg = sp == std::string::npos ? line : line.substr(sp + 1);
    if (code < 2 || code > 5) code = int(ExitCode::workload);
    // The message is already "what (why)": keep it whole as the subject.
    throw Error(ExitCode(code), msg, "");
  }
  std::vector<CapturedGraph> out;
  for (int i = 0;; ++i) {
    std::string path = scratch.path(std::to_string(i) + ".json");
    if (access(path.c_str(), R_OK) != 0) break;
    CapturedGraph g;
    g.doc = read_graph_json(read_file(path), path);
    validate_graph(g.doc, path);
    if (o.nvidia_dot) g.nvidia_dot = read_file(scratch.path(std::to_string(i) + ".nvidia.dot"));
    if (hooks.read_back) hooks.read_back(scratch.dir, i);
    out.push_back(std::move(g));
  }
  if (out.empty()) throw Error(ExitCode::workload, o.workload, "the capture produced no graph");
  return out;
}

}  // namespace graphscope::capture
