// graphscope: inspect and debug CUDA graphs. A thin shell over the library:
// parse the command line, run one handler, and turn every failure into one
// line "graphscope: <what> (<why>)" and the documented exit code.
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

}  // namespace

int main(int argc, char** argv) {
  using graphscope::ExitCode;
  // The CLI maps its large inputs, and answers a file that shrinks under it
  // with one line and exit code 3 (io.h); the library leaves signals alone.
  graphscope::map_inputs_and_guard_sigbus();
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
