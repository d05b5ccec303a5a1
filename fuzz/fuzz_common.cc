#include "fuzz_common.h"

#include <cmath>

#include "inspect/render/dot_writer.h"
#include "inspect/formats/graph_json.h"
#include "inspect/core/json_tape.h"
#include "inspect/core/json_writer.h"
#include "inspect/formats/load.h"
#include "inspect/analysis/summary.h"
#include "inspect/model/validate.h"

namespace graphscope::fuzz {
namespace {

// s as the writer leaves it: bytes that are not UTF-8 become U+FFFD (the
// writer escapes them as \ufffd; a DOT file may hold any bytes).
std::string as_written(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out.push_back(char(c));
      ++i;
      continue;
    }
    size_t n = 0;
    uint32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF)
      n = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
      n = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
      n = 4, cp = c & 0x07;
    bool ok = n && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) {
      unsigned char d = static_cast<unsigned char>(s[i + k]);
      ok = (d & 0xC0) == 0x80;
      cp = (cp << 6) | (d & 0x3F);
    }
    if (ok && ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
               (cp >= 0xD800 && cp <= 0xDFFF)))
      ok = false;
    if (ok) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out.append("\xEF\xBF\xBD");
      ++i;
    }
  }
  return out;
}

// Differences are reported as "where: what".
struct Diff {
  std::string where, out;
  template <typename T>
  void field(const char* name, const T& a, const T& b) {
    if (out.empty() && !(a == b)) out = where + "." + name + " differs";
  }
  void text(const char* name, std::string_view a, std::string_view b) {
    if (out.empty() && as_written(a) != as_written(b))
      out = where + "." + name + " differs: \"" + as_written(a).substr(0, 80) + "\" vs \"" +
            as_written(b).substr(0, 80) + "\"";
  }
  // A string the reader cuts to `limit` bytes (possibly inside a UTF-8
  // sequence, which the writer then replaces): the same up to the cut.
  void prefix(const char* name, std::string_view a, std::string_view b, size_t limit) {
    std::string x = as_written(a), y = as_written(b);
    if (x.size() > limit - 4 || y.size() > limit - 4) x = x.substr(0, limit - 4), y = y.substr(0, limit - 4);
    if (out.empty() && x != y)
      out = where + "." + name + " differs: \"" + x.substr(0, 80) + "\" vs \"" + y.substr(0, 80) + "\"";
  }
  void is(const char* name, bool same) {
    if (out.empty() && !same) out = where + "." + name + " differs";
  }
};

// The template id as the document means it: written only when it is not
// (template graph id << 32) | node_id, which the reader fills in.
std::optional<uint64_t> template_id(const Node& n, const Graph& g) {
  if (n.template_tools_id) return n.template_tools_id;
  if (g.graph_id) return (uint64_t(*g.graph_id) << 32) | n.node_id;
  return std::nullopt;
}

bool kernel_object(const Node& n) {
  return n.kernel && (n.kernel->geometry_known || n.kernel->function_handle);
}

// Two JSON values equal as JSON: numbers by value (-0 and 0, 1.0 and 1 are
// the same number), objects member by member in order.
bool same_json(const JsonTape& a, uint32_t x, const JsonTape& b, uint32_t y) {
  using K = JsonTape::Kind;
  const auto &va = a.at(x), &vb = b.at(y);
  auto number = [](const JsonTape::Value& v, long double* out) {
    if (v.kind == K::integer)
      *out = (long double)v.i;
    else if (v.kind == K::unsigned_integer)
      *out = (long double)v.u;
    else if (v.kind == K::real)
      *out = v.d;
    else
      return false;
    return true;
  };
  long double na, nb;
  if (number(va, &na) && number(vb, &nb)) return na == nb;
  if (va.kind != vb.kind || va.count != vb.count) return false;
  switch (va.kind) {
    case K::null:
      return true;
    case K::boolean:
      return va.b == vb.b;
    case K::string:
      return a.str(x) == b.str(y);
    case K::array:
      for (uint32_t i = 0; i < va.count; ++i)
        if (!same_json(a, a.element(x, i), b, b.element(y, i))) return false;
      return true;
    case K::object:
      for (uint32_t i = 0; i < va.count; ++i)
        if (a.member_key(x, i) != b.member_key(y, i) ||
            !same_json(a, a.member_value(x, i), b, b.member_value(y, i)))
          return false;
      return true;
    default:
      return false;
  }
}

bool same_json_text(const std::string& a, const std::string& b) {
  if (a == b) return true;
  try {
    JsonTape ta = JsonTape::parse(a, "a"), tb = JsonTape::parse(b, "b");
    return same_json(ta, ta.root(), tb, tb.root());
  } catch (const Error&) {
    return false;
  }
}

