#include "check.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include "demangle.h"
#include "error.h"
#include "json_read.h"
#include "json_tape.h"
#include "json_writer.h"
#include "profile.h"
#include "summary.h"
#include "text.h"

namespace graphscope {
namespace {

using Kind = JsonTape::Kind;
constexpr uint32_t kAbsent = UINT32_MAX;

// The keys of a rules file, in the order results are reported.
constexpr std::string_view kMaxNodes = "max_nodes";
constexpr std::string_view kMaxKernels = "max_kernels";
constexpr std::string_view kForbidTypes = "forbid_types";
constexpr std::string_view kMaxDepth = "max_depth";
constexpr std::string_view kBaseline = "baseline";
constexpr std::string_view kTolerance = "node_count_tolerance_pct";
constexpr std::string_view kBlockingFake = "max_blocking_fake_us";
constexpr std::string_view kEfficiency = "min_critical_path_efficiency";
constexpr std::string_view kRuleKeys[] = {"schema",  kMaxNodes,  kMaxKernels,   kForbidTypes, kMaxDepth,
                                          kBaseline, kTolerance, kBlockingFake, kEfficiency};

// Edits between a and b, a swap of neighbours counting as one ("hots" is one
// edit from "host").
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// " (did you mean "max_nodes"?)" when a candidate is a likely typo of s.
template <typename Names>
std::string suggestion(std::string_view s, const Names& names) {
  if (s.size() > 64) return "";
  std::string_view best;
  size_t best_d = 4;
  for (std::string_view n : names) {
    size_t d = edit_distance(s, n);
    if (d < best_d && d <= std::max<size_t>(1, n.size() / 3)) best = n, best_d = d;
  }
  return best.empty() ? "" : " (did you mean \"" + std::string(best) + "\"?)";
}

std::vector<std::string_view> forbiddable_types() {
  std::vector<std::string_view> v;
  for (int t = 0; t < kNodeTypeCount; ++t)
    if (NodeType(t) != NodeType::unknown) v.push_back(to_string(NodeType(t)));
  return v;
}

std::string joined(const std::vector<std::string_view>& v) {
  std::string s;
  for (auto x : v) s += (s.empty() ? "" : ", ") + std::string(x);
  return s;
}

// A JSON path for messages: "forbid_types[2]", "nodes[3].delay_us".
std::string at(std::string_view base, uint32_t i) {
  return std::string(base) + "[" + std::to_string(i) + "]";
}
std::string at(std::string_view base, std::string_view key) {
  return base.empty() ? std::string(key) : std::string(base) + "." + std::string(key);
}

}  // namespace

bool CheckRules::empty() const {
  return !max_nodes && !max_kernels && forbid_types.empty() && !max_depth && baseline.empty() &&
         !node_count_tolerance_pct && !max_blocking_fake_us && !min_critical_path_efficiency;
}

bool CheckRules::needs_profile() const {
  return max_blocking_fake_us || min_critical_path_efficiency;
}

std::vector<std::string> CheckRules::profile_rules() const {
  std::vector<std::string> v;
  if (max_blocking_fake_us) v.emplace_back(kBlockingFake);
  if (min_critical_path_efficiency) v.emplace_back(kEfficiency);
  return v;
}

NodeType parse_forbidden_type(std::string_view name, ExitCode code, const std::string& what) {
  NodeType t;
  if (!parse_node_type(name, &t) || t == NodeType::unknown) {
    auto names = forbiddable_types();
    throw Error(
        code, what,
        quoted(name, 64) + " is not a node type" + suggestion(name, names) + "; node types: " + joined(names));
  }
  return t;
}

CheckRules parse_check_rules(const std::string& text, const std::string& origin) {
  // A rules file is flat: anything nested deeper than its one array is wrong.
  JsonTape t = JsonTape::parse(text, origin, 8);
  JsonRead r(t, origin);
  uint32_t root = t.root();
  if (r.kind(root) != Kind::object)
    r.fail("", std::string("the rules file is ") + JsonTape::kind_name(r.kind(root)) +
                   ", expected an object {\"schema\": \"graphscope.rules/1\", ...}");
  r.schema(root, kRulesSchema, "a rules file", "{\"schema\": \"graphscope.rules/1\", ...}");
  CheckRules rules;
  bool seen[std::size(kRuleKeys)] = {};
  for (uint32_t i = 0, n = t.at(root).count; i < n; ++i) {
    std::string_view k = t.member_key(root, i);
    uint32_t v = t.member_value(root, i);
    size_t which = std::find(std::begin(kRuleKeys), std::end(kRuleKeys), k) - std::begin(kRuleKeys);
    if (which == std::size(kRuleKeys))
      r.fail(quoted(k, 64),
             "unknown key" + suggestion(k, kRuleKeys) + "; a rules file has " +
                 joined(std::vector<std::string_view>(std::begin(kRuleKeys), std::end(kRuleKeys))));
    if (seen[which]) r.fail(std::string(k), "appears twice");
    seen[which] = true;
    std::string path(k);
    if (k == kMaxNodes)
      rules.max_nodes = r.count(v, path, "a count of nodes");
    else if (k == kMaxKernels)
      rules.max_kernels = r.count(v, path, "a count of kernels");
    else if (k == kMaxDepth)
      rules.max_depth = r.count(v, path, "a count of nodes on the longest path");
    else if (k == kForbidTypes) {
      if (r.kind(v) != Kind::array) r.wrong(v, path, "an array of node type names");
      for (uint32_t j = 0, m = t.at(v).count; j < m; ++j) {
        std::string p = at(path, j);
        std::string_view name = r.string(t.element(v, j), p, 64);
        NodeType type = NodeType::unknown;
        try {
          type = parse_forbidden_type(name, ExitCode::bad_input, "");
        } catch (const Error& e) {
          r.fail(p, e.reason());
        }
        if (std::find(rules.forbid_types.begin(), rules.forbid_types.end(), type) == rules.forbid_types.end())
          rules.forbid_types.push_back(type);
      }
    } else if (k == kBaseline) {
      std::string_view b = r.string(v, path, 4096);
      if (b.empty()) r.fail(path, "is empty, expected the path of a graph document");
      if (b.find('\0') != std::string_view::npos) r.fail(path, "contains a NUL character");
      rules.baseline = std::string(b);
      // Relative to the rules file, so a rules file and its baseline move together.
      size_t slash = origin.rfind('/');
      if (rules.baseline[0] != '/' && slash != std::string::npos)
        rules.baseline = origin.substr(0, slash + 1) + rules.baseline;
    } else if (k == kTolerance) {
      rules.node_count_tolerance_pct = r.non_negative(v, path);
    } else if (k == kBlockingFake) {
      rules.max_blocking_fake_us = r.non_negative(v, path);
    } else if (k == kEfficiency) {
      double e = r.number(v, path);
      if (e < 0 || e > 1)
        r.fail(path, "is " + num(e) + ", expected a ratio from 0 to 1 (critical_path_us / makespan_us)");
      rules.min_critical_path_efficiency = e;
    }
  }
  return rules;
}

void override_rules(CheckRules& base, const CheckRules& flags) {
  if (flags.max_nodes) base.max_nodes = flags.max_nodes;
  if (flags.max_kernels) base.max_kernels = flags.max_kernels;
  if (!flags.forbid_types.empty()) base.forbid_types = flags.forbid_types;
  if (flags.max_depth) base.max_depth = flags.max_depth;
  if (!flags.baseline.empty()) base.baseline = flags.baseline;
  if (flags.node_count_tolerance_pct) base.node_count_tolerance_pct = flags.node_count_tolerance_pct;
  if (flags.max_blocking_fake_us) base.max_blocking_fake_us = flags.max_blocking_fake_us;
  if (flags.min_critical_path_efficiency)
    base.min_critical_path_efficiency = flags.min_critical_path_efficiency;
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

std::string offender_text(const CheckOffender& o) {
  std::string s = offender_name(o);
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

// ": a, b, c and 7 more": the first few offenders for a one-line message.
std::string offender_list(const RuleResult& r, size_t show = 5) {
  std::string s;
  for (size_t i = 0; i < r.offenders.size() && i < show; ++i)
    s += (i ? ", " : ": ") + offender_text(r.offenders[i]);
  size_t shown = std::min(show, r.offenders.size());
  if (r.offender_count > shown) s += " and " + std::to_string(r.offender_count - shown) + " more";
  return s;
}

// The one-line message: "summary (note): offenders".
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
    for (const auto& f : report.nodes) {
      if (!f.blocking || f.verdict != Verdict::fake || !f.replays) continue;
      ++blocking;
      r.measured = std::max(r.measured, f.delay_us);
      if (f.delay_us > limit) over.push_back(&f);
    }
    std::stable_sort(over.begin(), over.end(), [](auto* a, auto* b) { return a->delay_us > b->delay_us; });
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
      o.delay_us = f.delay_us;
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
      r.summary = "worst blocking fake dependency " + num2(r.measured) + " us <= " + num(limit) + " us";
    else
      r.summary = plural(over.size(), "blocking fake dependency", "blocking fake dependencies") + " over " +
                  num(limit) + " us, worst " + num2(r.measured) + " us > " + num(limit) + " us";
    if (blocking)
      r.note = plural(blocking, "blocking fake dependency", "blocking fake dependencies") +
               " in all, delays are medians over replays";
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
      r.measured = std::numeric_limits<double>::quiet_NaN();
      r.passed = false;
      r.summary = "no makespan measured (limit " + num(limit) + ")";
      r.note = "the report has no timed activity";
    }
    finish(r);
    out.results.push_back(std::move(r));
  }
  for (const auto& r : out.results) out.failed += !r.passed;
  return out;
}

