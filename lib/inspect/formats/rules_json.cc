#include "rules_json.h"

#include "../analysis/account.h"

#include <algorithm>
#include <cstdio>

#include "../core/demangle.h"
#include "../core/error.h"
#include "../core/json_read.h"
#include "../core/json_tape.h"
#include "../core/json_writer.h"
#include "../core/text.h"

namespace graphscope {
namespace {

using Kind = JsonTape::Kind;
using namespace rules_key;
constexpr std::string_view kRuleKeys[] = {"schema",          "graphscope_version", kMaxNodes,     kMaxKernels,
                                          kForbidTypes,      kMaxDepth,            kIdenticalRepeats, kBaseline,
                                          kTolerance,        kBlockingFake,        kEfficiency,   kAccountShare};

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

// A JSON path for messages: "forbid_types[2]".
std::string at(std::string_view base, uint32_t i) {
  return std::string(base) + "[" + std::to_string(i) + "]";
}

}  // namespace

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

bool account_share_key(std::string_view key, std::string* names) {
  AccountCategory c;
  if (key == "fake" || parse_account_key(key, &c)) return true;
  if (names) {
    *names = "fake";
    for (size_t i = 0; i < kAccountCategories; ++i) *names += ", " + std::string(account_key(AccountCategory(i)));
  }
  return false;
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
  // A key given twice was refused by the tape ("max_nodes: appears twice").
  for (uint32_t i = 0, n = t.at(root).count; i < n; ++i) {
    std::string_view k = t.member_key(root, i);
    uint32_t v = t.member_value(root, i);
    size_t which = std::find(std::begin(kRuleKeys), std::end(kRuleKeys), k) - std::begin(kRuleKeys);
    if (which == std::size(kRuleKeys))
      r.fail(quoted(k, 64),
             "unknown key" + suggestion(k, kRuleKeys) + "; a rules file has " +
                 joined(std::vector<std::string_view>(std::begin(kRuleKeys), std::end(kRuleKeys))));
    std::string path(k);
    if (k == kMaxNodes)
      rules.max_nodes = r.count(v, path, "a count of nodes");
    else if (k == kMaxKernels)
      rules.max_kernels = r.count(v, path, "a count of kernels");
    else if (k == kMaxDepth)
      rules.max_depth = r.count(v, path, "a count of nodes on the longest path");
    else if (k == kIdenticalRepeats)
      rules.identical_repeats = r.boolean(v, path);
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
    } else if (k == kAccountShare) {
      if (r.kind(v) != Kind::object) r.wrong(v, path, "an object of account parts and shares");
      for (uint32_t j = 0, m = t.at(v).count; j < m; ++j) {
        const std::string_view part = t.member_key(v, j);
        const std::string p = path + "." + std::string(part.substr(0, 64));
        std::string names;
        if (!account_share_key(part, &names)) r.fail(p, "is not a part of the account; parts: " + names);
        const double share = r.number(t.member_value(v, j), p);
        if (share < 0 || share > 1) r.fail(p, "is " + num(share) + ", expected a share from 0 to 1 of the makespan");
        rules.max_account_share.push_back({std::string(part), share});
      }
    }
  }
  return rules;
}

std::string write_rules_json(const CheckRules& r) {
  JsonWriter w(1);
  w.begin_object();
  w.key("schema").value(kRulesSchema);
  w.key("graphscope_version").value(GRAPHSCOPE_VERSION);
  if (r.max_nodes) w.key(kMaxNodes).value(*r.max_nodes);
  if (r.max_kernels) w.key(kMaxKernels).value(*r.max_kernels);
  if (!r.forbid_types.empty()) {
    w.key(kForbidTypes).begin_array();
    for (NodeType t : r.forbid_types) w.value(to_string(t));
    w.end_array();
  }
  if (r.max_depth) w.key(kMaxDepth).value(*r.max_depth);
  if (r.identical_repeats) w.key(kIdenticalRepeats).value(true);
  if (!r.baseline.empty()) w.key(kBaseline).value(r.baseline);
  if (r.node_count_tolerance_pct) w.key(kTolerance).value(*r.node_count_tolerance_pct);
  if (r.max_blocking_fake_us) w.key(kBlockingFake).value(*r.max_blocking_fake_us);
  if (r.min_critical_path_efficiency) w.key(kEfficiency).value(*r.min_critical_path_efficiency);
  if (!r.max_account_share.empty()) {
    w.key(kAccountShare).begin_object();
    for (const auto& [part, share] : r.max_account_share) w.key(part).value(share);
    w.end_object();
  }
  w.end_object();
  return w.take();
}

}  // namespace graphscope
