// What a walk of a live graph records (walk.h). Free of CUDA headers, so
// the CLI can set it whether or not this build has CUDA.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "inspect/model/graph.h"

namespace graphscope::capture {

/// Where a walk's time goes, added up over walks (GRAPHSCOPE_DEBUG_TIMES in
/// an attached process; the benchmarks).
struct WalkPhases {
  enum Phase {
    get_nodes,
    type,
    ids,
    dependencies,
    params,
    cluster,
    names,
    origins,
    fill,
    details,
    whole,
    phases
  };
  uint64_t ns[phases] = {};
  static const char* name(int p) {
    static const char* const n[] = {"nodes",         "node type",     "node ids",     "dependencies",
                                    "kernel params", "cluster attr",  "kernel names", "origins",
                                    "model",         "other details", "whole walk"};
    return n[p];
  }
};

struct WalkOptions {
  /// Per-node details: launch geometry, sizes, handles, host symbols. Off
  /// gives types, ids, kernel names and edges only.
  bool details = true;
  /// Record node, function and host-function handles (process addresses:
  /// useful to match a live process's handles, meaningless in a file read
  /// later, and a quarter of a large document).
  bool handles = false;
  /// CUDA 13.0 has no call that returns a conditional node's bodies; when a
  /// graph has conditional nodes, recover them from cudaGraphDebugDotPrint of
  /// the same graph (read with graphscope's DOT reader).
  bool conditional_bodies = true;
  /// Where each node came from, by node handle (origin.h's recorder); null
  /// or returning null: no origin.
  std::function<std::shared_ptr<const Origin>(uint64_t handle)> origin_of;
  /// The same for n handles at once (out[i] for handles[i]); used instead
  /// of origin_of when set (one lock for a whole graph, where a walk runs
  /// beside the application's captures).
  std::function<void(const uint64_t* handles, size_t n, std::shared_ptr<const Origin>* out)> origins_of;
  /// When set: filled with the root graph's node handles, in node order
  /// (whether or not `handles` puts them in the document).
  std::vector<uint64_t>* root_handles = nullptr;
  /// When set: each phase's time is added here.
  WalkPhases* phases = nullptr;
};

}  // namespace graphscope::capture
