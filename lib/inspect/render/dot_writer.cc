// graphscope's own pictures. One function, build_graph(), turns a
// GraphDocument into a Graphviz cgraph graph; write_dot() writes it as DOT
// text and render_svg() lays it out with dot and renders SVG through gvc.
//
// Graphviz keeps global state (the error handler, the prototype graph, static
// buffers), so every use of it here runs under one mutex, with its messages
// captured instead of printed to stderr. The look (labels, styles) is in
// dot_look.cc, the Graphviz plumbing in dot_cgraph.cc.
#include "dot_writer.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../core/demangle.h"
#include "../core/error.h"
#include "../analysis/fold.h"
#include "../formats/graphviz.h"
#include "dot_cgraph.h"
#include "dot_look.h"
#include "../model/origin_view.h"
#include "../core/text.h"


namespace graphscope {
namespace {

using namespace dot_detail;

// ---------------------------------------------------------------------------
// Building the picture

class Builder {
 public:
  /// fold: the root graph's folding (fold.h), drawn folded; nullptr draws
  /// every node.
  Builder(const GraphDocument& doc, const DotOverlay* overlay, const Folding* fold)
      : doc_(doc), overlay_(overlay), fold_(fold) {}

  /// Nodes the picture draws (folded: one copy of each repeat, long runs
  /// as one box each), nested graphs included.
  size_t drawn_nodes() {
    if (!fold_) return total_nodes(doc_.root);
    plan_fold();
    size_t nested = total_nodes(doc_.root) - doc_.root.nodes.size();
    return nested + drawn_;
  }

  /// Per root node, the name of the shape that draws it (its SVG <title>):
  /// "g0_nI" for a node drawn alone (folded: copy 1's node of its repeat),
  /// "g0_runI" for a run drawn as one box (I: the run's first node).
  std::vector<std::string> drawn_names() {
    const size_t n = doc_.root.nodes.size();
    std::vector<std::string> out(n);
    std::vector<uint32_t> run_of(n, UINT32_MAX);  // per drawn node: the first node of its run's box
    if (fold_) {
      plan_fold();
      for (const auto& run : runs_)
        for (uint32_t v : run) run_of[v] = run[0];
    }
    for (uint32_t v = 0; v < n; ++v) {
      const uint32_t r = fold_ ? rep_[v] : v;
      out[v] = run_of[r] != UINT32_MAX ? "g0_run" + std::to_string(run_of[r]) : node_id(0, r);
    }
    return out;
  }

  GraphPtr build() {
    std::string name = "graphscope";
    g_.reset(agopen(cs(name), Agdirected, &g_disc));
    if (!g_) graphviz_failed("cannot create Graphviz graph");
    Agraph_t* g = g_.get();

    // Declarations with defaults. Graph attributes are set explicitly on every
    // cluster, so nothing meant for the root leaks into a cluster.
    g_label_ = attr(AGRAPH, "label", "");
    g_tooltip_ = attr(AGRAPH, "tooltip", "");
    g_style_ = attr(AGRAPH, "style", "");
    g_color_ = attr(AGRAPH, "color", "");
    g_fill_ = attr(AGRAPH, "fillcolor", "");
    g_fontsize_ = attr(AGRAPH, "fontsize", "14");
    g_labeljust_ = attr(AGRAPH, "labeljust", "c");
    g_labelloc_ = attr(AGRAPH, "labelloc", "b");
    attr(AGRAPH, "compound", "true");
    attr(AGRAPH, "rankdir", "TB");
    attr(AGRAPH, "fontname", "Helvetica");
    attr(AGRAPH, "nodesep", "0.3");
    attr(AGRAPH, "ranksep", "0.4");
    attr(AGRAPH, "bgcolor", "white");

    n_label_ = attr(AGNODE, "label", "");
    n_tooltip_ = attr(AGNODE, "tooltip", "");
    n_shape_ = attr(AGNODE, "shape", "box");
    n_style_ = attr(AGNODE, "style", "filled");
    n_fill_ = attr(AGNODE, "fillcolor", "white");
    n_color_ = attr(AGNODE, "color", "#666666");
    n_fontcolor_ = attr(AGNODE, "fontcolor", "black");
    attr(AGNODE, "fontname", "Helvetica");
    attr(AGNODE, "fontsize", "10");
    attr(AGNODE, "margin", "0.12,0.05");

    e_label_ = attr(AGEDGE, "label", "");
    e_tooltip_ = attr(AGEDGE, "tooltip", "");
    e_style_ = attr(AGEDGE, "style", "solid");
    e_color_ = attr(AGEDGE, "color", "#444444");
    e_fontcolor_ = attr(AGEDGE, "fontcolor", "#444444");
    e_penwidth_ = attr(AGEDGE, "penwidth", "1");
    e_arrowhead_ = attr(AGEDGE, "arrowhead", "normal");
    e_lhead_ = attr(AGEDGE, "lhead", "");
    attr(AGEDGE, "fontname", "Helvetica");
    attr(AGEDGE, "fontsize", "9");
    attr(AGEDGE, "arrowsize", "0.7");

    if (fold_) {
      plan_fold();
      add_folded_root(g);
    } else {
      add_graph(g, doc_.root, 0);
    }

    set(g, g_label_, title());
    set(g, g_labelloc_, "t");
    set(g, g_labeljust_, "l");
    return std::move(g_);
  }

