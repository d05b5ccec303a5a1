#include "json_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <unordered_map>

#include "parallel.h"

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

JsonWriter& JsonWriter::raw_elements(std::string_view text) {
  put(text);
  if (!first_.empty() && !text.empty()) first_.back() = false;
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

void JsonLine::u64(uint64_t v) {
  char* p = grow(24);
  n_ += size_t(std::to_chars(p, p + 24, v).ptr - p);
}

void JsonLine::real(double v) {
  if (!std::isfinite(v)) return lit("null");
  char* p = grow(32);
  n_ += size_t(std::to_chars(p, p + 32, v).ptr - p);
}

void JsonLine::str(std::string_view v) {
  for (char c : v) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x80 || c == '"' || c == '\\') {
      std::string e;
      append_json_string(e, v);
      lit(e);
      return;
    }
  }
  char* p = grow(v.size() + 2);
  p[0] = '"';
  std::memcpy(p + 1, v.data(), v.size());
  p[v.size() + 1] = '"';
  n_ += v.size() + 2;
}

namespace {

template <typename T>
void opt(JsonWriter& w, std::string_view k, const std::optional<T>& v) {
  if (v) w.key_literal(k).value(*v);
}

// Appends one node as compact JSON. Nodes are most of a document (100k of
// them in large graphs), so they are formatted straight into a reused buffer
// with no writer state per value; the writer then takes the line whole.
class NodeText : public JsonLine {
 public:
  // , "key": (the key needs no escaping).
  void key(std::string_view k) {
    char* p = grow(k.size() + 6);
    std::memcpy(p, ", \"", 3);
    std::memcpy(p + 3, k.data(), k.size());
    std::memcpy(p + 3 + k.size(), "\": ", 3);
    n_ += k.size() + 6;
  }
  template <typename T>
  void opt(std::string_view k, const std::optional<T>& v) {
    if (v) key(k), u64(uint64_t(*v));
  }
  void dim3(std::string_view k, const Dim3& d) {
    key(k);
    triple(d);
  }
  void triple(const Dim3& d) {
    push('[');
    u64(d.x), lit(", "), u64(d.y), lit(", "), u64(d.z);
    push(']');
  }
  // {"a": 1, ...}: opened after a key; the first inner key has no comma.
  void open(std::string_view k) {
    key(k);
    push('{');
    first_ = true;
  }
  void inner(std::string_view k) {
    if (!first_) lit(", ");
    first_ = false;
    push('"');
    lit(k);
    lit("\": ");
  }
  void close() { push('}'); }

