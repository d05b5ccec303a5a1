// Reading a graph document in any accepted format, chosen by content.
#pragma once

#include <string>
#include <string_view>

#include "../model/graph.h"

namespace graphscope {

enum class GraphFormat { graphscope_json, pytorch_json, nvidia_dot };

/// Guesses the format of a graph document from its first bytes and keys:
/// a JSON object with a "schema" key is ours, one without is PyTorch's
/// get_graph_data() dict, "digraph" opens a cudaGraphDebugDotPrint file.
/// Throws Error(bad_input) when it is none of them.
GraphFormat detect_graph_format(std::string_view text, const std::string& origin);

/// Parses and validates a graph document; origin names it in messages.
GraphDocument parse_graph(std::string_view text, const std::string& origin);

/// Reads, parses and validates the graph document at path ("-": stdin).
GraphDocument load_graph(const std::string& path);

}  // namespace graphscope
