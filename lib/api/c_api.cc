// graphscope's C API (include/graphscope/graphscope.h): each call assembles
// lib/inspect's pieces the way the matching subcommand does, and turns every
// Error into the exit code and the one line the CLI would print. Nothing here
// writes a file, prints, exits or installs a signal handler.
#include "graphscope/graphscope.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capture/capture.h"
#include "inspect/analysis/check.h"
#include "inspect/formats/check_json.h"
#include "inspect/formats/chrome_trace.h"
#include "inspect/analysis/diff.h"
#include "inspect/formats/diff_json.h"
#include "inspect/render/dot_writer.h"
#include "inspect/core/error.h"
#include "inspect/formats/graph_json.h"
#include "inspect/core/io.h"
#include "inspect/formats/load.h"
#include "inspect/analysis/profile.h"
#include "inspect/formats/profile_json.h"
#include "inspect/formats/rules_json.h"
#include "inspect/analysis/summary.h"

namespace graphscope {
namespace {

using nlohmann::json;

// The options object of one call: only the keys it names, each of its type.
class Options {
 public:
  Options(const char* text, const char* call, std::vector<const char*> known) : call_(call) {
    if (!text || !*text) return;
    try {
      j_ = json::parse(text);
    } catch (const json::exception& e) {
      throw Error(ExitCode::usage, std::string(call) + " options", std::string("not JSON: ") + e.what());
    }
    if (!j_.is_object()) throw Error(ExitCode::usage, std::string(call) + " options", "not a JSON object");
    for (const auto& [key, value] : j_.items()) {
      bool found = false;
      for (const char* k : known) found |= key == k;
      if (found) continue;
      std::string names;
      for (const char* k : known) names += (names.empty() ? "" : ", ") + std::string(k);
      throw Error(ExitCode::usage, std::string(call) + " options",
                  "unknown option \"" + key + "\"; the options are " + (names.empty() ? "none" : names));
    }
  }

  bool flag(const char* key, bool fallback) const { return get<bool>(key, fallback, json::value_t::boolean, "true or false"); }

  double number(const char* key, double fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_number() || !(v.get<double>() >= 0) || v.get<double>() > 1e15) wrong(key, "a number >= 0");
    return v.get<double>();
  }

  uint64_t whole(const char* key, uint64_t fallback, uint64_t max) const {
    if (!has(key)) return fallback;
    return whole_value(key, j_.at(key), max);
  }

  std::vector<uint32_t> wholes(const char* key) const {
    std::vector<uint32_t> out;
    if (!has(key)) return out;
    const json& v = j_.at(key);
    if (!v.is_array()) wrong(key, "an array of whole numbers");
    for (const auto& x : v) out.push_back(uint32_t(whole_value(key, x, UINT32_MAX)));
    return out;
  }

  std::string text(const char* key) const { return get<std::string>(key, "", json::value_t::string, "a string"); }
  bool has(const char* key) const { return j_.is_object() && j_.contains(key); }

 private:
  template <class T>
  T get(const char* key, T fallback, json::value_t type, const char* expected) const {
    if (!has(key)) return fallback;
    if (j_.at(key).type() != type) wrong(key, expected);
    return j_.at(key).get<T>();
  }
  uint64_t whole_value(const char* key, const json& v, uint64_t max) const {
    if (!v.is_number_unsigned() || v.get<uint64_t>() > max)
      wrong(key, "a whole number from 0 to " + std::to_string(max));
    return v.get<uint64_t>();
  }
  [[noreturn]] void wrong(const char* key, const std::string& expected) const {
    throw Error(ExitCode::usage, std::string(call_) + " options", std::string(key) + ": expected " + expected);
  }
  std::string call_;
  json j_;
};

std::string required(const char* s, const char* what) {
  if (!s) throw Error(ExitCode::usage, what, "is NULL");
  return s;
}

char* copy(const std::string& s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (!p) throw std::bad_alloc();
  std::memcpy(p, s.data(), s.size() + 1);
  return p;
}

void set(char** where, char* value) {
  if (where) *where = value;
  else std::free(value);
}

// Runs one call: f fills the text and returns 0 or 1.
template <class F>
int run(char** out, char** error, F&& f) {
  if (out) *out = nullptr;
  if (error) *error = nullptr;
  std::string line;
  int code = 0;
  try {
    std::string text;
    code = f(text);
    set(out, copy(text));
    return code;
  } catch (const Error& e) {
    code = int(e.code());
    line = e.what();
  } catch (const std::bad_alloc&) {
    code = int(ExitCode::bad_input);
    line = "graphscope's library (out of memory)";
  } catch (const std::exception& e) {
    code = int(ExitCode::bad_input);
    line = std::string("graphscope's library (") + e.what() + ")";
  }
  if (code == int(ExitCode::ok) || code == int(ExitCode::failed)) code = int(ExitCode::bad_input);
  try {
    set(error, copy("graphscope: " + line));
  } catch (...) {
  }
  return code;
}

}  // namespace
}  // namespace graphscope

