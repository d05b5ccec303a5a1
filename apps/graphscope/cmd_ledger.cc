// graphscope ledger RUN_DIR [--json] [-o FILE]
#include <memory>

#include "commands.h"
#include "inspect/core/error.h"
#include "inspect/core/io.h"
#include "inspect/runs/ledger.h"

namespace graphscope::cli {
namespace {

struct LedgerCli {
  std::string run_dir;
  std::string output = "-";
  bool json = false;
};

int run_ledger(const LedgerCli& c) {
  const Ledger l = make_ledger(c.run_dir);
  OutputSet outputs;
  outputs.add(c.output, c.json ? write_ledger_json(l) : format_ledger(l));
  outputs.commit();
  return static_cast<int>(ExitCode::ok);
}

}  // namespace

Handler declare_ledger(CLI::App& sub) {
  auto c = std::make_shared<LedgerCli>();
  sub.add_option("RUN_DIR", c->run_dir, "The --out-dir of capture --exec or profile --exec")->required();
  sub.add_flag("--json", c->json, "Write graphscope.ledger/1 JSON");
  sub.add_option("-o,--output", c->output, "Output file, written atomically (default: standard output)");
  return [c] { return run_ledger(*c); };
}

}  // namespace graphscope::cli
