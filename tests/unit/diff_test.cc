#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <numeric>

#include "graph_builder.h"
#include "inspect/analysis/diff.h"
#include "inspect/formats/diff_json.h"
#include "inspect/render/diff_report.h"
#include "inspect/formats/load.h"
#include "test_data.h"

using namespace graphscope;
using graphscope::test::fork_join;
using graphscope::test::make_doc;
using graphscope::test::Spec;

namespace {

// The same graph as a re-capture sees it: nodes in another order (new[i] is
// old[order[i]]), other exec and template ids, other handles.
GraphDocument recapture(const GraphDocument& doc, const std::vector<uint32_t>& order, uint32_t exec = 41,
                        uint32_t tmpl = 40) {
  GraphDocument out = doc;
  out.exec_graph_id = exec;
  out.root.graph_id = tmpl;
  std::vector<uint32_t> where(order.size());
  for (uint32_t i = 0; i < order.size(); ++i) where[order[i]] = i;
  out.root.nodes.clear();
  for (uint32_t i = 0; i < order.size(); ++i) {
    Node n = doc.root.nodes[order[i]];
    n.index = i;
    n.node_id = i;
    n.graph_id = exec;
    n.tools_id = (uint64_t(exec) << 32) | i;
    n.template_tools_id = (uint64_t(tmpl) << 32) | i;
    n.handle = 0x7f0000001000ULL + 0x40 * i;
    for (auto& d : n.dependencies) d.from = where[d.from];
    out.root.nodes.push_back(std::move(n));
  }
  link_dependents(out.root);
  return out;
}

size_t count_nodes(const std::vector<NodeGroup>& groups) {
  size_t n = 0;
  for (const auto& g : groups) n += g.nodes.size();
  return n;
}

// A chain of `periods` copies of a fork-join motif: s -> {a, b, c} -> j.
GraphDocument periodic(uint32_t periods, uint32_t skip_join = UINT32_MAX) {
  std::vector<Spec> specs;
  int64_t last = -1;
  for (uint32_t p = 0; p < periods; ++p) {
    std::vector<uint32_t> in;
    if (last >= 0) in.push_back(uint32_t(last));
    uint32_t s = uint32_t(specs.size());
    specs.push_back({NodeType::kernel, "_Z1sv", in});
    uint32_t a = uint32_t(specs.size());
    specs.push_back({NodeType::kernel, "_Z1av", {s}});
    specs.push_back({NodeType::kernel, "_Z1bv", {s}});
    specs.push_back({NodeType::kernel, "_Z1cv", {s}});
    if (p == skip_join) {
      // No join: the next period depends on the three branches directly.
      std::vector<uint32_t> branches = {a, a + 1, a + 2};
      uint32_t s2 = uint32_t(specs.size());
      specs.push_back({NodeType::kernel, "_Z1sv", branches});
      uint32_t a2 = uint32_t(specs.size());
      specs.push_back({NodeType::kernel, "_Z1av", {s2}});
      specs.push_back({NodeType::kernel, "_Z1bv", {s2}});
      specs.push_back({NodeType::kernel, "_Z1cv", {s2}});
      specs.push_back({NodeType::kernel, "_Z1jv", {a2, a2 + 1, a2 + 2}});
      ++p;
    } else {
      specs.push_back({NodeType::kernel, "_Z1jv", {a, a + 1, a + 2}});
    }
    last = int64_t(specs.size()) - 1;
  }
  GraphDocument doc = make_doc(specs);
  // make_doc gives every kernel its own grid; a motif repeats exactly.
  for (auto& n : doc.root.nodes) n.kernel->grid = {64, 1, 1};
  return doc;
}

}  // namespace

TEST_CASE("a graph compared with itself is the same, every node and edge matched") {
  GraphDocument a = fork_join();
  GraphDiff d = diff_graphs(a, a);
  CHECK(d.same());
  CHECK(d.root.matched_nodes == 5);
  CHECK(d.root.matched_edges == 6);
  CHECK(d.notes.empty());
  CHECK(d.root.a_to_b == std::vector<int64_t>{0, 1, 2, 3, 4});
  std::string text = format_diff(d, "a.json", "b.json");
  CHECK(text.find("A  a.json (graphscope): 5 nodes, 6 edges, depth 3, width 3\n") == 0);
  CHECK(text.find("same: all 5 nodes and 6 edges match\n") != std::string::npos);
}