using namespace graphscope;

extern "C" {

const char* gs_version(void) { return GRAPHSCOPE_VERSION; }

int gs_api_version(void) { return GS_API_VERSION; }

void gs_free(char* text) { std::free(text); }

int gs_dump(const char* path, const char* format, const char* options_json, char** out, char** error) {
  return run(out, error, [&](std::string& text) {
    const std::string input = required(path, "path");
    const std::string f = format ? format : "json";
    if (f != "json" && f != "summary" && f != "dot" && f != "svg")
      throw Error(ExitCode::usage, "format \"" + f + "\"", "the formats are json, summary, dot and svg");
    const Options o(options_json, "dump", {"fold", "svg_max_nodes"});
    const bool fold = o.flag("fold", true);
    const size_t max_nodes = o.whole("svg_max_nodes", kDefaultSvgMaxNodes, SIZE_MAX);
    GraphDocument doc = load_graph(input);
    if (f == "json") text = write_graph_json(doc);
    else if (f == "dot") text = write_dot(doc, nullptr, fold);
    else if (f == "svg") text = render_svg(doc, max_nodes, nullptr, fold);
    else text = format_summary(doc, summarize(doc), input);
    return 0;
  });
}

int gs_diff(const char* a, const char* b, const char* options_json, char** out, char** error) {
  return run(out, error, [&](std::string& text) {
    const std::string pa = required(a, "a"), pb = required(b, "b");
    const Options o(options_json, "diff", {"ignore_geometry", "ignore_sizes"});
    DiffOptions d;
    d.ignore_geometry = o.flag("ignore_geometry", false);
    d.ignore_sizes = o.flag("ignore_sizes", false);
    GraphDiff result = diff_graphs(load_graph(pa), load_graph(pb), d);
    text = write_diff_json(result, pa, pb);
    return result.same() ? 0 : 1;
  });
}

int gs_check(const char* graph, const char* rules_json, const char* options_json, char** out, char** error) {
  return run(out, error, [&](std::string& text) {
    const std::string g = required(graph, "graph");
    const Options o(options_json, "check", {"rules_file", "profile"});
    const std::string rules_file = o.has("rules_file") ? o.text("rules_file") : "rules";
    const std::string profile_file = o.text("profile");
    const char* profile_path = profile_file.empty() ? nullptr : profile_file.c_str();
    CheckRules rules;
    if (rules_json && *rules_json) rules = parse_check_rules(rules_json, rules_file);
    check_rules_usable(rules, profile_path != nullptr);
    GraphDocument doc = load_graph(g);
    std::optional<ProfileDocument> profile;
    if (profile_path) {
      profile = read_profile_json(read_file(profile_path, json_head), profile_path);
      check_profile_matches(*profile, doc, profile_path, g);
    }
    std::optional<GraphDocument> baseline;
    if (!rules.baseline.empty()) baseline = load_graph(rules.baseline);
    CheckResult result = run_checks(doc, profile ? &*profile : nullptr, baseline ? &*baseline : nullptr, rules);
    result.graph = g;
    if (profile_path) result.profile = profile_path;
    if (!rules.baseline.empty()) result.baseline = rules.baseline;
    text = write_check_json(result);
    return result.passed() ? 0 : 1;
  });
}

int gs_profile(const char* graph, const char* trace, const char* options_json, char** out, char** error) {
  return run(out, error, [&](std::string& text) {
    const std::string g = required(graph, "graph"), t = required(trace, "trace");
    const Options o(options_json, "profile", {"threshold_us", "tolerance_us", "exec_graph_id", "launches"});
    ProfileOptions po;
    po.threshold_us = o.number("threshold_us", po.threshold_us);
    po.tolerance_us = o.number("tolerance_us", po.tolerance_us);
    if (o.has("exec_graph_id")) po.exec_graph_id = uint32_t(o.whole("exec_graph_id", 0, UINT32_MAX));
    po.launches = o.wholes("launches");
    GraphDocument doc = load_graph(g);
    Trace tr;
    {
      InputText input(t, json_head);
      tr = read_chrome_trace(input.view(), t);
    }
    TraceJoin join;
    ProfileReport r = profile_trace(doc, tr, t, po, join);
    text = write_profile_json(r, doc);
    return 0;
  });
}

int gs_walk_cuda_graph(uintptr_t graph, const char* options_json, char** out, char** error) {
  return run(out, error, [&](std::string& text) {
    const Options o(options_json, "walk", {"name", "exec"});
    GraphDocument doc = capture::walk_cuda_graph(graph, uintptr_t(o.whole("exec", 0, UINTPTR_MAX)));
    doc.name = o.text("name");
    text = write_graph_json(doc);
    return 0;
  });
}

}  // extern "C"
