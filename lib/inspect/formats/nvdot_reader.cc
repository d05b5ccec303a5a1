// Reader for cudaGraphDebugDotPrint output (default and verbose flags).
//
// The DOT text is parsed by Graphviz cgraph; this file turns the resulting
// clusters, node labels and edges into the model. What the DOT looks like
// (CUDA 13.0, see tests/data/nvidia):
//
//   digraph dot {
//   subgraph cluster_G {                  one cluster per CUDA graph; G is
//   label="graph_G" ...                   the template graph id (CUPTI)
//   "graph_G_node_N"[... label="..."];    N: the node's local id
//   "graph_G_node_A" -> "graph_G_node_B" [headlabel=K];
//   }
//   subgraph cluster_H { ... }            bodies of child graph and
//   }                                     conditional nodes
//
// Default labels are lines: "N\nKERNELNAME\n", "N\nMEMCPY\n(HtoD,262144)",
// "N\nMEMSET\n(value,bytes)", "N\nHOST", "N\ngraph_11" (a child graph node),
// plus a record for conditional nodes. Verbose labels put "(topoId: T)"
// after N and add "key: value" lines, or are Graphviz records:
//   {KERNEL | {ID | 0 (topoId: 5) | NAME\<\<\<grid,block,shmem\>\>\>} |
//    {{node handle | func handle} | {0x... | 0x...}} | ...}
// where a header row and a value row are zipped into key/value pairs.
// Verbose edges carry [headlabel=K]: the edge's position among the head's
// dependencies.
#include "nvdot_reader.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../core/demangle.h"
#include "../core/error.h"
#include "graphviz.h"
#include "nvdot_label.h"
#include "../model/validate.h"

namespace graphscope {
namespace {

using std::string_view;


using namespace nvdot;

using graphviz::GraphPtr;

// "syntax error in line 12 near 'x'" -> "syntax error near line 12".
std::string syntax_reason(const std::string& msg) {
  std::string what;
  if (msg.find("scanning a quoted string") != std::string::npos) what = "unterminated quoted string";
  else if (msg.find("scanning a /*...*/ comment") != std::string::npos) what = "unterminated comment";
  else if (msg.find("memory exhausted") != std::string::npos) what = "nested too deeply";
  else if (msg.find("syntax error") != std::string::npos || msg.empty()) what = "syntax error";
  else {
    // Some other complaint of cgraph's: its first line, without "Error: ".
    string_view m = msg;
    if (starts_with(m, "Error: ")) m.remove_prefix(7);
    what = shown(trim(m.substr(0, m.find('\n'))));
    if (what.find(" line ") != std::string::npos) return what;
  }
  size_t at = msg.find("line ");
  if (at != std::string::npos) {
    size_t b = at + 5, e = b;
    while (e < msg.size() && is_digit(msg[e])) ++e;
    if (e > b) return what + " near line " + msg.substr(b, e - b);
  }
  return what;
}


// ---------------------------------------------------------------------------
// The reader

struct Cluster {
  uint32_t gid = 0;
  Agraph_t* sub = nullptr;
  std::vector<std::pair<uint32_t, Agnode_t*>> nodes;  // (local id, node), by id
  Graph graph;
  uint32_t refs_begin = 0, refs_end = 0;  // its nodes' references in refs_
  int64_t referenced_by = -1;             // index into refs_
  bool built = false;
};

// A child graph or conditional body named by a node's label.
struct Ref {
  uint32_t cluster, node, target_gid, target = 0;
};

struct EdgeRec {
  uint32_t head, tail, key;
};

class Reader {
 public:
  Reader(Agraph_t* root, const std::string& origin) : root_(root), origin_(origin) {}