TEST_CASE("a re-capture with other ids, handles and node order is the same") {
  GraphDocument a = fork_join();
  // 0 -> {1, 2, 3} -> 4 with the branches listed in another order.
  GraphDocument b = recapture(a, {0, 3, 2, 1, 4});
  GraphDiff d = diff_graphs(a, b);
  CHECK(d.same());
  // Same-kind branches 1 and 2 carry their own grids (make_doc), so the
  // match follows them rather than the order.
  CHECK(d.root.a_to_b == std::vector<int64_t>{0, 3, 2, 1, 4});
  CHECK(d.root.matched_edges == 6);
}

TEST_CASE("a kernel added and a kernel removed are reported by kind") {
  GraphDocument a = fork_join();
  GraphDocument b = make_doc({{NodeType::kernel, "_Z4forkv", {}},
                              {NodeType::kernel, "_Z5scalePfif", {0}},
                              {NodeType::kernel, "_Z5scalePfif", {0}},
                              {NodeType::memset, "", {0}},
                              {NodeType::kernel, "_Z4joinv", {1, 2, 3}},
                              {NodeType::kernel, "_Z4tailv", {4}}});
  for (auto* doc : {&a, &b})
    for (auto& n : doc->root.nodes)
      if (n.kernel) n.kernel->grid = {1, 1, 1};
  GraphDiff d = diff_graphs(a, b);
  CHECK_FALSE(d.same());
  CHECK(d.root.removed.empty());
  REQUIRE(d.root.added.size() == 1);
  CHECK(d.root.added[0].kind == NodeKind{NodeType::kernel, "_Z4tailv"});
  CHECK(d.root.added[0].nodes == std::vector<uint32_t>{5});
  CHECK(d.root.added_node_edges == 1);  // join -> tail came with it
  CHECK(d.root.added_edges.empty());
  CHECK(d.root.b_depth == 4);

  GraphDiff back = diff_graphs(b, a);
  REQUIRE(back.root.removed.size() == 1);
  CHECK(back.root.removed[0].kind.name == "_Z4tailv");
  CHECK(back.root.added.empty());
  std::string text = format_diff(back, "b.json", "a.json");
  CHECK(text.find("differ: 1 node removed\n") != std::string::npos);
  CHECK(text.find("nodes only in A (removed)\n       1  tail") != std::string::npos);
  CHECK(text.find("depth 4 -> 3\n") != std::string::npos);
}

TEST_CASE("kernels are counted as a multiset: three copies against two is one removed") {
  auto doc = [](int copies) {
    std::vector<Spec> s = {{NodeType::kernel, "_Z4headv", {}}};
    for (int i = 0; i < copies; ++i) s.push_back({NodeType::kernel, "_Z4workv", {0}});
    GraphDocument d = make_doc(s);
    for (auto& n : d.root.nodes) n.kernel->grid = {8, 1, 1};
    return d;
  };
  GraphDiff d = diff_graphs(doc(3), doc(2));
  REQUIRE(d.root.removed.size() == 1);
  CHECK(d.root.removed[0].kind.name == "_Z4workv");
  CHECK(d.root.removed[0].nodes.size() == 1);
  CHECK(d.root.added.empty());
  CHECK(d.root.changed.empty());
  CHECK(d.root.removed_edges.empty());
  CHECK(d.root.a_width == 3);
  CHECK(d.root.b_width == 2);
}

TEST_CASE("64 lost copies of one kernel among many are one group, one line") {
  std::vector<Spec> a = {{NodeType::kernel, "_Z4rootv", {}}}, b = a;
  for (int i = 0; i < 1000; ++i) a.push_back({NodeType::kernel, "_Z4leafv", {0}});
  for (int i = 0; i < 936; ++i) b.push_back({NodeType::kernel, "_Z4leafv", {0}});
  GraphDocument da = make_doc(a), db = make_doc(b);
  for (auto* doc : {&da, &db})
    for (auto& n : doc->root.nodes) n.kernel->grid = {1, 1, 1};
  GraphDiff d = diff_graphs(da, db);
  REQUIRE(d.root.removed.size() == 1);
  CHECK(d.root.removed[0].nodes.size() == 64);
  CHECK(d.root.removed_node_edges == 64);
  std::string text = format_diff(d, "a", "b");
  CHECK(text.find("      64  leaf") != std::string::npos);
  CHECK(std::count(text.begin(), text.end(), '\n') < 12);
}

