#include "check.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>

#include "account.h"
#include "../core/demangle.h"
#include "../core/error.h"
#include "fold.h"
#include "../core/json_read.h"
#include "../core/json_tape.h"
#include "../core/json_writer.h"
#include "../core/text.h"
#include "summary.h"

namespace graphscope {
namespace {

using namespace rules_key;

}  // namespace

bool CheckRules::empty() const {
  return !max_nodes && !max_kernels && forbid_types.empty() && !max_depth && !identical_repeats && baseline.empty() &&
         !node_count_tolerance_pct && !max_blocking_fake_us && !min_critical_path_efficiency &&
         max_account_share.empty();
}

bool CheckRules::needs_profile() const {
  return max_blocking_fake_us || min_critical_path_efficiency || !max_account_share.empty();
}

std::vector<std::string> CheckRules::profile_rules() const {
  std::vector<std::string> v;
  if (max_blocking_fake_us) v.emplace_back(kBlockingFake);
  if (min_critical_path_efficiency) v.emplace_back(kEfficiency);
  if (!max_account_share.empty()) v.emplace_back(kAccountShare);
  return v;
}


void override_rules(CheckRules& base, const CheckRules& flags) {
  if (flags.max_nodes) base.max_nodes = flags.max_nodes;
  if (flags.max_kernels) base.max_kernels = flags.max_kernels;
  if (!flags.forbid_types.empty()) base.forbid_types = flags.forbid_types;
  if (flags.max_depth) base.max_depth = flags.max_depth;
  if (flags.identical_repeats) base.identical_repeats = true;
  if (!flags.baseline.empty()) base.baseline = flags.baseline;
  if (flags.node_count_tolerance_pct) base.node_count_tolerance_pct = flags.node_count_tolerance_pct;
  if (flags.max_blocking_fake_us) base.max_blocking_fake_us = flags.max_blocking_fake_us;
  if (flags.min_critical_path_efficiency)
    base.min_critical_path_efficiency = flags.min_critical_path_efficiency;
  if (!flags.max_account_share.empty()) base.max_account_share = flags.max_account_share;
}

void check_rules_usable(const CheckRules& rules, bool have_profile) {
  if (rules.empty())
    throw Error(ExitCode::usage, "check", "no rules: give --rules FILE or a rule flag such as --max-nodes N");
  if (!rules.baseline.empty() && !rules.node_count_tolerance_pct)
    throw Error(ExitCode::usage, "check",
                "a baseline needs a tolerance: --node-count-tolerance PCT or node_count_tolerance_pct in the "
                "rules file");
  if (rules.baseline.empty() && rules.node_count_tolerance_pct)
    throw Error(ExitCode::usage, "check",
                "node_count_tolerance_pct needs a baseline: --baseline DOC or baseline in the rules file");
  if (rules.needs_profile() && !have_profile) {
    std::string names;
    for (const auto& n : rules.profile_rules()) names += (names.empty() ? "" : " and ") + n;
    throw Error(ExitCode::usage, "check",
                names + " need" + (rules.profile_rules().size() == 1 ? "s" : "") +
                    " a profile report: give --profile REPORT (graphscope profile --json)");
  }
}

namespace {

// Counts and forbidden nodes over the graph and its nested bodies.
struct Walk {
  explicit Walk(const CheckRules& r) : rules(r) {}
  const CheckRules& rules;
  size_t nodes = 0, kernels = 0, forbidden = 0;
  std::vector<CheckOffender> offenders;
  void go(const Graph& g, const std::string& prefix) {
    for (const auto& n : g.nodes) {
      ++nodes;
      kernels += n.type == NodeType::kernel;
      if (std::find(rules.forbid_types.begin(), rules.forbid_types.end(), n.type) !=
          rules.forbid_types.end()) {
        if (++forbidden <= kMaxOffenders) {
          CheckOffender o;
          o.node = prefix + std::to_string(n.index);
          o.node_type = std::string(to_string(n.type));
          if (n.type == NodeType::kernel) o.kernel_name = n.kernel_name;
          offenders.push_back(std::move(o));
        }
      }
      for (size_t b = 0; b < n.bodies.size(); ++b)
        go(n.bodies[b], prefix + std::to_string(n.index) + "/" + std::to_string(b) + "/");
    }
  }
};

// "node 1 wide_branch" or "node 6 host".
std::string offender_name(const CheckOffender& o) {
  std::string s = "node " + o.node + " ";
  s += o.kernel_name.empty() ? o.node_type : printable(short_kernel_name(o.kernel_name, 36));
  return s;
}

}  // namespace

std::string describe(const CheckOffender& o) {
  std::string s = offender_name(o);
  if (!o.delay_us && !o.cause.empty()) return s + " (" + printable(o.cause) + ")";  // what makes it differ
  if (o.delay_us) {
    s += " " + num2(*o.delay_us) + " us";
    if (o.blocker) {
      s += " (after node " + std::to_string(*o.blocker);
      if (!o.blocker_kernel_name.empty())
        s += " " + printable(short_kernel_name(o.blocker_kernel_name, 36));
      else if (!o.blocker_node_type.empty())
        s += " " + o.blocker_node_type;
      if (!o.cause.empty()) s += ", " + printable(o.cause);
      s += ")";
    }
  }
  return s;
}

namespace {

// ": a, b, c and 7 more": the first few offenders for a one-line message.
std::string offender_list(const RuleResult& r, size_t show = 5) {
  std::string s;
  for (size_t i = 0; i < r.offenders.size() && i < show; ++i)
    s += (i ? ", " : ": ") + describe(r.offenders[i]);
  size_t shown = std::min(show, r.offenders.size());
  if (r.offender_count > shown) s += " and " + std::to_string(r.offender_count - shown) + " more";
  return s;
}

// The one-line message: "summary (note): offenders".
// A rule that could not be measured: it fails, saying why.
void unmeasured(RuleResult& r, std::string summary, std::string note) {
  r.measured = std::numeric_limits<double>::quiet_NaN();
  r.passed = false;
  r.summary = std::move(summary);
  r.note = std::move(note);
}

void finish(RuleResult& r) {
  r.message = r.summary;
  if (!r.note.empty()) r.message += " (" + r.note + ")";
  r.message += offender_list(r);
}

RuleResult count_rule(std::string_view rule, size_t measured, uint64_t limit, const char* one,
                      const char* many, const char* what) {
  RuleResult r;
  r.rule = std::string(rule);
  r.measured = double(measured);
  r.limit = double(limit);
  r.unit = many;
  r.passed = measured <= limit;
  r.summary = plural(measured, one, many) + (r.passed ? " <= " : " > ") + std::to_string(limit);
  r.note = what;
  finish(r);
  return r;
}

}  // namespace

CheckResult run_checks(const GraphDocument& doc, const ProfileDocument* profile, const GraphDocument* baseline,
                       const CheckRules& rules) {
  CheckResult out;
  Walk w(rules);
  w.go(doc.root, "");
  if (rules.max_nodes)
    out.results.push_back(
        count_rule(kMaxNodes, w.nodes, *rules.max_nodes, "node", "nodes", "nested graphs included"));
  if (rules.max_kernels)
    out.results.push_back(count_rule(kMaxKernels, w.kernels, *rules.max_kernels, "kernel", "kernels",
                                     "kernel nodes, nested graphs included"));
  if (!rules.forbid_types.empty()) {
    RuleResult r;
    r.rule = std::string(kForbidTypes);
    std::vector<std::string_view> names;
    for (NodeType t : rules.forbid_types) names.push_back(to_string(t));
    r.types.assign(names.begin(), names.end());
    r.measured = double(w.forbidden);
    r.limit = 0;
    r.unit = "nodes";
    r.passed = w.forbidden == 0;
    r.offenders = std::move(w.offenders);
    r.offender_count = w.forbidden;
    r.summary = plural(w.forbidden, "forbidden node", "forbidden nodes") + (r.passed ? "" : " > 0");
    r.note = "types " + joined(names) + "; nested graphs included";
    finish(r);
    out.results.push_back(std::move(r));
  }
  if (rules.max_depth) {
    size_t depth = summarize(doc, 0).depth;
    out.results.push_back(count_rule(kMaxDepth, depth, *rules.max_depth, "node on the longest path",
                                     "nodes on the longest path", "root graph"));
    out.results.back().unit = "nodes";
  }
  if (rules.identical_repeats) {
    // Copies of a repeated block (layers, branches) that differ from their
    // siblings: one offender each, named by its first node.
    const Folding f = find_repeats(doc.root);
    RuleResult r;
    r.rule = std::string(kIdenticalRepeats);
    r.measured = double(f.odd.size());
    r.limit = 0;
    r.unit = "copies";
    r.passed = f.odd.empty();
    r.offender_count = f.odd.size();
    for (const OddCopy& o : f.odd) {
      if (r.offenders.size() >= kMaxOffenders) break;
      const Node& first = doc.root.nodes[o.nodes.front()];
      CheckOffender x;
      x.node = std::to_string(first.index);
      x.node_type = std::string(to_string(first.type));
      x.kernel_name = first.type == NodeType::kernel ? first.kernel_name : "";
      x.cause = o.difference;
      r.offenders.push_back(std::move(x));
    }
    r.summary = plural(f.odd.size(), "copy that differs", "copies that differ") + (r.passed ? " = 0" : " > 0");
    r.note = plural(f.repeats.size(), "repeated block", "repeated blocks") + " in the root graph";
    for (const OddCopy& o : f.odd)
      r.details.emplace_back("differs_at_node_" + std::to_string(o.nodes.front()), double(o.nodes.size()));
    finish(r);
    out.results.push_back(std::move(r));
  }
  if (rules.node_count_tolerance_pct && baseline) {
    double tol = *rules.node_count_tolerance_pct;
    size_t base = total_nodes(baseline->root);
    double diff = double(w.nodes) - double(base);
    RuleResult r;
    r.rule = std::string(kTolerance);
    r.unit = "%";
    r.limit = tol;
    r.details = {{"nodes", double(w.nodes)}, {"baseline_nodes", double(base)}};
    std::string against =
        plural(w.nodes, "node", "nodes") + " against " + std::to_string(base) + " in the baseline";
    if (base == 0) {
      r.passed = w.nodes == 0;
      r.measured = r.passed ? 0 : std::numeric_limits<double>::infinity();
      r.summary = r.passed ? "0% <= " + num(tol) + "%"
                           : "an empty baseline leaves no room (limit +-" + num(tol) + "%)";
    } else {
      r.measured = std::fabs(diff) * 100.0 / double(base);
      // Inclusive, and exact for whole counts: |diff| * 100 <= tol * base,
      // with room for the rounding of a decimal tolerance.
      r.passed = std::fabs(diff) * 100.0 <= tol * double(base) * (1 + 1e-12);
      r.summary = (diff < 0   ? "-"
                   : diff > 0 ? "+"
                              : "") +
                  num2(r.measured) + "%" + (r.passed ? " within +-" : " outside +-") + num(tol) + "%";
    }
    r.note = against;
    finish(r);
    out.results.push_back(std::move(r));
  }
  if (rules.max_blocking_fake_us && profile) {
    double limit = *rules.max_blocking_fake_us;
    RuleResult r;
    r.rule = std::string(kBlockingFake);
    r.unit = "us";
    r.limit = limit;
    const ProfileReport& report = profile->report;
    std::vector<const NodeProfile*> over;
    size_t blocking = 0;
    // A blocking node's cost is its fake wait (profile.h): from ready to
    // its blocker's end, what the account charges it when it is on the
    // chain. (A report of an older graphscope: its delay.)
    for (const auto& f : report.nodes) {
      if (!f.blocking || f.verdict != Verdict::fake || !f.replays) continue;
      ++blocking;
      r.measured = std::max(r.measured, f.fake_wait_us);
      if (f.fake_wait_us > limit) over.push_back(&f);
    }
    std::stable_sort(over.begin(), over.end(), [](auto* a, auto* b) { return a->fake_wait_us > b->fake_wait_us; });
    r.offender_count = over.size();
    auto kernel_of = [&](uint32_t i) -> std::string {
      if (i < profile->nodes.size() && !profile->nodes[i].kernel_name.empty())
        return profile->nodes[i].kernel_name;
      return i < doc.root.nodes.size() ? doc.root.nodes[i].kernel_name : std::string();
    };
    auto type_of = [&](uint32_t i) {
      return i < doc.root.nodes.size() ? std::string(to_string(doc.root.nodes[i].type)) : std::string("node");
    };
    for (size_t k = 0; k < over.size() && k < kMaxOffenders; ++k) {
      const auto& f = *over[k];
      CheckOffender o;
      o.node = std::to_string(f.index);
      o.node_type = type_of(f.index);
      o.kernel_name = kernel_of(f.index);
      o.delay_us = f.fake_wait_us;
      o.blocker = f.blocker;
      if (f.blocker) {
        o.blocker_node_type = type_of(*f.blocker);
        o.blocker_kernel_name = kernel_of(*f.blocker);
      }
      o.cause = f.cause;
      r.offenders.push_back(std::move(o));
    }
    r.passed = over.empty();
    if (blocking == 0)
      r.summary = "no blocking fake dependency (limit " + num(limit) + " us)";
    else if (r.passed)
      r.summary = "worst fake wait " + num2(r.measured) + " us <= " + num(limit) + " us";
    else
      r.summary = plural(over.size(), "fake wait", "fake waits") + " over " + num(limit) + " us, worst " +
                  num2(r.measured) + " us > " + num(limit) + " us";
    if (blocking)
      r.note = plural(blocking, "blocking fake dependency", "blocking fake dependencies") +
               " in all; a fake wait is from ready to the blocker's end";
    finish(r);
    out.results.push_back(std::move(r));
  }
  if (rules.min_critical_path_efficiency && profile) {
    double limit = *rules.min_critical_path_efficiency;
    RuleResult r;
    r.rule = std::string(kEfficiency);
    r.limit = limit;
    r.details = {{"critical_path_us", profile->report.critical_path_us}, {"makespan_us", profile->report.makespan_us}};
    std::string figures = "critical_path_us / makespan_us = " + num2(profile->report.critical_path_us) + " / " +
                          num2(profile->report.makespan_us) + " us";
    if (profile->report.makespan_us > 0) {
      r.measured = profile->report.critical_path_us / profile->report.makespan_us;
      r.passed = r.measured >= limit;
      r.summary = fmt("%.3f", r.measured) + (r.passed ? " >= " : " < ") + num(limit);
      r.note = figures;
    } else {
      unmeasured(r, "no makespan measured (limit " + num(limit) + ")", "the report has no timed activity");
    }
    finish(r);
    out.results.push_back(std::move(r));
  }
  for (const auto& [part, limit] : profile ? rules.max_account_share : decltype(rules.max_account_share){}) {
    // A part of where the makespan went, against its share (account.h).
    const MakespanAccount& a = profile->report.account;
    RuleResult r;
    r.rule = std::string(kAccountShare) + "." + part;
    r.limit = limit;
    int64_t ns = 0;
    std::string what;
    for (const AccountPart& p : a.parts)
      if (part == "fake" ? is_fake_wait(p.category) : account_key(p.category) == part) {
        ns += p.ns;
        what = part == "fake" ? std::string("fake waits") : std::string(to_string(p.category));
      }
    if (a.replays && a.makespan_ns > 0) {
      r.measured = double(ns) / double(a.makespan_ns);
      r.passed = r.measured <= limit;
      r.details = {{"part_us", double(ns) / 1000.0}, {"makespan_us", double(a.makespan_ns) / 1000.0}};
      r.summary = what + " " + fmt("%.3f", r.measured) + (r.passed ? " <= " : " > ") + num(limit) + " of the makespan";
      r.note = num2(double(ns) / 1000.0) + " of " + num2(double(a.makespan_ns) / 1000.0) + " us in replay " +
               std::to_string(a.replay) + ", of median makespan";
    } else {
      unmeasured(r, "no account of the makespan (limit " + num(limit) + ")",
                 "the report has none: made by an older graphscope, or with no timed activity");
    }
    finish(r);
    out.results.push_back(std::move(r));
  }
  for (const auto& r : out.results) out.failed += !r.passed;
  return out;
}

}  // namespace graphscope
