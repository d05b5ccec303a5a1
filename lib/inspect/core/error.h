// One exception type for the whole library. Each error has a category that
// maps to the documented exit code; the CLI turns it into exactly one line,
// "graphscope: <what> (<why>)", at a single boundary (apps/graphscope).
#pragma once

#include <stdexcept>
#include <string>

namespace graphscope {

/// Exit codes, the same for every subcommand (man/graphscope.1).
enum class ExitCode : int {
  ok = 0,          // success, check passed, no difference
  failed = 1,      // check failed or graphs differ
  usage = 2,       // bad command line
  bad_input = 3,   // an input file is unreadable, malformed or hostile
  device = 4,      // CUDA, CUPTI or device error
  workload = 5,    // the workload failed (error, crash, timeout)
};

class Error : public std::runtime_error {
 public:
  /// `what` names the thing that failed (a file, a node, a call); `why` says
  /// what was wrong with it. what() is "what (why)".
  Error(ExitCode code, std::string what, std::string why)
      : std::runtime_error(why.empty() ? what : what + " (" + why + ")"),
        code_(code), subject_(std::move(what)), reason_(std::move(why)) {}
  ExitCode code() const { return code_; }
  const std::string& subject() const { return subject_; }
  const std::string& reason() const { return reason_; }

 private:
  ExitCode code_;
  std::string subject_, reason_;
};

/// Shorthand for the most common class: a malformed input file.
[[noreturn]] inline void throw_input(std::string what, std::string why) {
  throw Error(ExitCode::bad_input, std::move(what), std::move(why));
}

}  // namespace graphscope
