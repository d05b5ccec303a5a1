// Launch sites: where each eager launch (one outside any graph) of a run
// whose GPU work is recorded came from, for the ledger's eager work by
// origin. A place is keyed cheaply on every launch (the NVTX ranges open on
// the thread, its Python frames' code and instruction pointers, else the
// kernel launched) and read in full once, the first time it is met.
#include <execinfo.h>

#include <functional>

#include "recorder.h"

namespace graphscope::capture {

namespace {
inline void mix(uint64_t& h, uint64_t v) {
  h = (h ^ v) * 0x100000001b3ull;
  h ^= h >> 31;
}
}  // namespace

uint32_t OriginRecorder::launch_site(uint64_t what) noexcept { return site(what, nullptr); }
uint32_t OriginRecorder::launch_site(uint64_t (*what_of)()) noexcept { return site(0, what_of); }

uint32_t OriginRecorder::site(uint64_t what, uint64_t (*what_of)()) noexcept {
  try {
    ThreadState& ts = thread_state();
    uint64_t h = 0x84222325cbf29ce4ull;
    for (const auto* list : {&ts.pushed, &ts.started})
      for (const ThreadState::Open& o : *list) mix(h, std::hash<std::string>{}(o.range.message));
    const Python& py = python();
    const bool python_ready = py.ready();
    const uint64_t frames = python_ready ? frames_key(py) : 0;
    void* pcs[48];
    int n = 0;
    if (frames) {
      mix(h, frames);
    } else {
      if (what_of) what = what_of();
      mix(h, what ^ 0x9e3779b97f4a7c15ull);
    }
    thread_local uint64_t last_key = 0;
    thread_local uint32_t last_id = 0;
    if (h == last_key && last_id) return last_id;
    Impl& im = *impl_;
    {
      std::lock_guard<std::mutex> lock(im.sites_m);
      auto it = im.site_ids.find(h);
      if (it != im.site_ids.end()) {
        last_key = h, last_id = it->second;
        return it->second;
      }
    }
    // A new place: read in full, outside the lock (a proxied read can take
    // milliseconds). Python frames only where they were keyed: a stack
    // that cannot be keyed is not read at every launch either.
    Entry e;
    e.origin = im.now(frames ? Impl::Read::in_driver : Impl::Read::none);
    if (e.origin->python.empty() && !frames) {
      n = backtrace(pcs, 48);
      if (n > 0) e.pcs = std::make_shared<std::vector<void*>>(pcs, pcs + n);
    }
    std::lock_guard<std::mutex> lock(im.sites_m);
    auto [it, added] = im.site_ids.emplace(h, 0);
    if (added) {
      if (im.sites.size() >= 1000000) {  // a place per launch: no key repeats
        im.site_ids.erase(it);
        return 0;
      }
      im.sites.push_back(std::move(e));
      it->second = uint32_t(im.sites.size());
    }
    last_key = h, last_id = it->second;
    return it->second;
  } catch (...) {
    return 0;
  }
}

std::vector<std::shared_ptr<const Origin>> OriginRecorder::launch_sites() {
  Impl& im = *impl_;
  std::vector<Entry> sites;
  {
    std::lock_guard<std::mutex> lock(im.sites_m);
    sites = im.sites;
  }
  std::vector<std::shared_ptr<const Origin>> out;
  out.reserve(sites.size());
  std::lock_guard<std::mutex> lock(im.m);  // symbolize's caches
  for (Entry& e : sites) {
    std::shared_ptr<const Origin> o = e.origin;
    if (e.pcs)
      if (auto native = im.symbolize(*e.pcs)) {
        auto copy = std::make_shared<Origin>(o ? *o : Origin{});
        copy->native = std::move(native);
        o = std::move(copy);
      }
    out.push_back(o && !o->empty() ? o : nullptr);
  }
  return out;
}

}  // namespace graphscope::capture
