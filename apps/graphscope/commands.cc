#include "commands.h"

namespace graphscope::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"dump", "Read a graph document (graphscope JSON, PyTorch get_graph_data JSON or a "
               "cudaGraphDebugDotPrint .dot) and write a summary, JSON, DOT or SVG",
       declare_dump},
  };
  return table;
}

}  // namespace graphscope::cli