 private:
  Agsym_t* attr(int kind, const char* name, const char* def) {
    Agsym_t* s = agattr(g_.get(), kind, cs(name), cs(def));
    if (!s) graphviz_failed("cannot declare Graphviz attribute");
    return s;
  }
  static void set(void* obj, Agsym_t* sym, const std::string& v) { agxset(obj, sym, cs(v)); }

  Agnode_t* make_node(Agraph_t* sub, const std::string& id) {
    Agnode_t* n = agnode(sub, cs(id), 1);
    if (!n) graphviz_failed("cannot create Graphviz node");
    return n;
  }
  Agedge_t* make_edge(Agraph_t* sub, Agnode_t* t, Agnode_t* h) {
    Agedge_t* e = agedge(sub, t, h, nullptr, 1);
    if (!e) graphviz_failed("cannot create Graphviz edge");
    return e;
  }

  std::string title() const {
    std::vector<std::string> lines;
    if (!doc_.name.empty()) lines.push_back(esc(doc_.name));
    std::string ids;
    if (doc_.exec_graph_id) ids = "exec graph " + std::to_string(*doc_.exec_graph_id);
    if (doc_.root.graph_id) {
      if (!ids.empty()) ids += ", ";
      ids += "template graph " + std::to_string(*doc_.root.graph_id);
    }
    if (!ids.empty()) lines.push_back(ids);
    const size_t total = total_nodes(doc_.root);
    std::string count = std::to_string(total) + (total == 1 ? " node" : " nodes");
    if (total != doc_.root.nodes.size())
      count += " (" + std::to_string(total - doc_.root.nodes.size()) + " in nested graphs)";
    if (doc_.device && !doc_.device->name.empty()) count += ", " + esc(doc_.device->name);
    lines.push_back(count);
    if (saw_[static_cast<int>(EdgeType::programmatic)])
      lines.push_back("dashed red edge: programmatic dependency");
    if (saw_[static_cast<int>(EdgeType::launch_completion)])
      lines.push_back("dotted purple edge: launch-completion dependency");
    if (fold_ && (!fold_->repeats.empty() || !runs_.empty())) {
      std::string folded = describe_folding(*fold_, doc_.root.nodes.size());
      if (!runs_.empty())
        folded += std::string(folded.empty() ? "" : "; ") + std::to_string(runs_.size()) +
                  (runs_.size() == 1 ? " run" : " runs") + " of light nodes in a row drawn as one box each";
      lines.push_back("folded: " + esc(folded) + " (--no-fold draws every node)");
    }
    if (overlay_)
      for (const auto& l : overlay_->legend) lines.push_back(esc(l));
    return join_lines(lines, "\\l") + "\\l";
  }

  static std::string node_id(uint32_t graph_no, size_t i) {
    return "g" + std::to_string(graph_no) + "_n" + std::to_string(i);
  }

