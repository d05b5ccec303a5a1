// graphscope: inspect and debug CUDA graphs. A thin shell over the library:
// parse the command line, run one handler, and turn every failure into one
// line "graphscope: <what> (<why>)" and the documented exit code.
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <iostream>
#include <new>

#include "commands.h"
#include "inspect/core/io.h"
#include "inspect/core/error.h"
#include "inspect/core/text.h"

namespace {

int fail(graphscope::ExitCode code, const std::string& message) {
  std::fflush(stdout);
  // One line whatever a file or kernel name in it holds: control
  // characters are shown escaped, never sent to the terminal.
  std::cerr << "graphscope: " << graphscope::printable(message) << "\n";
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

// Offline commands read documents of tens to hundreds of MB into many small
// allocations, and on a virtual machine each 4 KiB page fault is expensive:
// most of reading a 100k-node graph went there (BENCHMARKS.md). glibc's
// malloc asks for transparent huge pages only when GLIBC_TUNABLES says so at
// start, so an offline command runs itself again, once, with
// glibc.malloc.hugetlb=1 added. Live commands are left as they are: their
// children run the user's code. GRAPHSCOPE_HUGE_PAGES=0 turns this off.
// An offline `profile` does not by default: it reserves more than it
// writes (room never written is never touched), and a huge page zeroes 2
// MiB wherever one byte is touched; with them it was slower (1.24-1.54 s
// against 0.92-1.02 s at the median, 2026-11-27,
// bench/offline_huge_pages.sh). Nor does a `dump` of a DOT file (.dot,
// .gv): cgraph's parse lost with them (1.94-2.02 s against 1.64-1.73 s).
// GRAPHSCOPE_HUGE_PAGES=1 asks for them in both.
void run_again_with_huge_pages(int argc, char** argv) {
  if (argc < 2) return;
  const std::string command = argv[1];
  const char* off = std::getenv("GRAPHSCOPE_HUGE_PAGES");
  const bool forced = off && std::strcmp(off, "1") == 0;
  bool offline = command == "dump" || command == "diff" || command == "check" || command == "report";
  auto ends_with = [](const char* a, const char* tail) {
    const size_t n = std::strlen(a), m = std::strlen(tail);
    return n >= m && std::strcmp(a + n - m, tail) == 0;
  };
  if (command == "dump" && !forced)
    for (int i = 2; i < argc; ++i) {
      const bool output = std::strcmp(argv[i - 1], "-o") == 0 || std::strcmp(argv[i - 1], "--output") == 0 ||
                          std::strncmp(argv[i], "--output=", 9) == 0;
      if (!output && (ends_with(argv[i], ".dot") || ends_with(argv[i], ".gv"))) offline = false;
    }
  if (command == "profile" && forced)
    for (int i = 2; i < argc; ++i) offline |= std::strcmp(argv[i], "--graph") == 0 || std::strncmp(argv[i], "--graph=", 8) == 0;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (!offline || (off && std::strcmp(off, "0") == 0) ||
      (tunables && std::strstr(tunables, "glibc.malloc.hugetlb")))
    return;
  char mode[64] = {};
  if (FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r")) {
    size_t n = std::fread(mode, 1, sizeof mode - 1, f);
    mode[n] = 0;
    std::fclose(f);
  }
  if (!std::strstr(mode, "[always]") && !std::strstr(mode, "[madvise]")) return;
  std::string value = tunables && *tunables ? std::string(tunables) + ":" : std::string();
  value += "glibc.malloc.hugetlb=1";
  if (::setenv("GLIBC_TUNABLES", value.c_str(), 1) != 0) return;
  ::execv("/proc/self/exe", argv);  // returns only on failure: go on as we are
  if (tunables) ::setenv("GLIBC_TUNABLES", tunables, 1);
  else ::unsetenv("GLIBC_TUNABLES");
}

}  // namespace

int main(int argc, char** argv) {
  using graphscope::ExitCode;
  run_again_with_huge_pages(argc, argv);
  // The CLI maps its large inputs, and answers a file that shrinks under it
  // with one line and exit code 3 (io.h); the library leaves signals alone.
  struct sigaction sa {};
  sa.sa_handler = on_sigbus;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGBUS, &sa, nullptr);
  graphscope::map_inputs(true);
  // An output that would replace one of the command's inputs is refused
  // (io.h): the CLI runs one command, so every file it reads is an input.
  graphscope::track_inputs(true);
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
  // No arguments: the usage. A first word that names no command: say which
  // it was and what the commands are (CLI11 would say only that one is
  // required).
  if (argc < 2) {
    std::fputs(app.help().c_str(), stderr);
    return static_cast<int>(ExitCode::usage);
  }
  if (argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const auto& [sub, handler] : handlers) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known)
      return fail(ExitCode::usage, std::string(argv[1]) + " (not a graphscope command; the commands are " + names +
                                       "; see graphscope --help)");
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
