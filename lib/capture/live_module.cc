// libgraphscope_live.so: lib/capture behind the table of live_abi.h. Only
// graphscope_live_table is exported; the static CUDA runtime and everything
// else bind inside the module (as in the injection library), so a host
// process's own CUDA runtime neither sees nor replaces ours.
#include <exception>

#include "capture.h"
#include "inspect/core/error.h"
#include "live_abi.h"
#include "replay.h"

namespace graphscope::capture {
namespace {

template <class F>
bool guarded(LiveError& error, F&& f) {
  try {
    f();
    return true;
  } catch (const Error& e) {
    error = {int(e.code()), e.subject(), e.reason()};
  } catch (const std::bad_alloc&) {
    error = {int(ExitCode::device), "graphscope's live module", "out of memory"};
  } catch (const std::exception& e) {
    error = {int(ExitCode::device), "graphscope's live module", e.what()};
  }
  return false;
}

bool capture(const CaptureOptions& o, std::vector<CapturedGraph>& out, LiveError& error) {
  return guarded(error, [&] { out = capture_workload(o); });
}

bool profile(const ProfileRunOptions& o, std::vector<ProfiledGraph>& out, LiveError& error) {
  return guarded(error, [&] { out = profile_workload(o); });
}

bool walk(uintptr_t graph, uintptr_t exec, const WalkOptions& o, GraphDocument& out, LiveError& error) {
  return guarded(error, [&] { out = walk_cuda_graph(graph, exec, o); });
}

const LiveTable kTable = {kLiveAbi, GRAPHSCOPE_VERSION, capture, profile, walk};

}  // namespace
}  // namespace graphscope::capture

extern "C" __attribute__((visibility("default"))) const graphscope::capture::LiveTable* graphscope_live_table() {
  return &graphscope::capture::kTable;
}
