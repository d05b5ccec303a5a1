// Origins: what the thread that made a graph node was doing at that moment
// (graph.h's Origin), recorded through CUPTI while graphs are captured or
// built, by `graphscope capture` and by the injection library alike.
//
//  - NVTX: CUPTI's NVTX domain (the process runs with NVTX_INJECTION64_PATH
//    naming libcupti, which graphscope sets) keeps each thread's stack of
//    pushed ranges and the ranges it started;
//  - Python: at the entry of the API call that makes a node (a launch, a
//    copy, an event record, a graph-add call), before the driver holds any
//    lock of its own, the thread's Python stack is read with the GIL taken
//    the way any C extension takes it back: the innermost frames outside
//    the framework and, for PyTorch, the nn.Module objects whose forward is
//    on the stack, named by where each sits in its parent. Only while a
//    stream capture is under way (or for graph-add calls), and only on
//    threads that already have a Python thread state;
//  - native: without Python, the return addresses of the call, symbolized
//    when the graph is walked (first frame outside CUDA and graphscope).
// A node created inside such an API call takes its origin from there
// (CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED); clones inherit their original's.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <memory>

#include "inspect/graph.h"

namespace graphscope::capture {

class OriginRecorder {
 public:
  /// The process's recorder (never destroyed: callbacks may come late).
  static OriginRecorder& instance();

  /// Enables the callbacks it needs on a subscriber that forwards them to
  /// on_callback(): the NVTX domain, the driver API calls that make nodes and the
  /// resource callbacks of graph nodes. False when CUPTI refused.
  bool enable(CUpti_SubscriberHandle subscriber);

  /// Subscribes to CUPTI itself (for `graphscope capture`, where nothing
  /// else subscribes) and enables. False when CUPTI is held by another
  /// subscriber.
  bool subscribe();

  /// Handles a callback of the domains enable() turned on; ignores others.
  /// Never throws.
  void on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) noexcept;

  /// The origin recorded for a node handle (native frames symbolized on the
  /// first ask); null when none was.
  std::shared_ptr<const Origin> origin_of(uint64_t node_handle);

  /// Points NVTX at CUPTI in this process (NVTX_INJECTION64_PATH, unless the
  /// environment already names an injection), so that ranges are seen. Must
  /// run before the program's first NVTX call. Returns the path set, or ""
  /// when another injection was named or libcupti was not found.
  static std::string inject_nvtx();

  /// The path of the libcupti this code runs with ("" when unknown).
  static std::string cupti_path();

  /// Tests only: every Python stack read of the calling thread takes the
  /// long way, without any of the caches (their results must agree).
  static void uncached_for_tests(bool on);

  /// Python stack reads so far: those answered from the caches without the
  /// GIL, and the others (GRAPHSCOPE_DEBUG_TIMES in an attached process).
  struct ReadCounts {
    uint64_t cached = 0, full = 0;
  };
  ReadCounts read_counts() const;

  struct Impl;

 private:
  OriginRecorder();
  Impl* impl_;
};

}  // namespace graphscope::capture