  /// Label lines (escaped) and tooltip lines for one node.
  void describe(const Node& n, std::vector<std::string>* label, std::vector<std::string>* tip,
                const std::string& module_prefix = "") const {
    const std::string idx = std::to_string(n.index) + ": ";
    switch (n.type) {
      case NodeType::kernel: {
        const std::string full = kernel_full_name(n);
        std::string shortname = full.empty() ? "kernel" : short_kernel_name(full);
        label->push_back(idx + esc(shortname));
        tip->push_back("kernel " + esc(full.empty() ? std::string("(name unknown)") : full));
        if (n.kernel && n.kernel->geometry_known) {
          const KernelInfo& k = *n.kernel;
          label->push_back("grid " + dim3_text(k.grid) + " block " + dim3_text(k.block));
          std::string extra;
          if (k.shared_mem_bytes) extra = "smem " + human_bytes(k.shared_mem_bytes);
          if (k.cluster) extra += (extra.empty() ? "" : ", ") + ("cluster " + dim3_text(*k.cluster));
          if (!extra.empty()) label->push_back(extra);
        }
        break;
      }
      case NodeType::memcpy:
        label->push_back(idx + "memcpy");
        if (n.memcpy) {
          std::string kind = n.memcpy->kind.empty() ? std::string() : esc(n.memcpy->kind) + " ";
          label->push_back(kind + human_bytes(n.memcpy->bytes));
        }
        break;
      case NodeType::memset:
        label->push_back(idx + "memset");
        if (n.memset) {
          const MemsetInfo& m = *n.memset;
          label->push_back(human_bytes(m.bytes) + " = " +
                           (m.value < 10 ? std::to_string(m.value) : hex(m.value)) + " (" +
                           std::to_string(m.element_size) + "-byte)");
        }
        break;
      case NodeType::host:
        label->push_back(idx + "host");
        if (n.host && !n.host->symbol.empty()) {
          label->push_back(esc(short_kernel_name(n.host->symbol)));
          tip->push_back("host function " + esc(demangle(n.host->symbol)));
        }
        break;
      case NodeType::child_graph: {
        label->push_back(idx + "child graph");
        size_t inner = 0;
        for (const auto& b : n.bodies) inner += total_nodes(b);
        label->push_back(std::to_string(inner) + (inner == 1 ? " node" : " nodes"));
        break;
      }
      case NodeType::conditional: {
        label->push_back(idx + "conditional");
        std::string kind = n.conditional_type.empty() ? std::string("?") : esc(n.conditional_type);
        label->push_back(kind + ", " + std::to_string(n.bodies.size()) +
                         (n.bodies.size() == 1 ? " body" : " bodies"));
        break;
      }
      case NodeType::mem_alloc:
        label->push_back(idx + "mem alloc");
        if (n.mem_alloc) label->push_back(human_bytes(n.mem_alloc->bytes));
        break;
      case NodeType::unknown:
        label->push_back(idx + (n.type_spelling.empty() ? std::string("unknown")
                                                         : esc(n.type_spelling)));
        break;
      default:
        label->push_back(idx + type_words(n.type));
        break;
    }
    if (n.origin) origin_lines(*n.origin, module_prefix, label, tip);
    // The tooltip repeats the label and adds what only the curious need.
    if (tip->empty()) tip->push_back(type_words(n.type) + " node");
    for (size_t i = 1; i < label->size(); ++i)
      tip->push_back((*label)[i]);
    std::string ids = "index " + std::to_string(n.index) + ", node id " + std::to_string(n.node_id);
    if (n.graph_id) ids += ", graph " + std::to_string(*n.graph_id);
    if (n.tools_id) ids += ", tools id " + hex(*n.tools_id);
    tip->push_back(ids);
    if ((n.type == NodeType::event_record || n.type == NodeType::wait_event) && n.event_ptr)
      tip->push_back("event " + hex(n.event_ptr));
    if (n.type == NodeType::mem_free && n.mem_free_dptr) tip->push_back("dptr " + hex(*n.mem_free_dptr));
  }

  /// Where the node came from: one label line (the module, relative to its
  /// repeat's copy when drawn folded; else the innermost NVTX range, the
  /// source line or the native function), the whole origin in the tooltip.
  static void origin_lines(const Origin& o, const std::string& prefix, std::vector<std::string>* label,
                           std::vector<std::string>* tip) {
    std::string line;
    if (!o.modules.empty()) {
      line = o.module();
      if (!prefix.empty() && line.size() > prefix.size() && line.compare(0, prefix.size(), prefix) == 0 &&
          line[prefix.size()] == '.')
        line = line.substr(prefix.size() + 1);
      else if (line == prefix)
        line = o.modules.back().type;
      if (o.modules.back().type != line && !o.modules.back().type.empty()) line += " (" + o.modules.back().type + ")";
      tip->push_back(esc("module " + o.module() + (o.modules.back().type.empty() ? "" : " (" + o.modules.back().type + ")")));
    } else if (!o.nvtx.empty()) {
      line = o.nvtx.back().message;
    } else if (!o.python.empty()) {
      const std::string& f = o.python.front().file;
      line = f.substr(f.rfind('/') + 1) + ":" + std::to_string(o.python.front().line);
    } else if (o.native) {
      line = o.native->function.empty() ? o.native->object.substr(o.native->object.rfind('/') + 1)
                                        : short_kernel_name(o.native->function, 40);
    }
    if (line.size() > 48) line = "..." + line.substr(line.size() - 45);
    if (!line.empty()) label->push_back(esc(line));
    for (const auto& f : o.python)
      tip->push_back(esc("at " + f.file + ":" + std::to_string(f.line) + (f.function.empty() ? "" : " in " + f.function)));
    if (!o.nvtx.empty()) {
      std::string r;
      for (const auto& x : o.nvtx) r += (r.empty() ? "" : " / ") + x.message;
      tip->push_back(esc("NVTX " + r));
    }
    if (!o.op.empty()) tip->push_back(esc("op " + o.op));
    if (o.native)
      tip->push_back(esc("native " + (o.native->function.empty() ? std::string("?") : o.native->function) + " (" +
                         o.native->object + "+" + hex(o.native->offset) + ")"));
  }

