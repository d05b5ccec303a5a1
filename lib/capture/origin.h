// Origins: what the thread that made a graph node was doing at that moment
// (graph.h's Origin), recorded through CUPTI while graphs are captured or
// built, by `graphscope capture` and by the injection library alike.
//
//  - NVTX: CUPTI's NVTX domain (the process runs with NVTX_INJECTION64_PATH
//    naming libcupti, which graphscope sets) keeps each thread's stack of
//    pushed ranges and the ranges it started;
//  - Python: the thread's Python stack, read where a node is created during
//    a stream capture (CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED), and at the
//    entry of graph-add calls: the innermost frames outside the framework
//    and, for PyTorch, the nn.Module objects whose forward is on the stack,
//    named by where each sits in its parent. Inside the driver the GIL is
//    not waited for (a thread that holds it may be waiting for the driver):
//    the caches answer without it (what a capture uses is checked when the
//    capture begins, where the GIL can be taken), a thread that holds it
//    reads in full, and any other (PyTorch lets the GIL go around its ops)
//    has a proxy thread take the GIL and read its stack, waiting for it a
//    bounded time. Only on threads that already have a Python thread state;
//  - native: without Python, the return addresses of the call, symbolized
//    when the graph is walked (first frame outside CUDA and graphscope).
// A node created inside an API call whose entry read the stack takes its
// origin from there; clones inherit their original's.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "inspect/model/graph.h"

namespace graphscope::capture {

class OriginRecorder {
 public:
  /// The process's recorder (never destroyed: callbacks may come late).
  static OriginRecorder& instance();

  /// Enables the callbacks it needs on a subscriber that forwards them to
  /// on_callback(): the NVTX domain, the driver API calls that begin and
  /// end captures, instantiate and add graph nodes, and the resource
  /// callbacks of graph nodes (launches and the other calls that only make
  /// nodes are enabled later, and only where the Python in the process
  /// lacks what the proxy needs). False when CUPTI refused.
  bool enable(CUpti_SubscriberHandle subscriber);

  /// The subscriber enable() was given is about to be unsubscribed: nothing
  /// is enabled on it from then on.
  void unsubscribing();

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
  /// The same for n handles, under one lock (out[i] for handles[i]).
  void origins_of(const uint64_t* handles, size_t n, std::shared_ptr<const Origin>* out);

  /// Eager launches (a run whose GPU work is recorded): the calling thread's
  /// place now, as an id (1 on; 0: none could be read), the same id for the
  /// same place. A place is the thread's NVTX ranges and its Python stack
  /// (each frame's code and instruction, read without the GIL); on a thread
  /// without Python (a native program, PyTorch's autograd thread), its NVTX
  /// ranges and `what` (the kernel's CUfunction, or the call for a copy),
  /// named by the native function of its first launch: unwinding the
  /// stack at every launch cost PyTorch's backward pass about 12 us a
  /// launch (H200, 2026-12-02). A place met before costs a hash and a
  /// lookup, a new one a full read (origin_of's, through the proxy where
  /// the thread lacks the GIL). Module paths are the first launch's at that
  /// place (code run for every layer of a model is one place). Never throws.
  uint32_t launch_site(uint64_t what) noexcept;
  /// The same, `what` asked of what_of only on a thread without Python
  /// frames to key by (an allocation's return addresses, say: unwinding a
  /// Python thread's stack at every allocation would be paid for nothing).
  uint32_t launch_site(uint64_t (*what_of)()) noexcept;
  /// The origin of each place launch_site() gave (index id - 1; native
  /// frames symbolized now; null where nothing was known).
  std::vector<std::shared_ptr<const Origin>> launch_sites();

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

  /// Tests only: how long a thread inside the driver waits for the proxy
  /// to begin its read (20 ms otherwise; a loaded test machine may need
  /// more).
  void proxy_wait_for_tests(int milliseconds);

  /// Tests only: the proxy counts as unavailable (as in a Python without
  /// what it needs), so that reads at the entry of launches take over.
  void proxy_off_for_tests();

  /// Whether stacks are read at the entry of every call that makes a node
  /// (the proxy could not be used), not where nodes are made.
  bool reads_at_entry() const;

  /// Whether this thread is inside a call whose new nodes are copies that
  /// need no origin (instantiation, an exec graph's destruction):
  /// GRAPHSCOPE_DEBUG_TIMES counts their callbacks apart.
  bool copying() const;

  /// Stream captures under way in the process (begun and not yet ended),
  /// as far as the callbacks enable() turned on have seen.
  int captures_active() const;

  /// Python stack reads so far: those answered from the caches without the
  /// GIL, those made in full by the reading thread, those made in full by
  /// the proxy for a thread inside the driver without the GIL, and those
  /// given up because the proxy could not begin in time (the node went
  /// without its Python stack). GRAPHSCOPE_DEBUG_TIMES says them.
  struct ReadCounts {
    uint64_t cached = 0;
    uint64_t same = 0;   // of the cached: the stack of the read before, frame for frame
    uint64_t prior = 0;  // of the cached: the stack of this thread's capture before, at the same place
    uint64_t made = 0;  // of the cached: an origin made from known facts (a model's later layers)
    uint64_t full = 0, proxied = 0, late = 0;
    // With time_reads: Knowns (stacks met before) compared with the stack,
    // and the frames of those that answered.
    uint64_t tries = 0, frames = 0;
    uint64_t ns = 0;      // time in the reads through the caches (with time_reads)
    // With time_reads, of ns: waiting for the caches' lock, comparing
    // stacks met before; and recording nodes.
    uint64_t lock_ns = 0, compare_ns = 0, record_ns = 0;
    // With time_reads, ns by how the read ended: not answered, by the
    // capture before, by the read before, by a walk through the caches.
    uint64_t path_ns[4] = {};
  };
  ReadCounts read_counts() const;
  /// Times the reads through the caches (ReadCounts::ns; GRAPHSCOPE_DEBUG_TIMES).
  void time_reads(bool on);

  struct Impl;

 private:
  uint32_t site(uint64_t what, uint64_t (*what_of)()) noexcept;
  OriginRecorder();
  Impl* impl_;
};

}  // namespace graphscope::capture
