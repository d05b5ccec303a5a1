// Origins (graph.h's Origin) on graphs recorded on the H100 with origins on
// (tests/data/origins): read back, counted, grouped by module, folded by
// module, drawn, diffed, and refused when hostile.
#include <doctest/doctest.h>

#include <regex>
#include <string>

#include "inspect/formats/chrome_trace.h"
#include "inspect/analysis/diff.h"
#include "inspect/render/diff_report.h"
#include "inspect/render/dot_writer.h"
#include "inspect/core/error.h"
#include "inspect/analysis/fold.h"
#include "inspect/formats/graph_json.h"
#include "inspect/formats/load.h"
#include "inspect/model/origin_view.h"
#include "inspect/analysis/summary.h"
#include "test_data.h"

using namespace graphscope;

namespace {

GraphDocument llama() { return load_graph(test::data_path("origins/llama8.graph.json")); }

std::pair<double, double> svg_size(const std::string& svg) {
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, std::regex("width=\"([0-9.]+)pt\" height=\"([0-9.]+)pt\"")));
  return {std::stod(m[1]), std::stod(m[2])};
}

// A one-node document whose node carries the given origin JSON.
std::string with_origin(const std::string& origin) {
  return R"({"schema": "graphscope.graph/1", "nodes": [{"index": 0, "node_type": "empty", "dependencies": [], "origin": )" + origin +
         R"(}], "edges": []})";
}

