// fold.h: structure that repeats, found from the graph alone, and the
// folded pictures and JSON section made from it.
#include <doctest/doctest.h>

#include <algorithm>
#include <regex>
#include <string>

#include "inspect/analysis/check.h"
#include "inspect/analysis/diff.h"
#include "inspect/render/dot_writer.h"
#include "inspect/core/error.h"
#include "inspect/analysis/fold.h"
#include "inspect/formats/graph_json.h"
#include "inspect/formats/load.h"
#include "inspect/formats/rules_json.h"
#include "inspect/analysis/summary.h"
#include "inspect/model/validate.h"
#include "test_data.h"

using namespace graphscope;

namespace {

// A chain of kernels, one after the other.
struct Chain {
  GraphDocument doc;
  void add(const std::string& name) {
    Node x;
    x.index = x.node_id = uint32_t(doc.root.nodes.size());
    x.type = NodeType::kernel;
    x.kernel_name = name;
    if (x.index) x.dependencies.push_back({x.index - 1});
    doc.root.nodes.push_back(x);
  }
  GraphDocument done() {
    link_dependents(doc.root);
    return doc;
  }
};

// A chain of `layers` copies of the kernels `layer`, after a head kernel.
GraphDocument layered(uint32_t layers, const std::vector<std::string>& layer) {
  Chain c;
  c.add("_Z4headv");
  for (uint32_t l = 0; l < layers; ++l)
    for (const auto& k : layer) c.add(k);
  return c.done();
}

// Eight layers of six kernels after an embedding; the fifth layer has one
// more kernel (dropout) after its attention.
GraphDocument eight_layers_one_odd() {
  Chain c;
  c.add("_Z5embedv");
  for (int l = 0; l < 8; ++l)
    for (const char* k : {"_Z4normv", "_Z4gemmv", "_Z4ropev", "_Z4attnv", "_Z4gemmv", "_Z3addv"}) {
      c.add(k);
      if (l == 4 && std::string(k) == "_Z4attnv") c.add("_Z7dropoutv");
    }
  c.add("_Z4headv");
  return c.done();
}

// A large graph built in place: kernels by name, each after the nodes given.
struct Big {
  GraphDocument doc;
  uint32_t add(const char* name, std::initializer_list<uint32_t> deps) {
    Node& x = doc.root.nodes.emplace_back();
    x.index = x.node_id = uint32_t(doc.root.nodes.size() - 1);
    x.type = NodeType::kernel;
    x.kernel_name = name;
    for (uint32_t d : deps) x.dependencies.push_back({d});
    return x.index;
  }
  GraphDocument done() {
    link_dependents(doc.root);
    return std::move(doc);
  }
};

// A transformer-like stack: an embedding, `layers` decoder layers of 17
// kernels shaped like a Llama layer (norm, q/k/v side by side, rope,
// attention, residual add, norm, gate/up side by side, down, residual add),
// and a head.
GraphDocument transformer(uint32_t layers) {
  Big b;
  uint32_t r = b.add("_Z5embedv", {});
  for (uint32_t l = 0; l < layers; ++l) {
    const uint32_t pow = b.add("_Z7rms_powv", {r});
    const uint32_t norm = b.add("_Z7rms_mulv", {pow, r});
    const uint32_t q = b.add("_Z6gemm_qv", {norm}), k = b.add("_Z6gemm_kv", {norm}), v = b.add("_Z6gemm_vv", {norm});
    const uint32_t rq = b.add("_Z4ropev", {q}), rk = b.add("_Z4ropev", {k});
    const uint32_t attn = b.add("_Z4attnv", {rq, rk, v});
    const uint32_t o = b.add("_Z6gemm_ov", {attn});
    const uint32_t add = b.add("_Z3addv", {o, r});
    const uint32_t pow2 = b.add("_Z7rms_powv", {add});
    const uint32_t norm2 = b.add("_Z7rms_mulv", {pow2, add});
    const uint32_t gate = b.add("_Z9gemm_gatev", {norm2}), up = b.add("_Z7gemm_upv", {norm2});
    const uint32_t act = b.add("_Z8silu_mulv", {gate, up});
    const uint32_t down = b.add("_Z9gemm_downv", {act});
    r = b.add("_Z3addv", {down, add});
  }
  b.add("_Z4headv", {r});
  return b.done();
}

// The picture's size in points, from the SVG's root element.
std::pair<double, double> svg_size(const std::string& svg) {
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, std::regex("width=\"([0-9.]+)pt\" height=\"([0-9.]+)pt\"")));
  return {std::stod(m[1]), std::stod(m[2])};
}

}  // namespace

