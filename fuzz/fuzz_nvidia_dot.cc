// libFuzzer target: cudaGraphDebugDotPrint DOT (read_nvidia_dot through
// Graphviz cgraph, the record-label parser, validation), with the JSON round
// trip of what it reads. cgraph's parser, lexer buffer and error state are
// process-wide, so the same text read twice must give the same result, and a
// known-good graph must still read after every input.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"
#include "inspect/formats/load.h"
#include "inspect/formats/nvdot_reader.h"
#include "inspect/model/validate.h"

using namespace graphscope;
using namespace graphscope::fuzz;

namespace {

// A small cudaGraphDebugDotPrint graph (tests/data/nvidia/pdl.dot, cut).
constexpr const char* kCanary = R"(digraph dot {
subgraph cluster_34 {
label="graph_34" graph[style="dashed"];
"graph_34_node_0"[style="bold" shape="octagon" label="0
_Z11pdl_primaryPfi
"];

"graph_34_node_1"[style="bold" shape="octagon" label="1
_Z13pdl_secondaryPfPKfi
"];

"graph_34_node_0" -> "graph_34_node_1";
}
}
)";

// Whatever an input did to cgraph's process-wide state, the next reader
// must not notice: the canary still reads, whole.
void check_canary() {
  GraphDocument doc;
  std::string why;
  check(accepts([&] { doc = read_nvidia_dot(kCanary, "canary"); }, &why),
        "after this input, a good DOT graph no longer reads: " + why);
  check(doc.root.nodes.size() == 2 && doc.root.nodes[1].dependencies.size() == 1,
        "after this input, a good DOT graph reads wrong");
}

// cgraph names a node or subgraph whose name starts with '%' after a
// process-wide counter ("%3313785"), so messages naming one differ from read
// to read: compared with the numbers left out.
std::string without_anonymous_ids(const std::string& m) {
  std::string out;
  for (size_t i = 0; i < m.size(); ++i) {
    out.push_back(m[i]);
    if (m[i] == '%')
      while (i + 1 < m.size() && m[i + 1] >= '0' && m[i + 1] <= '9') ++i;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = text_of(data, size);
  GraphDocument doc, again;
  std::string why, why_again;
  const bool read = accepts([&] { doc = read_nvidia_dot(text, "fuzz"); }, &why);
  check_canary();
  const bool read_again = accepts([&] { again = read_nvidia_dot(text, "fuzz"); }, &why_again);
  check(read == read_again && without_anonymous_ids(why) == without_anonymous_ids(why_again),
        "the same DOT read twice gives different outcomes: \"" + why + "\" then \"" + why_again + "\"");
  if (!read) {
    check_canary();
    return 0;
  }
  std::string diff = document_difference(doc, again);
  check(diff.empty(), "the same DOT read twice gives different graphs: " + diff);

  const bool valid = accepts([&] { validate_graph(doc, "fuzz"); });
  GraphFormat format = GraphFormat::graphscope_json;
  if (accepts([&] { format = detect_graph_format(text, "fuzz"); }) && format == GraphFormat::nvidia_dot) {
    std::string load_why;
    const bool loaded = accepts([&] { parse_graph(text, "fuzz"); }, &load_why);
    check(loaded == valid, loaded ? "parse_graph accepts an invalid graph"
                                  : "parse_graph refuses a DOT graph that reads and validates: " + load_why);
  }
  check_graph(doc, valid);
  check_canary();
  return 0;
}
