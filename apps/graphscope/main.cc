// graphscope: inspect and debug CUDA graphs. A thin shell over the library:
// parse the command line, run one handler, and turn every failure into one
// line "graphscope: <what> (<why>)" and the documented exit code.
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <new>

#include "commands.h"
#include "inspect/io.h"
#include "inspect/error.h"

namespace {

int fail(graphscope::ExitCode code, const std::string& message) {
  std::fflush(stdout);
  std::cerr << "graphscope: " << message << "\n";
  return static_cast<int>(code);
}

// A mapped input shrank while it was read: one line naming it, exit 3.
extern "C" void on_sigbus(int) {
  size_t n = 0;
  const char* line = graphscope::mapped_input_fault(&n);
  if (n) {
    ssize_t ignored = ::write(STDERR_FILENO, line, n);
    (void)ignored;
  }
  ::_exit(static_cast<int>(graphscope::ExitCode::bad_input));
}

}  // namespace

int main(int argc, char** argv) {
  using graphscope::ExitCode;
  // The CLI maps its large inputs, and answers a file that shrinks under it
  // with one line and exit code 3 (io.h); the library leaves signals alone.
  struct sigaction sa {};
  sa.sa_handler = on_sigbus;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGBUS, &sa, nullptr);
  graphscope::map_inputs(true);
  CLI::App app{"graphscope: inspect and debug CUDA graphs", "graphscope"};
  app.set_version_flag("--version", std::string("graphscope ") + GRAPHSCOPE_VERSION);
  app.require_subcommand(1);
  app.footer("Exit codes: 0 success, 1 check failed or graphs differ, 2 usage error, 3 bad input file,\n"
             "4 CUDA/CUPTI/device error, 5 workload failed. See graphscope(1).");
  std::vector<std::pair<CLI::App*, graphscope::cli::Handler>> handlers;
  for (const auto& c : graphscope::cli::commands()) {
    CLI::App* sub = app.add_subcommand(c.name, c.description);
    handlers.emplace_back(sub, c.declare(*sub));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(ExitCode::usage, std::string(e.what()) + " (see graphscope --help)");
  }
  try {
    for (auto& [sub, handler] : handlers)
      if (sub->parsed()) return handler();
    return fail(ExitCode::usage, "no subcommand (see graphscope --help)");
  } catch (const graphscope::Error& e) {
    return fail(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return fail(ExitCode::bad_input, "out of memory (the input is too large for this machine)");
  } catch (const std::exception& e) {
    return fail(ExitCode::bad_input, std::string("unexpected error (") + e.what() + ")");
  }
}