  static std::string body_label(const Node& owner, size_t b) {
    const std::string of = " of node " + std::to_string(owner.index);
    if (owner.type == NodeType::child_graph) return "child graph" + of;
    const std::string& t = owner.conditional_type;
    if (t == "if") return (b == 0 ? "if body" : b == 1 ? "else body" : "body " + std::to_string(b)) + of;
    if (t == "while") return "while body" + of;
    if (t == "switch") return "switch case " + std::to_string(b) + of;
    return (t.empty() ? std::string("body ") : esc(t) + " body ") + std::to_string(b) + of;
  }

  /// Adds the nodes of `graph` to `sub` (the root or a cluster), numbering it
  /// graph_no; returns the node that an edge into this graph should reach.
  Agnode_t* add_graph(Agraph_t* sub, const Graph& graph, int depth) {
    const uint32_t graph_no = next_graph_no_++;
    std::vector<Agnode_t*> nodes(graph.nodes.size());
    for (size_t i = 0; i < graph.nodes.size(); ++i)
      nodes[i] = add_node(sub, graph.nodes[i], node_id(graph_no, i), depth);

    // Bodies: each a cluster inside this graph's cluster, entered from its
    // owner by a grey edge that ends at the cluster's border.
    for (size_t i = 0; i < graph.nodes.size(); ++i) add_bodies(sub, graph.nodes[i], nodes[i], depth);

    // Dependencies.
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      const Node& n = graph.nodes[i];
      for (const Dependency& d : n.dependencies) {
        Agnode_t* from = d.from < nodes.size() ? nodes[d.from] : missing_node(sub, graph_no, d.from);
        add_dependency(sub, from, nodes[i], d, n.index);
      }
    }

    // The entry point: the first node without dependencies, else the first
    // node; an empty graph gets a placeholder so that its cluster is drawn.
    for (size_t i = 0; i < graph.nodes.size(); ++i)
      if (graph.nodes[i].dependencies.empty()) return nodes[i];
    if (!nodes.empty()) return nodes[0];
    if (depth == 0) return nullptr;
    Agnode_t* ph = make_node(sub, "g" + std::to_string(graph_no) + "_empty");
    set(ph, n_label_, "(no nodes)");
    set(ph, n_shape_, "plaintext");
    set(ph, n_style_, "solid");
    set(ph, n_fontcolor_, "#777777");
    return ph;
  }

  /// One node, described and styled (with the overlay at the root).
  Agnode_t* add_node(Agraph_t* sub, const Node& n, const std::string& id, int depth) {
    Agnode_t* an = make_node(sub, id);
    std::vector<std::string> label, tip;
    std::string prefix;
    if (depth == 0 && planned_ && n.index < fold_->repeat_of.size() && fold_->repeat_of[n.index] != UINT32_MAX) {
      const Repeat& r = fold_->repeats[fold_->repeat_of[n.index]];
      if (!r.copy_module.empty()) prefix = r.copy_module[fold_->copy_of[n.index]];
    }
    describe(n, &label, &tip, prefix);
    const NodeStyle st = node_style(n.type);
    set(an, n_label_, join_lines(label, "\\n"));
    set(an, n_tooltip_, tooltip_lines(tip));
    set(an, n_shape_, st.shape);
    set(an, n_style_, st.style);
    set(an, n_fill_, st.fill);
    set(an, n_color_, st.border);
    const size_t i = n.index;
    if (depth == 0 && overlay_) {
      if (i < overlay_->fill.size() && !overlay_->fill[i].empty()) set(an, n_fill_, overlay_->fill[i]);
      if (i < overlay_->font.size() && !overlay_->font[i].empty()) set(an, n_fontcolor_, overlay_->font[i]);
      if (i < overlay_->note.size() && !overlay_->note[i].empty()) {
        label.push_back(esc(overlay_->note[i]));
        set(an, n_label_, join_lines(label, "\\n"));
      }
    }
    return an;
  }