TEST_CASE("changed launch geometry is a change of the matched node, unless ignored") {
  GraphDocument a = fork_join(), b = fork_join();
  b.root.nodes[1].kernel->grid = {512, 1, 1};
  b.root.nodes[1].kernel->block = {64, 1, 1};
  b.root.nodes[4].kernel->shared_mem_bytes = 4096;
  GraphDiff d = diff_graphs(a, b);
  CHECK_FALSE(d.same());
  CHECK(d.root.removed.empty());
  CHECK(d.root.added.empty());
  CHECK(d.root.removed_edges.empty());
  REQUIRE(d.root.changed.size() == 2);
  const ChangeGroup* scale =
      d.root.changed[0].kind.name == "_Z5scalePfif" ? &d.root.changed[0] : &d.root.changed[1];
  REQUIRE(scale->changes.size() == 2);
  CHECK(scale->changes[0].field == "grid");
  CHECK(scale->changes[0].a == "2x1x1");
  CHECK(scale->changes[0].b == "512x1x1");
  CHECK(scale->changes[0].b_json == "[512, 1, 1]");
  CHECK(scale->changes[1].field == "block");
  CHECK(scale->nodes == std::vector<std::pair<uint32_t, uint32_t>>{{1, 1}});
  std::string text = format_diff(d, "a", "b");
  CHECK(text.find("grid 2x1x1 -> 512x1x1, block 128x1x1 -> 64x1x1  (node 1->1)") != std::string::npos);
  CHECK(text.find("shared_mem_bytes 0 -> 4096") != std::string::npos);

  DiffOptions o;
  o.ignore_geometry = true;
  CHECK(diff_graphs(a, b, o).same());
}

TEST_CASE("memcpy sizes and kinds and memset values are compared") {
  auto doc = [](uint64_t bytes, const char* kind, uint64_t value) {
    GraphDocument d = make_doc({{NodeType::memcpy, "", {}}, {NodeType::memset, "", {0}}});
    d.root.nodes[0].memcpy = MemcpyInfo{kind, bytes, 0x1000, 0x2000};
    MemsetInfo m;
    m.value = value, m.element_size = 4, m.width = 256, m.bytes = 1024;
    d.root.nodes[1].memset = m;
    return d;
  };
  GraphDocument a = doc(16384, "HtoD", 0);
  CHECK(diff_graphs(a, doc(16384, "HtoD", 0)).same());
  // Pointers are not compared: every run allocates anew.
  GraphDocument moved = doc(16384, "HtoD", 0);
  moved.root.nodes[0].memcpy->src = 0x9000;
  CHECK(diff_graphs(a, moved).same());

  GraphDiff d = diff_graphs(a, doc(32768, "DtoH", 7));
  REQUIRE(d.root.changed.size() == 2);
  CHECK(d.root.changed[0].kind.type == NodeType::memcpy);
  REQUIRE(d.root.changed[0].changes.size() == 2);
  CHECK(d.root.changed[0].changes[0].field == "kind");
  CHECK(d.root.changed[0].changes[0].a_json == "\"HtoD\"");
  CHECK(d.root.changed[0].changes[1].field == "bytes");
  CHECK(d.root.changed[0].changes[1].b == "32768");
  CHECK(d.root.changed[1].changes[0].field == "value");
  DiffOptions o;
  o.ignore_sizes = true;
  GraphDiff sized = diff_graphs(a, doc(32768, "DtoH", 7), o);
  REQUIRE(sized.root.changed.size() == 1);  // the kind still differs
  CHECK(sized.root.changed[0].changes.size() == 1);
}

TEST_CASE("an edge added and an edge removed between matched nodes") {
  GraphDocument a = fork_join();
  GraphDocument b = fork_join();
  // b: 0 -> 3 dropped (3 now depends on 1), 2 -> 4 kept.
  b.root.nodes[3].dependencies = {{1}};
  link_dependents(b.root);
  GraphDiff d = diff_graphs(a, b);
  CHECK_FALSE(d.same());
  CHECK(d.root.matched_nodes == 5);
  REQUIRE(d.root.removed_edges.size() == 1);
  CHECK(d.root.removed_edges[0].from.name == "_Z4forkv");
  CHECK(d.root.removed_edges[0].to.type == NodeType::memset);
  CHECK(d.root.removed_edges[0].edges == std::vector<std::pair<uint32_t, uint32_t>>{{0, 3}});
  REQUIRE(d.root.added_edges.size() == 1);
  CHECK(d.root.added_edges[0].edges == std::vector<std::pair<uint32_t, uint32_t>>{{1, 3}});
  CHECK(d.root.b_depth == 4);
  std::string text = format_diff(d, "a", "b");
  CHECK(text.find("differ: 1 edge removed, 1 added between matched nodes\n") != std::string::npos);
  CHECK(text.find("fork -> memset") != std::string::npos);
}

