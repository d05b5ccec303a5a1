// The look of graphscope's pictures (dot_writer.cc): text helpers for labels
// and tooltips, and one style per node type and per edge type. Private to
// lib/inspect/render.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../model/graph.h"

namespace graphscope::dot_detail {

std::string human_bytes(uint64_t bytes);
std::string hex(uint64_t v);
std::string dim3_text(const Dim3& d);
std::string esc(std::string_view s);
std::string tooltip_text(std::string_view escaped);
std::string tooltip_lines(const std::vector<std::string>& escaped);
std::string join_lines(const std::vector<std::string>& lines, const char* sep);
std::string type_words(NodeType t);
std::string kernel_full_name(const Node& n);

struct NodeStyle {
  const char* shape;
  const char* style;
  const char* fill;
  const char* border;
};
NodeStyle node_style(NodeType t);

struct EdgeStyle {
  const char* style;
  const char* color;
  const char* penwidth;
};
EdgeStyle edge_style(EdgeType t);

inline const char* const kBodyEdgeColor = "#9a9a9a";
// Cluster fills by nesting depth, so that nested bodies stay distinguishable.
inline const char* const kClusterFill[] = {"#f7f7f7", "#ececec", "#e2e2e2"};

}  // namespace graphscope::dot_detail