  /// A dependency edge, styled by its type and ports.
  void add_dependency(Agraph_t* sub, Agnode_t* from, Agnode_t* to, const Dependency& d, uint32_t to_index) {
    Agedge_t* e = make_edge(sub, from, to);
    const EdgeStyle st = edge_style(d.type);
    saw_[static_cast<int>(d.type)] = true;
    if (d.type != EdgeType::standard) {
      set(e, e_style_, st.style);
      set(e, e_color_, st.color);
      set(e, e_fontcolor_, st.color);
      set(e, e_penwidth_, st.penwidth);
    }
    std::string ports;
    if (d.from_port && d.to_port)
      ports = "ports " + std::to_string(d.from_port) + "->" + std::to_string(d.to_port);
    else if (d.from_port)
      ports = "out port " + std::to_string(d.from_port);
    else if (d.to_port)
      ports = "in port " + std::to_string(d.to_port);
    if (!ports.empty()) set(e, e_label_, ports);
    std::string tip =
        std::to_string(d.from) + " -> " + std::to_string(to_index) + " (" + std::string(to_string(d.type)) + ")";
    if (!ports.empty()) tip += ", " + ports;
    set(e, e_tooltip_, tip);
  }

  /// A node's bodies (child graph, conditional branches) as clusters.
  void add_bodies(Agraph_t* sub, const Node& n, Agnode_t* owner, int depth) {
    {
      for (size_t b = 0; b < n.bodies.size(); ++b) {
        const std::string cname = "cluster_g" + std::to_string(next_graph_no_);
        Agraph_t* cl = agsubg(sub, cs(cname), 1);
        if (!cl) graphviz_failed("cannot create Graphviz cluster");
        const std::string lbl = body_label(n, b);
        set(cl, g_label_, lbl);
        set(cl, g_tooltip_, tooltip_text(lbl));
        set(cl, g_style_, n.type == NodeType::conditional ? "rounded,filled,dashed" : "rounded,filled");
        set(cl, g_color_, node_style(n.type).border);
        set(cl, g_fill_, kClusterFill[depth < 2 ? depth : 2]);
        set(cl, g_fontsize_, "11");
        set(cl, g_labeljust_, "l");
        set(cl, g_labelloc_, "t");
        Agnode_t* entry = add_graph(cl, n.bodies[b], depth + 1);
        Agedge_t* e = make_edge(sub, owner, entry);
        set(e, e_lhead_, cname);
        set(e, e_style_, "solid");
        set(e, e_color_, kBodyEdgeColor);
        set(e, e_arrowhead_, "empty");
        set(e, e_tooltip_, tooltip_text(lbl));
      }
    }
  }

  // ---- Folding (fold.h): one copy of each repeat, inside a cluster that
  // says how many there are; long runs of single-file nodes as one box.

  static constexpr size_t kRunMin = 5;  // nodes in a run before it is folded
  static constexpr size_t kBoxMin = 3;  // light nodes in a row drawn as one box

  // The kernels a reader looks for in a model's graph: matrix products and
  // attention, by name.
  static bool heavy(const Node& x) {
    if (x.type != NodeType::kernel) return x.type != NodeType::memset && x.type != NodeType::memcpy;
    std::string name = kernel_full_name(x);
    for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
    for (const char* k : {"gemm", "gemv", "matmul", "fmha", "attention", "attn", "flash", "cutlass", "conv", "nccl"})
      if (name.find(k) != std::string::npos) return true;
    return false;
  }