TEST_CASE("an edge whose type changes is retyped, unless one side cannot record types") {
  GraphDocument a = fork_join(), b = fork_join();
  b.root.nodes[1].dependencies[0].type = EdgeType::programmatic;
  b.root.nodes[1].dependencies[0].from_port = 1;
  GraphDiff d = diff_graphs(a, b);
  CHECK_FALSE(d.same());
  REQUIRE(d.root.retyped_edges.size() == 1);
  CHECK(d.root.retyped_edges[0].a_edge == "default");
  CHECK(d.root.retyped_edges[0].b_edge == "programmatic (ports 1->0)");
  CHECK(d.root.retyped_edges[0].edges == std::vector<std::pair<uint32_t, uint32_t>>{{0, 1}});
  CHECK(d.root.removed_edges.empty());
  CHECK(format_diff(d, "a", "b").find("default -> programmatic (ports 1->0)") != std::string::npos);

  // A cudaGraphDebugDotPrint file prints every edge alike: not a difference,
  // but the report says what was not compared.
  GraphDocument dot = fork_join();
  dot.source_format = "nvidia-dot";
  GraphDiff n = diff_graphs(b, dot);
  CHECK(n.same());
  CHECK_FALSE(n.edge_types_compared);
  REQUIRE(n.notes.size() == 1);
  CHECK(n.notes[0] ==
        "edge types and ports not compared: B is a cudaGraphDebugDotPrint file, which does not record them");
}

TEST_CASE("depth and width changes follow the structure") {
  // A chain of four against the same four kernels side by side.
  std::vector<Spec> chain = {{NodeType::kernel, "_Z1kv", {}},
                             {NodeType::kernel, "_Z1kv", {0}},
                             {NodeType::kernel, "_Z1kv", {1}},
                             {NodeType::kernel, "_Z1kv", {2}}};
  std::vector<Spec> wide = {{NodeType::kernel, "_Z1kv", {}},
                            {NodeType::kernel, "_Z1kv", {}},
                            {NodeType::kernel, "_Z1kv", {}},
                            {NodeType::kernel, "_Z1kv", {}}};
  GraphDocument a = make_doc(chain), b = make_doc(wide);
  for (auto* doc : {&a, &b})
    for (auto& n : doc->root.nodes) n.kernel->grid = {1, 1, 1};
  GraphDiff d = diff_graphs(a, b);
  CHECK(d.root.matched_nodes == 4);
  CHECK(d.root.a_depth == 4);
  CHECK(d.root.b_depth == 1);
  CHECK(d.root.a_width == 1);
  CHECK(d.root.b_width == 4);
  CHECK(d.root.removed_edges.size() == 1);
  CHECK(d.root.removed_edges[0].edges.size() == 3);
  CHECK(format_diff(d, "a", "b").find("depth 4 -> 1, width 1 -> 4\n") != std::string::npos);
}

TEST_CASE("nested child graph bodies are compared and reported with their node") {
  auto doc = [](uint32_t inner_grid) {
    GraphDocument d = fork_join();
    Node& child = d.root.nodes[3];
    child.type = NodeType::child_graph;
    Graph body = make_doc({{NodeType::kernel, "_Z5innerv", {}}, {NodeType::kernel, "_Z5innerv", {0}}}).root;
    body.graph_id = 9;
    body.nodes[1].kernel->grid = {inner_grid, 1, 1};
    child.bodies.push_back(body);
    return d;
  };
  GraphDiff same = diff_graphs(doc(4), recapture(doc(4), {0, 2, 1, 3, 4}));
  CHECK(same.same());
  CHECK(same.root.nested_compared == 1);
  CHECK(format_diff(same, "a", "b").find("same: all 7 nodes and 7 edges match (1 nested graph included)") !=
        std::string::npos);

  GraphDiff d = diff_graphs(doc(4), doc(8));
  CHECK_FALSE(d.same());
  CHECK(d.root.changed.empty());  // the child graph node itself is unchanged
  REQUIRE(d.root.nested.size() == 1);
  CHECK(d.root.nested[0].a_node == 3);
  CHECK(d.root.nested[0].body == 0);
  REQUIRE(d.root.nested[0].diff.changed.size() == 1);
  CHECK(d.root.nested[0].diff.changed[0].changes[0].field == "grid");
  std::string text = format_diff(d, "a", "b");
  CHECK(text.find("differ: 1 nested body differs\n") != std::string::npos);
  CHECK(text.find("body 0 of child_graph node 3 (node 3 in B): differ: 1 node changed\n") !=
        std::string::npos);
  CHECK(text.find("\n  changed nodes (A -> B)\n         1  inner") != std::string::npos);

  // A child graph removed takes its nested nodes with it.
  GraphDocument plain = fork_join();
  GraphDiff r = diff_graphs(doc(4), plain);
  REQUIRE(r.root.removed.size() == 1);
  CHECK(r.root.removed[0].kind.type == NodeType::child_graph);
  CHECK(r.root.removed[0].nested_nodes == 2);
  REQUIRE(r.root.added.size() == 1);
  CHECK(r.root.added[0].kind.type == NodeType::memset);
}

