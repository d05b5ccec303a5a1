// The live entry points of capture.h and replay.h as the CUDA-free programs
// (the CLI, the C API) see them: the first call loads libgraphscope_live.so
// (live_abi.h), which brings CUDA's runtime and CUPTI with it; offline
// commands never load it. A build without CUDA has no module and says so.
#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "capture.h"
#include "cupti_locate.h"
#include "inspect/core/error.h"
#include "live_abi.h"
#include "replay.h"

namespace graphscope::capture {
namespace {
namespace fs = std::filesystem;

#ifdef GRAPHSCOPE_HAVE_LIVE
// The object this code is linked into (the CLI, or libgraphscope.so), found
// from one of its own functions.
fs::path own_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_directory), &info) == 0 || !info.dli_fname) return {};
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::path(info.dli_fname), ec);
  if (ec || p.empty() || !p.has_parent_path()) {
    p = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return {};
  }
  return p.parent_path();
}

// GRAPHSCOPE_LIVE_LIBRARY, else beside the object, in the install tree (from
// bin/ and from the library directory) and in the build tree.
std::string find_module() {
  if (const char* e = std::getenv("GRAPHSCOPE_LIVE_LIBRARY"); e && *e) {
    if (access(e, R_OK) != 0)
      throw Error(ExitCode::device, std::string("GRAPHSCOPE_LIVE_LIBRARY=") + e, std::strerror(errno));
    return e;
  }
  const fs::path dir = own_directory();
  const fs::path candidates[] = {dir / kLiveModule, dir / "graphscope" / kLiveModule,
                                 dir / ".." / GRAPHSCOPE_INSTALL_LIBDIR / "graphscope" / kLiveModule,
                                 dir / ".." / "lib" / "capture" / kLiveModule, dir / ".." / "capture" / kLiveModule};
  std::error_code ec;
  for (const auto& c : candidates)
    if (fs::exists(c, ec)) return fs::weakly_canonical(c, ec).string();
  throw Error(ExitCode::device, std::string("graphscope's live module ") + kLiveModule,
              "not found beside " + dir.string() + " nor in its install or build tree; set GRAPHSCOPE_LIVE_LIBRARY");
}

const LiveTable& load_table() {
  static std::once_flag once;
  static const LiveTable* table = nullptr;
  static Error failure(ExitCode::ok, "", "");
  std::call_once(once, [] {
    try {
      const std::string path = find_module();
      // CUPTI first, by its path, where the loader would not find it for the
      // module (kept loaded with it).
      if (const std::string cupti = locate_cupti(); !cupti.empty() && !dlopen(cupti.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
        const char* why = dlerror();
        throw Error(ExitCode::device, "cannot load " + cupti, why ? why : "dlopen failed");
      }
      // Kept loaded for the life of the process: its code and the vtables
      // of what it returns must outlive every caller.
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!handle) {
        const char* why = dlerror();
        std::string reason = why ? why : "dlopen failed";
        if (reason.find("libcupti") != std::string::npos)
          reason += "; CUPTI comes from the CUDA toolkit: its /etc/ld.so.conf.d entry or LD_LIBRARY_PATH names the directory";
        throw Error(ExitCode::device, "cannot load " + path, reason);
      }
      using Entry = const LiveTable* (*)();
      auto entry = reinterpret_cast<Entry>(dlsym(handle, kLiveEntry));
      const LiveTable* t = entry ? entry() : nullptr;
      if (!t) throw Error(ExitCode::device, path, "not graphscope's live module (no " + std::string(kLiveEntry) + ")");
      if (t->abi != kLiveAbi || std::strcmp(t->version, GRAPHSCOPE_VERSION) != 0)
        throw Error(ExitCode::device, path,
                    std::string("is from graphscope ") + t->version + ", this is " + GRAPHSCOPE_VERSION);
      table = t;
    } catch (const Error& e) {
      failure = e;
    }
  });
  if (!table) throw failure;
  return *table;
}

template <class Call>
void call_live(Call&& call) {
  LiveError error;
  if (!call(load_table(), error)) throw Error(ExitCode(error.code), error.subject, error.reason);
}
#endif

}  // namespace

#ifdef GRAPHSCOPE_HAVE_LIVE
std::string locate_cupti() {
  const char* soname = GRAPHSCOPE_CUPTI_SONAME;
  if (void* h = dlopen(soname, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD)) {  // loaded already
    dlclose(h);
    return {};
  }
  if (void* h = dlopen(soname, RTLD_LAZY | RTLD_LOCAL)) {  // the loader knows it
    dlclose(h);
    return {};
  }
  std::vector<fs::path> roots;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) roots.emplace_back(v);
  roots.emplace_back("/usr/local/cuda");
  std::vector<fs::path> tried;
  for (const auto& root : roots) {
    std::string dirs = GRAPHSCOPE_CUPTI_DIRS;
    for (size_t at = 0; at <= dirs.size();) {
      size_t end = dirs.find(':', at);
      if (end == std::string::npos) end = dirs.size();
      tried.push_back(root / dirs.substr(at, end - at) / soname);
      at = end + 1;
    }
  }
  tried.push_back(fs::path(GRAPHSCOPE_CUPTI_BUILD_DIR) / soname);
  std::error_code ec;
  for (const auto& p : tried)
    if (fs::exists(p, ec)) return p.string();
  throw Error(ExitCode::device, std::string("CUPTI (") + soname + ")",
              "the dynamic loader does not find it and it is not in " + roots.front().string() +
                  "; install the CUDA toolkit, or set CUDA_HOME or LD_LIBRARY_PATH to where it is");
}

void require_cuda(const char*) {}

std::vector<CapturedGraph> capture_workload(const CaptureOptions& options) {
  std::vector<CapturedGraph> out;
  call_live([&](const LiveTable& t, LiveError& e) { return t.capture(options, out, e); });
  return out;
}

std::vector<ProfiledGraph> profile_workload(const ProfileRunOptions& options) {
  std::vector<ProfiledGraph> out;
  call_live([&](const LiveTable& t, LiveError& e) { return t.profile(options, out, e); });
  return out;
}

GraphDocument walk_cuda_graph(uintptr_t graph, uintptr_t exec, const WalkOptions& options) {
  GraphDocument out;
  call_live([&](const LiveTable& t, LiveError& e) { return t.walk(graph, exec, options, out, e); });
  return out;
}
#else
std::string locate_cupti() { return {}; }

void require_cuda(const char* what) {
  throw Error(ExitCode::device, std::string(what) + " is not available", "this graphscope was built without CUDA");
}

std::vector<CapturedGraph> capture_workload(const CaptureOptions&) {
  require_cuda("capture");
  return {};
}

std::vector<ProfiledGraph> profile_workload(const ProfileRunOptions&) {
  require_cuda("live profile");
  return {};
}

GraphDocument walk_cuda_graph(uintptr_t, uintptr_t, const WalkOptions&) {
  require_cuda("walking a CUDA graph");
  return {};
}
#endif

}  // namespace graphscope::capture