TEST_CASE("the layers of a real transformers Llama graph fold: 4 x 44 nodes in a row") {
  GraphDocument doc = load_graph(test::data_path("torch/torch_llama.debug_dump.dot"));
  Folding f = find_repeats(doc.root);
  REQUIRE(f.repeats.size() == 1);
  const Repeat& r = f.repeats[0];
  CHECK(r.count == 4);
  CHECK(r.size == 44);
  CHECK(r.chained);
  CHECK(f.folded_nodes() == 176);
  // Each copy has the same kernels in the same places.
  for (uint32_t c = 1; c < r.count; ++c)
    for (uint32_t j = 0; j < r.size; ++j)
      CHECK(doc.root.nodes[r.copies[c][j]].kernel_name == doc.root.nodes[r.copies[0][j]].kernel_name);
  CHECK(describe_folding(f, doc.root.nodes.size()).find("4 x block of 44 nodes") == 0);
  CHECK(describe_folding(f, doc.root.nodes.size()).find("+ 40 other nodes") != std::string::npos);
}

TEST_CASE("branches side by side fold, different branches do not") {
  Folding four = find_repeats(load_graph(test::data_path("torch/torch_four_branch.debug_dump.dot")).root);
  REQUIRE(four.repeats.size() == 1);
  CHECK(four.repeats[0].count == 4);
  CHECK(four.repeats[0].size == 3);
  CHECK(!four.repeats[0].chained);
  Folding wide = find_repeats(load_graph(test::data_path("profiles/wide.c1.graph.json")).root);
  REQUIRE(wide.repeats.size() == 1);
  CHECK(wide.repeats[0].count == 64);
  CHECK(wide.repeats[0].size == 1);
  CHECK(find_repeats(load_graph(test::data_path("torch/torch_two_stream.debug_dump.dot")).root).repeats.empty());
  CHECK(find_repeats(load_graph(test::data_path("torch/torch_mlp.debug_dump.dot")).root).repeats.empty());
}

TEST_CASE("a copy that differs is left out of the repeat") {
  GraphDocument doc = layered(6, {"_Z1av", "_Z1bv", "_Z1cv"});
  // Layer 4's middle kernel also waits for layer 2's: not like the others.
  doc.root.nodes[1 + 4 * 3 + 1].dependencies.push_back({1 + 2 * 3});
  link_dependents(doc.root);
  Folding f = find_repeats(doc.root);
  REQUIRE(!f.repeats.empty());
  for (const Repeat& r : f.repeats)
    for (const auto& copy : r.copies)
      for (uint32_t v : copy) {
        // No repeat holds both ends of the odd edge in different copies.
        CHECK(!(v == 1 + 4 * 3 + 1 && r.size == 3 && f.copy_of[1 + 2 * 3] != UINT32_MAX &&
                f.repeat_of[1 + 2 * 3] == f.repeat_of[v]));
      }
  CHECK(f.repeats[0].count >= 2);
}

TEST_CASE("repeats are a view: the JSON lists them, every node stays, and they read back as nothing") {
  GraphDocument doc = layered(5, {"_Z1av", "_Z1bv"});
  const std::string text = write_graph_json(doc);
  CHECK(text.find("\"repeats\": [") != std::string::npos);
  CHECK(text.find("\"count\": 5, \"size\": 2, \"chained\": true") != std::string::npos);
  GraphDocument back = read_graph_json(text, "g.json");
  CHECK(back.root.nodes.size() == 11);
  CHECK(back.extra_json.empty());
  const std::string again = write_graph_json(back);  // (now with its source_format)
  CHECK(write_graph_json(read_graph_json(again, "g.json")) == again);
  CHECK(format_summary(back, summarize(back), "g.json").find("repeats        5 x block of 2 nodes") != std::string::npos);
}

TEST_CASE("folded pictures fit: the Llama in two screens, a 100k-node graph instead of a refusal") {
  GraphDocument llama = load_graph(test::data_path("torch/torch_llama.debug_dump.dot"));
  auto [w, h] = svg_size(render_svg(llama));
  MESSAGE("folded Llama: " << w << " x " << h << " pt");
  CHECK(std::max(w, h) <= 2500);
  auto [uw, uh] = svg_size(render_svg(llama, kDefaultSvgMaxNodes, nullptr, false));
  CHECK(std::max(uw, uh) > 2 * std::max(w, h));  // unfolded: one long column
  // 100,000 nodes of 10,000 layers: folded, drawn, small.
  GraphDocument big = layered(9999, {"_Z1av", "_Z1bv", "_Z1cv", "_Z1dv", "_Z1ev", "_Z1fv", "_Z4gemmv", "_Z1hv", "_Z1iv",
                                     "_Z1jv"});
  CHECK(big.root.nodes.size() == 99991);
  auto [bw, bh] = svg_size(render_svg(big));
  CHECK(std::max(bw, bh) <= 2500);
}

