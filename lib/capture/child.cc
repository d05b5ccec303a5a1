#include "child.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "inspect/core/error.h"

namespace graphscope::capture {

ChildStatus run_in_child(const std::function<int()>& body, double timeout_s) {
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) throw Error(ExitCode::workload, "fork", std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    int code = 70;
    try {
      code = body();
    } catch (...) {
    }
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(code);
  }
  setpgid(pid, pid);  // also from the parent, so the group exists before a kill
  ChildStatus st;
  timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  int status = 0;
  long sleep_ns = 1000000;  // 1 ms, growing to 20 ms
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) throw Error(ExitCode::workload, "waitpid", std::strerror(errno));
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double elapsed = double(now.tv_sec - start.tv_sec) + double(now.tv_nsec - start.tv_nsec) / 1e9;
    if (timeout_s > 0 && elapsed > timeout_s) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      st.timed_out = true;
      return st;
    }
    timespec d{0, sleep_ns};
    nanosleep(&d, nullptr);
    if (sleep_ns < 20000000) sleep_ns *= 2;
  }
  // Reap anything the workload left running in its group.
  kill(-pid, SIGKILL);
  if (WIFSIGNALED(status)) {
    st.signaled = true;
    st.signal = WTERMSIG(status);
  } else {
    st.exit_code = WEXITSTATUS(status);
  }
  return st;
}

std::string describe_signal(int sig) {
  const char* s = strsignal(sig);
  return "signal " + std::to_string(sig) + (s ? std::string(" (") + s + ")" : std::string());
}

}  // namespace graphscope::capture