  void plan_fold() {
    if (planned_) return;
    planned_ = true;
    const Graph& g = doc_.root;
    const size_t n = g.nodes.size();
    const Folding& f = *fold_;
    rep_.resize(n);
    for (uint32_t v = 0; v < n; ++v)
      rep_[v] = f.repeat_of[v] == UINT32_MAX ? v : f.repeats[f.repeat_of[v]].copies[0][f.place_of[v]];
    // The edges between drawn nodes, once each; edges from one copy to the
    // next are what "x N" says.
    std::set<std::tuple<uint32_t, uint32_t, uint8_t, uint8_t, uint8_t>> seen;
    drawn_edges_.clear();
    for (const Node& x : g.nodes)
      for (const Dependency& d : x.dependencies) {
        if (d.from >= n) continue;
        if (f.repeat_of[d.from] != UINT32_MAX && f.repeat_of[d.from] == f.repeat_of[x.index] &&
            f.copy_of[d.from] != f.copy_of[x.index])
          continue;
        const uint32_t a = rep_[d.from], b = rep_[x.index];
        if (a == b || !seen.insert({a, b, uint8_t(d.type), d.from_port, d.to_port}).second) continue;
        Dependency e = d;
        e.from = a;
        drawn_edges_.emplace_back(b, e);
      }
    std::sort(drawn_edges_.begin(), drawn_edges_.end(), [](const auto& x, const auto& y) {
      return std::make_tuple(x.second.from, x.first) < std::make_tuple(y.second.from, y.first);
    });
    std::vector<uint32_t> in(n, 0), out(n, 0), next(n, UINT32_MAX);
    std::vector<char> plain(n, 1);  // one standard edge in, one out
    for (const auto& [b, d] : drawn_edges_) {
      const uint32_t a = d.from;
      ++out[a], ++in[b], next[a] = b;
      if (d.type != EdgeType::standard || d.from_port || d.to_port) plain[a] = plain[b] = 0;
    }
    auto cluster = [&](uint32_t v) { return f.repeat_of[v]; };
    auto joins = [&](uint32_t a, uint32_t b) {  // a -> b continues a run
      return out[a] == 1 && in[b] == 1 && next[a] == b && cluster(a) == cluster(b) && plain[a] && plain[b] &&
             g.nodes[a].bodies.empty() && g.nodes[b].bodies.empty();
    };
    std::vector<char> continues(n, 0);
    for (uint32_t a = 0; a < n; ++a)
      if (rep_[a] == a && next[a] != UINT32_MAX && joins(a, next[a])) continues[next[a]] = 1;
    box_of_.assign(n, UINT32_MAX);
    runs_.clear();
    drawn_ = 0;
    for (uint32_t v = 0; v < n; ++v) {
      if (rep_[v] != v || continues[v]) continue;
      std::vector<uint32_t> run{v};
      for (uint32_t c = v; next[c] != UINT32_MAX && joins(c, next[c]) && run.size() <= n; c = next[c])
        run.push_back(next[c]);
      // A long run is drawn as boxes of the light work between the heavy
      // kernels (GEMMs, attention), which stay in view one by one.
      std::vector<uint32_t> light;
      auto flush = [&] {
        if (light.size() >= kBoxMin && run.size() >= kRunMin) {
          for (uint32_t x : light) box_of_[x] = uint32_t(drawn_);
          ++drawn_;
          runs_.push_back(light);
        } else {
          for (uint32_t x : light) box_of_[x] = UINT32_MAX - 1 - x, ++drawn_;  // drawn alone (below)
        }
        light.clear();
      };
      for (uint32_t x : run) {
        if (heavy(g.nodes[x])) {
          flush();
          box_of_[x] = UINT32_MAX - 1 - x;
          ++drawn_;
        } else {
          light.push_back(x);
        }
      }
      flush();
    }
    // Cycles of single-file nodes (no start): each node alone.
    for (uint32_t v = 0; v < n; ++v)
      if (rep_[v] == v && box_of_[v] == UINT32_MAX) box_of_[v] = UINT32_MAX - 1 - v, ++drawn_;
  }

  void add_folded_root(Agraph_t* g) {
    const Graph& graph = doc_.root;
    const Folding& f = *fold_;
    const uint32_t graph_no = next_graph_no_++;
    std::vector<Agraph_t*> clusters;
    for (size_t r = 0; r < f.repeats.size(); ++r) {
      const Repeat& rp = f.repeats[r];
      const std::string cname = "cluster_repeat" + std::to_string(r);
      Agraph_t* cl = agsubg(g, cs(cname), 1);
      if (!cl) graphviz_failed("cannot create Graphviz cluster");
      const std::string what = rp.module_type.empty() ? std::string() : rp.module_type + " " + rp.module + ", ";
      const std::string lbl = "x " + std::to_string(rp.count) + (rp.chained ? " in a row" : " side by side") + ": " +
                              what + std::to_string(rp.size) + (rp.size == 1 ? " node" : " nodes") +
                              " each (copy 1 shown)";
      set(cl, g_label_, esc(lbl));
      set(cl, g_tooltip_, tooltip_text(esc(std::to_string(rp.count) + " x " + rp.label)));
      set(cl, g_style_, "rounded,filled,bold");
      set(cl, g_color_, "#3366aa");
      set(cl, g_fill_, "#eef3fb");
      set(cl, g_fontsize_, "12");
      set(cl, g_labeljust_, "l");
      set(cl, g_labelloc_, "t");
      clusters.push_back(cl);
    }
    auto parent = [&](uint32_t v) { return f.repeat_of[v] == UINT32_MAX ? g : clusters[f.repeat_of[v]]; };
    // Runs first (their boxes), then the nodes drawn alone.
    std::vector<Agnode_t*> drawn(graph.nodes.size(), nullptr);
    for (const auto& run : runs_) {
      Agnode_t* box = add_run(parent(run[0]), graph, run, graph_no);
      for (uint32_t v : run) drawn[v] = box;
    }
    for (uint32_t v = 0; v < graph.nodes.size(); ++v) {
      if (rep_[v] != v || drawn[v]) continue;
      drawn[v] = add_node(parent(v), graph.nodes[v], node_id(graph_no, v), 0);
      add_bodies(parent(v), graph.nodes[v], drawn[v], 0);
    }
    std::set<std::pair<Agnode_t*, Agnode_t*>> done;
    for (const auto& [b, d] : drawn_edges_) {
      Agnode_t *from = drawn[d.from], *to = drawn[b];
      if (from == to || !done.insert({from, to}).second) continue;
      add_dependency(g, from, to, d, b);
    }
    for (const Node& x : graph.nodes)
      for (const Dependency& d : x.dependencies)
        if (d.from >= graph.nodes.size() && rep_[x.index] == x.index)
          add_dependency(g, missing_node(g, graph_no, d.from), drawn[x.index], d, x.index);
  }

