// Findings: the parts of the makespan account (account.h) large enough to
// act on, each with what to try and the makespan predicted without it: by
// the what-if model (what_if.h) for copy-engine waits and dependency
// latency; for channel waits, which the model keeps as measured, by the
// account (the chain without them, at best). Never one without the numbers
// behind it: a part counts from kFindingShare of the makespan, and only
// when the prediction gains at least kFindingGain of the measured makespan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "account.h"
#include "what_if.h"

namespace graphscope {

inline constexpr double kFindingShare = 0.10;  // of the account's makespan
inline constexpr double kFindingGain = 0.05;   // of the measured makespan

enum class FindingKind : uint8_t {
  channel,      // fake waits behind one channel or stream (fake_same_channel, fake_same_stream)
  copy_engine,  // fake waits of copies behind a copy engine they share (fake_copy_engine)
  latency,      // dependency latency (latency)
};
/// "channel", "copy_engine", "latency": the JSON key.
std::string_view finding_key(FindingKind k);
/// Parses a JSON key; false for anything else.
bool parse_finding_key(std::string_view s, FindingKind* out);

struct Finding {
  FindingKind kind = FindingKind::latency;
  double part_us = 0;  // the account's part(s), in its replay of median makespan
  double share = 0;    // of that replay's makespan, 0 to 1
  double from_us = 0;  // the measured makespan (median)
  double to_us = 0;    // the makespan predicted without that part
  std::string what;    // "fake wait behind one channel", ...
  std::string try_;    // what to try
  std::string text;    // the whole finding on one line, as the text report and the page print it
};

/// The findings of an account and its what-if, largest part first; empty
/// when nothing stands out (or without an account or a what-if).
/// compute_channels: how many compute channels the nodes ran on, for the
/// connection count to suggest.
std::vector<Finding> find_findings(const MakespanAccount& account, const WhatIf* what_if, size_t compute_channels);

/// Why there is no finding, on one line (for an empty list).
std::string no_findings(const MakespanAccount& account, const WhatIf* what_if);

}  // namespace graphscope
