// Input liveness of CUDA graphs: whether a replay reads or writes memory
// that was freed since its graph was captured (the classic bug: a static
// input garbage-collected between capture and replay, its block handed to
// another tensor). The injection library tells a LivenessTracker every
// allocation and free it sees (the driver's, and PyTorch's caching
// allocator's through the Python hook) and, for each dumped exec graph, the
// addresses its nodes hold (kernel arguments, copy and memset pointers);
// at each launch it asks whether that exec graph lost any. No CUDA header.
//
// What is watched: an address inside an allocation made outside any stream
// capture (an input or a buffer of the program's own). Allocations made
// during a capture belong to the graph's memory pool (PyTorch's private
// pools: the pool, not the program, keeps them for the graph), and
// addresses in no known allocation (made before graphscope attached, by
// another allocator, graph memory nodes) are not watched: no finding can
// come from them. A finding is made when a watched allocation is freed and
// said at the exec graph's next launch, with where the allocation was made,
// where it was freed and, when the memory was handed out again, where.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <atomic>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

namespace graphscope {

class LivenessTracker {
 public:
  /// Who handed the memory out: the driver (cuMemAlloc and its kin) or
  /// PyTorch's caching allocator (a block inside a driver allocation; its
  /// size is not said, only its start).
  enum class Source : uint8_t { driver, torch };
  /// An address a node of an exec graph holds: the node's index in its
  /// document, the argument (kernel argument index; for copies 0 the
  /// source, 1 the destination; memsets 0), and the offset of the word
  /// inside that argument.
  struct Address {
    uint32_t node = 0, arg = 0, offset = 0;
    uint64_t value = 0;
  };
  struct Finding {
    uint32_t exec_graph_id = 0;
    Address at;
    Source source = Source::driver;
    uint64_t block = 0, block_size = 0;  // the allocation the address was in (size 0: not known)
    uint32_t allocated_site = 0, freed_site = 0, reused_site = 0;  // launch-site ids (0: none read)
    bool reused = false;           // the memory was handed out again since
    uint64_t first_replay = 0;     // the exec graph's launch (from 1) that first touched it; 0: none yet
    uint64_t replays = 0;          // its launches since the free
    uint64_t refused = 0;          // of which refused (--liveness=error)
    uint64_t addresses = 1;        // the exec graph's watched addresses in that allocation
  };

  /// An allocation [base, base + size) (size 0: not known), made at `site`,
  /// during a stream capture or not.
  void allocated(Source s, uint64_t base, uint64_t size, uint32_t site, bool in_capture);
  /// A free of the allocation at base (its size, when the caller knows it).
  void freed(Source s, uint64_t base, uint64_t size, uint32_t site);
  /// The addresses of a newly dumped exec graph (key: its handle), and the
  /// allocation count when its capture began (allocations() then): an
  /// allocation freed since then that holds one of them makes a finding at
  /// once.
  void watch(uint64_t exec, uint32_t exec_graph_id, const std::vector<Address>& addresses, uint64_t since);
  /// The exec graph is destroyed: its addresses are no longer watched.
  void forget(uint64_t exec);
  /// Launch `number` (from 1) of the exec graph: counted in its findings.
  /// refused: the launch was refused (it did not run). One atomic load
  /// while nothing was lost.
  void launched(uint64_t exec, uint64_t number, bool refused);
  /// Whether a launch of the exec graph would touch memory freed since its
  /// capture: its first finding, when so.
  bool lost(uint64_t exec, Finding* first = nullptr) const;
  /// Allocations seen so far (a clock for watch's `since`).
  uint64_t allocations() const { return seq_.load(std::memory_order_relaxed); }
  /// Every finding, in the order made (at most kMaxFindings; the rest in
  /// dropped()).
  std::vector<Finding> findings() const;
  uint64_t dropped() const;
  uint64_t watched() const;  // addresses watched, over the run
  static constexpr size_t kMaxFindings = 1000;

 private:
  struct Block {
    uint64_t size = 0;
    uint32_t site = 0;
    uint64_t seq = 0;
    bool in_capture = false;
  };
  struct Freed {
    uint64_t size = 0, seq = 0, freed_seq = 0;
    uint32_t site = 0, freed_site = 0;
    bool lost = false;  // a finding names it
  };
  struct Watch {
    uint64_t exec = 0;
    uint32_t exec_graph_id = 0;
    Address at;
    Source source = Source::driver;
    uint64_t block = 0, block_seq = 0;
    uint32_t block_site = 0;
    bool dead = false;
  };
  struct Exec {
    uint32_t exec_graph_id = 0;
    std::vector<size_t> watches;
    std::vector<size_t> findings;  // into findings_
  };
  using Blocks = std::map<uint64_t, Block>;
  Blocks& blocks(Source s) { return s == Source::torch ? torch_ : driver_; }
  // The allocation holding address a, live (*b) or freed since `since` (*f).
  struct Resolved {
    Source source = Source::driver;
    uint64_t base = 0;
    const Block* live = nullptr;
    const Freed* freed = nullptr;
  };
  bool resolve(uint64_t a, uint64_t since, Resolved* r) const;
  void lose(size_t watch, const Freed& f);

  mutable std::mutex m_;
  std::atomic<uint64_t> seq_{0};
  std::atomic<size_t> lost_execs_{0};  // exec graphs with findings: launched() is a load while 0
  Blocks driver_, torch_;
  std::map<uint64_t, Freed> freed_torch_, freed_driver_;  // since freed, until handed out again
  std::map<uint64_t, uint64_t> pool_;  // capture-time torch blocks since freed: base -> seq
  // The order the history maps' entries went in (base, seq), to drop the oldest.
  std::deque<std::pair<uint64_t, uint64_t>> freed_torch_order_, freed_driver_order_, pool_order_;
  std::vector<Watch> watches_;
  std::multimap<uint64_t, size_t> by_block_;  // block base -> watches
  std::unordered_map<uint64_t, Exec> execs_;
  std::vector<Finding> findings_;
  std::map<std::pair<uint32_t, uint64_t>, size_t> finding_at_;  // (exec graph id, block) -> finding
  uint64_t dropped_ = 0, watched_ = 0;
 public:
  /// The most freed allocations kept per history (PyTorch's, the driver's,
  /// the capture pools'), the oldest dropped first.
  static constexpr size_t kMaxHistory = size_t(1) << 16;
};

}  // namespace graphscope