std::string first_line_difference(const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  size_t line = a.rfind('\n', i == 0 ? 0 : i - 1);
  line = line == std::string::npos ? 0 : line + 1;
  auto cut = [&](const std::string& s) {
    size_t e = s.find('\n', line);
    return s.substr(line, std::min<size_t>(e == std::string::npos ? s.size() - line : e - line, 200));
  };
  return "at byte " + std::to_string(i) + ":\n  " + cut(a) + "\n  " + cut(b);
}

}  // namespace

std::string graph_difference(const Graph& a, const Graph& b, const std::string& where) {
  Diff d;
  d.where = where;
  d.field("graph_id", a.graph_id, b.graph_id);
  d.field("nodes.size", a.nodes.size(), b.nodes.size());
  if (!d.out.empty()) return d.out;
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const Node &x = a.nodes[i], &y = b.nodes[i];
    d.where = where + "[" + std::to_string(i) + "]";
    d.field("index", x.index, y.index);
    d.field("type", x.type, y.type);
    if (x.type == NodeType::unknown) d.prefix("type_spelling", x.type_spelling, y.type_spelling, 256);
    d.field("tools_id", x.tools_id, y.tools_id);
    d.field("graph_id", x.graph_id, y.graph_id);
    d.field("node_id", x.node_id, y.node_id);
    d.field("template_tools_id", template_id(x, a), template_id(y, b));
    if (x.type == NodeType::kernel) d.text("kernel_name", x.kernel_name, y.kernel_name);
    d.field("event_ptr", x.event_ptr, y.event_ptr);
    d.field("handle", x.handle, y.handle);
    d.is("dependencies", x.dependencies == y.dependencies);
    d.field("dependents", x.dependents, y.dependents);
    d.is("kernel", kernel_object(x) == kernel_object(y));
    if (d.out.empty() && kernel_object(x)) {
      const KernelInfo &p = *x.kernel, &q = *y.kernel;
      d.field("kernel.geometry_known", p.geometry_known, q.geometry_known);
      if (p.geometry_known && q.geometry_known) {
        d.field("kernel.grid", p.grid, q.grid);
        d.field("kernel.block", p.block, q.block);
        d.field("kernel.cluster", p.cluster, q.cluster);
        d.field("kernel.shared_mem_bytes", p.shared_mem_bytes, q.shared_mem_bytes);
      }
      d.field("kernel.function_handle", p.function_handle, q.function_handle);
    }
    d.is("memcpy", x.memcpy.has_value() == y.memcpy.has_value());
    if (d.out.empty() && x.memcpy) {
      d.prefix("memcpy.kind", x.memcpy->kind, y.memcpy->kind, 64);
      d.field("memcpy.bytes", x.memcpy->bytes, y.memcpy->bytes);
      d.field("memcpy.src", x.memcpy->src, y.memcpy->src);
      d.field("memcpy.dst", x.memcpy->dst, y.memcpy->dst);
    }
    d.is("memset", x.memset.has_value() == y.memset.has_value());
    if (d.out.empty() && x.memset) {
      const MemsetInfo &p = *x.memset, &q = *y.memset;
      d.field("memset.value", p.value, q.value);
      d.field("memset.element_size", p.element_size, q.element_size);
      d.field("memset.width", p.width, q.width);
      d.field("memset.height", p.height, q.height);
      d.field("memset.bytes", p.bytes, q.bytes);
      d.field("memset.dst", p.dst, q.dst);
    }
    d.is("host", x.host.has_value() == y.host.has_value());
    if (d.out.empty() && x.host) {
      d.text("host.symbol", x.host->symbol, y.host->symbol);
      d.field("host.fn", x.host->fn, y.host->fn);
      d.field("host.user_data", x.host->user_data, y.host->user_data);
    }
    d.is("mem_alloc", x.mem_alloc.has_value() == y.mem_alloc.has_value());
    if (d.out.empty() && x.mem_alloc) {
      d.field("mem_alloc.bytes", x.mem_alloc->bytes, y.mem_alloc->bytes);
      d.field("mem_alloc.dptr", x.mem_alloc->dptr, y.mem_alloc->dptr);
    }
    d.field("mem_free_dptr", x.mem_free_dptr, y.mem_free_dptr);
    d.text("conditional_type", x.conditional_type, y.conditional_type);
    if (x.type == NodeType::conditional || !x.conditional_type.empty())
      d.field("conditional_handle", x.conditional_handle, y.conditional_handle);
    d.field("bodies.size", x.bodies.size(), y.bodies.size());
    if (!d.out.empty()) return d.out;
    for (size_t k = 0; k < x.bodies.size(); ++k) {
      std::string r =
          graph_difference(x.bodies[k], y.bodies[k], d.where + ".bodies[" + std::to_string(k) + "].nodes");
      if (!r.empty()) return r;
    }
  }
  return std::string();
}

