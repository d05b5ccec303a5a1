// graphscope ranks RUN_DIR [--json] [-o FILE] [--trace FILE]
#include <memory>

#include "commands.h"
#include "inspect/core/error.h"
#include "inspect/core/io.h"
#include "inspect/runs/ranks.h"

namespace graphscope::cli {
namespace {

struct RanksCli {
  std::string run_dir;
  std::string output = "-";
  std::string trace;
  bool json = false;
};

int run_ranks(const RanksCli& c) {
  RanksResult r = compare_ranks(c.run_dir);
  // Everything is made before anything is written: a bad trace leaves no report.
  std::string trace = c.trace.empty() ? std::string() : merge_rank_traces(r);
  OutputSet outputs;
  outputs.add(c.output, c.json ? write_ranks_json(r) : format_ranks(r));
  if (!c.trace.empty()) outputs.add(c.trace, trace);
  outputs.commit();
  return static_cast<int>(r.same() ? ExitCode::ok : ExitCode::failed);
}

}  // namespace

Handler declare_ranks(CLI::App& sub) {
  auto c = std::make_shared<RanksCli>();
  sub.add_option("RUN_DIR", c->run_dir,
                 "The --out-dir of capture --exec or profile --exec of a multi-rank job (torchrun, mpirun, srun)")
      ->required();
  sub.add_flag("--json", c->json, "Write graphscope.ranks/1 JSON");
  sub.add_option("-o,--output", c->output, "Output file, written atomically (default: standard output)");
  sub.add_option("--trace", c->trace,
                 "Write one Chrome trace of every rank's profiled replays (a process per rank, one clock, "
                 "collective kernels marked)");
  return [c] { return run_ranks(*c); };
}

}  // namespace graphscope::cli
