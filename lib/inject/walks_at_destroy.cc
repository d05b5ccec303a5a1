// Walks at destroy. An exec graph's template is walked, not inside its
// instantiation on the application's thread, but once the application
// destroys the template (through the preload library, which hands it
// over: the walker thread walks it, then destroys it), or else on the
// application's thread at the first call that could change the template
// or needs the exec graph's entry: a call that adds to, sets, removes
// from, instantiates, updates from or destroys any graph (the fences,
// driver callbacks), a launch of the exec graph, its update or
// destruction, the context's destruction, the application's own CUPTI
// subscription, and the exit. So a template is read either as it was
// instantiated or after the application gave it up, never while it
// changes or after it is gone; a graph that nothing ever ends waits until
// the exit (and is lost if the process is killed).
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "capture/origin.h"
#include "capture/walk.h"
#include "injection.h"
#include "writer.h"

namespace graphscope::inject::internal {

// Set on the walker thread (walks at destroy): its own CUDA calls are not
// the application's, and never wait for a walk.
thread_local bool t_walker = false;

// Whether the process has the shared CUDA runtime loaded (whose
// cudaGraphDestroy and cudaGraphLaunch the preload library sees): else no
// graph waits, since nothing would end its wait but the fences.
bool Injection::runtime_covered() {
  if (covered_) return true;
  using Covers = int (*)();
  static Covers covers = reinterpret_cast<Covers>(dlsym(RTLD_DEFAULT, "graphscope_preload_covers"));
  covered_ = covers && covers() != 0;
  return covered_;
}

// The walk of an entry taken for walking (state walking), on this thread,
// and its dump; no lock held.
void Injection::walk_deferred(const Deferred& d) noexcept {
  try {
    capture::WalkOptions wo = walk_options(t_walker);
    std::vector<uint64_t> handles;
    wo.root_handles = &handles;
    capture::QueriedGraph q = capture::query_graph(reinterpret_cast<cudaGraph_t>(d.graph), wo);
    std::lock_guard<std::mutex> lock(m_);
    if (!finished_) dump_walked(d.exec, d.exec_id, d.device, std::move(q), std::move(handles), d.since);
  } catch (const std::exception& e) {
    error(std::string("walking exec graph ") + std::to_string(d.exec_id) + ": " + e.what());
  } catch (...) {
    error("walking exec graph " + std::to_string(d.exec_id) + ": unknown error");
  }
  bool destroy = false;
  {
    std::lock_guard<std::mutex> l(dm_);
    for (auto it = deferred_.begin(); it != deferred_.end(); ++it)
      if (it->graph == d.graph && it->state == Walk::walking) {
        destroy = it->destroy;
        deferred_.erase(it);
        deferred_n_.fetch_sub(1, std::memory_order_release);
        break;
      }
    t_walker ? ++walked_at_destroy_ : ++walked_here_;
  }
  dcv_.notify_all();
  // The application destroyed it already, as far as it knows.
  if (destroy) cudaGraphDestroy(reinterpret_cast<cudaGraph_t>(d.graph));
}

// Every walk still to do of an entry that `which` picks, here; with
// wait, also those handed to the walker and not yet begun, and then
// until those under way elsewhere are done. Never under m_.
template <typename Which>
void Injection::resolve(Which which, bool wait) noexcept {
  if (forked_child || t_walker || !deferred_n_.load(std::memory_order_acquire)) return;
  try {
    for (;;) {
      Deferred d;
      {
        std::lock_guard<std::mutex> l(dm_);
        auto it = std::find_if(deferred_.begin(), deferred_.end(), [&](const Deferred& x) {
          return (x.state == Walk::pending || (wait && x.state == Walk::queued)) && which(x);
        });
        if (it == deferred_.end()) break;
        it->state = Walk::walking;
        d = *it;
      }
      walk_deferred(d);
    }
    if (!wait) return;
    std::unique_lock<std::mutex> l(dm_);
    dcv_.wait(l, [&] { return std::none_of(deferred_.begin(), deferred_.end(), which); });
  } catch (...) {
  }
}
void Injection::resolve_all() noexcept {
  resolve([](const Deferred&) { return true; }, true);
}

uint8_t Injection::fence_kind(const char* f) {
  auto starts = [f](const char* p) { return std::strncmp(f, p, std::strlen(p)) == 0; };
  if (starts("cuStreamBeginCaptureToGraph")) return kFenceAll;
  if (!starts("cuGraph") || starts("cuGraphics")) return kNoFence;
  if (std::strcmp(f, "cuGraphDestroy") == 0) return kFenceDestroy;
  if (starts("cuGraphExecUpdate")) return kFenceAll;
  if (starts("cuGraphExec") || starts("cuGraphLaunch") || starts("cuGraphUpload"))
    return kNoFence;  // exec graphs
  if (std::strstr(f, "Get") || std::strstr(f, "SetEnabled") ||
      std::strcmp(f, "cuGraphDebugDotPrint") == 0 || std::strcmp(f, "cuGraphNodeFindInClone") == 0 ||
      std::strcmp(f, "cuGraphClone") == 0 || std::strcmp(f, "cuGraphCreate") == 0)
    return kNoFence;  // reads, and new graphs
  return kFenceAll;   // adds, sets, removes, instantiates, user objects
}
void Injection::fence(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  if (!cb || cb->callbackSite != CUPTI_API_ENTER || cbid >= fence_kinds_.size()) return;
  switch (fence_kinds_[cbid]) {
    case kFenceAll:
      resolve([](const Deferred&) { return true; }, false);
      break;
    case kFenceDestroy:
      if (cb->functionParams) {
        CUgraph g = static_cast<const cuGraphDestroy_params*>(cb->functionParams)->hGraph;
        resolve([g](const Deferred& d) { return d.graph == g; }, true);
      }
      break;
    default:
      break;
  }
}
// Enables the fences' callbacks and the context's destruction. Once,
// before the first subscription's callbacks can come (fence_kinds_ is
// read unlocked).
bool Injection::enable_fences() {
  if (fence_kinds_.empty()) {
    std::vector<uint8_t> kinds(CUPTI_DRIVER_TRACE_CBID_SIZE, kNoFence);
    for (int id = 1; id < int(CUPTI_DRIVER_TRACE_CBID_SIZE); ++id) {
      const char* name = nullptr;
      if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, CUpti_CallbackId(id), &name) == CUPTI_SUCCESS &&
          name)
        kinds[size_t(id)] = fence_kind(name);
    }
    fence_kinds_ = std::move(kinds);
  }
  bool ok = cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE,
                                CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) == CUPTI_SUCCESS;
  for (size_t id = 1; id < fence_kinds_.size() && ok; ++id)
    if (fence_kinds_[id] != kNoFence)
      ok = cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, CUpti_CallbackId(id)) ==
           CUPTI_SUCCESS;
  return ok;
}

