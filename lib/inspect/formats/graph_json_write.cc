// Writing "graphscope.graph/1": nodes formatted in parallel slices for a
// large graph, what repeats (fold.h) as a view; the reader is
// graph_json_read.cc.
#include "graph_json.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "../analysis/fold.h"
#include "../core/error.h"
#include "../core/io.h"
#include "../core/json_writer.h"
#include "../core/parallel.h"

namespace graphscope {

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

// "origin": {"module", "modules", "python", "nvtx", "op", "native"}, each
// only when known.
void write_origin(NodeText& t, const Origin& o) {
  t.open("origin");
  auto list = [&](const char* key, size_t n, auto&& one) {
    if (!n) return;
    t.inner(key);
    t.push('[');
    for (size_t i = 0; i < n; ++i) {
      if (i) t.lit(", ");
      t.push('{');
      one(i);
      t.push('}');
    }
    t.push(']');
  };
  if (!o.modules.empty()) t.inner("module"), t.str(o.module());
  list("modules", o.modules.size(), [&](size_t i) {
    t.lit("\"name\": "), t.str(o.modules[i].name), t.lit(", \"type\": "), t.str(o.modules[i].type);
  });
  list("python", o.python.size(), [&](size_t i) {
    t.lit("\"file\": "), t.str(o.python[i].file), t.lit(", \"line\": "), t.u64(o.python[i].line);
    t.lit(", \"function\": "), t.str(o.python[i].function);
  });
  list("nvtx", o.nvtx.size(), [&](size_t i) {
    t.lit("\"domain\": "), t.str(o.nvtx[i].domain), t.lit(", \"message\": "), t.str(o.nvtx[i].message);
    t.lit(o.nvtx[i].started ? ", \"kind\": \"start\"" : ", \"kind\": \"push\"");
  });
  if (!o.op.empty()) t.inner("op"), t.str(o.op);
  if (o.native) {
    t.inner("native");
    t.lit("{\"function\": "), t.str(o.native->function), t.lit(", \"object\": "), t.str(o.native->object);
    t.lit(", \"offset\": "), t.u64(o.native->offset), t.push('}');
  }
  t.close();
}

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
  if (n.kernel && (n.kernel->geometry_known || n.kernel->function_handle || !n.kernel->args.empty())) {
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
    if (!k.args.empty()) {
      t.key("args");
      t.push('[');
      for (size_t i = 0; i < k.args.size(); ++i) {
        const KernelArg& a = k.args[i];
        if (i) t.lit(", ");
        t.push('['), t.u64(a.offset), t.lit(", "), t.u64(a.size), t.lit(", \""), t.lit(a.value), t.lit("\"]");
      }
      t.push(']');
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
  if (n.origin && !n.origin->empty()) write_origin(t, *n.origin);
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

// How many parallel slices a graph's nodes are formatted in: 0 for one
// formatted in place (small, or a machine of one core). A dump on a large
// machine is waited for: up to 16 threads here.
unsigned node_slices(const Graph& g) {
  const size_t n = g.nodes.size();
  const unsigned threads = worker_count(n, 5000, 16);
  return n < 20000 || threads < 2 ? 0 : threads;
}

// Each node's line depends on that node alone: a large graph's nodes are
// formatted in parallel slices, to be joined in order ({} for a small one).
std::vector<std::string> format_in_slices(const Graph& g, size_t indent) {
  const unsigned threads = node_slices(g);
  if (!threads) return {};
  std::vector<std::string> parts(threads);
  parallel_slices(g.nodes.size(), threads, [&](unsigned k, size_t begin, size_t end) {
    format_nodes(g, begin, end, indent, parts[k]);
  });
  return parts;
}

// A graph's "nodes" array (a large one formatted in parallel slices).
void write_graph_body(JsonWriter& w, const Graph& g, NodeText& t) {
  w.key_literal("nodes").begin_array();
  std::vector<std::string> parts = format_in_slices(g, w.indent() + 2);
  if (parts.empty())
    for (const auto& node : g.nodes) write_node(w, node, g.graph_id, t);
  for (const auto& part : parts) w.raw_elements(part);
  w.end_array();
}

// A capture's own record, each part on one line, in the order capture adds
// them.
void write_capture_record(JsonWriter& out, const GraphDocument& doc) {
  JsonWriter w(0);
  if (!doc.warnings.empty()) {
    w.begin_array();
    for (const auto& x : doc.warnings) w.value(x);
    w.end_array();
    out.key_literal("warnings").raw(w.view());
  }
  if (const auto& c = doc.capture) {
    w.clear();
    w.begin_object().key_literal("workload").value(c->workload).key_literal("workload_name").value(c->workload_name);
    w.key_literal("args").begin_array();
    for (const auto& a : c->args) w.value(a);
    w.end_array().key_literal("mode").value(c->mode).key_literal("instantiate").value(c->instantiate);
    w.end_object();
    out.key_literal("capture").raw(w.view());
  }
  if (const auto& t = doc.timings) {
    w.clear();
    w.begin_object();
    opt(w, "capture_ms", t->capture_ms);
    opt(w, "instantiate_ms", t->instantiate_ms);
    opt(w, "walk_ms", t->walk_ms);
    opt(w, "first_replay_ms", t->first_replay_ms);
    opt(w, "steady_replay_ms", t->steady_replay_ms);
    opt(w, "steady_replays", t->steady_replays);
    w.end_object();
    out.key_literal("timings").raw(w.view());
  }
  if (const auto& m = doc.graph_memory) {
    w.clear();
    w.begin_object().key_literal("used_current").value(m->used_current).key_literal("used_high").value(m->used_high);
    w.key_literal("reserved_current").value(m->reserved_current).key_literal("reserved_high").value(m->reserved_high);
    w.end_object();
    out.key_literal("graph_memory").raw(w.view());
  }
  if (const auto& e = doc.exec_version) {
    w.clear();
    w.begin_object().key_literal("version").value(uint64_t(e->version));
    w.key_literal("updated_by").begin_array();
    for (const auto& x : e->updated_by) w.value(x);
    w.end_array().key_literal("not_recorded").begin_array();
    for (const auto& x : e->not_recorded) w.value(x);
    w.end_array().key_literal("disabled_nodes").begin_array();
    for (uint32_t x : e->disabled_nodes) w.value(uint64_t(x));
    w.end_array().end_object();
    out.key_literal("exec_version").raw(w.view());
  }
}

}  // namespace

namespace {
// The root's nodes of a large graph, formatted by worker threads in more
// slices than there are workers, taken in order: each slice can be written
// while later ones are still formatted (writing a large document to a file
// took as long as formatting it).
class SliceFormatter {
 public:
  SliceFormatter(const Graph& g, size_t indent, unsigned workers, size_t slices)
      : g_(g), indent_(indent), text_(slices), done_(slices, 0) {
    try {
      for (unsigned w = 0; w < workers; ++w) pool_.emplace_back([this] { work(); });
    } catch (...) {
      stop();
      throw;
    }
  }
  ~SliceFormatter() { stop(); }
  SliceFormatter(const SliceFormatter&) = delete;
  SliceFormatter& operator=(const SliceFormatter&) = delete;
  size_t size() const { return text_.size(); }
  /// Slice k once it is formatted, handed over; a worker's error is
  /// rethrown here.
  std::string take(size_t k) {
    std::unique_lock<std::mutex> lock(m_);
    ready_.wait(lock, [&] { return done_[k] || error_; });
    if (error_) std::rethrow_exception(error_);
    return std::move(text_[k]);
  }
  void stop() {
    next_.store(text_.size());
    for (auto& t : pool_)
      if (t.joinable()) t.join();
  }

 private:
  void work() {
    const size_t n = g_.nodes.size(), slices = text_.size();
    for (size_t k; (k = next_.fetch_add(1)) < slices;) {
      std::string s;
      try {
        format_nodes(g_, n * k / slices, n * (k + 1) / slices, indent_, s);
      } catch (...) {
        std::lock_guard<std::mutex> lock(m_);
        if (!error_) error_ = std::current_exception();
        next_.store(slices);
        ready_.notify_all();
        return;
      }
      {
        std::lock_guard<std::mutex> lock(m_);
        text_[k] = std::move(s);
        done_[k] = 1;
      }
      ready_.notify_all();
    }
  }
  const Graph& g_;
  const size_t indent_;
  std::vector<std::string> text_;
  std::vector<char> done_;
  std::atomic<size_t> next_{0};
  std::mutex m_;
  std::condition_variable ready_;
  std::exception_ptr error_;
  std::vector<std::thread> pool_;
};

// The document, handed to emit piece by piece in order: the text before
// the nodes, a large graph's node slices as each is formatted, the rest.
template <typename Emit>
void write_document(const GraphDocument& doc, const Folding* given, Emit emit) {
  const unsigned workers = node_slices(doc.root);
  JsonWriter w(2);
  // Sliced nodes are formatted apart: this writer holds the rest.
  w.reserve(256 + total_nodes(doc.root) * (workers ? 16 : 400));
  w.begin_object();
  w.key_literal("schema").value(kGraphSchema);
  w.key_literal("graphscope_version").value(GRAPHSCOPE_VERSION);
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
  write_capture_record(w, doc);
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
  // What repeats (a view: every node stays in "nodes").
  auto write_repeats = [&](const Folding& folding) {
    if (folding.repeats.empty()) return;
    w.key_literal("repeats").begin_array();
    for (const Repeat& r : folding.repeats) {
      JsonWriter one(0);
      one.begin_object().key_literal("count").value(r.count).key_literal("size").value(r.size);
      one.key_literal("chained").value(r.chained).key_literal("label").value(r.label);
      one.key_literal("members").begin_array();
      for (const auto& copy : r.copies) {
        one.begin_array();
        for (uint32_t v : copy) one.value(v);
        one.end_array();
      }
      one.end_array().end_object();
      w.raw(one.view());
    }
    w.end_array();
  };
  if (!workers) {
    if (given) write_repeats(*given);
    else write_repeats(find_repeats(doc.root));
    NodeText t;
    write_graph_body(w, doc.root, t);
  } else {
    // A large graph: its nodes are formatted by workers and handed on in
    // order at once, while what repeats is found on a thread of its own
    // (unless the command found it already); so the section comes after the
    // nodes (finding it took as long as formatting them, and a file writer
    // would have waited for it).
    JsonWriter probe(2);  // indentation depends on depth alone
    probe.begin_object().key_literal("nodes").begin_array();
    SliceFormatter slices(doc.root, probe.indent() + 2, workers, size_t(workers) * 4);
    auto nodes = [&] {
      w.key_literal("nodes").begin_array();
      emit(w.cut());
      for (size_t k = 0; k + 1 < slices.size(); ++k) emit(slices.take(k));
      w.raw_elements(slices.take(slices.size() - 1));
      w.end_array();
    };
    Folding found;
    if (given) nodes();
    else run_beside([&] { found = find_repeats(doc.root); }, nodes);
    write_repeats(given ? *given : found);
  }
  w.end_object();
  emit(w.take());
}
}  // namespace

std::vector<std::string> write_graph_json_pieces(const GraphDocument& doc, const Folding* folding) {
  std::vector<std::string> pieces;
  write_document(doc, folding, [&](std::string&& piece) { pieces.push_back(std::move(piece)); });
  return pieces;
}

void write_graph_json_file(const std::string& path, const GraphDocument& doc, const Folding* folding) {
  OutputFile out(path);
  // About 290 bytes a node without an origin (the 100k-node bench), 1,200
  // with one (the recorded Llama): room never written is cut off.
  size_t with_origin = 0;
  for (const auto& n : doc.root.nodes) with_origin += n.origin ? 1 : 0;
  out.expect(4096 + 320 * uint64_t(total_nodes(doc.root)) + 1000 * uint64_t(with_origin));
  write_document(doc, folding, [&](std::string&& piece) { out.write(piece); });
  out.commit();
}

std::string write_graph_json(const GraphDocument& doc, const Folding* folding) {
  std::vector<std::string> pieces = write_graph_json_pieces(doc, folding);
  if (pieces.size() == 1) return std::move(pieces[0]);
  size_t total = 0;
  for (const auto& p : pieces) total += p.size();
  std::string out;
  out.reserve(total);
  for (const auto& p : pieces) out += p;
  return out;
}

}  // namespace graphscope