  /// A run of single-file nodes as one box: how many, and their names.
  Agnode_t* add_run(Agraph_t* sub, const Graph& graph, const std::vector<uint32_t>& run, uint32_t graph_no) {
    Agnode_t* box = make_node(sub, "g" + std::to_string(graph_no) + "_run" + std::to_string(run[0]));
    std::vector<std::pair<std::string, size_t>> names;
    for (uint32_t v : run) {
      const Node& x = graph.nodes[v];
      std::string nm = x.type == NodeType::kernel ? short_kernel_name(kernel_full_name(x), 36) : type_words(x.type);
      auto it = std::find_if(names.begin(), names.end(), [&](const auto& p) { return p.first == nm; });
      if (it == names.end()) names.emplace_back(nm, 1);
      else ++it->second;
    }
    std::stable_sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::vector<std::string> label{std::to_string(run.front()) + ".." + std::to_string(run.back()) + ": " +
                                   std::to_string(run.size()) + " nodes in a row"};
    (void)graph_no;
    for (size_t k = 0; k < names.size() && k < 4; ++k)
      label.push_back(esc(names[k].first) + (names[k].second > 1 ? " x " + std::to_string(names[k].second) : ""));
    if (names.size() > 4) label.push_back("and " + std::to_string(names.size() - 4) + " more kernels");
    // The module the run's nodes share, relative to their repeat's copy.
    std::string module = common_module(graph, run);
    if (!module.empty() && planned_ && fold_->repeat_of[run[0]] != UINT32_MAX) {
      const Repeat& r = fold_->repeats[fold_->repeat_of[run[0]]];
      const std::string& prefix = r.copy_module.empty() ? std::string() : r.copy_module[fold_->copy_of[run[0]]];
      if (!prefix.empty() && module.compare(0, prefix.size(), prefix) == 0)
        module = module.size() > prefix.size() ? module.substr(prefix.size() + 1) : std::string();
    }
    if (!module.empty()) label.push_back(esc(module.size() > 48 ? "..." + module.substr(module.size() - 45) : module));
    std::string tip = "nodes";
    for (uint32_t v : run) tip += " " + std::to_string(v);
    set(box, n_label_, join_lines(label, "\\n"));
    set(box, n_tooltip_, tip);
    set(box, n_shape_, "box");
    set(box, n_style_, "rounded,filled");
    set(box, n_fill_, "#f2f2f2");
    set(box, n_color_, "#888888");
    // A profile's colours: those of the run's node of highest rank.
    if (overlay_) {
      uint32_t worst = UINT32_MAX;
      for (uint32_t v : run)
        if (v < overlay_->fill.size() && !overlay_->fill[v].empty() &&
            (worst == UINT32_MAX || (v < overlay_->rank.size() && overlay_->rank[v] > overlay_->rank[worst])))
          worst = v;
      if (worst != UINT32_MAX) {
        set(box, n_fill_, overlay_->fill[worst]);
        if (worst < overlay_->font.size() && !overlay_->font[worst].empty()) set(box, n_fontcolor_, overlay_->font[worst]);
      }
    }
    return box;
  }

  /// A dependency on a node that is not there: drawn, in red, not dropped.
  Agnode_t* missing_node(Agraph_t* sub, uint32_t graph_no, uint32_t from) {
    Agnode_t* m = make_node(sub, "g" + std::to_string(graph_no) + "_missing" + std::to_string(from));
    set(m, n_label_, std::to_string(from) + ": missing node");
    set(m, n_tooltip_, "a dependency names node " + std::to_string(from) + ", which does not exist");
    set(m, n_style_, "dashed");
    set(m, n_color_, "#cc0000");
    set(m, n_fontcolor_, "#cc0000");
    return m;
  }