std::string read_error(const std::string& text) {
  try {
    read_graph_json(text, "o.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("the recorded Llama: every kernel node carries its module, its Python line and its class") {
  GraphDocument doc = llama();
  REQUIRE(doc.root.nodes.size() == 392);
  OriginCounts c = count_origins(doc.root);
  CHECK(c.kernels == 392);
  CHECK(c.kernels_with_module == 392);
  CHECK(c.with_python == 392);
  // A node of layer 3's MLP: its module path, the class of each level, and
  // the line of modeling_llama.py that launched it.
  bool seen = false;
  for (const Node& n : doc.root.nodes) {
    if (!n.origin || n.origin->module() != "model.layers.3.mlp.down_proj") continue;
    seen = true;
    const Origin& o = *n.origin;
    REQUIRE(o.modules.size() >= 4);
    CHECK(o.modules.front().name == "");
    CHECK(o.modules.front().type == "LlamaForCausalLM");
    CHECK(o.modules.back().type == "Linear");
    CHECK(module_group(o) == "model.layers.*");
    REQUIRE(!o.python.empty());
    CHECK(o.python.front().file.find("modeling_llama.py") != std::string::npos);
    CHECK(o.python.front().line > 0);
  }
  CHECK(seen);
}

TEST_CASE("nodes by module: the 8 decoder layers are one group of 352 nodes") {
  GraphDocument doc = llama();
  std::vector<ModuleShare> shares = by_module(doc.root);
  REQUIRE(!shares.empty());
  CHECK(shares[0].group == "model.layers.*");
  CHECK(shares[0].type == "LlamaDecoderLayer");
  CHECK(shares[0].instances == 8);
  CHECK(shares[0].nodes == 352);
  size_t total = 0;
  for (const ModuleShare& s : shares) total += s.nodes;
  CHECK(total == 392);
  // With times, the order is by time, and the times add up.
  std::vector<double> t(doc.root.nodes.size(), 1.0);
  for (const Node& n : doc.root.nodes)
    if (n.origin && n.origin->module() == "lm_head") t[n.index] = 1000.0;
  std::vector<ModuleShare> timed = by_module(doc.root, &t);
  CHECK(timed[0].group == "lm_head");
  double sum = 0;
  for (const ModuleShare& s : timed) sum += s.time_us;
  CHECK(sum == doctest::Approx(390 + 2 * 1000.0));
}

TEST_CASE("the summary says 8 x LlamaDecoderLayer and where the nodes came from") {
  GraphDocument doc = llama();
  const std::string s = format_summary(doc, summarize(doc), "llama8.graph.json");
  CHECK(s.find("repeats        8 x LlamaDecoderLayer (44 nodes each) + 40 other nodes") != std::string::npos);
  CHECK(s.find("origins        392 of 392 nodes: module 392, Python 392") != std::string::npos);
  CHECK(s.find("kernel nodes with a module: 392 of 392 (100%)") != std::string::npos);
  CHECK(s.find("by module      model.layers.* (8 x LlamaDecoderLayer)") != std::string::npos);
  // A document without origins says nothing of them.
  GraphDocument plain = load_graph(test::data_path("origins/nvtx_layers.no_origins.json"));
  CHECK(format_summary(plain, summarize(plain), "x").find("origins") == std::string::npos);
}

TEST_CASE("folding by module names the layers and each copy's module") {
  Folding f = find_repeats(llama().root);
  REQUIRE(!f.repeats.empty());
  const Repeat& r = f.repeats[0];
  CHECK(r.count == 8);
  CHECK(r.size == 44);
  CHECK(r.module_type == "LlamaDecoderLayer");
  CHECK(r.module == "model.layers.{0..7}");
  REQUIRE(r.copy_module.size() == 8);
  CHECK(r.copy_module[3] == "model.layers.3");
}

TEST_CASE("the folded picture of the recorded Llama: module names on it, in two screens") {
  GraphDocument doc = llama();
  const std::string dot = write_dot(doc);
  CHECK(dot.find("x 8 in a row: LlamaDecoderLayer model.layers.{0..7}, 44 nodes each") != std::string::npos);
  CHECK(dot.find("self_attn.q_proj (Linear)") != std::string::npos);  // relative to the copy's module
  CHECK(dot.find("model.layers.0.mlp.down_proj") != std::string::npos);  // copy 1 drawn; the tooltip has it all
  auto [w, h] = svg_size(render_svg(doc));
  MESSAGE("folded recorded Llama: " << w << " x " << h << " pt");
  CHECK(std::max(w, h) <= 2500);
  auto [uw, uh] = svg_size(render_svg(doc, kDefaultSvgMaxNodes, nullptr, false));
  CHECK(std::max(uw, uh) > 4 * std::max(w, h));
}

TEST_CASE("origins round-trip through graphscope.graph/1 byte for byte") {
  for (const char* f : {"origins/llama8.graph.json", "origins/nvtx_layers.json", "origins/llama2_emit_nvtx.graph.json",
                        "origins/compile8.1.graph.json", "origins/jax/jax.10.graph.json"}) {
    CAPTURE(f);
    GraphDocument doc = load_graph(test::data_path(f));
    const std::string once = write_graph_json(doc);
    GraphDocument back = read_graph_json(once, f);
    CHECK(write_graph_json(back) == once);
    REQUIRE(back.root.nodes.size() == doc.root.nodes.size());
    for (size_t i = 0; i < doc.root.nodes.size(); ++i) {
      const auto& a = doc.root.nodes[i].origin;
      const auto& b = back.root.nodes[i].origin;
      REQUIRE(bool(a) == bool(b));
      if (a) CHECK(a->describe() == b->describe());
    }
  }
}

TEST_CASE("NVTX stacks, ops and native frames as recorded") {
  // The nvtx_layers sample: a started range, then a domain's pushed "layer K",
  // then "attention" or "mlp"; the launching function in the sample's .so.
  GraphDocument nv = load_graph(test::data_path("origins/nvtx_layers.json"));
  size_t checked = 0;
  for (const Node& n : nv.root.nodes) {
    REQUIRE(n.origin);
    const Origin& o = *n.origin;
    REQUIRE(!o.nvtx.empty());
    CHECK(o.nvtx[0].message == "forward");
    CHECK(o.nvtx[0].started);
    REQUIRE(o.native);
    CHECK(o.native->function.find("enqueue") != std::string::npos);
    CHECK(o.native->object.find("nvtx_layers.so") != std::string::npos);
    if (n.kernel_name.find("attn") != std::string::npos) {
      REQUIRE(o.nvtx.size() == 3);
      CHECK(o.nvtx[1].domain == "nvtx_layers");
      CHECK(o.nvtx[1].message.rfind("layer ", 0) == 0);
      CHECK(o.nvtx[2].message == "attention");
      ++checked;
    }
  }
  CHECK(checked == 8);
  // PyTorch under emit_nvtx: aten:: ops.
  GraphDocument em = load_graph(test::data_path("origins/llama2_emit_nvtx.graph.json"));
  size_t ops = 0;
  for (const Node& n : em.root.nodes) ops += n.origin && n.origin->op.rfind("aten::", 0) == 0;
  CHECK(ops == em.root.nodes.size());
  // XLA: the thunk's range in domain TSL, and the JAX program's line.
  GraphDocument jx = load_graph(test::data_path("origins/jax/jax.10.graph.json"));
  REQUIRE(jx.root.nodes[0].origin);
  CHECK(jx.root.nodes[0].origin->nvtx.back().domain == "TSL");
  CHECK(jx.root.nodes[0].origin->python.front().file.find("jax_app.py") != std::string::npos);
}

TEST_CASE("diff names the module of the copy that changed") {
  GraphDocument a = llama();
  GraphDocument b = llama();
  // Layer 5's MLP gains a kernel of another name in place of its down_proj GEMM.
  bool changed = false;
  for (Node& n : b.root.nodes)
    if (!changed && n.origin && n.origin->module() == "model.layers.5.mlp.down_proj" && n.type == NodeType::kernel) {
      n.kernel_name = "_Z10other_gemmv";
      changed = true;
    }
  REQUIRE(changed);
  GraphDiff d = diff_graphs(a, b);
  CHECK(!d.same());
  const std::string text = format_diff(d, "a.json", "b.json");
  MESSAGE(text);
  CHECK(text.find("model.layers.5") != std::string::npos);
}

TEST_CASE("the Chrome trace names each node's module") {
  GraphDocument doc = llama();
  Trace t;
  // One record per node, a microsecond each, in order.
  for (const Node& n : doc.root.nodes) {
    Activity a;
    a.kind = ActivityKind::kernel;
    a.name = t.intern(n.kernel_name);
    a.start_ns = 1000 * uint64_t(n.index);
    a.end_ns = a.start_ns + 900;
    a.correlation = 7;
    a.graph_id = doc.exec_graph_id;
    a.graph_node_id = n.tools_id;
    t.activities.push_back(a);
  }
  const std::string text = write_chrome_trace(t, &doc);
  CHECK(text.find("\"module\": \"model.layers.3.mlp.down_proj\"") != std::string::npos);
}

TEST_CASE("hostile origins: wrong kinds, too many entries, long strings") {
  CHECK(read_error(with_origin(R"({"nvtx": [{"message": "x", "kind": "pop"}]})")).find("\"push\" or \"start\"") !=
        std::string::npos);
  CHECK(read_error(with_origin(R"({"python": {"file": "a.py"}})")).find("array") != std::string::npos);
  CHECK(read_error(with_origin(R"("model.layers.0")")).find("object") != std::string::npos);
  CHECK(read_error(with_origin(R"({"native": {"offset": -1}})")) != "");
  std::string many = "[";
  for (int i = 0; i < 257; ++i) many += std::string(i ? "," : "") + R"({"name": "m", "type": "T"})";
  many += "]";
  CHECK(read_error(with_origin(R"({"modules": )" + many + "}")).find("at most 256 entries") != std::string::npos);
  // A long string is cut, not refused.
  GraphDocument d = read_graph_json(with_origin(R"({"op": ")" + std::string(10000, 'a') + R"("})"), "o.json");
  REQUIRE(d.root.nodes[0].origin);
  CHECK(d.root.nodes[0].origin->op.size() == 4096);
  // "module" alone (a document from elsewhere) is read as the module.
  GraphDocument m = read_graph_json(with_origin(R"({"module": "model.layers.2.mlp"})"), "o.json");
  CHECK(m.root.nodes[0].origin->module() == "model.layers.2.mlp");
}

TEST_CASE("without modules, nodes group by NVTX range: numbered ranges starred, XLA's per-op ranges to the module") {
  GraphDocument nv = load_graph(test::data_path("origins/nvtx_layers.json"));
  CHECK(group_kind(nv.root) == "NVTX range");
  std::vector<ModuleShare> shares = by_module(nv.root);
  REQUIRE(shares.size() == 2);
  CHECK(shares[0].group == "forward / layer *");
  CHECK(shares[0].range);
  CHECK(shares[0].instances == 4);
  CHECK(shares[0].nodes == 24);
  CHECK(describe_share(shares[0]) == "forward / layer * (4 ranges)");
  CHECK(shares[1].group == "forward");
  const std::string s = format_summary(nv, summarize(nv), "x");
  CHECK(s.find("by NVTX range  forward / layer * (4 ranges)") != std::string::npos);
  // XLA: a range per operation under the module's: grouped by the module's.
  GraphDocument jx = load_graph(test::data_path("origins/jax/jax.10.graph.json"));
  std::vector<ModuleShare> x = by_module(jx.root);
  REQUIRE(x.size() == 1);
  CHECK(x[0].group.rfind("XlaModule:#hlo_module=jit_model", 0) == 0);
  CHECK(x[0].nodes == jx.root.nodes.size());
  // Modules win over ranges; a graph with neither has no groups.
  CHECK(group_kind(llama().root) == "module");
  CHECK(group_kind(load_graph(test::data_path("origins/nvtx_layers.no_origins.json")).root).empty());
}

TEST_CASE("what nodes share of their origins, for a diff or ranks line: op and module, a differing index as *") {
  // Under emit_nvtx every node has its aten:: op: layer 0's and layer 1's SiLU.
  const GraphDocument em = load_graph(test::data_path("origins/llama2_emit_nvtx.graph.json"));
  std::vector<uint32_t> silu, mm, up;
  for (const Node& n : em.root.nodes) {
    if (!n.origin) continue;
    if (n.origin->op == "aten::silu") silu.push_back(n.index);
    if (n.origin->op == "aten::mm") mm.push_back(n.index);
    if (n.origin->module() == "model.layers.1.mlp.up_proj") up.push_back(n.index);
  }
  REQUIRE(silu.size() == 2);
  CHECK(shared_origin(em.root, {silu[0]}) == "aten::silu, model.layers.0.mlp.act_fn");
  CHECK(shared_origin(em.root, silu) == "aten::silu, model.layers.*.mlp.act_fn");
  CHECK(shared_origin(em.root, up) == "aten::mm, model.layers.1.mlp.up_proj");
  // Every projection and lm_head: the op only, no module in common.
  CHECK(shared_origin(em.root, mm) == "aten::mm");
  // Without op or module: the Python line (the two-rank run's activation).
  const GraphDocument act = load_graph(test::data_path("ranks/r_act/rank-1/graph-2.json"));
  CHECK(shared_origin(act.root, {3}) == "ranks_app.py:40 in forward");
  // A native program that annotates: its NVTX ranges.
  const GraphDocument nv = load_graph(test::data_path("origins/nvtx_layers.json"));
  CHECK(shared_origin(nv.root, {0}).rfind("forward", 0) == 0);
  // Nothing in common, a node without an origin, or no nodes: nothing.
  const GraphDocument plain = load_graph(test::data_path("origins/nvtx_layers.no_origins.json"));
  CHECK(shared_origin(plain.root, {0}).empty());
  CHECK(shared_origin(em.root, {}).empty());
  CHECK(shared_origin(act.root, {3, 8}) == "");
}