TEST_CASE("a removal on the longest path of a periodic graph is found, not a shifted match") {
  // 40 identical fork-join periods; B lacks the join of period 10, so every
  // level after it shifts by one. The diff must still be that one node.
  GraphDocument a = periodic(40), b = periodic(40, 10);
  REQUIRE(a.root.nodes.size() == b.root.nodes.size() + 1);
  GraphDiff d = diff_graphs(a, b);
  REQUIRE(d.root.removed.size() == 1);
  CHECK(d.root.removed[0].kind.name == "_Z1jv");
  CHECK(d.root.removed[0].nodes.size() == 1);
  CHECK(d.root.added.empty());
  CHECK(d.root.changed.empty());
  CHECK(d.root.removed_edges.empty());
  // The three branches now lead to the next period directly: what the
  // removal left (A ran them through the join), not edges added.
  CHECK(d.root.added_edges.empty());
  REQUIRE(d.root.edges_through_removed.size() == 3);
  for (const auto& [from, to] : d.root.edges_through_removed)
    CHECK(b.root.nodes[to].kernel_name == "_Z1sv");
  CHECK(d.root.a_depth == d.root.b_depth + 1);
}

TEST_CASE("layers inserted into a chain read as whole layers inserted, not as an edge removed") {
  // The recorded Llama of 2 decoder layers against the one of 8: 32 nodes
  // before the layers, 44 per layer, 8 after. Six layers were inserted.
  GraphDocument two = load_graph(test::data_path("python/llama.graph_data.json"));
  GraphDocument eight = load_graph(test::data_path("origins/llama8.graph.json"));
  REQUIRE(two.root.nodes.size() == 128);
  REQUIRE(eight.root.nodes.size() == 392);
  auto all = [](const std::vector<NodeGroup>& groups) {
    std::vector<uint32_t> v;
    for (const auto& g : groups) v.insert(v.end(), g.nodes.begin(), g.nodes.end());
    std::sort(v.begin(), v.end());
    return v;
  };
  std::vector<uint32_t> layers_3_to_8(264);
  std::iota(layers_3_to_8.begin(), layers_3_to_8.end(), 120u);  // model.layers.2 .. model.layers.7

  GraphDiff d = diff_graphs(two, eight);
  CHECK(d.root.removed.empty());
  CHECK(d.root.changed.empty());
  // Whole layers: the run slides along the repeating kernels to the copies'
  // boundaries (it was found starting inside a layer).
  CHECK(all(d.root.added) == layers_3_to_8);
  // The edge of A they went into is neither removed nor added.
  CHECK(d.root.removed_edges.empty());
  CHECK(d.root.added_edges.empty());
  CHECK(d.root.edges_through_added == std::vector<std::pair<uint32_t, uint32_t>>{{119, 120}});
  CHECK(d.root.matched_edges == 126);
  for (uint32_t i = 0; i < 128; ++i) CHECK(d.root.a_to_b[i] == (i < 120 ? i : i + 264));
  REQUIRE(d.where.size() == 1);
  CHECK(d.where[0].find("in B, they are copies 3 to 8 of the 8 x LlamaDecoderLayer") == 0);
  CHECK(d.where[0].find("(model.layers.2 to model.layers.7)") != std::string::npos);
  const std::string text = format_diff(d, "two", "eight");
  CHECK(text.find("differ: 264 nodes added\n") != std::string::npos);
  CHECK(text.find("the added nodes were inserted into 1 edge of A (edge 119->120)") != std::string::npos);
  CHECK(text.find("edges only in A") == std::string::npos);

  // The other way round: six layers removed, and the edge of B that
  // replaced them.
  GraphDiff r = diff_graphs(eight, two);
  CHECK(r.root.added.empty());
  CHECK(all(r.root.removed) == layers_3_to_8);
  CHECK(r.root.removed_edges.empty());
  CHECK(r.root.added_edges.empty());
  CHECK(r.root.edges_through_removed == std::vector<std::pair<uint32_t, uint32_t>>{{119, 120}});
  CHECK(format_diff(r, "eight", "two").find("the removed nodes were taken out of 1 path of A that is an edge in B (edge 119->120)") !=
        std::string::npos);
}