 private:
  bool first_ = false;
};

void write_graph_body(JsonWriter& w, const Graph& g, NodeText& t);

void write_node(JsonWriter& w, const Node& n, std::optional<uint32_t> template_id, NodeText& t) {
  t.clear();
  t.lit("{\"index\": ");
  t.u64(n.index);
  t.key("node_type");
  t.push('"');
  t.lit(to_string(n.type));
  t.push('"');
  t.key("tools_id");
  n.tools_id ? t.u64(*n.tools_id) : t.lit("null");
  t.key("graph_id");
  n.graph_id ? t.u64(*n.graph_id) : t.lit("null");
  t.key("node_id");
  t.u64(n.node_id);
  t.key("kernel_name");
  n.type == NodeType::kernel ? t.str(n.kernel_name) : t.lit("null");
  t.key("event_ptr");
  t.u64(n.event_ptr);
  t.key("dependencies");
  t.push('[');
  bool typed = false, ported = false;
  for (size_t i = 0; i < n.dependencies.size(); ++i) {
    const auto& d = n.dependencies[i];
    if (i) t.lit(", ");
    t.u64(d.from);
    typed |= d.type != EdgeType::standard;
    ported |= d.from_port != 0 || d.to_port != 0;
  }
  t.lit("]");
  t.key("dependents");
  t.push('[');
  for (size_t i = 0; i < n.dependents.size(); ++i) {
    if (i) t.lit(", ");
    t.u64(n.dependents[i]);
  }
  t.push(']');
  // Extensions: absent keys mean "unknown" or "default".
  if (typed) {
    t.key("dependency_types");
    t.push('[');
    for (size_t i = 0; i < n.dependencies.size(); ++i) {
      if (i) t.lit(", ");
      t.push('"');
      t.lit(to_string(n.dependencies[i].type));
      t.push('"');
    }
    t.push(']');
  }
  if (ported) {
    t.key("dependency_ports");
    t.push('[');
    for (size_t i = 0; i < n.dependencies.size(); ++i) {
      if (i) t.lit(", ");
      t.push('[');
      t.u64(n.dependencies[i].from_port), t.lit(", "), t.u64(n.dependencies[i].to_port);
      t.push(']');
    }
    t.push(']');
  }
  if (n.type == NodeType::unknown && !n.type_spelling.empty()) t.key("node_type_spelling"), t.str(n.type_spelling);
  // The template id is (template graph id << 32) | node_id unless said otherwise.
  if (n.template_tools_id && (!template_id || *n.template_tools_id != ((uint64_t(*template_id) << 32) | n.node_id)))
    t.opt("template_tools_id", n.template_tools_id);
  t.opt("handle", n.handle);
  if (n.kernel && (n.kernel->geometry_known || n.kernel->function_handle)) {
    const auto& k = *n.kernel;
    t.open("kernel");
    if (k.geometry_known) {
      t.inner("grid");
      t.triple(k.grid);
      t.dim3("block", k.block);
      if (k.cluster) t.dim3("cluster", *k.cluster);
      t.key("shared_mem_bytes");
      t.u64(k.shared_mem_bytes);
      if (k.function_handle) t.key("function_handle"), t.u64(*k.function_handle);
    } else {
      t.inner("function_handle"), t.u64(*k.function_handle);
    }
    t.close();
  }
  if (n.memcpy) {
    t.open("memcpy");
    t.inner("kind"), t.str(n.memcpy->kind);
    t.key("bytes"), t.u64(n.memcpy->bytes);
    t.opt("src", n.memcpy->src);
    t.opt("dst", n.memcpy->dst);
    t.close();
  }
  if (n.memset) {
    const auto& m = *n.memset;
    t.open("memset");
    t.inner("value"), t.u64(m.value);
    t.key("element_size"), t.u64(m.element_size);
    t.key("width"), t.u64(m.width);
    t.key("height"), t.u64(m.height);
    t.key("bytes"), t.u64(m.bytes);
    t.opt("dst", m.dst);
    t.close();
  }
  if (n.host) {
    t.open("host");
    bool any = false;
    if (!n.host->symbol.empty()) t.inner("symbol"), t.str(n.host->symbol), any = true;
    if (n.host->fn) (any ? t.key("fn") : t.inner("fn")), t.u64(*n.host->fn), any = true;
    if (n.host->user_data) (any ? t.key("user_data") : t.inner("user_data")), t.u64(*n.host->user_data);
    t.close();
  }
  if (n.mem_alloc) {
    t.open("mem_alloc");
    t.inner("bytes"), t.u64(n.mem_alloc->bytes);
    t.opt("dptr", n.mem_alloc->dptr);
    t.close();
  }
  if (n.mem_free_dptr) t.open("mem_free"), t.inner("dptr"), t.u64(*n.mem_free_dptr), t.close();
  if (n.type == NodeType::conditional || !n.conditional_type.empty()) {
    t.open("conditional");
    bool any = false;
    if (!n.conditional_type.empty()) t.inner("type"), t.str(n.conditional_type), any = true;
    if (n.conditional_handle) (any ? t.key("handle") : t.inner("handle")), t.u64(*n.conditional_handle);
    t.close();
  }
  if (n.bodies.empty()) {
    t.push('}');
    w.raw(t.view());
    return;
  }
  // Nested bodies go through the writer (rare; the node text is flushed first).
  t.lit(", \"bodies\": ");
  std::string head(t.view());
  JsonWriter inner(0);
  inner.begin_array();
  for (const auto& b : n.bodies) {
    inner.begin_object();
    inner.key_literal("graph_id");
    b.graph_id ? inner.value(*b.graph_id) : inner.null();
    write_graph_body(inner, b, t);
    inner.end_object();
  }
  inner.end_array();
  std::string body = inner.take();
  body.pop_back();  // take()'s newline
  head += body;
  head.push_back('}');
  w.raw(head);
}

void collect_kernel_names(const Graph& g, std::unordered_map<std::string_view, std::string_view>& out) {
  for (const auto& n : g.nodes) {
    if (n.kernel && !n.kernel->demangled.empty()) out.emplace(n.kernel_name, n.kernel->demangled);
    for (const auto& b : n.bodies) collect_kernel_names(b, out);
  }
}

// Formats nodes [begin, end) of g as the elements of the "nodes" array at
// its final indentation: each preceded by ",\n" (but the very first by
// "\n") and the indent.
void format_nodes(const Graph& g, size_t begin, size_t end, size_t indent, std::string& out) {
  JsonWriter one(0);
  NodeText t;
  std::string pad(indent, ' ');
  out.reserve((end - begin) * 300);
  for (size_t i = begin; i < end; ++i) {
    one.clear();
    write_node(one, g.nodes[i], g.graph_id, t);
    out += i ? ",\n" : "\n";
    out += pad;
    out += one.view();
  }
}

void write_graph_body(JsonWriter& w, const Graph& g, NodeText& t) {
  w.key_literal("nodes").begin_array();
  const size_t n = g.nodes.size();
  unsigned threads = worker_count(n, 10000);
  if (n < 20000 || threads < 2) {
    for (const auto& node : g.nodes) write_node(w, node, g.graph_id, t);
  } else {
    // Each node's line depends on that node alone: large graphs are
    // formatted in parallel slices and joined in order.
    std::vector<std::string> parts(threads);
    size_t indent = w.indent() + 2;
    parallel_slices(n, threads, [&](unsigned k, size_t begin, size_t end) {
      format_nodes(g, begin, end, indent, parts[k]);
    });
    for (auto& part : parts) w.raw_elements(part);
  }
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
  std::unordered_map<std::string_view, std::string_view> unique;
  for (const auto& [mangled, demangled] : doc.kernel_names) unique.emplace(mangled, demangled);
  collect_kernel_names(doc.root, unique);
  std::vector<std::pair<std::string_view, std::string_view>> names(unique.begin(), unique.end());
  std::sort(names.begin(), names.end());
  if (!names.empty()) {
    w.key_literal("kernel_names").begin_object();
    for (const auto& [mangled, demangled] : names) w.key(mangled).value(demangled);
    w.end_object();
  }
  NodeText t;
  write_graph_body(w, doc.root, t);
  w.end_object();
  return w.take();
}

}  // namespace graphscope
