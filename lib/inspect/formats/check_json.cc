#include "check_json.h"

#include <limits>

#include "../core/json_read.h"
#include "../core/json_tape.h"
#include "../core/json_writer.h"
#include "../core/text.h"

namespace graphscope {

std::string write_check_json(const CheckResult& c) {
  JsonWriter w(4);  // a key per line down to each offender, which takes one line
  w.begin_object();
  w.key("schema").value(kCheckSchema);
  w.key("graphscope_version").value(GRAPHSCOPE_VERSION);
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

namespace {

using Kind = JsonTape::Kind;

// The keys of a result that are not details (named figures).
bool known_result_key(std::string_view k) {
  for (std::string_view x : {"rule", "passed", "measured", "limit", "unit", "types", "summary", "message",
                             "offender_count", "offenders"})
    if (k == x) return true;
  return false;
}

std::string opt_string(const JsonRead& r, uint32_t obj, const char* key, const JsonPath& at) {
  uint32_t v = r.required(obj, key, at);
  return r.is_null(v) ? std::string() : std::string(r.string(v, JsonPath(at, key)));
}

// A measured figure: a number, or null where the writer met one that JSON
// cannot hold (a node count against an empty baseline is infinitely many
// percent off), read back as NaN, which writes as null again.
double figure(const JsonRead& r, uint32_t v, const JsonPath& at) {
  return r.is_null(v) ? std::numeric_limits<double>::quiet_NaN() : r.number(v, at);
}

CheckOffender offender(const JsonRead& r, uint32_t o, const JsonPath& at) {
  r.object(o, at);
  CheckOffender x;
  x.node = std::string(r.string(r.required(o, "node", at), JsonPath(at, "node"), 256));
  x.node_type = std::string(r.string(r.required(o, "node_type", at), JsonPath(at, "node_type"), 64));
  x.kernel_name = opt_string(r, o, "kernel_name", at);
  if (uint32_t d = r.find(o, "delay_us"); d != kJsonAbsent) {
    x.delay_us = r.number(d, JsonPath(at, "delay_us"));
    uint32_t b = r.required(o, "blocker", at);
    if (!r.is_null(b)) x.blocker = r.u32(b, JsonPath(at, "blocker"));
    x.blocker_node_type = opt_string(r, o, "blocker_node_type", at);
    x.blocker_kernel_name = opt_string(r, o, "blocker_kernel_name", at);
    x.cause = opt_string(r, o, "cause", at);
  }
  return x;
}

RuleResult result(const JsonRead& r, uint32_t o, const JsonPath& at) {
  const JsonTape& t = r.tape();
  r.object(o, at, "an object");
  RuleResult x;
  x.rule = std::string(r.string(r.required(o, "rule", at), JsonPath(at, "rule"), 64));
  x.passed = r.boolean(r.required(o, "passed", at), JsonPath(at, "passed"));
  x.measured = figure(r, r.required(o, "measured", at), JsonPath(at, "measured"));
  x.limit = figure(r, r.required(o, "limit", at), JsonPath(at, "limit"));
  x.unit = std::string(r.string(r.required(o, "unit", at), JsonPath(at, "unit"), 64));
  if (uint32_t v = r.find(o, "types"); v != kJsonAbsent) {
    const JsonPath p(at, "types");
    uint32_t n = 0;
    r.array(v, p, "an array of node types", &n);
    for (uint32_t i = 0; i < n; ++i) x.types.emplace_back(r.string(t.element(v, i), JsonPath(p, i), 64));
  }
  for (uint32_t i = 0, n = t.at(o).count; i < n; ++i) {
    std::string_view k = t.member_key(o, i);
    if (known_result_key(k)) continue;
    x.details.emplace_back(std::string(k), figure(r, t.member_value(o, i), JsonPath(at, k)));
  }
  x.summary = std::string(r.string(r.required(o, "summary", at), JsonPath(at, "summary")));
  x.message = std::string(r.string(r.required(o, "message", at), JsonPath(at, "message")));
  x.offender_count = size_t(r.u64(r.required(o, "offender_count", at), JsonPath(at, "offender_count")));
  const JsonPath p(at, "offenders");
  uint32_t n = 0, list = r.array(r.required(o, "offenders", at), p, "an array of offenders", &n);
  for (uint32_t i = 0; i < n; ++i) x.offenders.push_back(offender(r, t.element(list, i), JsonPath(p, i)));
  if (x.offenders.size() > x.offender_count)
    r.fail(JsonPath(at, "offender_count"), "is smaller than the offenders listed");
  return x;
}

}  // namespace

CheckResult read_check_json(std::string_view text, const std::string& origin) {
  JsonTape t = JsonTape::parse(text, origin, 16);
  JsonRead r(t, origin);
  const uint32_t root = r.document(kCheckSchema, "a check result");
  CheckResult c;
  c.graph = std::string(r.string(r.required(root, "graph", ""), "graph"));
  c.profile = opt_string(r, root, "profile", JsonPath(""));
  c.baseline = opt_string(r, root, "baseline", JsonPath(""));
  const JsonPath at("results");
  uint32_t n = 0, list = r.array(r.required(root, "results", ""), at, "an array of rule results", &n);
  for (uint32_t i = 0; i < n; ++i) {
    c.results.push_back(result(r, t.element(list, i), JsonPath(at, i)));
    c.failed += !c.results.back().passed;
  }
  if (r.u64(r.required(root, "rules", ""), "rules") != c.results.size())
    r.fail("rules", "disagrees with the results listed");
  if (r.u64(r.required(root, "failed", ""), "failed") != c.failed)
    r.fail("failed", "disagrees with the results listed");
  if (r.boolean(r.required(root, "passed", ""), "passed") != c.passed())
    r.fail("passed", "disagrees with the results listed");
  return c;
}

}  // namespace graphscope