TEST_CASE("periodic graphs compared with a re-capture of themselves are the same") {
  GraphDocument a = periodic(200);
  std::vector<uint32_t> order(a.root.nodes.size());
  std::iota(order.begin(), order.end(), 0u);
  // Swap the branches of every period: the indices move, the graph does not.
  for (size_t p = 0; p + 4 < order.size(); p += 5) std::swap(order[p + 1], order[p + 3]);
  GraphDiff d = diff_graphs(a, recapture(a, order));
  CHECK(d.same());
  CHECK(d.root.matched_edges == d.root.a_edges);
}

TEST_CASE("launch geometry one side does not record is noted, not reported as a change") {
  GraphDocument a = fork_join(), b = fork_join();
  b.source_format = "nvidia-dot";
  for (auto& n : b.root.nodes)
    if (n.kernel) n.kernel->geometry_known = false;
  GraphDiff d = diff_graphs(a, b);
  CHECK(d.same());
  CHECK(d.root.geometry_unknown == 4);
  REQUIRE(d.notes.size() == 2);
  CHECK(
      d.notes[1] ==
      "launch geometry not compared: B does not record it (cudaGraphDebugDotPrint writes it with the verbose "
      "flag only)");
}

TEST_CASE("diff JSON is a complete graphscope.diff/1 document") {
  GraphDocument a = fork_join(), b = fork_join();
  b.root.nodes[2].kernel->grid = {99, 1, 1};
  b.root.nodes.pop_back();  // the join goes
  link_dependents(b.root);
  GraphDiff d = diff_graphs(a, b);
  auto j = nlohmann::json::parse(write_diff_json(d, "a.json", "b.dot"));
  CHECK(j["schema"] == "graphscope.diff/1");
  CHECK(j["same"] == false);
  CHECK(j["a"]["path"] == "a.json");
  CHECK(j["b"]["nodes"] == 4);
  CHECK(j["root"]["nodes"]["matched"] == 4);
  CHECK(j["root"]["removed_nodes"][0]["kind"]["kernel_name"] == "_Z4joinv");
  CHECK(j["root"]["removed_nodes"][0]["nodes"] == nlohmann::json::array({4}));
  CHECK(j["root"]["edges"]["of_removed_nodes"] == 3);
  CHECK(j["root"]["changed_nodes"][0]["changes"][0]["field"] == "grid");
  CHECK(j["root"]["changed_nodes"][0]["changes"][0]["a"] == nlohmann::json::array({3, 1, 1}));
  CHECK(j["root"]["changed_nodes"][0]["changes"][0]["b"] == nlohmann::json::array({99, 1, 1}));
  CHECK(j["root"]["changed_nodes"][0]["nodes"] == nlohmann::json::array({nlohmann::json::array({2, 2})}));
  CHECK(j["root"]["depth"]["a"] == 3);
  CHECK(j["root"]["depth"]["b"] == 2);
  CHECK(nlohmann::json::parse(write_diff_json(diff_graphs(a, a), "a", "a"))["same"] == true);
}

TEST_CASE("a recorded capture agrees with the cudaGraphDebugDotPrint file of the same graph") {
  for (const char* name : {"forkjoin", "mixed", "child_graph", "conditional", "pdl", "memalloc"}) {
    CAPTURE(name);
    GraphDocument json = parse_graph(test::read_data(std::string("captures/") + name + ".json"), "json");
    GraphDocument dot = parse_graph(test::read_data(std::string("captures/") + name + ".nvidia.dot"), "dot");
    GraphDiff d = diff_graphs(json, dot);
    CHECK(d.same());
    CHECK_FALSE(d.edge_types_compared);
    CHECK(d.root.matched_nodes == json.root.nodes.size());
  }
}

TEST_CASE("two recordings of different workloads differ") {
  GraphDocument fj = parse_graph(test::read_data("captures/forkjoin.json"), "fj");
  GraphDocument wide = parse_graph(test::read_data("captures/wide.json"), "wide");
  GraphDiff d = diff_graphs(fj, wide);
  CHECK_FALSE(d.same());
  CHECK(count_nodes(d.root.removed) == 10);
  CHECK(count_nodes(d.root.added) == 66);
  CHECK(d.root.matched_nodes == 0);
}

