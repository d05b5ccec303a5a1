// "graphscope.diff/1": the structural diff as JSON, written and read back on
// the same struct (GraphDiff).
#pragma once

#include <string>
#include <string_view>

#include "../analysis/diff.h"

namespace graphscope {

inline constexpr std::string_view kDiffSchema = "graphscope.diff/1";

/// "graphscope.diff/1" JSON: everything in the report, with every node index.
std::string write_diff_json(const GraphDiff& d, const std::string& a_origin, const std::string& b_origin);


/// A diff read back: the diff and the names the writer gave the documents.
struct DiffDocument {
  GraphDiff diff;
  std::string a_origin, b_origin;
};

/// Reads a "graphscope.diff/1" document (everything write_diff_json writes).
/// Throws Error(bad_input) "origin (json.path: why)" on any problem.
DiffDocument read_diff_json(std::string_view text, const std::string& origin);

}  // namespace graphscope
