// The proxy (recorder.h says why): a thread of graphscope's that takes the
// GIL and reads the stack of a thread inside the driver that does not hold
// it, waited for a bounded time.
#include <chrono>
#include <mutex>
#include <thread>

#include "recorder.h"

namespace graphscope::capture {

OriginRecorder::Impl::Proxied OriginRecorder::Impl::proxy_read(const Python& py,
                                                               const std::shared_ptr<Origin>& o, bool reuse,
                                                               std::shared_ptr<const Origin>& out) {
  using std::chrono::microseconds;
  ProxyJob& p = proxy;
  if (!py.SaveThread || !py.RestoreThread || !py.ThreadFrame || p.off) return Proxied::unavailable;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(p.wait_ms.load());
  std::unique_lock<std::timed_mutex> asking(p.asking, deadline);
  if (!asking.owns_lock()) return Proxied::late;
  if (p.failed) return Proxied::unavailable;
  if (!p.started.exchange(true)) {
    try {
      std::thread([this] { proxy_loop(); }).detach();
    } catch (...) {
      p.failed = true;
      return Proxied::unavailable;
    }
  }
  // An abandoned read may still run: the proxy is free first.
  if (!p.wait_for(ProxyJob::idle, p.to_asker, deadline, microseconds(0))) return Proxied::late;
  p.target = py.ThisThreadState();
  p.uncached = g_uncached;
  p.reuse = reuse;
  p.o = o;
  p.result.reset();
  p.set(ProxyJob::waiting, p.to_proxy);
  if (!p.wait_for(ProxyJob::done, p.to_asker, deadline, microseconds(100))) {
    if (p.move(ProxyJob::waiting, ProxyJob::idle, p.to_asker)) return Proxied::late;  // never begun
    // Begun: the proxy holds the GIL and needs nothing of this thread's.
    if (!p.wait_for(ProxyJob::done, p.to_asker, std::chrono::steady_clock::now() + std::chrono::seconds(1),
                    microseconds(0)) &&
        p.move(ProxyJob::reading, ProxyJob::abandoned, p.to_asker))
      return Proxied::late;
  }
  out = std::move(p.result);
  p.o.reset();
  p.set(ProxyJob::idle, p.to_asker);
  return Proxied::read;
}

void OriginRecorder::Impl::proxy_loop() {
  ProxyJob& p = proxy;
  const Python& py = python();
  auto fail = [&] {  // a job asked for is answered with nothing
    p.failed = true;
    p.result.reset();
    p.move(ProxyJob::waiting, ProxyJob::done, p.to_asker);
  };
  if (!py.usable || !py.IsInitialized() || py.IsFinalizing()) return fail();
  // This thread's own thread state, kept for its life; the GIL is let
  // go while it waits.
  py.Ensure();
  void* mine = py.SaveThread();
  for (;;) {
    // Soon after a read another may come (a first capture's launches).
    while (!p.wait_for(ProxyJob::waiting, p.to_proxy, std::chrono::steady_clock::now() + std::chrono::minutes(10),
                       std::chrono::microseconds(200))) {
    }
    // (Taking the GIL while Python shuts down would end this thread.)
    if (py.IsFinalizing()) return fail();
    py.RestoreThread(mine);
    if (!p.move(ProxyJob::waiting, ProxyJob::reading, p.to_asker)) {  // the asking thread gave up
      py.SaveThread();
      continue;
    }
    const std::shared_ptr<Origin> o = p.o;
    std::shared_ptr<const Origin> result;
    g_target = p.target;
    g_uncached = p.uncached;
    try {
      result = read_python(py, py_cache, py_m, o, p.reuse);
    } catch (...) {
    }
    g_target = nullptr;
    g_uncached = false;
    py.SaveThread();
    p.result = std::move(result);
    if (!p.move(ProxyJob::reading, ProxyJob::done, p.to_asker)) p.set(ProxyJob::idle, p.to_asker);  // abandoned
  }
}

}  // namespace graphscope::capture
