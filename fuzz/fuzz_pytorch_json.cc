// libFuzzer target: PyTorch's get_graph_data() dict saved as JSON (the same
// reader as graphscope.graph/1, reached without a "schema" key), seeded with
// schema-less documents. Same checks as fuzz_graph_json.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  graphscope::fuzz::fuzz_graph_json(graphscope::fuzz::text_of(data, size));
  return 0;
}
