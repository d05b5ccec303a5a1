// Pictures: DOT through cgraph, SVG through gvc. Every DOT text is parsed
// back with cgraph's own reader, so the checks are on what dot will see.
#include "inspect/render/dot_writer.h"

#include <doctest/doctest.h>
#include <graphviz/cgraph.h>

#include <cctype>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "inspect/core/error.h"
#include "inspect/model/graph.h"
#include "inspect/core/text.h"

namespace graphscope {
namespace {

// ---- building documents by hand

Node make_node(NodeType type) {
  Node n;
  n.type = type;
  return n;
}

Node kernel(std::string demangled, Dim3 grid, Dim3 block, uint32_t smem = 0) {
  Node n = make_node(NodeType::kernel);
  KernelInfo k;
  k.demangled = std::move(demangled);
  k.grid = grid;
  k.block = block;
  k.shared_mem_bytes = smem;
  n.kernel = k;
  return n;
}

Node memcpy_node(std::string kind, uint64_t bytes) {
  Node n = make_node(NodeType::memcpy);
  MemcpyInfo m;
  m.kind = std::move(kind);
  m.bytes = bytes;
  n.memcpy = m;
  return n;
}

Node memset_node(uint64_t bytes, uint64_t value, uint32_t elem) {
  Node n = make_node(NodeType::memset);
  MemsetInfo m;
  m.bytes = bytes;
  m.value = value;
  m.element_size = elem;
  m.width = bytes / elem;
  n.memset = m;
  return n;
}

Node host_node(std::string symbol) {
  Node n = make_node(NodeType::host);
  HostInfo h;
  h.symbol = std::move(symbol);
  n.host = h;
  return n;
}

Dependency dep(uint32_t from, EdgeType type = EdgeType::standard, uint8_t from_port = 0,
               uint8_t to_port = 0) {
  Dependency d;
  d.from = from;
  d.type = type;
  d.from_port = from_port;
  d.to_port = to_port;
  return d;
}

/// Appends n to g, numbering it and adding its dependencies.
void add(Graph& g, Node n, std::vector<Dependency> deps = {}) {
  n.index = static_cast<uint32_t>(g.nodes.size());
  n.node_id = n.index;
  n.dependencies = std::move(deps);
  g.nodes.push_back(std::move(n));
}

constexpr const char* kElementwise =
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
    "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)";

/// A fork-join of kernels behind a memcpy, a memset, a host node, a child
/// graph holding a nested child graph, and an if/else conditional; edges of
/// all three types.
///
///   0 memcpy -> 1 kernel, 2 kernel -> 3 kernel (programmatic from 1, launch
///   completion from 2) -> 4 memset -> 5 host -> 6 child graph -> 7 if
GraphDocument sample() {
  GraphDocument doc;
  doc.exec_graph_id = 7;
  doc.name = "decode_step";
  doc.root.graph_id = 3;
  Graph& g = doc.root;
  add(g, memcpy_node("HtoD", 256 * 1024));
  add(g, kernel(kElementwise, {128, 1, 1}, {256, 1, 1}, 48 * 1024), {dep(0)});
  add(g, kernel("void gemm_tn_kernel<float, 128>(float const*, float*)", {64, 32, 1}, {128, 1, 1}),
      {dep(0)});
  add(g, kernel("reduce_kernel", {1, 1, 1}, {1024, 1, 1}),
      {dep(1, EdgeType::programmatic, 1, 0), dep(2, EdgeType::launch_completion, 2, 0)});
  add(g, memset_node(1024 * 1024, 0, 4), {dep(3)});
  add(g, host_node("_Z8log_stepPv"), {dep(4)});

  Node child = make_node(NodeType::child_graph);
  Graph body;
  add(body, kernel("void inner::softmax_kernel<half>(half*)", {8, 1, 1}, {32, 1, 1}));
  Node nested = make_node(NodeType::child_graph);
  Graph nested_body;
  add(nested_body, make_node(NodeType::empty));
  nested.bodies.push_back(std::move(nested_body));
  add(body, std::move(nested), {dep(0)});
  child.bodies.push_back(std::move(body));
  add(g, std::move(child), {dep(5)});

  Node cond = make_node(NodeType::conditional);
  cond.conditional_type = "if";
  Graph then_body, else_body;
  add(then_body, kernel("then_kernel", {4, 1, 1}, {64, 1, 1}));
  add(else_body, memcpy_node("DtoH", 1536 * 1024));
  cond.bodies.push_back(std::move(then_body));
  cond.bodies.push_back(std::move(else_body));
  add(g, std::move(cond), {dep(6)});
  link_dependents(g);
  return doc;
}
// 8 root nodes + 2 + 1 nested + 1 + 1 in the if bodies.
constexpr int kSampleNodes = 13;
// 8 root dependencies, 1 in the child body, and one edge from each owner to
// each of its bodies (child 1, nested 1, if 2).
constexpr int kSampleEdges = 8 + 1 + 4;
constexpr int kSampleClusters = 4;

// ---- reading DOT back

struct GraphCloser {
  void operator()(Agraph_t* g) const {
    if (g) agclose(g);
  }
};
using ParsedGraph = std::unique_ptr<Agraph_t, GraphCloser>;

ParsedGraph parse(const std::string& dot) { return ParsedGraph(agmemread(dot.c_str())); }

std::string get(void* obj, const char* attr) {
  const char* v = agget(obj, const_cast<char*>(attr));
  return v ? v : "";
}

Agnode_t* find_node(Agraph_t* g, const std::string& name) {
  return agnode(g, const_cast<char*>(name.c_str()), 0);
}

Agedge_t* find_edge(Agraph_t* g, const std::string& tail, const std::string& head) {
  Agnode_t* t = find_node(g, tail);
  Agnode_t* h = find_node(g, head);
  REQUIRE(t != nullptr);
  REQUIRE(h != nullptr);
  return agedge(g, t, h, nullptr, 0);
}

/// Every cluster at any depth, with its label.
void collect_clusters(Agraph_t* g, std::vector<std::pair<std::string, std::string>>* out) {
  for (Agraph_t* s = agfstsubg(g); s; s = agnxtsubg(s)) {
    std::string name = agnameof(s);
    if (name.rfind("cluster", 0) == 0) out->emplace_back(name, get(s, "label"));
    collect_clusters(s, out);
  }
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

/// Graphviz escString spelling of literal text: backslashes doubled.
std::string escaped(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += '\\';
    out += c;
  }
  return out;
}

TEST_CASE("write_dot gives DOT that cgraph parses back with every node, edge and cluster") {
  const std::string dot = write_dot(sample());
  ParsedGraph g = parse(dot);
  REQUIRE(g);
  CHECK(agisdirected(g.get()));
  CHECK(agnnodes(g.get()) == kSampleNodes);
  CHECK(agnedges(g.get()) == kSampleEdges);
  std::vector<std::pair<std::string, std::string>> clusters;
  collect_clusters(g.get(), &clusters);
  CHECK(clusters.size() == kSampleClusters);
  CHECK(get(g.get(), "compound") == "true");
}

TEST_CASE("node ids are unique across nested graphs") {
  ParsedGraph g = parse(write_dot(sample()));
  REQUIRE(g);
  std::set<std::string> names;
  for (Agnode_t* n = agfstnode(g.get()); n; n = agnxtnode(g.get(), n)) names.insert(agnameof(n));
  CHECK(names.size() == kSampleNodes);
  // The root is g0; bodies are numbered depth first.
  for (const char* id : {"g0_n0", "g0_n7", "g1_n0", "g1_n1", "g2_n0", "g3_n0", "g4_n0"})
    CHECK_MESSAGE(names.count(id) == 1, id);
}

TEST_CASE("labels show index, short kernel name, launch geometry and sizes") {
  ParsedGraph g = parse(write_dot(sample()));
  REQUIRE(g);
  const std::string k1 = get(find_node(g.get(), "g0_n1"), "label");
  // The functor the kernel runs stays in its short name; the launcher's name is elided first.
  CHECK(k1 == "1: vectorized_elementwise_ke...<FillFunctor<float>>\\ngrid (128,1,1) block (256,1,1)\\nsmem 48 KiB");
  const std::string k2 = get(find_node(g.get(), "g0_n2"), "label");
  CHECK(k2 == "2: gemm_tn_kernel<float, 128>\\ngrid (64,32,1) block (128,1,1)");
  CHECK(get(find_node(g.get(), "g0_n0"), "label") == "0: memcpy\\nHtoD 256 KiB");
  CHECK(get(find_node(g.get(), "g4_n0"), "label") == "0: memcpy\\nDtoH 1.5 MiB");
  CHECK(get(find_node(g.get(), "g0_n4"), "label") == "4: memset\\n1 MiB = 0 (4-byte)");
  CHECK(get(find_node(g.get(), "g0_n5"), "label") == "5: host\\nlog_step");
  CHECK(get(find_node(g.get(), "g0_n6"), "label") == "6: child graph\\n3 nodes");
  CHECK(get(find_node(g.get(), "g0_n7"), "label") == "7: conditional\\nif, 2 bodies");
  CHECK(contains(get(find_node(g.get(), "g1_n0"), "label"), "softmax_kernel"));
  // The tooltip carries the full demangled name.
  CHECK(contains(get(find_node(g.get(), "g0_n1"), "tooltip"), escaped(kElementwise)));
  // The graph label says which graph this is.
  const std::string title = get(g.get(), "label");
  CHECK(contains(title, "decode_step"));
  CHECK(contains(title, "exec graph 7, template graph 3"));
  CHECK(contains(title, "13 nodes"));
}

TEST_CASE("node types get different shapes or colours") {
  GraphDocument doc;
  const NodeType types[] = {NodeType::kernel,       NodeType::memcpy,    NodeType::memset,
                            NodeType::host,         NodeType::child_graph, NodeType::empty,
                            NodeType::event_record, NodeType::mem_alloc, NodeType::mem_free,
                            NodeType::conditional,  NodeType::batch_mem_op};
  for (NodeType t : types) add(doc.root, make_node(t));
  ParsedGraph g = parse(write_dot(doc));
  REQUIRE(g);
  std::set<std::string> looks;
  for (size_t i = 0; i < std::size(types); ++i) {
    Agnode_t* n = find_node(g.get(), "g0_n" + std::to_string(i));
    REQUIRE(n);
    CHECK(contains(get(n, "style"), "filled"));
    looks.insert(get(n, "shape") + " " + get(n, "fillcolor") + " " + get(n, "style"));
  }
  CHECK(looks.size() == std::size(types));
  // Events share a colour but point different ways.
  GraphDocument ev;
  add(ev.root, make_node(NodeType::event_record));
  add(ev.root, make_node(NodeType::wait_event));
  ParsedGraph eg = parse(write_dot(ev));
  REQUIRE(eg);
  CHECK(get(find_node(eg.get(), "g0_n0"), "shape") != get(find_node(eg.get(), "g0_n1"), "shape"));
}

TEST_CASE("edge styles differ per edge type and non-zero ports are labelled") {
  ParsedGraph g = parse(write_dot(sample()));
  REQUIRE(g);
  Agedge_t* standard = find_edge(g.get(), "g0_n0", "g0_n1");
  Agedge_t* programmatic = find_edge(g.get(), "g0_n1", "g0_n3");
  Agedge_t* completion = find_edge(g.get(), "g0_n2", "g0_n3");
  REQUIRE(standard);
  REQUIRE(programmatic);
  REQUIRE(completion);
  CHECK(get(standard, "style") == "solid");
  CHECK(get(programmatic, "style") == "dashed");
  CHECK(get(completion, "style") == "dotted");
  CHECK(get(programmatic, "color") != get(standard, "color"));
  CHECK(get(completion, "color") != get(standard, "color"));
  CHECK(get(completion, "color") != get(programmatic, "color"));
  CHECK(get(standard, "label").empty());
  CHECK(get(programmatic, "label") == "out port 1");
  CHECK(get(completion, "label") == "out port 2");
  // A legend for the non-default styles goes in the graph label.
  CHECK(contains(get(g.get(), "label"), "programmatic"));
  CHECK(contains(get(g.get(), "label"), "launch-completion"));
}

TEST_CASE("child graphs and conditional bodies are labelled clusters entered from their owner") {
  ParsedGraph g = parse(write_dot(sample()));
  REQUIRE(g);
  std::vector<std::pair<std::string, std::string>> clusters;
  collect_clusters(g.get(), &clusters);
  std::set<std::string> labels;
  for (const auto& c : clusters) labels.insert(c.second);
  CHECK(labels == std::set<std::string>{"child graph of node 6", "child graph of node 1",
                                        "if body of node 7", "else body of node 7"});
  // The owner points at its body's first node, clipped at the cluster.
  Agedge_t* into_child = find_edge(g.get(), "g0_n6", "g1_n0");
  REQUIRE(into_child);
  CHECK(get(into_child, "lhead") == "cluster_g1");
  Agedge_t* into_else = find_edge(g.get(), "g0_n7", "g4_n0");
  REQUIRE(into_else);
  CHECK(get(into_else, "lhead") == "cluster_g4");
  // The nested child graph is a cluster inside its parent's cluster.
  Agraph_t* outer = agsubg(g.get(), const_cast<char*>("cluster_g1"), 0);
  REQUIRE(outer);
  CHECK(agsubg(outer, const_cast<char*>("cluster_g2"), 0) != nullptr);
  CHECK(find_node(outer, "g2_n0") != nullptr);
}

TEST_CASE("an empty body is still drawn as a cluster with a placeholder") {
  GraphDocument doc;
  Node loop = make_node(NodeType::conditional);
  loop.conditional_type = "while";
  loop.bodies.emplace_back();
  add(doc.root, std::move(loop));
  const std::string dot = write_dot(doc);
  ParsedGraph g = parse(dot);
  REQUIRE(g);
  Agraph_t* cl = agsubg(g.get(), const_cast<char*>("cluster_g1"), 0);
  REQUIRE(cl);
  CHECK(get(cl, "label") == "while body of node 0");
  CHECK(agnnodes(cl) == 1);
  CHECK(agnedges(g.get()) == 1);
  CHECK(contains(render_svg(doc), "while body of node 0"));
}

TEST_CASE("special characters in kernel names survive a round trip through agmemread") {
  // Quotes, backslashes (one that would read as Graphviz's \N escape), the
  // record-label characters { } |, angle brackets and spaces.
  const std::string name = R"(void ns::we"ird\N{x|y}<int, "s|t" \n, 2>(float*, char const*))";
  GraphDocument doc;
  doc.name = R"(graph "a\b" <c>)";
  add(doc.root, kernel(name, {2, 1, 1}, {32, 1, 1}));
  add(doc.root, host_node(R"(cb"\)"), {dep(0)});
  const std::string dot = write_dot(doc);
  ParsedGraph g = parse(dot);
  REQUIRE(g);
  REQUIRE(agnnodes(g.get()) == 2);
  Agnode_t* k = find_node(g.get(), "g0_n0");
  REQUIRE(k);
  // short_kernel_name drops the namespace and parameter list, keeps the template arguments.
  CHECK(get(k, "label") == escaped(R"(0: we"ird\N{x|y}<int, "s|t" \n, 2>)") + "\\ngrid (2,1,1) block (32,1,1)");
  // Graphviz expands a tooltip's escapes twice: its backslashes doubled twice.
  CHECK(get(k, "tooltip").rfind("kernel " + escaped(escaped(name)) + "\\n", 0) == 0);
  // A value ending in a backslash does not swallow the closing quote.
  CHECK(get(find_node(g.get(), "g0_n1"), "label") == escaped(R"(1: host)") + "\\n" + escaped(R"(cb"\)"));
  CHECK(contains(get(g.get(), "label"), escaped(doc.name)));
  // After Graphviz's own escape processing, the SVG shows the literal text.
  const std::string svg = render_svg(doc);
  CHECK(contains(svg, R"(0: we&quot;ird\N{x|y})"));
  CHECK(contains(svg, R"(cb&quot;\)"));
  // In its tooltip too: the name, not the node's name in place of \N.
  CHECK(contains(svg, R"(xlink:title="kernel void ns::we&quot;ird\N{x|y})"));
}

TEST_CASE("write_dot output is deterministic") {
  const std::string first = write_dot(sample());
  CHECK(write_dot(sample()) == first);
  // Starting a Graphviz layout context changes cgraph's global defaults; the
  // DOT must not change with it.
  (void)render_svg(sample());
  CHECK(write_dot(sample()) == first);
  // Sibling clusters come out in creation order.
  CHECK(first.find("cluster_g3") < first.find("cluster_g4"));
  CHECK(first.find("cluster_g1") < first.find("cluster_g3"));
}

TEST_CASE("render_svg lays the graph out as SVG text") {
  const std::string svg = render_svg(sample());
  CHECK((svg.rfind("<?xml", 0) == 0 || contains(svg, "<svg")));
  CHECK(contains(svg, "</svg>"));
  CHECK(contains(svg, "vectorized_elementwise_kernel"));
  CHECK(contains(svg, "grid (128,1,1) block (256,1,1)"));
  CHECK(contains(svg, "child graph of node 6"));
}

TEST_CASE("render_svg refuses a graph above max_nodes with a usage error") {
  GraphDocument doc = sample();
  try {
    (void)render_svg(doc, kSampleNodes - 1, nullptr, false);
    FAIL("render_svg accepted a graph above the limit");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::usage);
    CHECK(e.subject() == "graph too large to lay out");
    CHECK(contains(e.reason(), std::to_string(kSampleNodes) + " nodes, limit " +
                                   std::to_string(kSampleNodes - 1)));
    CHECK(contains(e.reason(), "--svg-max-nodes"));
  }
  // Nested nodes count, and the limit itself is allowed.
  CHECK(contains(render_svg(doc, kSampleNodes), "<svg"));
}

TEST_CASE("an empty graph still gives valid DOT and SVG") {
  GraphDocument doc;
  const std::string dot = write_dot(doc);
  ParsedGraph g = parse(dot);
  REQUIRE(g);
  CHECK(agnnodes(g.get()) == 0);
  CHECK(agnedges(g.get()) == 0);
  CHECK(contains(get(g.get(), "label"), "0 nodes"));
  const std::string svg = render_svg(doc);
  CHECK(contains(svg, "<svg"));
  CHECK(contains(svg, "</svg>"));
}

TEST_CASE("a dependency on a node that does not exist is drawn, not dropped") {
  GraphDocument doc;
  add(doc.root, kernel("k", {1, 1, 1}, {1, 1, 1}), {dep(9)});
  ParsedGraph g = parse(write_dot(doc));
  REQUIRE(g);
  Agnode_t* missing = find_node(g.get(), "g0_missing9");
  REQUIRE(missing);
  CHECK(get(missing, "label") == "9: missing node");
  CHECK(agnedges(g.get()) == 1);
}

// ---- a small XML 1.0 well-formedness check, enough for Graphviz's SVG:
// characters, references, tags nested and closed, attributes quoted,
// comments, the declaration and a doctype. "" when well formed.

std::string xml_problem(const std::string& x) {
  auto at = [&](size_t i) { return " at byte " + std::to_string(i); };
  for (size_t i = 0; i < x.size();) {
    const Utf8Char u = utf8_char(x, i);
    if (!u.len || !xml_char(u.cp)) return "not an XML character" + at(i);
    i += u.len;
  }
  // A reference: &name; of the five, or &#N; / &#xN; of an XML character.
  auto reference = [&](size_t i, size_t* end) -> std::string {
    const size_t semi = x.find(';', i);
    if (semi == std::string::npos || semi - i > 12) return "a bare '&'" + at(i);
    const std::string r = x.substr(i + 1, semi - i - 1);
    *end = semi + 1;
    if (r == "amp" || r == "lt" || r == "gt" || r == "quot" || r == "apos") return "";
    if (r.size() < 2 || r[0] != '#') return "unknown entity &" + r + ";" + at(i);
    const bool hex = r[1] == 'x';
    const std::string digits = r.substr(hex ? 2 : 1);
    if (digits.empty() ||
        digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") != std::string::npos)
      return "bad reference &" + r + ";" + at(i);
    if (!xml_char(uint32_t(std::stoul(digits, nullptr, hex ? 16 : 10))))
      return "reference to a non-character &" + r + ";" + at(i);
    return "";
  };
  std::vector<std::string> open;
  bool root_seen = false;
  for (size_t i = 0; i < x.size();) {
    if (x[i] == '&') {
      std::string bad = reference(i, &i);
      if (!bad.empty()) return bad;
      continue;
    }
    if (x[i] != '<') {
      if (open.empty() && !std::isspace(static_cast<unsigned char>(x[i])))
        return "text outside the root" + at(i);
      ++i;
      continue;
    }
    auto skip_to = [&](const char* end) {
      const size_t e = x.find(end, i);
      return e == std::string::npos ? std::string::npos : e + std::strlen(end);
    };
    size_t next;
    if (x.compare(i, 4, "<!--") == 0) {
      next = skip_to("-->");
      if (next == std::string::npos || x.substr(i + 4, next - 3 - i - 4).find("--") != std::string::npos)
        return "bad comment" + at(i);
    } else if (x.compare(i, 2, "<?") == 0) {
      next = skip_to("?>");
    } else if (x.compare(i, 9, "<!DOCTYPE") == 0) {
      next = skip_to(">");
    } else {
      const bool closing = x[i + 1] == '/';
      size_t p = i + (closing ? 2 : 1);
      const size_t name_end = x.find_first_of(" \t\r\n/>", p);
      if (name_end == std::string::npos) return "an unclosed tag" + at(i);
      const std::string name = x.substr(p, name_end - p);
      if (name.empty()) return "a tag without a name" + at(i);
      p = name_end;
      auto space = [&] {
        while (p < x.size() && std::isspace(static_cast<unsigned char>(x[p]))) ++p;
      };
      if (closing) {
        space();
        if (p >= x.size() || x[p] != '>') return "a bad end tag" + at(i);
        if (open.empty() || open.back() != name) return "</" + name + "> closes nothing open" + at(i);
        open.pop_back();
        next = p + 1;
      } else {
        if (open.empty() && root_seen) return "a second root" + at(i);
        root_seen = true;
        bool empty = false;
        // Attributes: name="value" or name='value', no '<' in values.
        while (true) {
          space();
          if (p >= x.size()) return "an unclosed tag" + at(i);
          if (x[p] == '>') {
            next = p + 1;
            break;
          }
          if (x.compare(p, 2, "/>") == 0) {
            next = p + 2, empty = true;
            break;
          }
          const size_t eq = x.find('=', p);
          if (eq == std::string::npos) return "an attribute without a value" + at(p);
          const std::string attr = x.substr(p, eq - p);
          if (attr.empty() || attr.find_first_of(" \t\r\n<>/\"'&") != std::string::npos)
            return "a bad attribute" + at(p);
          const char q = eq + 1 < x.size() ? x[eq + 1] : '\0';
          if (q != '"' && q != '\'') return "an unquoted attribute" + at(p);
          const size_t close = x.find(q, eq + 2);
          if (close == std::string::npos) return "an unclosed attribute" + at(p);
          for (size_t k = eq + 2; k < close;) {
            if (x[k] == '<') return "'<' in an attribute" + at(k);
            if (x[k] != '&') {
              ++k;
              continue;
            }
            std::string bad = reference(k, &k);
            if (!bad.empty()) return bad;
          }
          p = close + 1;
        }
        if (!empty) open.push_back(name);
      }
    }
    if (next == std::string::npos) return "an unclosed construct" + at(i);
    i = next;
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  return root_seen ? "" : "no root element";
}

TEST_CASE("the small XML check refuses what a parser refuses") {
  CHECK(xml_problem("<svg a=\"1\"><g>t &amp; &#10;</g></svg>") == "");
  CHECK(xml_problem("<svg><g></svg>") != "");
  CHECK(xml_problem("<svg>a & b</svg>") != "");
  CHECK(xml_problem("<svg>&#xFFFF;</svg>") != "");
  CHECK(xml_problem("<svg>\xEF\xBF\xBE</svg>") != "");
  CHECK(xml_problem("<svg a=\"\x1b\"/>") != "");
}

TEST_CASE("hostile names give SVG that is well-formed XML and show as literal text") {
  // U+FFFE and U+FFFF (not XML characters), references Graphviz would
  // decode (to a non-character, to NUL, to markup), controls, invalid UTF-8.
  GraphDocument doc;
  doc.name = "g\x1b]0;title\x07 \xEF\xBF\xBE";
  add(doc.root, kernel("fj_scale\xEF\xBF\xBE\xEF\xBF\xBF", {1, 1, 1}, {32, 1, 1}));
  add(doc.root, kernel("k &#xFFFF; &#0; &lt;b&gt; <i> \xC2\x85\x7f\xFF", {1, 1, 1}, {32, 1, 1}), {dep(0)});
  add(doc.root, host_node("cb\nline\t&amp;"), {dep(1)});
  const std::string svg = render_svg(doc);
  CHECK(xml_problem(svg) == "");
  CHECK(!contains(svg, "\xEF\xBF\xBE"));
  CHECK(!contains(svg, "\x1b"));
  CHECK(contains(svg, "0: fj_scale?\?<"));
  CHECK(contains(svg, "g?]0;title? ?<"));
  // Shown as written, not decoded: the SVG escapes the '&' of each reference.
  CHECK(contains(svg, "kernel k &amp;#xFFFF; &amp;#0; &amp;lt;b&amp;gt; &lt;i&gt; ???&#10;"));
  CHECK(contains(svg, "host function cb?line &amp;amp;&#10;"));
  // The DOT, for Graphviz elsewhere: '&' as "&amp;", which Graphviz reads as '&'.
  ParsedGraph g = parse(write_dot(doc));
  REQUIRE(g);
  CHECK(get(find_node(g.get(), "g0_n1"), "tooltip")
            .rfind("kernel k &amp;#xFFFF; &amp;#0; &amp;lt;b&amp;gt; <i> ???\\n", 0) == 0);
  CHECK(get(find_node(g.get(), "g0_n2"), "tooltip").rfind("host function cb?line &amp;amp;\\n", 0) == 0);
}

TEST_CASE("sizes read as B, KiB, MiB and GiB") {
  GraphDocument doc;
  add(doc.root, memcpy_node("DtoD", 17));
  add(doc.root, memcpy_node("DtoD", 1024));
  add(doc.root, memcpy_node("default", 3ull << 30));
  add(doc.root, memset_node(1000, 255, 1));
  ParsedGraph g = parse(write_dot(doc));
  REQUIRE(g);
  CHECK(get(find_node(g.get(), "g0_n0"), "label") == "0: memcpy\\nDtoD 17 B");
  CHECK(get(find_node(g.get(), "g0_n1"), "label") == "1: memcpy\\nDtoD 1 KiB");
  CHECK(get(find_node(g.get(), "g0_n2"), "label") == "2: memcpy\\ndefault 3 GiB");
  CHECK(get(find_node(g.get(), "g0_n3"), "label") == "3: memset\\n1000 B = 0xff (1-byte)");
}

}  // namespace
}  // namespace graphscope
