// graphscope's own pictures: DOT through Graphviz cgraph, SVG through gvc.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "../model/graph.h"

namespace graphscope {

struct Folding;

/// Graphs larger than this are refused for SVG layout unless asked for:
/// dot's layout time grows much faster than linearly.
inline constexpr size_t kDefaultSvgMaxNodes = 5000;

/// Per-node decoration of the root graph's nodes (e.g. a profile's delays):
/// a fill colour ("#rrggbb", empty: the type's own), the label's colour on
/// it (empty: black) and an extra label line each, indexed like the root
/// graph's nodes, and legend lines for the title. A box that draws several
/// nodes takes the colours of its node of highest rank.
struct DotOverlay {
  std::vector<std::string> fill, font, note;
  std::vector<int> rank;
  std::vector<std::string> legend;
};

/// DOT text, valid for `dot`: short demangled kernel names with launch
/// geometry, a colour and shape per node type, a style per edge type,
/// child graphs and conditional bodies as clusters.
/// Folded (fold: the root graph's folding, find_repeats(doc.root)): one
/// copy of each repeat in a cluster that says how many there are, and runs
/// of at least five single-file nodes as one box; fold nullptr draws every
/// node.
std::string write_dot(const GraphDocument& doc, const DotOverlay* overlay, const Folding* fold);

/// The same picture laid out by dot and rendered to SVG by gvc. Throws
/// Error(usage) when it would draw more than max_nodes nodes. drawn_as, when
/// given, gets per root node the name of the shape that draws it (the SVG
/// element's <title>: "g0_n7", or "g0_run3" for a run drawn as one box;
/// folded, a repeat's later copies are drawn by copy 1's nodes).
std::string render_svg(const GraphDocument& doc, size_t max_nodes, const DotOverlay* overlay, const Folding* fold,
                       std::vector<std::string>* drawn_as = nullptr);

/// The same two for a caller with one picture to make and no folding at
/// hand: fold true finds it here.
std::string write_dot(const GraphDocument& doc, const DotOverlay* overlay = nullptr, bool fold = true);
std::string render_svg(const GraphDocument& doc, size_t max_nodes = kDefaultSvgMaxNodes,
                       const DotOverlay* overlay = nullptr, bool fold = true,
                       std::vector<std::string>* drawn_as = nullptr);

}  // namespace graphscope