TEST_CASE("the one layer that differs from its siblings is named") {
  GraphDocument doc = eight_layers_one_odd();
  Folding f = find_repeats(doc.root);
  REQUIRE(f.odd.size() == 1);
  CHECK(f.odd[0].nodes.size() == 7);
  CHECK(f.odd[0].nodes.front() == 1 + 4 * 6);
  CHECK(f.odd[0].difference == "+1 node (dropout)");
  const std::string text = describe_folding(f, doc.root.nodes.size());
  CHECK(text.find("one copy differs: +1 node (dropout) (nodes 25..31)") != std::string::npos);
  // Without the odd layer: nothing differs.
  CHECK(find_repeats(layered(8, {"_Z4normv", "_Z4gemmv", "_Z4ropev", "_Z4attnv", "_Z4gemmv", "_Z3addv"}).root).odd.empty());
  CHECK(find_repeats(load_graph(test::data_path("torch/torch_llama.debug_dump.dot")).root).odd.empty());
}

TEST_CASE("check's identical_repeats rule: the copy that differs fails it, a rules file and the flag set it") {
  GraphDocument doc = eight_layers_one_odd();
  CheckRules rules = parse_check_rules(R"({"schema": "graphscope.rules/1", "identical_repeats": true})", "r.json");
  CHECK(rules.identical_repeats);
  CHECK(write_rules_json(rules).find("\"identical_repeats\": true") != std::string::npos);
  CheckResult r = run_checks(doc, nullptr, nullptr, rules);
  REQUIRE(r.results.size() == 1);
  CHECK(!r.passed());
  CHECK(r.results[0].message ==
        "1 copy that differs > 0 (2 repeated blocks in the root graph): node 25 norm (+1 node (dropout))");
  CHECK(run_checks(load_graph(test::data_path("torch/torch_llama.debug_dump.dot")), nullptr, nullptr, rules).passed());
  CHECK_THROWS_AS(parse_check_rules(R"({"schema": "graphscope.rules/1", "identical_repeats": 1})", "r.json"), Error);
}

TEST_CASE("diff says when what changed lies in one copy of a repeated block") {
  GraphDocument same = layered(8, {"_Z4normv", "_Z4gemmv", "_Z4ropev", "_Z4attnv", "_Z4gemmv", "_Z3addv"});
  // The head kernel of layered() is "_Z4headv", eight_layers_one_odd()'s
  // "_Z5embedv" and a tail: compare two from one builder.
  GraphDocument odd = eight_layers_one_odd();
  GraphDocument base = eight_layers_one_odd();
  // base: the odd kernel removed, its successor wired to its predecessor.
  base.root.nodes.erase(base.root.nodes.begin() + 29);
  for (auto& x : base.root.nodes) {
    if (x.index > 29) --x.index, --x.node_id;
    for (auto& d : x.dependencies)
      if (d.from >= 29) --d.from;
  }
  link_dependents(base.root);
  GraphDiff d = diff_graphs(base, odd);
  CHECK(!d.same());
  REQUIRE(d.where.size() == 1);
  CHECK(d.where[0] ==
        "in B, all of them lie in the copy that differs next to the 4 x block of 6 nodes (norm ... add) (nodes "
        "25..31: +1 node (dropout))");
  CHECK(diff_graphs(same, same).where.empty());
}

TEST_CASE("four long chains of one kernel fold as four repeats (the search once gave up on them and found none)") {
  Big b;
  for (uint32_t c = 0; c < 4; ++c)
    for (uint32_t i = 0; i < 25000; ++i)
      i ? b.add("_Z5scalev", {uint32_t(b.doc.root.nodes.size() - 1)}) : b.add("_Z5scalev", {});
  GraphDocument doc = b.done();
  Folding f = find_repeats(doc.root);
  REQUIRE(f.repeats.size() == 4);
  for (uint32_t r = 0; r < 4; ++r) {
    CHECK(f.repeats[r].count == 25000);
    CHECK(f.repeats[r].size == 1);
    CHECK(f.repeats[r].chained);
    // One chain each, in order: each copy feeds the next.
    const uint32_t first = f.repeats[r].copies[0][0];
    CHECK(first % 25000 == 0);
    for (uint32_t k = 0; k < 25000; ++k) CHECK_EQ(f.repeats[r].copies[k][0], first + k);
  }
  CHECK(f.folded_nodes() == 100000);
  CHECK(f.odd.empty());
  CHECK(describe_folding(f, doc.root.nodes.size()) ==
        "25000 x scale + 25000 x scale + 25000 x scale + 25000 x scale + 0 other nodes");
}

