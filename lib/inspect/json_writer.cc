#include "json_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace graphscope {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid.
size_t utf8_len(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n;
  uint32_t cp;
  if (c >= 0xC2 && c <= 0xDF) n = 2, cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, cp = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, cp = c & 0x07;
  else return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    unsigned char d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (d & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  static const char* hex = "0123456789abcdef";
  out.push_back('"');
  size_t i = 0, run = 0;
  auto flush = [&] {
    if (run < i) out.append(s.data() + run, i - run);
  };
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      size_t n = utf8_len(s, i);
      if (n) {
        i += n;
        continue;
      }
      flush();
      out.append("\\ufffd");  // not UTF-8: replaced, so the document stays valid JSON
      run = ++i;
      continue;
    }
    flush();
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\t': out.append("\\t"); break;
      case '\r': out.append("\\r"); break;
      default:
        out.append("\\u00");
        out.push_back(hex[c >> 4]);
        out.push_back(hex[c & 15]);
    }
    run = ++i;
  }
  flush();
  out.push_back('"');
}

void JsonWriter::string(std::string_view s) {
  // Plain ASCII needs no escaping: copy it in one piece; anything else goes
  // through the general escaper.
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') break;
    ++i;
  }
  if (i == s.size()) {
    char* p = grow(s.size() + 2);
    p[0] = '"';
    std::memcpy(p + 1, s.data(), s.size());
    p[s.size() + 1] = '"';
    len_ += s.size() + 2;
    return;
  }
  std::string escaped;
  append_json_string(escaped, s);
  put(escaped);
}