  GraphDocument run() {
    if (!agisdirected(root_)) fail("not a DOT digraph (an undirected graph)");
    label_sym_ = agattr(root_, AGNODE, const_cast<char*>("label"), nullptr);
    shape_sym_ = agattr(root_, AGNODE, const_cast<char*>("shape"), nullptr);
    headlabel_sym_ = agattr(root_, AGEDGE, const_cast<char*>("headlabel"), nullptr);
    collect_clusters();
    assign_nodes();
    for (uint32_t c = 0; c < clusters_.size(); ++c) read_cluster(c);
    GraphDocument doc;
    doc.source_format = "nvidia-dot";
    doc.root = assemble();
    link_dependents(doc.root);
    return doc;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const { throw_input(origin_, why); }
  [[noreturn]] void fail_node(Agnode_t* n, const std::string& why) const {
    fail("node " + shown(agnameof(n)) + ": " + why);
  }
  static std::string graph_name(uint32_t gid) { return "graph_" + std::to_string(gid); }

  // --- clusters and node membership ---

  void collect_clusters() {
    // In file order: cgraph keeps subgraphs in id order, for a named one the
    // address of its interned name, which differs from run to run (so the
    // bad cluster reported first did too; found by fuzz_nvidia_dot).
    std::vector<Agraph_t*> subs;
    for (Agraph_t* s = agfstsubg(root_); s; s = agnxtsubg(s)) subs.push_back(s);
    std::sort(subs.begin(), subs.end(), [](Agraph_t* a, Agraph_t* b) { return AGSEQ(a) < AGSEQ(b); });
    for (Agraph_t* s : subs) {
      const char* name = agnameof(s);
      string_view nm = name ? string_view(name) : string_view();
      if (!starts_with(nm, "cluster")) continue;  // layout helpers are not graphs
      uint32_t gid = 0;
      if (!starts_with(nm, "cluster_") || parse_uint(nm.substr(8), &gid) != Num::ok || !is_digit(nm[8]))
        fail("subgraph " + shown(nm) + ": bad cluster name (expected cluster_G)");
      Cluster c;
      c.gid = gid;
      c.sub = s;
      clusters_.push_back(std::move(c));
    }
    if (clusters_.empty()) fail("no cluster: not cudaGraphDebugDotPrint output");
    by_gid_.reserve(clusters_.size());
    for (uint32_t i = 0; i < clusters_.size(); ++i) by_gid_.emplace_back(clusters_[i].gid, i);
    std::sort(by_gid_.begin(), by_gid_.end());
    for (size_t i = 1; i < by_gid_.size(); ++i)
      if (by_gid_[i].first == by_gid_[i - 1].first)
        fail("two clusters for " + graph_name(by_gid_[i].first));
  }

  int64_t find_cluster(uint32_t gid) const {
    auto it = std::lower_bound(by_gid_.begin(), by_gid_.end(), std::make_pair(gid, uint32_t(0)));
    if (it == by_gid_.end() || it->first != gid) return -1;
    return it->second;
  }

  // "graph_G_node_N" -> (G, N).
  void parse_node_name(Agnode_t* n, uint32_t* g, uint32_t* id) const {
    const char* name = agnameof(n);
    string_view s = name ? string_view(name) : string_view();
    size_t mid = s.find("_node_");
    if (!starts_with(s, "graph_") || mid == string_view::npos || mid <= 6 || !is_digit(s[6]) ||
        mid + 6 >= s.size() || !is_digit(s[mid + 6]))
      fail_node(n, "bad node name (expected graph_G_node_N)");
    Num a = parse_uint(s.substr(6, mid - 6), g), b = parse_uint(s.substr(mid + 6), id);
    if (a == Num::range || b == Num::range) fail_node(n, "bad node name (a number out of range)");
    if (a != Num::ok || b != Num::ok) fail_node(n, "bad node name (expected graph_G_node_N)");
  }

  uint32_t& slot(std::vector<uint32_t>& v, Agnode_t* n) {
    size_t seq = AGSEQ(n);
    if (seq >= v.size()) v.resize(seq + 1 + v.size() / 2, 0);
    return v[seq];
  }

  void assign_nodes() {
    size_t total = size_t(agnnodes(root_));
    owner_.assign(total + 2, 0);
    index_.assign(total + 2, 0);
    size_t assigned = 0;
    for (uint32_t c = 0; c < clusters_.size(); ++c) {
      Cluster& cl = clusters_[c];
      cl.nodes.reserve(size_t(agnnodes(cl.sub)));
      for (Agnode_t* n = agfstnode(cl.sub); n; n = agnxtnode(cl.sub, n)) {
        uint32_t g = 0, id = 0;
        parse_node_name(n, &g, &id);
        if (g != cl.gid) fail_node(n, "is in cluster " + graph_name(cl.gid));
        uint32_t& own = slot(owner_, n);
        if (own != 0)
          fail_node(n, "is in two clusters (" + graph_name(clusters_[own - 1].gid) + " and " +
                           graph_name(cl.gid) + ")");
        own = c + 1;
        cl.nodes.emplace_back(id, n);
        ++assigned;
      }
      auto by_id = [](const std::pair<uint32_t, Agnode_t*>& a, const std::pair<uint32_t, Agnode_t*>& b) {
        return a.first < b.first;
      };
      if (!std::is_sorted(cl.nodes.begin(), cl.nodes.end(), by_id))
        std::sort(cl.nodes.begin(), cl.nodes.end(), by_id);
      for (size_t i = 0; i < cl.nodes.size(); ++i) {
        if (i > 0 && cl.nodes[i].first == cl.nodes[i - 1].first)
          fail_node(cl.nodes[i].second, "duplicate node id " + std::to_string(cl.nodes[i].first) +
                                            " in " + graph_name(cl.gid) + " (also " +
                                            shown(agnameof(cl.nodes[i - 1].second)) + ")");
        slot(index_, cl.nodes[i].second) = uint32_t(i);
      }
    }
    if (assigned != total) {
      for (Agnode_t* n = agfstnode(root_); n; n = agnxtnode(root_, n))
        if (slot(owner_, n) == 0) fail_node(n, "is outside any cluster");
    }
  }

  // --- one cluster: nodes from labels, dependencies from edges ---

  void read_cluster(uint32_t c) {
    Cluster& cl = clusters_[c];
    Graph& g = cl.graph;
    g.graph_id = cl.gid;
    g.nodes.resize(cl.nodes.size());
    cl.refs_begin = uint32_t(refs_.size());
    for (uint32_t i = 0; i < cl.nodes.size(); ++i) {
      Node& node = g.nodes[i];
      node.index = i;
      node.node_id = cl.nodes[i].first;
      node.graph_id = cl.gid;
      node.template_tools_id = tools_id(cl.gid, node.node_id);
      read_label(cl.nodes[i].second, c, node);
    }
    cl.refs_end = uint32_t(refs_.size());
    read_edges(c);
  }

  void read_edges(uint32_t c) {
    Cluster& cl = clusters_[c];
    edges_.clear();
    for (uint32_t i = 0; i < cl.nodes.size(); ++i) {
      Agnode_t* n = cl.nodes[i].second;
      for (Agedge_t* e = agfstout(root_, n); e; e = agnxtout(root_, e)) {
        Agnode_t* h = aghead(e);
        uint32_t hc = slot(owner_, h) - 1;
        if (hc >= clusters_.size()) fail_node(h, "is outside any cluster");
        if (hc != c)
          fail("edge " + shown(agnameof(n)) + " -> " + shown(agnameof(h)) + " joins two clusters (" +
               graph_name(cl.gid) + " and " + graph_name(clusters_[hc].gid) + ")");
        uint32_t key = UINT32_MAX;
        if (headlabel_sym_) {
          string_view hl = trim(agxget(e, headlabel_sym_));
          if (!hl.empty() && parse_uint(hl, &key) != Num::ok)
            fail("edge " + shown(agnameof(n)) + " -> " + shown(agnameof(h)) + ": bad headlabel '" +
                 shown(hl) + "'");
        }
        edges_.push_back({slot(index_, h), i, key});
      }
    }
    // Bucket the edges by head, keeping the tails' order, then order each
    // head's dependencies by headlabel where the file gives one.
    std::vector<Node>& nodes = cl.graph.nodes;
    std::vector<uint32_t>& start = scratch_u32_;
    start.assign(nodes.size() + 1, 0);
    for (const EdgeRec& e : edges_) ++start[e.head + 1];
    for (size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
    sorted_edges_.resize(edges_.size());
    {
      std::vector<uint32_t> fill(start.begin(), start.end() - 1);
      for (const EdgeRec& e : edges_) sorted_edges_[fill[e.head]++] = e;
    }
    auto by_key = [](const EdgeRec& a, const EdgeRec& b) { return a.key < b.key; };
    for (uint32_t h = 0; h < nodes.size(); ++h) {
      auto b = sorted_edges_.begin() + start[h], e = sorted_edges_.begin() + start[h + 1];
      if (b == e) continue;
      if (!std::is_sorted(b, e, by_key)) std::stable_sort(b, e, by_key);
      auto& deps = nodes[h].dependencies;
      deps.reserve(size_t(e - b));
      for (auto it = b; it != e; ++it) {
        Dependency d;
        d.from = it->tail;
        deps.push_back(d);
      }
    }
  }

  // --- labels ---

  void read_label(Agnode_t* n, uint32_t c, Node& node) {
    string_view label = label_sym_ ? string_view(agxget(n, label_sym_)) : string_view();
    string_view body = trim(label);
    if (body.empty() || body == "\\N")
      fail_node(n, "has no label (a node named only by an edge?)");
    string_view shape = shape_sym_ ? string_view(agxget(n, shape_sym_)) : string_view();
    if (body[0] == '{' || shape == "record" || shape == "Mrecord")
      read_record_label(n, c, node, body);
    else
      read_line_label(n, c, node, body, shape);
  }

  // "N" or "N (topoId: T)": checks N against the node's name.
  void check_label_id(Agnode_t* n, const Node& node, string_view s) const {
    size_t e = 0;
    while (e < s.size() && is_digit(s[e])) ++e;
    uint32_t id = 0;
    Num r = e == 0 ? Num::bad : parse_uint(s.substr(0, e), &id);
    if (r == Num::ok && e < s.size() && s[e] != ' ' && s[e] != '(') r = Num::bad;
    if (r == Num::range) fail_node(n, "node id '" + shown(s) + "' is out of range");
    if (r != Num::ok) fail_node(n, "bad node id '" + shown(s) + "' in the label");
    if (id != node.node_id)
      fail_node(n, "the label says node id " + std::to_string(id) + " but the name says " +
                       std::to_string(node.node_id));
  }

  template <typename T>
  T number(Agnode_t* n, string_view what, string_view s) const {
    T v{};
    switch (parse_uint(trim(s), &v)) {
      case Num::ok:
        return v;
      case Num::range:
        fail_node(n, std::string(what) + " '" + shown(s) + "' is out of range");
      case Num::bad:
        break;
    }
    fail_node(n, "bad " + std::string(what) + " '" + shown(s) + "'");
  }

  void set_kernel_name(Node& node, string_view name) {
    node.kernel_name.assign(name.data(), name.size());
    if (!node.kernel) node.kernel.emplace().geometry_known = false;
    auto it = demangled_.find(node.kernel_name);
    if (it == demangled_.end()) it = demangled_.emplace(node.kernel_name, demangle(node.kernel_name)).first;
    node.kernel->demangled = it->second;
  }

  void add_ref(uint32_t c, const Node& node, uint32_t gid) { refs_.push_back(Ref{c, node.index, gid}); }

  // Default labels and the simple verbose ones: lines.
  void read_line_label(Agnode_t* n, uint32_t c, Node& node, string_view body, string_view shape) {
    size_t nl = body.find('\n');
    check_label_id(n, node, trim(body.substr(0, nl)));
    string_view rest = nl == string_view::npos ? string_view() : body.substr(nl + 1);
    nl = rest.find('\n');
    string_view kw = trim(rest.substr(0, nl));
    rest = nl == string_view::npos ? string_view() : rest.substr(nl + 1);
    if (kw.empty()) fail_node(n, "label has no node type");

    uint32_t ref = 0;
    if (shape == "octagon") {
      node.type = NodeType::kernel;  // default mode prints kernels by name
    } else if (parse_graph_ref(kw, &ref)) {
      node.type = NodeType::child_graph;
      add_ref(c, node, ref);
    } else if (keyword_type(kw, &node.type)) {
    } else if (looks_like_keyword(kw)) {
      node.type = NodeType::unknown;
      node.type_spelling.assign(kw.data(), kw.size());
    } else {
      node.type = NodeType::kernel;
    }
    if (node.type == NodeType::kernel) set_kernel_name(node, kw);

    // Further lines: "(kind,bytes)" or "key: value".
    while (!rest.empty()) {
      nl = rest.find('\n');
      string_view line = trim(rest.substr(0, nl));
      rest = nl == string_view::npos ? string_view() : rest.substr(nl + 1);
      if (line.size() >= 2 && line.front() == '(' && line.back() == ')') {
        string_view in = line.substr(1, line.size() - 2);
        size_t comma = in.rfind(',');
        if (comma == string_view::npos) continue;
        string_view a = trim(in.substr(0, comma)), b = trim(in.substr(comma + 1));
        if (node.type == NodeType::memcpy) {
          MemcpyInfo& m = node.memcpy ? *node.memcpy : node.memcpy.emplace();
          m.kind = memcpy_kind(a);
          m.bytes = number<uint64_t>(n, "memcpy size", b);
        } else if (node.type == NodeType::memset) {
          MemsetInfo& m = node.memset ? *node.memset : node.memset.emplace();
          m.value = number<uint64_t>(n, "memset value", a);
          m.bytes = number<uint64_t>(n, "memset size", b);
          m.element_size = 1;
          m.width = m.bytes;
          m.height = 1;
        }
        continue;
      }
      size_t colon = line.find(':');
      if (colon == string_view::npos) continue;
      string_view key = trim(line.substr(0, colon)), val = trim(line.substr(colon + 1));
      apply_pair(n, node, key, val);
    }
  }

  static std::string memcpy_kind(string_view v) {
    // "HtoD (HOST PINNED to DEVICE)" -> "HtoD"
    size_t e = 0;
    while (e < v.size() && !is_space(v[e]) && v[e] != '(') ++e;
    string_view k = v.substr(0, e);
    if (k.size() == 7 && lower(k) == "default") return "default";
    return std::string(k);
  }

  // Key/value pairs common to the verbose forms.
  void apply_pair(Agnode_t* n, Node& node, string_view key, string_view val) {
    if (key == "node handle") {
      node.handle = number<uint64_t>(n, "node handle", val);
    } else if (key == "event") {
      node.event_ptr = number<uint64_t>(n, "event", val);
    } else if (key == "fn") {
      HostInfo& h = node.host ? *node.host : node.host.emplace();
      h.fn = number<uint64_t>(n, "host fn", val);
    } else if (key == "userData") {
      HostInfo& h = node.host ? *node.host : node.host.emplace();
      h.user_data = number<uint64_t>(n, "host userData", val);
    }
  }

  // Verbose records (and default-mode conditional nodes).
  void read_record_label(Agnode_t* n, uint32_t c, Node& node, string_view body) {
    if (!record_.parse(body)) fail_node(n, "label is not a well-formed record");
    string_view kw = record_.keyword();
    if (kw.empty()) fail_node(n, "label has no node type");
    uint32_t ref = 0;
    if (parse_graph_ref(kw, &ref)) {
      node.type = NodeType::child_graph;
      add_ref(c, node, ref);
    } else if (!keyword_type(kw, &node.type)) {
      node.type = NodeType::unknown;
      node.type_spelling.assign(kw.data(), kw.size());
    }

    string_view launch, width, height, depth, kind, dptr, value, elem, mwidth, mheight;
    int ptrs = 0;
    bool have_id = false;  // the id is only checked: the node's name has it
    for (const auto& [key, val] : record_.pairs()) {
      if (key == "ID") {
        if (!have_id) check_label_id(n, node, val);
        have_id = true;
      } else if (key == kLaunchKey) {
        launch = val;
      } else if (key == "func handle") {
        uint64_t fh = number<uint64_t>(n, "func handle", val);
        if (node.type == NodeType::kernel) {
          if (!node.kernel) node.kernel.emplace().geometry_known = false;
          node.kernel->function_handle = fh;
        }
      } else if (key == "kind") {
        kind = val;
      } else if (key == "Width") {
        width = val;
      } else if (key == "Height") {
        height = val;
      } else if (key == "Depth") {
        depth = val;
      } else if (key == "ptr") {
        if (node.type == NodeType::memcpy && ptrs < 2) {
          MemcpyInfo& m = node.memcpy ? *node.memcpy : node.memcpy.emplace();
          (ptrs++ == 0 ? m.src : m.dst) = number<uint64_t>(n, "memcpy pointer", val);
        }
      } else if (key == "dptr") {
        dptr = val;
      } else if (key == "value") {
        value = val;
      } else if (key == "elementSize") {
        elem = val;
      } else if (key == "width") {
        mwidth = val;
      } else if (key == "height") {
        mheight = val;
      } else if (key == "bytesize") {
        uint64_t bytes = number<uint64_t>(n, "bytesize", val);
        if (node.type == NodeType::mem_alloc) {
          MemAllocInfo& m = node.mem_alloc ? *node.mem_alloc : node.mem_alloc.emplace();
          m.bytes = bytes;
        }
      } else if (key == "Conditional Handle") {
        node.conditional_handle = number<uint64_t>(n, "conditional handle", val);
      } else if (key == "Conditional Type") {
        node.conditional_type = lower(val);
        // As the JSON reader: a graph must survive `dump --json` and back.
        const std::string& t = node.conditional_type;
        if (t != "if" && t != "while" && t != "switch")
          fail_node(n, "conditional type '" + shown(val) + "' is not IF, WHILE or SWITCH");
      } else {
        apply_pair(n, node, key, val);
      }
    }

    switch (node.type) {
      case NodeType::kernel:
        read_launch(n, node, launch);
        break;
      case NodeType::memcpy: {
        MemcpyInfo& m = node.memcpy ? *node.memcpy : node.memcpy.emplace();
        if (!kind.empty()) m.kind = memcpy_kind(kind);
        if (!width.empty()) {
          uint64_t w = number<uint64_t>(n, "memcpy Width", width);
          uint64_t h = height.empty() ? 1 : number<uint64_t>(n, "memcpy Height", height);
          uint64_t d = depth.empty() ? 1 : number<uint64_t>(n, "memcpy Depth", depth);
          if (mul_overflows(w, h, &m.bytes) || mul_overflows(m.bytes, d, &m.bytes))
            fail_node(n, "memcpy extent is out of range");
        }
        break;
      }
      case NodeType::memset: {
        MemsetInfo& m = node.memset ? *node.memset : node.memset.emplace();
        if (!value.empty()) m.value = number<uint64_t>(n, "memset value", value);
        if (!elem.empty()) m.element_size = number<uint32_t>(n, "memset elementSize", elem);
        if (!mwidth.empty()) m.width = number<uint64_t>(n, "memset width", mwidth);
        if (!mheight.empty()) m.height = number<uint64_t>(n, "memset height", mheight);
        if (!dptr.empty()) m.dst = number<uint64_t>(n, "memset dptr", dptr);
        if (mul_overflows(m.element_size, m.width, &m.bytes) || mul_overflows(m.bytes, m.height, &m.bytes))
          fail_node(n, "memset size is out of range");
        break;
      }
      case NodeType::mem_alloc:
        if (!dptr.empty()) {
          MemAllocInfo& m = node.mem_alloc ? *node.mem_alloc : node.mem_alloc.emplace();
          m.dptr = number<uint64_t>(n, "mem_alloc dptr", dptr);
        }
        break;
      case NodeType::mem_free:
        if (!dptr.empty()) node.mem_free_dptr = number<uint64_t>(n, "mem_free dptr", dptr);
        break;
      default:
        break;
    }

    // Bodies: every "graph_G" field, in the order printed ({True|graph_23}).
    if (node.type == NodeType::conditional || node.type == NodeType::unknown) {
      for (string_view leaf : record_.leaves())
        if (parse_graph_ref(leaf, &ref)) add_ref(c, node, ref);
    }
  }

  static bool mul_overflows(uint64_t a, uint64_t b, uint64_t* out) {
    return __builtin_mul_overflow(a, b, out);
  }

  // "name\<\<\<grid,block,shmem\>\>\>", grid and block either "n" or
  // "\{x,y[,z]\}".
  void read_launch(Agnode_t* n, Node& node, string_view launch) {
    if (!node.kernel) node.kernel.emplace().geometry_known = false;
    if (launch.empty()) return;
    unescape_into(launch, text_);
    string_view s = text_;
    size_t open = s.rfind("<<<");
    if (open == string_view::npos || s.size() < 3 || s.compare(s.size() - 3, 3, ">>>") != 0 ||
        open + 3 > s.size() - 3) {
      set_kernel_name(node, trim(s));
      return;
    }
    set_kernel_name(node, trim(s.substr(0, open)));
    string_view args = s.substr(open + 3, s.size() - 3 - (open + 3));
    KernelInfo& k = *node.kernel;
    size_t pos = 0;
    auto bad = [&]() { fail_node(n, "bad launch configuration '<<<" + shown(args) + ">>>'"); };
    auto num = [&](uint32_t* out) {
      size_t b = pos;
      while (pos < args.size() && is_digit(args[pos])) ++pos;
      if (pos == b) bad();
      Num r = parse_uint(args.substr(b, pos - b), out);
      if (r == Num::range)
        fail_node(n, "launch configuration '<<<" + shown(args) + ">>>': " +
                         shown(args.substr(b, pos - b)) + " is out of range");
      if (r != Num::ok) bad();
    };
    auto dim = [&](Dim3* d) {
      if (pos < args.size() && args[pos] == '{') {
        ++pos;
        uint32_t* v[3] = {&d->x, &d->y, &d->z};
        for (int i = 0;; ++i) {
          if (i == 3) bad();
          num(v[i]);
          if (pos < args.size() && args[pos] == ',') {
            ++pos;
            continue;
          }
          if (pos < args.size() && args[pos] == '}') {
            ++pos;
            break;
          }
          bad();
        }
      } else {
        num(&d->x);
      }
    };
    auto comma = [&]() {
      if (pos >= args.size() || args[pos] != ',') bad();
      ++pos;
    };
    dim(&k.grid);
    comma();
    dim(&k.block);
    comma();
    num(&k.shared_mem_bytes);
    // Anything after the shared memory size (a later CUDA's extra launch
    // fields) is not understood, but does not make the label wrong.
    if (pos < args.size() && args[pos] != ',') bad();
    k.geometry_known = true;
  }

  // --- bodies ---

  Graph assemble() {
    // Resolve references; each cluster may be referenced by one node only.
    for (uint32_t r = 0; r < refs_.size(); ++r) {
      Ref& ref = refs_[r];
      Agnode_t* n = clusters_[ref.cluster].nodes[ref.node].second;
      int64_t t = find_cluster(ref.target_gid);
      if (t < 0) fail_node(n, "names " + graph_name(ref.target_gid) + ", which is not in the file");
      ref.target = uint32_t(t);
      Cluster& target = clusters_[t];
      if (target.referenced_by >= 0) {
        const Ref& other = refs_[target.referenced_by];
        Agnode_t* m = clusters_[other.cluster].nodes[other.node].second;
        fail("cluster " + graph_name(target.gid) + " is referenced by two nodes (" + shown(agnameof(m)) +
             " and " + shown(agnameof(n)) + ")");
      }
      target.referenced_by = r;
    }
    int64_t root = -1;
    for (uint32_t c = 0; c < clusters_.size(); ++c) {
      if (clusters_[c].referenced_by >= 0) continue;
      if (root >= 0)
        fail("clusters " + graph_name(clusters_[root].gid) + " and " + graph_name(clusters_[c].gid) +
             " are both unreferenced (two root graphs)");
      root = c;
    }
    if (root < 0) fail("no root graph: every cluster is a body of some node (a cycle of graph references)");

    Graph g = build(uint32_t(root), 0);
    for (Node& node : g.nodes) node.tools_id = node.template_tools_id;
    for (const Cluster& cl : clusters_) {
      if (cl.built) continue;
      const Ref& r = refs_[cl.referenced_by];
      fail("cluster " + graph_name(cl.gid) + " is on a cycle of graph references (named by " +
           shown(agnameof(clusters_[r.cluster].nodes[r.node].second)) + ")");
    }
    return g;
  }

  Graph build(uint32_t c, int depth) {
    Cluster& cl = clusters_[c];
    if (depth > kMaxNesting)
      fail("graphs nested deeper than " + std::to_string(kMaxNesting) + " (at cluster " + graph_name(cl.gid) + ")");
    cl.built = true;
    Graph g = std::move(cl.graph);
    for (uint32_t r = cl.refs_begin; r < cl.refs_end; ++r)
      g.nodes[refs_[r].node].bodies.push_back(build(refs_[r].target, depth + 1));
    return g;
  }

  Agraph_t* root_;
  const std::string& origin_;
  Agsym_t* label_sym_ = nullptr;
  Agsym_t* shape_sym_ = nullptr;
  Agsym_t* headlabel_sym_ = nullptr;
  std::vector<Cluster> clusters_;
  std::vector<std::pair<uint32_t, uint32_t>> by_gid_;  // (G, cluster index), by G
  std::vector<uint32_t> owner_, index_;                // by AGSEQ of a node: cluster + 1, index
  std::vector<Ref> refs_;
  std::vector<EdgeRec> edges_, sorted_edges_;
  std::vector<uint32_t> scratch_u32_;
  std::unordered_map<std::string, std::string> demangled_;
  RecordLabel record_;
  std::string text_;
};

}  // namespace

GraphDocument read_nvidia_dot(const std::string& text, const std::string& origin) {
  if (trim(text).empty()) throw_input(origin, "not a DOT graph (empty)");
  if (const void* nul = std::memchr(text.data(), '\0', text.size()))
    throw_input(origin, "not a DOT graph (a NUL byte at offset " +
                            std::to_string(static_cast<const char*>(nul) - text.data()) + ")");
  graphviz::DotText session(text);
  GraphPtr g = session.read();
  if (!g) {
    if (session.failed()) throw_input(origin, "not a DOT graph (" + syntax_reason(session.errors()) + ")");
    if (session.unterminated())
      throw_input(origin,
                  "not a DOT graph (a quoted string, HTML string or comment runs to the end of the text)");
    throw_input(origin, "not a DOT graph (no graph in the text)");
  }
  // Anything after the graph's closing brace, read on from where it ended.
  {
    GraphPtr more = session.read();
    bool trailing = more || session.failed() || session.unterminated();
    if (more) {
      more.reset();
      session.drain();
    }
    if (trailing) throw_input(origin, "not a DOT graph (text after the end of the graph)");
  }
  return Reader(g.get(), origin).run();
}

}  // namespace graphscope
