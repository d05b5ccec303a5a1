// The GPU work of one process over its run, from its activity records: how
// much of the GPU's busy time was inside graph replays and how much outside
// them (eager), the eager kernels and copies by name and launch geometry,
// each exec graph's replays, and a timeline. The injection library calls it
// when the process ends and writes the result into its index
// (AttachIndex::work); the ledger reads it from there. No CUDA header.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../formats/attach_json.h"
#include "../model/graph.h"
#include "../model/trace.h"

namespace graphscope {

/// Where the run's eager launches came from: the launch call's correlation
/// id with the place it was made at (an id, 1 on), and each place's origin
/// (origins[id - 1]; null: nothing known).
struct LaunchSites {
  std::vector<std::pair<uint32_t, uint32_t>> launches;  // (correlation, site id), any order
  std::vector<std::shared_ptr<const Origin>> origins;
};

/// A module path with its indices as "*" ("layers.3.mlp" -> "layers.*.mlp"):
/// one launch site serves every index that runs the same code.
std::string module_pattern(const std::string& path);

/// AttachWork of the records of `trace` (times in nanoseconds on the
/// trace's clock). base_ns: the instant the process attached, on that
/// clock: the result's times are seconds since it. captures_end_ns: when
/// the process's last stream capture ended, on that clock (eager records
/// that start later are counted as launches_after_captures; nullopt: none).
/// source: AttachWork::source ("kernel records", "graph trace").
///
/// A record with a graph_id is graph work (under "graph trace" one record
/// per replay, of kind other); a kernel, memcpy or memset record without
/// one is eager; other records, and records without times (start and end
/// 0), are left out. A record that ends before it starts lasts 0. Unions
/// are over the process's devices together. Groups are by (kind, name,
/// grid, block), largest summed duration first, at most kMaxGroups (the
/// rest in other_launches and other_us). The timeline starts at the first
/// record: bins of 1 s, or of the smallest whole number of seconds that
/// keeps at most kMaxBins; each bin holds the time inside it of the graph
/// records' union and of the busy time outside that union (time covered by
/// both graph and eager work counts as graph). One sort of the records by
/// start; the rest is linear in records, groups and bins.
///
/// With `sites`: each eager record is put with the place its launch came
/// from (its correlation id; records of one origin together, whatever ids
/// they had), AttachWork::sites, largest GPU time first; records whose
/// correlation has no place, or whose place's origin is unknown, in
/// unsited_*.
AttachWork summarize_work(const Trace& trace, uint64_t base_ns, std::optional<uint64_t> captures_end_ns,
                          std::string source, const LaunchSites* sites = nullptr);

}  // namespace graphscope
