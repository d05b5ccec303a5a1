// Lanes: where device activities serialize (SPEC.md). A lane is (device,
// channel type, channel id), or the stream when a record carries no
// channel. One type for the analysis, the reports and the trace writer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "trace.h"

namespace graphscope {

struct Lane {
  uint32_t device = 0;
  uint8_t channel_type = 0;  // 0: no channel, id is the stream; 1 compute, 2 async copy
  uint32_t id = 0;
  friend bool operator==(const Lane& a, const Lane& b) {
    return a.device == b.device && a.channel_type == b.channel_type && a.id == b.id;
  }
  friend bool operator!=(const Lane& a, const Lane& b) { return !(a == b); }
  /// (device, channel type, id) order.
  friend bool operator<(const Lane& a, const Lane& b) {
    if (a.device != b.device) return a.device < b.device;
    if (a.channel_type != b.channel_type) return a.channel_type < b.channel_type;
    return a.id < b.id;
  }
};

struct LaneHash {
  size_t operator()(const Lane& k) const {
    uint64_t h = (uint64_t(k.device) << 40) ^ (uint64_t(k.channel_type) << 32) ^ k.id;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return size_t(h);
  }
};

/// The lane an activity ran on.
inline Lane lane_of(const Activity& a) {
  if (a.channel_type == 0) return Lane{a.device, 0, a.stream};
  return Lane{a.device, a.channel_type, a.channel_id};
}

/// "compute channel 3", "copy channel 9", "stream 7", "channel type 4 id 2";
/// with " (device 1)" after it for devices other than 0.
std::string describe(const Lane& l);

/// The lane describe() wrote; false when text is no such description.
bool parse_lane(std::string_view text, Lane* out);

/// The order lanes are listed in within a device: compute channels, copy
/// channels, other channel types, then streams.
int lane_rank(uint8_t channel_type);

/// The order lanes are listed in: by device, then lane_rank, then the rest.
bool listed_before(const Lane& a, const Lane& b);

}  // namespace graphscope
