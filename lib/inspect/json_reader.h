// Reader for "graphscope.graph/1" documents and PyTorch's get_graph_data()
// dict saved as JSON (the same keys, no "schema"). Streams the text through
// nlohmann's SAX parser into a compact value tape (no DOM of maps), so a
// 100k-node document reads in a fraction of a second.
#pragma once

#include <string>
#include <string_view>

#include "graph.h"

namespace graphscope {

/// Parses a graph document. Throws Error(bad_input) with the JSON path of the
/// offending value ("nodes[3].dependencies[0]: ...") on any malformed input.
/// Does not check graph structure: see validate_graph().
GraphDocument read_graph_json(std::string_view text, const std::string& origin);

}  // namespace graphscope
