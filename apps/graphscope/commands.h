// The subcommands of graphscope: one row each (name, description, the
// function that declares its options on a CLI11 subcommand and returns the
// handler to run). main.cc walks this table; it holds no command logic.
#pragma once

#include <CLI/CLI.hpp>

#include "inspect/analysis/profile.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace graphscope::cli {

/// Runs a parsed subcommand; returns the process exit code.
using Handler = std::function<int()>;

struct Command {
  const char* name;
  const char* description;
  Handler (*declare)(CLI::App& sub);
};

const std::vector<Command>& commands();

/// Option checks, each refusing with one short line (CLI11's own Range lets
/// "nan" through and prints its bounds to 300 digits): a finite number from
/// lo to hi ("what" says what it is, e.g. "a number of microseconds"), and a
/// whole number from lo to hi written in decimal digits (no sign, so no
/// wrap-around).
CLI::Validator finite_in(double lo, double hi, const std::string& what);
CLI::Validator whole_in(uint64_t lo, uint64_t hi);
/// The limit of pictures, as dump, capture, profile and report take it.
CLI::Option* add_svg_max_nodes(CLI::App& sub, size_t& value, const std::string& help);

/// "out.json" + "forward" -> "out.forward.json": one output file per graph
/// (or per run) when a command produces several.
std::string with_tag(const std::string& path, const std::string& tag);

struct AttachOptions;
/// The options of --exec shared by capture and profile: --exec, --out-dir,
/// --min-nodes, --max-graphs (and capture's --exec-graph-id filter).
/// The --exec options; idle_options: also --let-go-after and --stay-attached
/// in --help (capture), else accepted only to say they do not apply.
void add_attach_options(CLI::App& sub, bool& exec, AttachOptions& o, bool idle_options);

Handler declare_dump(CLI::App& sub);
Handler declare_capture(CLI::App& sub);
Handler declare_profile(CLI::App& sub);
Handler declare_check(CLI::App& sub);
Handler declare_diff(CLI::App& sub);
Handler declare_report(CLI::App& sub);
Handler declare_ranks(CLI::App& sub);
Handler declare_ledger(CLI::App& sub);

/// What `graphscope report` (and profile's --html) makes a page of: one
/// graph (with a trace: its profile), two graphs (their diff) or an --exec
/// output directory.
struct ReportRequest {
  std::vector<std::string> inputs;
  std::string trace;
  double threshold_us = 5, tolerance_us = 2;
  int64_t exec_graph_id = -1;
  std::vector<uint32_t> launches;
  bool fold = true;
  size_t svg_max_nodes = 5000;
};
/// The HTML page; throws Error like the other commands' readers.
std::string make_report(const ReportRequest& q);
/// The analysis options of profile and report (-1: no --exec-graph-id).
ProfileOptions profile_options(double threshold_us, double tolerance_us, int64_t exec_graph_id,
                               const std::vector<uint32_t>& launches);
/// Refuses (Error usage) to write a page to a terminal.
void check_report_output(const std::string& output);

}  // namespace graphscope::cli
