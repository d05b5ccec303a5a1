// What each graph cost the process, for the run ledger: the host's wall
// time of its stream capture, its instantiation and its uploads, the device
// memory the driver allocated on the capturing thread while the capture ran
// (PyTorch's private pool grows there: its new segments are cuMemAlloc or
// cuMemCreate calls inside the capture), and when the last graph was made.
// Fed the driver API callbacks of those calls (rare: a few per graph), from
// Injection::callback; read when the index is written. Private to
// libgraphscope_inject.so.
#pragma once

#include <cuda.h>
#include <cupti.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "inspect/formats/attach_json.h"

namespace graphscope::inject::internal {

class Costs {
 public:
  /// The instant times are counted from (the process attached), on the
  /// steady clock and on CUPTI's (cuptiGetTimestamp, the clock of activity
  /// records).
  void start(std::chrono::steady_clock::time_point t0, uint64_t t0_cupti_ns);

  /// The driver callbacks it needs, enabled on the subscriber; false when
  /// CUPTI refused one (costs are then not recorded).
  bool enable(CUpti_SubscriberHandle subscriber);

  /// A driver API callback: handled when it is one of enable()'s, else
  /// ignored (one table lookup). Never throws.
  void on_api(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) noexcept;

  /// Exec graph exec_id's costs into its index entry (version 1 holds them).
  void fill(uint32_t exec_id, AttachedGraph& g) const;

  /// When the process last made a graph (a stream capture ended, or an
  /// instantiation: graphs built with the graph API have no capture), on
  /// CUPTI's clock; nullopt before any.
  std::optional<uint64_t> graphs_end_cupti_ns() const;

  /// Seconds since start() of a steady-clock instant.
  double since_start(std::chrono::steady_clock::time_point t) const {
    return std::chrono::duration<double>(t - t0_).count();
  }
  uint64_t start_cupti_ns() const { return t0_cupti_ns_; }

 private:
  enum Kind : uint8_t { kNone, kBegin, kBeginToGraph, kEnd, kInstantiate, kUpload, kAlloc, kAllocPitch, kCreate };
  struct Capturing {  // a capture begun on a stream
    std::chrono::steady_clock::time_point begin;
    uint64_t thread_alloc = 0;   // the capturing thread's allocations so far
    const void* thread = nullptr;  // that thread
  };
  struct Captured {  // its template, once the capture ended
    double begin_s = 0, ms = 0;
    std::optional<uint64_t> alloc_bytes;
    bool charged = false;  // its first instantiation took the capture's costs
  };
  struct Exec {
    std::optional<double> created_s, capture_ms, instantiate_ms;
    uint64_t uploads = 0;
    double upload_ms = 0;
    std::optional<uint64_t> alloc_bytes;
  };
  void begin(CUstream s, std::chrono::steady_clock::time_point t);
  void end(CUstream s, CUgraph g, std::chrono::steady_clock::time_point t);
  void instantiated(CUgraph g, CUgraphExec e, std::chrono::steady_clock::time_point t0,
                    std::chrono::steady_clock::time_point t1);
  void uploaded(CUgraphExec e, double ms);

  std::vector<uint8_t> kinds_;  // by driver callback id; written before the callbacks come
  std::chrono::steady_clock::time_point t0_;
  uint64_t t0_cupti_ns_ = 0;
  mutable std::mutex m_;  // what follows
  std::unordered_map<CUstream, Capturing> capturing_;
  std::unordered_map<CUgraph, Captured> captured_;
  std::unordered_map<uint32_t, Exec> execs_;
  std::optional<uint64_t> graphs_end_cupti_ns_;
};

}  // namespace graphscope::inject::internal