void JsonWriter::newline() {
  put('\n');
  size_t n = 2 * first_.size();
  std::memset(grow(n), ' ', n);
  len_ += n;
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (first_.empty()) return;
  bool pretty = int(first_.size()) <= pretty_depth_;
  if (!first_.back()) put(pretty ? std::string_view(",") : std::string_view(", "));
  first_.back() = false;
  if (pretty) newline();
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  put('{');
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::close(char bracket) {
  bool empty = first_.back();
  bool pretty = int(first_.size()) <= pretty_depth_;
  first_.pop_back();
  if (pretty && !empty) newline();
  put(bracket);
  return *this;
}

JsonWriter& JsonWriter::end_object() { return close('}'); }

JsonWriter& JsonWriter::begin_array() {
  before_value();
  put('[');
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_array() { return close(']'); }

JsonWriter& JsonWriter::key(std::string_view k) {
  before_value();
  string(k);
  put(": ");
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::key_literal(std::string_view k) {
  before_value();
  char* p = grow(k.size() + 4);
  p[0] = '"';
  std::memcpy(p + 1, k.data(), k.size());
  std::memcpy(p + 1 + k.size(), "\": ", 3);
  len_ += k.size() + 4;
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  before_value();
  string(s);
  return *this;
}

JsonWriter& JsonWriter::value(uint64_t v) {
  before_value();
  char* p = grow(24);
  len_ += size_t(std::to_chars(p, p + 24, v).ptr - p);
  return *this;
}

JsonWriter& JsonWriter::value(int64_t v) {
  before_value();
  char* p = grow(24);
  len_ += size_t(std::to_chars(p, p + 24, v).ptr - p);
  return *this;
}

JsonWriter& JsonWriter::value(double v) {
  if (!std::isfinite(v)) return null();  // JSON has no NaN or infinity
  before_value();
  char* p = grow(32);
  len_ += size_t(std::to_chars(p, p + 32, v).ptr - p);
  return *this;
}

JsonWriter& JsonWriter::value(bool v) {
  before_value();
  put(v ? std::string_view("true") : std::string_view("false"));
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  put("null");
  return *this;
}

JsonWriter& JsonWriter::raw(std::string_view json) {
  before_value();
  put(json);
  return *this;
}

std::string JsonWriter::take() {
  out_.resize(len_);
  if (!out_.empty() && out_.back() != '\n') out_.push_back('\n');
  std::string s;
  s.swap(out_);
  len_ = 0;
  return s;
}

namespace {

template <typename T>
void opt(JsonWriter& w, std::string_view k, const std::optional<T>& v) {
  if (v) w.key_literal(k).value(*v);
}

void dim3(JsonWriter& w, std::string_view k, const Dim3& d) {
  w.key_literal(k).begin_array().value(d.x).value(d.y).value(d.z).end_array();
}

void write_graph_body(JsonWriter& w, const Graph& g);

void write_node(JsonWriter& w, const Node& n) {
  w.begin_object();
  w.key_literal("index").value(n.index);
  w.key_literal("node_type").value(to_string(n.type));
  w.key_literal("tools_id");
  n.tools_id ? w.value(*n.tools_id) : w.null();
  w.key_literal("graph_id");
  n.graph_id ? w.value(*n.graph_id) : w.null();
  w.key_literal("node_id").value(n.node_id);
  w.key_literal("kernel_name");
  n.type == NodeType::kernel ? w.value(n.kernel_name) : w.null();
  w.key_literal("event_ptr").value(n.event_ptr);
  w.key_literal("dependencies").begin_array();
  bool typed = false, ported = false;
  for (const auto& d : n.dependencies) {
    w.value(d.from);
    typed |= d.type != EdgeType::standard;
    ported |= d.from_port != 0 || d.to_port != 0;
  }
  w.end_array();
  w.key_literal("dependents").begin_array();
  for (uint32_t d : n.dependents) w.value(d);
  w.end_array();
  // Extensions: absent keys mean "unknown" or "default".
  if (typed) {
    w.key_literal("dependency_types").begin_array();
    for (const auto& d : n.dependencies) w.value(to_string(d.type));
    w.end_array();
  }
  if (ported) {
    w.key_literal("dependency_ports").begin_array();
    for (const auto& d : n.dependencies)
      w.begin_array().value(uint32_t(d.from_port)).value(uint32_t(d.to_port)).end_array();
    w.end_array();
  }
  if (n.type == NodeType::unknown && !n.type_spelling.empty())
    w.key_literal("node_type_spelling").value(n.type_spelling);
  opt(w, "template_tools_id", n.template_tools_id);
  opt(w, "handle", n.handle);
  if (n.kernel && (n.kernel->geometry_known || n.kernel->function_handle)) {
    const auto& k = *n.kernel;
    w.key_literal("kernel").begin_object();
    if (k.geometry_known) {
      dim3(w, "grid", k.grid);
      dim3(w, "block", k.block);
      if (k.cluster) dim3(w, "cluster", *k.cluster);
      w.key_literal("shared_mem_bytes").value(k.shared_mem_bytes);
    }
    opt(w, "function_handle", k.function_handle);
    w.end_object();
  }
  if (n.memcpy) {
    w.key_literal("memcpy").begin_object().key_literal("kind").value(n.memcpy->kind);
    w.key_literal("bytes").value(n.memcpy->bytes);
    opt(w, "src", n.memcpy->src);
    opt(w, "dst", n.memcpy->dst);
    w.end_object();
  }
  if (n.memset) {
    const auto& m = *n.memset;
    w.key_literal("memset").begin_object().key_literal("value").value(m.value);
    w.key_literal("element_size").value(m.element_size).key_literal("width").value(m.width);
    w.key_literal("height").value(m.height).key_literal("bytes").value(m.bytes);
    opt(w, "dst", m.dst);
    w.end_object();
  }
  if (n.host) {
    w.key_literal("host").begin_object();
    if (!n.host->symbol.empty()) w.key_literal("symbol").value(n.host->symbol);
    opt(w, "fn", n.host->fn);
    opt(w, "user_data", n.host->user_data);
    w.end_object();
  }
  if (n.mem_alloc) {
    w.key_literal("mem_alloc").begin_object().key_literal("bytes").value(n.mem_alloc->bytes);
    opt(w, "dptr", n.mem_alloc->dptr);
    w.end_object();
  }
  if (n.mem_free_dptr) w.key_literal("mem_free").begin_object().key_literal("dptr").value(*n.mem_free_dptr).end_object();
  if (n.type == NodeType::conditional || !n.conditional_type.empty()) {
    w.key_literal("conditional").begin_object();
    if (!n.conditional_type.empty()) w.key_literal("type").value(n.conditional_type);
    opt(w, "handle", n.conditional_handle);
    w.end_object();
  }
  if (!n.bodies.empty()) {
    w.key_literal("bodies").begin_array();
    for (const auto& b : n.bodies) {
      w.begin_object();
      w.key_literal("graph_id");
      b.graph_id ? w.value(*b.graph_id) : w.null();
      write_graph_body(w, b);
      w.end_object();
    }
    w.end_array();
  }
  w.end_object();
}

void collect_kernel_names(const Graph& g, std::vector<std::pair<std::string_view, std::string_view>>& out) {
  std::string_view last;
  for (const auto& n : g.nodes) {
    if (n.kernel && !n.kernel->demangled.empty() && n.kernel_name != last) {
      out.emplace_back(n.kernel_name, n.kernel->demangled);
      last = n.kernel_name;
    }
    for (const auto& b : n.bodies) collect_kernel_names(b, out);
  }
}

void write_graph_body(JsonWriter& w, const Graph& g) {
  w.key_literal("nodes").begin_array();
  for (const auto& n : g.nodes) write_node(w, n);
  w.end_array();
}

}  // namespace

std::string write_graph_json(const GraphDocument& doc) {
  JsonWriter w(2);
  w.reserve(256 + total_nodes(doc.root) * 400);
  w.begin_object();
  w.key_literal("schema").value(kGraphSchema);
  w.key_literal("exec_graph_id");
  doc.exec_graph_id ? w.value(*doc.exec_graph_id) : w.null();
  w.key_literal("template_graph_id");
  doc.root.graph_id ? w.value(*doc.root.graph_id) : w.null();
  if (!doc.name.empty()) w.key_literal("name").value(doc.name);
  if (!doc.source_format.empty()) w.key_literal("source_format").value(doc.source_format);
  if (doc.device) {
    const auto& d = *doc.device;
    w.key_literal("device").begin_object();
    w.key_literal("name").value(d.name);
    opt(w, "driver_version", d.driver_version);
    opt(w, "runtime_version", d.runtime_version);
    if (d.cc_major && d.cc_minor)
      w.key_literal("compute_capability").begin_array().value(*d.cc_major).value(*d.cc_minor).end_array();
    w.end_object();
  }
  for (const auto& [k, v] : doc.extra_json) w.key(k).raw(v);
  // Demangled names once per kernel, not once per node.
  std::vector<std::pair<std::string_view, std::string_view>> names;
  collect_kernel_names(doc.root, names);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  if (!names.empty()) {
    w.key_literal("kernel_names").begin_object();
    for (const auto& [mangled, demangled] : names) w.key(mangled).value(demangled);
    w.end_object();
  }
  write_graph_body(w, doc.root);
  w.end_object();
  return w.take();
}

}  // namespace graphscope
