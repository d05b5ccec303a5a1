// The live entry points of a graphscope built without CUDA: linked in place
// of lib/capture, so that the CLI has no build variants of its own. Each
// says, in one line, that this build cannot do it (exit code 4).
#include "capture.h"
#include "inspect/error.h"
#include "replay.h"

namespace graphscope::capture {

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

}  // namespace graphscope::capture