std::string format_check(const CheckResult& c) {
  std::string out;
  for (const auto& r : c.results) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s  %-29s ", r.passed ? "PASS" : "FAIL", r.rule.c_str());
    out += buf + printable(r.message) + "\n";
  }
  std::string inputs = printable(c.graph);
  if (!c.profile.empty()) inputs += ", profile " + printable(c.profile);
  if (!c.baseline.empty()) inputs += ", baseline " + printable(c.baseline);
  if (c.passed())
    out += "check passed: " + plural(c.results.size(), "rule", "rules") + " (" + inputs + ")\n";
  else
    out += "check failed: " + std::to_string(c.failed) + " of " + plural(c.results.size(), "rule", "rules") +
           " failed (" + inputs + ")\n";
  return out;
}

std::string write_check_json(const CheckResult& c) {
  JsonWriter w(4);  // a key per line down to each offender, which takes one line
  w.begin_object();
  w.key("schema").value(kCheckSchema);
  w.key("graph").value(c.graph);
  w.key("profile");
  c.profile.empty() ? w.null() : w.value(c.profile);
  w.key("baseline");
  c.baseline.empty() ? w.null() : w.value(c.baseline);
  w.key("passed").value(c.passed());
  w.key("rules").value(uint64_t(c.results.size()));
  w.key("failed").value(uint64_t(c.failed));
  w.key("results").begin_array();
  for (const auto& r : c.results) {
    w.begin_object();
    w.key("rule").value(r.rule).key("passed").value(r.passed);
    w.key("measured").value(r.measured).key("limit").value(r.limit).key("unit").value(r.unit);
    if (!r.types.empty()) {
      w.key("types").begin_array();
      for (const auto& t : r.types) w.value(t);
      w.end_array();
    }
    for (const auto& [k, v] : r.details) w.key(k).value(v);
    w.key("summary").value(r.summary).key("message").value(r.message);
    w.key("offender_count").value(uint64_t(r.offender_count));
    w.key("offenders").begin_array();
    for (const auto& o : r.offenders) {
      w.begin_object().key("node").value(o.node).key("node_type").value(o.node_type);
      w.key("kernel_name");
      o.kernel_name.empty() ? w.null() : w.value(o.kernel_name);
      if (o.delay_us) w.key("delay_us").value(*o.delay_us);
      if (o.delay_us) {
        w.key("blocker");
        o.blocker ? w.value(*o.blocker) : w.null();
        w.key("blocker_node_type");
        o.blocker_node_type.empty() ? w.null() : w.value(o.blocker_node_type);
        w.key("blocker_kernel_name");
        o.blocker_kernel_name.empty() ? w.null() : w.value(o.blocker_kernel_name);
        w.key("cause");
        o.cause.empty() ? w.null() : w.value(o.cause);
      }
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.take();
}

std::string write_check_junit(const CheckResult& c) {
  std::string tests = std::to_string(c.results.size()), failures = std::to_string(c.failed);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"graphscope check\" tests=\"" + tests + "\" failures=\"" + failures +
         "\" errors=\"0\">\n";
  out += "  <testsuite name=\"" + xml_escape("graphscope check " + c.graph) + "\" tests=\"" + tests +
         "\" failures=\"" + failures + "\" errors=\"0\" skipped=\"0\" time=\"0\">\n";
  out += "    <properties>\n";
  auto property = [&](const char* name, const std::string& value) {
    if (!value.empty())
      out += "      <property name=\"" + std::string(name) + "\" value=\"" + xml_escape(value) + "\"/>\n";
  };
  property("graph", c.graph);
  property("profile", c.profile);
  property("baseline", c.baseline);
  out += "    </properties>\n";
  for (const auto& r : c.results) {
    out += "    <testcase classname=\"graphscope.check\" name=\"" + xml_escape(r.rule) + "\" time=\"0\">\n";
    if (r.passed) {
      out += "      <system-out>" + xml_escape(r.message) + "</system-out>\n";
    } else {
      // The message attribute is what CI lists; the body names every offender
      // kept, one per line.
      std::string body = r.summary;
      if (!r.note.empty()) body += " (" + r.note + ")";
      body = xml_escape(body);
      for (const auto& o : r.offenders) body += "\n" + xml_escape(offender_text(o));
      if (r.offender_count > r.offenders.size())
        body += "\n... and " + std::to_string(r.offender_count - r.offenders.size()) + " more";
      out += "      <failure type=\"" + xml_escape(r.rule) + "\" message=\"" + xml_escape(r.summary) + "\">" +
             body + "</failure>\n";
    }
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace graphscope
