#include "findings.h"

#include <algorithm>
#include <cmath>

#include "../core/text.h"

namespace graphscope {

std::string_view finding_key(FindingKind k) {
  switch (k) {
    case FindingKind::channel: return "channel";
    case FindingKind::copy_engine: return "copy_engine";
    case FindingKind::latency: return "latency";
  }
  return "latency";
}

bool parse_finding_key(std::string_view s, FindingKind* out) {
  for (FindingKind k : {FindingKind::channel, FindingKind::copy_engine, FindingKind::latency})
    if (finding_key(k) == s) {
      *out = k;
      return true;
    }
  return false;
}

namespace {

std::string us(double x) { return fmt("%.1f", x) + " us"; }
std::string share_of(double share) { return fmt("%.0f", 100.0 * share) + "% of the makespan"; }

}  // namespace

std::vector<Finding> find_findings(const MakespanAccount& a, const WhatIf* w, size_t compute_channels) {
  std::vector<Finding> out;
  if (!a.replays || a.makespan_ns <= 0 || !w || w->measured_us <= 0) return out;
  const double makespan = double(a.makespan_ns);
  auto part = [&](AccountCategory c) { return double(a.part(c)); };
  // The model's own error, said where it is large enough to matter.
  const double error = w->as_measured_us > 0 ? (w->as_measured_us - w->measured_us) / w->measured_us : 0;
  // by: whose prediction, the what-if's ("the model") or the account's.
  auto add = [&](FindingKind kind, double ns, std::string what, std::string try_, const char* by, double to_us,
                 const char* scenario) {
    const double share = ns / makespan;
    if (share < kFindingShare || !(to_us <= w->measured_us * (1 - kFindingGain))) return;
    Finding f;
    f.kind = kind;
    f.part_us = ns / 1000.0;
    f.share = share;
    f.from_us = w->measured_us;
    f.to_us = to_us;
    f.what = std::move(what);
    f.try_ = std::move(try_);
    f.text = f.what + ": " + us(f.part_us) + " (" + share_of(share) + "); try: " + f.try_ + "; " + by + " predicts " +
             fmt("%.1f", f.from_us) + " -> " + us(f.to_us) + " (" +
             signed_percent(100.0 * (f.to_us - f.from_us) / f.from_us, 0) + ") " + scenario;
    if (std::string_view(by) == "the model" && std::fabs(error) > 0.10)
      f.text += " (the model as measured is off by " + signed_percent(100.0 * error, 0) + ")";
    out.push_back(std::move(f));
  };
  // Behind one channel (or, without channels, one stream): more channels,
  // or the branches on streams of their own. The what-if keeps a channel
  // wait as measured (on the H100 channels did not hold graph work back),
  // so the prediction is the account's: the chain without those waits, at
  // best (another path may then bound the makespan).
  const double channel = part(AccountCategory::fake_same_channel), stream = part(AccountCategory::fake_same_stream);
  const double without_wait = w->measured_us - (channel + stream) / 1000.0;
  const char* at_best = "at best: the chain without those waits (the what-if keeps channel waits as measured)";
  if (channel >= stream) {
    const size_t n = std::clamp<size_t>(2 * std::max<size_t>(compute_channels, 1), 8, 32);
    add(FindingKind::channel, channel + stream, "fake wait behind one channel",
        "CUDA_DEVICE_MAX_CONNECTIONS=" + std::to_string(n) + " or a stream per branch", "the account", without_wait,
        at_best);
  } else {
    add(FindingKind::channel, channel + stream, "fake wait behind one stream", "a stream per branch", "the account",
        without_wait, at_best);
  }
  // Copies of one direction share a copy engine, whatever their channels:
  // their order decides who waits.
  add(FindingKind::copy_engine, part(AccountCategory::fake_copy_engine), "fake wait of copies behind a shared copy engine",
      "the copies' order (first the copy that work waits for; a copy beside compute rather than beside another copy)",
      "the model", w->without_fake_us, "with the engine not shared (a bound: copies of one direction share its bandwidth)");
  // Launch and dispatch after each predecessor ended: fewer links in the
  // chain, or dependents launched before their predecessor ends.
  add(FindingKind::latency, part(AccountCategory::latency),
      "dependency latency on a chain of " + plural(a.chain_nodes, "node", "nodes"),
      "fewer, larger kernels (fused) or programmatic dependent launch", "the model", w->zero_latency_us,
      "with no dependency latency and dispatch (a bound)");
  std::stable_sort(out.begin(), out.end(), [](const Finding& x, const Finding& y) { return x.part_us > y.part_us; });
  return out;
}

std::string no_findings(const MakespanAccount& a, const WhatIf* w) {
  if (!a.replays) return "none: no replay to account for";
  if (!w) return "none: no what-if to predict a gain with";
  return "none stand out: no fake wait or dependency latency of " + fmt("%.0f", 100 * kFindingShare) +
         "% of the makespan or more whose removal is predicted to gain " + fmt("%.0f", 100 * kFindingGain) +
         "% or more";
}

}  // namespace graphscope
