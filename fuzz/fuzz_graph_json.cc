// libFuzzer target: graphscope.graph/1 JSON (read_graph_json, the tape
// parser under it, validation, and what `graphscope dump` does with a valid
// graph), with a write/read round trip as the oracle for logic bugs.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  graphscope::fuzz::fuzz_graph_json(graphscope::fuzz::text_of(data, size));
  return 0;
}
