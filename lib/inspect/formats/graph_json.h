// "graphscope.graph/1" (a superset of PyTorch's get_graph_data() dict):
// the reader, which also takes PyTorch's dict saved as JSON (the same keys,
// no "schema"), and the writer, side by side on GraphDocument.
#pragma once

#include <string>
#include <vector>
#include <string_view>

#include "../model/graph.h"

namespace graphscope {

struct Folding;

inline constexpr std::string_view kGraphSchema = "graphscope.graph/1";

/// Parses a graph document. Throws Error(bad_input) with the JSON path of the
/// offending value ("nodes[3].dependencies[0]: ...") on any malformed input.
/// Does not check graph structure: see validate_graph().
GraphDocument read_graph_json(std::string_view text, const std::string& origin);

/// Serializes a graph document as "graphscope.graph/1". Its "repeats" are
/// `folding` (find_repeats(doc.root), fold.h) when the command has it
/// already, else found here.
std::string write_graph_json(const GraphDocument& doc, const Folding* folding = nullptr);

/// The same text in pieces, to be written one after another: a large
/// graph's nodes are formatted in parallel slices, and writing the slices
/// as they are saves joining them (a copy of the whole document).
std::vector<std::string> write_graph_json_pieces(const GraphDocument& doc, const Folding* folding = nullptr);

/// Writes the same text to path atomically (write_output's rules): a large
/// graph's first node slices are written while later ones are formatted.
void write_graph_json_file(const std::string& path, const GraphDocument& doc, const Folding* folding = nullptr);

}  // namespace graphscope