namespace {

// A random DAG of n nodes: a few kernels (one with two geometries) and
// memsets, each node depending on up to three earlier ones.
GraphDocument random_dag(uint32_t n, uint64_t seed) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
  auto next = [&](uint32_t bound) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return uint32_t(x % bound);
  };
  const char* kernels[] = {"_Z1pv", "_Z1qv", "_Z1rv"};
  std::vector<Spec> specs;
  for (uint32_t i = 0; i < n; ++i) {
    std::vector<uint32_t> deps;
    uint32_t k = i == 0 ? 0 : 1 + next(3);
    for (uint32_t j = 0; j < k; ++j) {
      uint32_t d = i - 1 - next(std::min<uint32_t>(i, 8));
      if (std::find(deps.begin(), deps.end(), d) == deps.end()) deps.push_back(d);
    }
    uint32_t t = next(8);
    if (t == 0)
      specs.push_back({NodeType::memset, "", deps});
    else
      specs.push_back({NodeType::kernel, kernels[t % 3], deps});
  }
  GraphDocument doc = make_doc(specs);
  for (auto& node : doc.root.nodes)
    if (node.kernel)
      node.kernel->grid = {node.index % 5 == 0 ? 32u : 64u, 1, 1};
    else
      node.memset = MemsetInfo{0, 4, 64, 1, 256, std::nullopt};
  return doc;
}

// A random topological order of doc's nodes.
std::vector<uint32_t> shuffled_order(const GraphDocument& doc, uint64_t seed) {
  uint64_t x = seed + 12345;
  std::vector<uint32_t> indegree, ready, order;
  for (const auto& n : doc.root.nodes) indegree.push_back(uint32_t(n.dependencies.size()));
  for (uint32_t i = 0; i < indegree.size(); ++i)
    if (!indegree[i]) ready.push_back(i);
  while (!ready.empty()) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    std::swap(ready[x % ready.size()], ready.back());
    uint32_t v = ready.back();
    ready.pop_back();
    order.push_back(v);
    for (uint32_t w : doc.root.nodes[v].dependents)
      if (--indegree[w] == 0) ready.push_back(w);
  }
  return order;
}

// Removes the given nodes, their predecessors wired to their successors.
GraphDocument without(const GraphDocument& doc, const std::vector<uint32_t>& gone) {
  std::vector<std::vector<uint32_t>> deps;
  for (const auto& n : doc.root.nodes) {
    deps.emplace_back();
    for (const auto& d : n.dependencies) deps.back().push_back(d.from);
  }
  std::vector<bool> removed(deps.size(), false);
  for (uint32_t g : gone) removed[g] = true;
  for (uint32_t v = 0; v < deps.size(); ++v) {  // in index order: predecessors first
    std::vector<uint32_t> out;
    for (uint32_t u : deps[v])
      for (uint32_t w : removed[u] ? deps[u] : std::vector<uint32_t>{u})
        if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
    deps[v] = out;
  }
  GraphDocument out = doc;
  out.root.nodes.clear();
  std::vector<uint32_t> at(deps.size());
  for (uint32_t v = 0; v < deps.size(); ++v) {
    if (removed[v]) continue;
    at[v] = uint32_t(out.root.nodes.size());
    Node n = doc.root.nodes[v];
    n.index = n.node_id = at[v];
    n.tools_id = (uint64_t(*n.graph_id) << 32) | at[v];
    n.dependencies.clear();
    for (uint32_t u : deps[v]) n.dependencies.push_back({at[u]});
    out.root.nodes.push_back(std::move(n));
  }
  link_dependents(out.root);
  return out;
}

// What any match must be: one-to-one, of equal kinds, and the per-kind
// counts of removed and added nodes exactly the multiset difference.
void check_consistent(const GraphDocument& a, const GraphDocument& b, const GraphDiff& d) {
  std::vector<int> taken(b.root.nodes.size(), 0);
  std::map<std::pair<int, std::string>, int64_t> balance;
  for (const auto& n : a.root.nodes) ++balance[{int(n.type), n.kernel_name}];
  for (const auto& n : b.root.nodes) --balance[{int(n.type), n.kernel_name}];
  size_t matched = 0;
  for (size_t i = 0; i < d.root.a_to_b.size(); ++i) {
    int64_t j = d.root.a_to_b[i];
    if (j < 0) continue;
    ++matched;
    CHECK(++taken[size_t(j)] == 1);
    CHECK(a.root.nodes[i].type == b.root.nodes[size_t(j)].type);
    CHECK(a.root.nodes[i].kernel_name == b.root.nodes[size_t(j)].kernel_name);
  }
  CHECK(matched == d.root.matched_nodes);
  CHECK(count_nodes(d.root.removed) + matched == a.root.nodes.size());
  CHECK(count_nodes(d.root.added) + matched == b.root.nodes.size());
  for (const auto& g : d.root.removed) balance[{int(g.kind.type), g.kind.name}] -= int64_t(g.nodes.size());
  for (const auto& g : d.root.added) balance[{int(g.kind.type), g.kind.name}] += int64_t(g.nodes.size());
  for (const auto& [kind, left] : balance) CHECK(left == 0);
}

}  // namespace