  const GraphDocument& doc_;
  const DotOverlay* overlay_ = nullptr;
  const Folding* fold_ = nullptr;
  bool planned_ = false;
  std::vector<uint32_t> rep_, box_of_;
  std::vector<std::pair<uint32_t, Dependency>> drawn_edges_;  // (to, dependency), once each
  std::vector<std::vector<uint32_t>> runs_;
  size_t drawn_ = 0;
  GraphPtr g_;
  uint32_t next_graph_no_ = 0;
  bool saw_[3] = {false, false, false};
  Agsym_t *g_label_ = nullptr, *g_tooltip_ = nullptr, *g_style_ = nullptr, *g_color_ = nullptr,
          *g_fill_ = nullptr, *g_fontsize_ = nullptr, *g_labeljust_ = nullptr,
          *g_labelloc_ = nullptr;
  Agsym_t *n_label_ = nullptr, *n_tooltip_ = nullptr, *n_shape_ = nullptr, *n_style_ = nullptr,
          *n_fill_ = nullptr, *n_color_ = nullptr, *n_fontcolor_ = nullptr;
  Agsym_t *e_label_ = nullptr, *e_tooltip_ = nullptr, *e_style_ = nullptr, *e_color_ = nullptr,
          *e_fontcolor_ = nullptr, *e_penwidth_ = nullptr, *e_arrowhead_ = nullptr,
          *e_lhead_ = nullptr;
};

/// Both entry points build the picture here. Call with a GraphvizSession held.
GraphPtr build_graph(const GraphDocument& doc, const DotOverlay* overlay, const Folding* fold) {
  return Builder(doc, overlay, fold).build();
}

}  // namespace

std::string write_dot(const GraphDocument& doc, const DotOverlay* overlay, const Folding* fold) {
  GraphvizSession session;
  GraphPtr g = build_graph(doc, overlay, fold);
  std::string out;
  if (agwrite(g.get(), &out) == EOF) graphviz_failed("cannot write DOT");
  return out;
}

std::string render_svg(const GraphDocument& doc, size_t max_nodes, const DotOverlay* overlay, const Folding* fold,
                       std::vector<std::string>* drawn_as) {
  Builder plan(doc, overlay, fold);
  const size_t n = plan.drawn_nodes();
  if (drawn_as) *drawn_as = plan.drawn_names();
  if (n > max_nodes)
    throw Error(ExitCode::usage, "graph too large to lay out",
                std::to_string(n) + (fold ? " nodes to draw, folded" : " nodes") + ", limit " +
                    std::to_string(max_nodes) + "; write --dot and render it with dot, or raise --svg-max-nodes");
  GraphvizSession session;
  GraphPtr g = build_graph(doc, overlay, fold);
  // The nodes alone do not bound dot's time: the edge segments it routes do
  // (graphviz.h). The same limit, so one option raises both.
  if (const size_t segments = graphviz::layout_segments(g.get()); segments > max_nodes) {
    std::string hint = "write --dot and render it with dot, or raise --svg-max-nodes";
    if (!fold) {
      const Folding folding = find_repeats(doc.root);  // for the hint alone
      if (graphviz::layout_segments(build_graph(doc, overlay, &folding).get()) <= max_nodes)
        hint = "it fits folded: leave out --no-fold";
    }
    throw Error(ExitCode::usage, "graph too large to lay out",
                std::to_string(segments) + " edge segments to route, limit " + std::to_string(max_nodes) + "; " + hint);
  }
  GVC_t* gvc = shared_context();
  Layout layout(gvc, g.get());  // gvFreeLayout is safe after a failed layout too
  if (gvLayout(gvc, g.get(), "dot") != 0) gvc_failed("graph could not be laid out");
  return render_data(&gvRenderData, gvc, g.get(), "svg");
}

std::string write_dot(const GraphDocument& doc, const DotOverlay* overlay, bool fold) {
  if (!fold) return write_dot(doc, overlay, static_cast<const Folding*>(nullptr));
  const Folding folding = find_repeats(doc.root);
  return write_dot(doc, overlay, &folding);
}

std::string render_svg(const GraphDocument& doc, size_t max_nodes, const DotOverlay* overlay, bool fold,
                       std::vector<std::string>* drawn_as) {
  if (!fold) return render_svg(doc, max_nodes, overlay, static_cast<const Folding*>(nullptr), drawn_as);
  const Folding folding = find_repeats(doc.root);
  return render_svg(doc, max_nodes, overlay, &folding, drawn_as);
}

}  // namespace graphscope