TEST_CASE("a stack of 6,000 transformer layers folds as one repeat of one layer each") {
  const uint32_t layers = 6000;
  GraphDocument doc = transformer(layers);
  Folding f = find_repeats(doc.root);
  REQUIRE(f.repeats.size() == 1);
  const Repeat& r = f.repeats[0];
  CHECK(r.count == layers);
  CHECK(r.size == 17);
  CHECK(r.chained);
  CHECK(r.label == "block of 17 nodes (rms_pow ... add)");
  // Copy c holds layer c's nodes (1 + 17 c .. 17 + 17 c), each in its place.
  for (uint32_t c = 0; c < r.count; ++c) {
    std::vector<uint32_t> nodes = r.copies[c];
    std::sort(nodes.begin(), nodes.end());
    CHECK_EQ(nodes.front(), 1 + 17 * c);
    CHECK_EQ(nodes.back(), 17 + 17 * c);
    for (uint32_t j = 0; j < r.size; ++j) CHECK_EQ(r.copies[c][j], r.copies[0][j] + 17 * c);
  }
  CHECK(describe_folding(f, doc.root.nodes.size()) == "6000 x block of 17 nodes (rms_pow ... add) + 2 other nodes");
}

TEST_CASE("a chain of 6,000 layers with one short layer folds on both sides of it and names it") {
  // Layer 2500 lacks its attention kernel.
  Chain c;
  c.add("_Z4headv");
  for (uint32_t l = 0; l < 6000; ++l)
    for (const char* k : {"_Z4normv", "_Z4gemmv", "_Z4ropev", "_Z4attnv", "_Z4gemmv", "_Z3addv"})
      if (l != 2500 || std::string(k) != "_Z4attnv") c.add(k);
  GraphDocument doc = c.done();
  Folding f = find_repeats(doc.root);
  REQUIRE(f.repeats.size() == 2);
  // Nodes from 1 + 6 l: norm, gemm, rope, attn, gemm, add; layer 2500 from
  // 15001 without its attn. After it, node i's kernel comes back 6 nodes
  // later from 15004 (its second gemm) to the end: 3,499 copies of (gemm,
  // add, norm, gemm, rope, attn), the most nodes, taken first. Before it,
  // from node 1 to layer 2499's attn: the same block turned, so its copies
  // begin where the block's begin, at node 5: 2,499 of them. Between the
  // two, nodes 14999..15003 are the copy without its attn.
  CHECK(f.repeats[0].count == 3499);
  CHECK(f.repeats[0].copies[0][0] == 15004);
  CHECK(f.repeats[1].count == 2499);
  CHECK(f.repeats[1].copies[0][0] == 5);
  for (const Repeat& r : f.repeats) CHECK((r.size == 6 && r.chained && r.label == "block of 6 nodes (gemm ... attn)"));
  REQUIRE(f.odd.size() == 1);
  CHECK(f.odd[0].repeat == 0);
  CHECK(f.odd[0].before);
  CHECK(f.odd[0].nodes == std::vector<uint32_t>{14999, 15000, 15001, 15002, 15003});
  CHECK(f.odd[0].difference == "-1 node (attn)");
}

TEST_CASE("a fan-out of 30,000 branches folds as one repeat side by side") {
  Big b;
  const uint32_t root = b.add("_Z7scatterv", {});
  std::vector<uint32_t> ends;
  for (uint32_t i = 0; i < 30000; ++i) {
    const uint32_t g = b.add("_Z4gemmv", {root});
    ends.push_back(b.add("_Z4reluv", {b.add("_Z4biasv", {g})}));
  }
  const uint32_t join = b.add("_Z6gatherv", {});
  for (uint32_t e : ends) b.doc.root.nodes[join].dependencies.push_back({e});
  GraphDocument doc = b.done();
  Folding f = find_repeats(doc.root);
  REQUIRE(f.repeats.size() == 1);
  CHECK(f.repeats[0].count == 30000);
  CHECK(f.repeats[0].size == 3);
  CHECK(!f.repeats[0].chained);
  CHECK(f.folded_nodes() == 90000);
  CHECK(f.repeat_of[root] == UINT32_MAX);
  CHECK(f.repeat_of[join] == UINT32_MAX);
}
