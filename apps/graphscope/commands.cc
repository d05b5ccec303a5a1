#include "commands.h"

namespace graphscope::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"dump", "Read a graph document (graphscope JSON, PyTorch get_graph_data JSON or a "
               "cudaGraphDebugDotPrint .dot) and write a summary, JSON, DOT or SVG",
       declare_dump},
      {"capture", "Load a workload shared object, capture its work into CUDA graphs (template kept), "
                  "instantiate, replay and walk every node into graphscope.graph/1 JSON",
       declare_capture},
  };
  return table;
}

}  // namespace graphscope::cli
