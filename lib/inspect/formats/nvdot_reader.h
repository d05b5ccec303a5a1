// Reader for the DOT files cudaGraphDebugDotPrint writes (and so PyTorch's
// CUDAGraph.debug_dump), default and verbose, parsed with Graphviz cgraph.
#pragma once

#include <string>

#include "../model/graph.h"

namespace graphscope {

/// Parses cudaGraphDebugDotPrint output. The root graph is the one cluster
/// that no node names; clusters named by child-graph and conditional nodes
/// become their bodies.
/// Recovers node ids, types, kernel names, launch geometry and shared memory
/// (verbose), memcpy/memset sizes, event/host handles (verbose) and edges.
/// The DOT carries no exec graph id and no edge types: exec_graph_id stays
/// null and every edge is a default one.
/// Throws Error(bad_input) with the node or line at fault.
GraphDocument read_nvidia_dot(const std::string& text, const std::string& origin);

}  // namespace graphscope
