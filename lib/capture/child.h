// Running untrusted work (a workload's code, or anything that touches the
// GPU) in a child process, so that a crash, a hang or a CUDA error in it
// becomes a message and an exit code instead of a crash of graphscope.
#pragma once

#include <functional>
#include <string>

namespace graphscope::capture {

struct ChildStatus {
  bool timed_out = false;
  bool signaled = false;
  int signal = 0;
  int exit_code = 0;  // when neither timed out nor signaled
};

/// Forks; the child runs body() in its own process group and exits with its
/// return value (or 70 if it throws). The parent waits up to timeout_s
/// seconds (<= 0: forever), then kills the child's whole group. Call before
/// the parent process touches CUDA: the child must be the first to.
ChildStatus run_in_child(const std::function<int()>& body, double timeout_s);

/// "signal 11 (Segmentation fault)".
std::string describe_signal(int sig);

}  // namespace graphscope::capture