// The preload library's cudaGraphDestroy (or cuGraphDestroy): true when
// graphscope takes the graph over (its walk is still to do): the walker
// thread walks it and destroys it, and the application's call returns at
// once.
bool Injection::take_destroy(CUgraph g) noexcept {
  if (forked_child || t_walker || !deferred_n_.load(std::memory_order_acquire)) return false;
  try {
    {
      std::lock_guard<std::mutex> l(dm_);
      auto it =
          std::find_if(deferred_.begin(), deferred_.end(), [g](const Deferred& d) { return d.graph == g; });
      if (it == deferred_.end()) return false;
      it->destroy = true;  // by whoever walks it, after the walk
      if (it->state != Walk::pending) return true;
      it->state = Walk::queued;
    }
    walker().post([this, g] {
      t_walker = true;
      wait_for_captures();
      Deferred d;
      {
        std::lock_guard<std::mutex> l(dm_);
        auto it = std::find_if(deferred_.begin(), deferred_.end(),
                               [g](const Deferred& x) { return x.graph == g && x.state == Walk::queued; });
        if (it == deferred_.end()) return;
        it->state = Walk::walking;
        d = *it;
      }
      walk_deferred(d);
    });
    return true;
  } catch (...) {
    return false;
  }
}

void Injection::wait_for_captures() const {
  if (!origins_) return;  // captures are counted by origins' callbacks
  const auto until = std::chrono::steady_clock::now() + kCaptureWait;
  while (capture::OriginRecorder::instance().captures_active() > 0 &&
         std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
}

// The preload library's cudaGraphLaunch (or cuGraphLaunch): the exec
// graph's walk, if still to do, before it runs.
void Injection::launching(CUgraphExec e) noexcept {
  resolve([e](const Deferred& d) { return d.exec == e; }, true);
}

}  // namespace graphscope::inject::internal