std::string document_difference(const GraphDocument& a, const GraphDocument& b) {
  Diff d;
  d.where = "document";
  d.field("exec_graph_id", a.exec_graph_id, b.exec_graph_id);
  d.text("name", a.name, b.name);
  if (!a.source_format.empty()) d.text("source_format", a.source_format, b.source_format);
  d.is("device", a.device.has_value() == b.device.has_value());
  if (d.out.empty() && a.device) {
    d.text("device.name", a.device->name, b.device->name);
    d.field("device.driver_version", a.device->driver_version, b.device->driver_version);
    d.field("device.runtime_version", a.device->runtime_version, b.device->runtime_version);
    if (a.device->cc_major && a.device->cc_minor) {
      d.field("device.cc_major", a.device->cc_major, b.device->cc_major);
      d.field("device.cc_minor", a.device->cc_minor, b.device->cc_minor);
    }
  }
  d.is("warnings", a.warnings == b.warnings);
  d.is("capture", a.capture.has_value() == b.capture.has_value() &&
                      (!a.capture || (a.capture->workload == b.capture->workload &&
                                      a.capture->workload_name == b.capture->workload_name &&
                                      a.capture->args == b.capture->args && a.capture->mode == b.capture->mode &&
                                      a.capture->instantiate == b.capture->instantiate)));
  d.is("timings", a.timings.has_value() == b.timings.has_value() &&
                      (!a.timings || (a.timings->capture_ms == b.timings->capture_ms &&
                                      a.timings->instantiate_ms == b.timings->instantiate_ms &&
                                      a.timings->walk_ms == b.timings->walk_ms &&
                                      a.timings->first_replay_ms == b.timings->first_replay_ms &&
                                      a.timings->steady_replay_ms == b.timings->steady_replay_ms &&
                                      a.timings->steady_replays == b.timings->steady_replays)));
  d.is("graph_memory", a.graph_memory.has_value() == b.graph_memory.has_value() &&
                           (!a.graph_memory || (a.graph_memory->used_current == b.graph_memory->used_current &&
                                                a.graph_memory->used_high == b.graph_memory->used_high &&
                                                a.graph_memory->reserved_current == b.graph_memory->reserved_current &&
                                                a.graph_memory->reserved_high == b.graph_memory->reserved_high)));
  d.field("extra_json.size", a.extra_json.size(), b.extra_json.size());
  for (size_t i = 0; d.out.empty() && i < a.extra_json.size(); ++i) {
    d.text("extra_json key", a.extra_json[i].first, b.extra_json[i].first);
    d.is(("extra_json[" + a.extra_json[i].first.substr(0, 40) + "]").c_str(),
         same_json_text(a.extra_json[i].second, b.extra_json[i].second));
  }
  if (!d.out.empty()) return d.out;
  return graph_difference(a.root, b.root);
}

void check_json_round_trip(const GraphDocument& doc, bool valid) {
  auto read_back = [](const std::string& text, const char* step) {
    try {
      return read_graph_json(text, "written");
    } catch (const Error& e) {
      finding(std::string("the writer's JSON (") + step + ") does not read back: " + e.what());
    }
  };
  const std::string once = write_graph_json(doc);
  const GraphDocument again = read_back(once, "first writing");
  std::string diff = document_difference(doc, again);
  check(diff.empty(), "a graph changed on its way through write_graph_json and read_graph_json: " + diff);
  if (valid) {
    try {
      validate_graph(again, "written");
    } catch (const Error& e) {
      finding(std::string("a valid graph is no longer valid once written and read back: ") + e.what());
    }
  }
  const std::string twice = write_graph_json(again);
  const std::string thrice = write_graph_json(read_back(twice, "second writing"));
  check(twice == thrice, "write_graph_json is not a fixed point " + first_line_difference(twice, thrice));
}

void check_graph(const GraphDocument& doc, bool valid) {
  if (valid) {
    // `graphscope dump` on a graph that loaded: the summary and the DOT.
    GraphSummary s = summarize(doc);
    check(s.top_nodes == doc.root.nodes.size(), "summary counts another number of root nodes");
    check(!format_summary(doc, s, "fuzz").empty(), "empty summary");
    check(!write_dot(doc).empty(), "empty DOT");
  }
  check_json_round_trip(doc, valid);
}

void fuzz_graph_json(const std::string& text) {
  GraphDocument doc;
  if (!accepts([&] { doc = read_graph_json(text, "fuzz"); })) return;
  const bool valid = accepts([&] { validate_graph(doc, "fuzz"); });
  // The load path (format chosen by content) reaches the same reader: it must
  // come to the same verdict.
  GraphFormat format = GraphFormat::nvidia_dot;
  if (accepts([&] { format = detect_graph_format(text, "fuzz"); }) && format != GraphFormat::nvidia_dot) {
    std::string why;
    const bool loaded = accepts([&] { parse_graph(text, "fuzz"); }, &why);
    check(loaded == valid, loaded ? "parse_graph accepts an invalid graph"
                                  : "parse_graph refuses a graph that reads and validates: " + why);
  }
  check_graph(doc, valid);
}

}  // namespace graphscope::fuzz