TEST_CASE("random graphs: a shuffled re-capture is the same, a modified copy differs by its changes") {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    CAPTURE(seed);
    GraphDocument a = random_dag(300, seed);
    GraphDocument again = recapture(a, shuffled_order(a, seed));
    GraphDiff same = diff_graphs(a, again);
    CHECK(same.same());
    check_consistent(a, again, same);

    // Remove five nodes and change the grid of two others.
    std::vector<uint32_t> gone = {uint32_t(40 + seed), 90, 150, uint32_t(200 + seed), 260};
    GraphDocument b = without(a, gone);
    b.root.nodes[20].kernel ? void(b.root.nodes[20].kernel->grid = {999, 1, 1}) : void();
    b = recapture(b, shuffled_order(b, seed + 1));
    GraphDiff d = diff_graphs(a, b);
    CHECK_FALSE(d.same());
    check_consistent(a, b, d);
    CHECK(count_nodes(d.root.removed) == 5);
    CHECK(d.root.added.empty());
  }
}
TEST_CASE("identical chains told apart only at their far ends match chain to chain in any order") {
  // fork -> 8 chains of 10 "step" kernels -> join; the ninth kernel of each
  // chain has its own grid, nothing else tells the chains apart.
  std::vector<Spec> specs = {{NodeType::kernel, "_Z4forkv", {}}};
  std::vector<uint32_t> ends;
  for (int c = 0; c < 8; ++c) {
    uint32_t prev = 0;
    for (int k = 0; k < 10; ++k) {
      specs.push_back({NodeType::kernel, k == 8 ? "_Z4markv" : "_Z4stepv", {prev}});
      prev = uint32_t(specs.size() - 1);
    }
    ends.push_back(prev);
  }
  specs.push_back({NodeType::kernel, "_Z4joinv", ends});
  GraphDocument a = make_doc(specs);
  uint32_t mark = 0;
  for (auto& n : a.root.nodes) n.kernel->grid = {n.kernel_name == "_Z4markv" ? ++mark : 1u, 1, 1};
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    CAPTURE(seed);
    GraphDocument b = recapture(a, shuffled_order(a, seed));
    GraphDiff d = diff_graphs(a, b);
    CHECK(d.same());
    CHECK(d.root.matched_edges == d.root.a_edges);
  }
}

TEST_CASE("empty graphs are the same, and everything is added to an empty one") {
  GraphDocument empty;
  CHECK(diff_graphs(empty, empty).same());
  CHECK(format_diff(diff_graphs(empty, empty), "a", "b").find("same: 0 nodes and 0 edges match") !=
        std::string::npos);
  GraphDiff d = diff_graphs(empty, fork_join());
  CHECK_FALSE(d.same());
  CHECK(count_nodes(d.root.added) == 5);
  CHECK(d.root.added_node_edges == 6);
  CHECK(d.root.b_depth == 3);
}

TEST_CASE("a memset's shape is compared only where both sides record it") {
  auto doc = [](uint32_t element_size, uint64_t width, const char* format, bool geometry) {
    GraphDocument d = make_doc({{NodeType::kernel, "_Z1kv", {}}, {NodeType::memset, "", {0}}});
    d.source_format = format;
    d.root.nodes[0].kernel->geometry_known = geometry;
    MemsetInfo m;
    m.value = 3, m.element_size = element_size, m.width = width, m.bytes = element_size * width;
    d.root.nodes[1].memset = m;
    return d;
  };
  // A default-flags DOT says (value, bytes); its reader makes that 1-byte
  // elements. The verbose DOT of the same graph says 4-byte elements.
  GraphDocument plain = doc(1, 4096, "nvidia-dot", false), verbose = doc(4, 1024, "nvidia-dot", true);
  CHECK(diff_graphs(plain, verbose).same());
  GraphDiff d = diff_graphs(doc(4, 1024, "graphscope", true), doc(1, 4096, "graphscope", true));
  REQUIRE(d.root.changed.size() == 1);
  CHECK(d.root.changed[0].changes[0].field == "element_size");
}
