// graphscope.diff/1 written and read back on the same struct.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "graph_builder.h"
#include "inspect/analysis/diff.h"
#include "inspect/formats/diff_json.h"
#include "inspect/core/error.h"
#include "inspect/formats/load.h"
#include "test_data.h"

using namespace graphscope;

namespace {

void check_same(const StructureDiff& x, const StructureDiff& y) {
  CHECK(x.a_nodes == y.a_nodes);
  CHECK(x.b_nodes == y.b_nodes);
  CHECK(x.matched_nodes == y.matched_nodes);
  CHECK(x.a_edges == y.a_edges);
  CHECK(x.b_edges == y.b_edges);
  CHECK(x.matched_edges == y.matched_edges);
  CHECK(x.a_depth == y.a_depth);
  CHECK(x.b_depth == y.b_depth);
  CHECK(x.a_width == y.a_width);
  CHECK(x.b_width == y.b_width);
  CHECK(x.a_width_level == y.a_width_level);
  CHECK(x.b_width_level == y.b_width_level);
  CHECK(x.removed_node_edges == y.removed_node_edges);
  CHECK(x.added_node_edges == y.added_node_edges);
  CHECK(x.edges_through_added == y.edges_through_added);
  CHECK(x.edges_through_removed == y.edges_through_removed);
  CHECK(x.a_to_b == y.a_to_b);
  CHECK(x.nested_compared == y.nested_compared);
  auto groups = [](const std::vector<NodeGroup>& a, const std::vector<NodeGroup>& b) {
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      CHECK(a[i].kind == b[i].kind);
      CHECK(a[i].nodes == b[i].nodes);
      CHECK(a[i].nested_nodes == b[i].nested_nodes);
    }
  };
  groups(x.removed, y.removed);
  groups(x.added, y.added);
  REQUIRE(x.changed.size() == y.changed.size());
  for (size_t i = 0; i < x.changed.size(); ++i) {
    CHECK(x.changed[i].kind == y.changed[i].kind);
    CHECK(x.changed[i].nodes == y.changed[i].nodes);
    REQUIRE(x.changed[i].changes.size() == y.changed[i].changes.size());
    for (size_t k = 0; k < x.changed[i].changes.size(); ++k) {
      const FieldChange &f = x.changed[i].changes[k], &g = y.changed[i].changes[k];
      CHECK(f == g);
      CHECK(f.a == g.a);
      CHECK(f.b == g.b);
    }
  }
  auto edges = [](const std::vector<EdgeGroup>& a, const std::vector<EdgeGroup>& b) {
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      CHECK(a[i].from == b[i].from);
      CHECK(a[i].to == b[i].to);
      CHECK(a[i].a_edge == b[i].a_edge);
      CHECK(a[i].b_edge == b[i].b_edge);
      CHECK(a[i].edges == b[i].edges);
    }
  };
  edges(x.removed_edges, y.removed_edges);
  edges(x.added_edges, y.added_edges);
  edges(x.retyped_edges, y.retyped_edges);
  REQUIRE(x.nested.size() == y.nested.size());
  for (size_t i = 0; i < x.nested.size(); ++i) {
    CHECK(x.nested[i].kind == y.nested[i].kind);
    CHECK(x.nested[i].a_node == y.nested[i].a_node);
    CHECK(x.nested[i].b_node == y.nested[i].b_node);
    CHECK(x.nested[i].body == y.nested[i].body);
    check_same(x.nested[i].diff, y.nested[i].diff);
  }
}

void round_trip(const GraphDiff& d, const std::string& a, const std::string& b) {
  const std::string text = write_diff_json(d, a, b);
  DiffDocument back = read_diff_json(text, "d.json");
  CHECK(back.a_origin == a);
  CHECK(back.b_origin == b);
  CHECK(back.diff.a.source_format == d.a.source_format);
  CHECK(back.diff.a.name == d.a.name);
  CHECK(back.diff.b.nodes == d.b.nodes);
  CHECK(back.diff.b.edges == d.b.edges);
  CHECK(back.diff.b.nested_graphs == d.b.nested_graphs);
  CHECK(back.diff.options.ignore_geometry == d.options.ignore_geometry);
  CHECK(back.diff.options.ignore_sizes == d.options.ignore_sizes);
  CHECK(back.diff.edge_types_compared == d.edge_types_compared);
  CHECK(back.diff.notes == d.notes);
  CHECK(back.diff.root.geometry_unknown == d.root.geometry_unknown);
  CHECK(back.diff.same() == d.same());
  check_same(d.root, back.diff.root);
  CHECK(write_diff_json(back.diff, back.a_origin, back.b_origin) == text);
}

}  // namespace

TEST_CASE("diffs of recorded graphs read back to the same diff and the same bytes") {
  const std::pair<const char*, const char*> pairs[] = {
      {"captures/pdl.json", "captures/pdl.nvidia.dot"},
      {"captures/child_graph.json", "captures/child_graph.nvidia.dot"},
      {"nvidia/conditional.verbose.dot", "captures/conditional.json"},
      {"nvidia/forkjoin.dot", "nvidia/forkjoin.verbose.dot"},
      {"captures/forkjoin.json", "captures/wide.json"},
      {"captures/two_graphs.forward.json", "captures/two_graphs.backward.json"},
      {"nvidia/memalloc.verbose.dot", "captures/memalloc.json"},
      {"nvidia/mixed.verbose.dot", "captures/mixed.json"},
      {"derived/torch_two_stream.pytorch.json", "torch/torch_two_stream.debug_dump.dot"},
      // Layers inserted: the edge of A they went into, the match of every node.
      {"python/llama.graph_data.json", "origins/llama8.graph.json"},
  };
  for (const auto& [a, b] : pairs) {
    CAPTURE(a);
    CAPTURE(b);
    GraphDocument x = load_graph(test::data_path(a)), y = load_graph(test::data_path(b));
    for (DiffOptions o : {DiffOptions{}, DiffOptions{true, true}}) {
      round_trip(diff_graphs(x, y, o), a, b);
      round_trip(diff_graphs(y, x, o), b, a);
    }
  }
}

TEST_CASE("a diff written before a_to_b reads back and is written again without it") {
  // fuzz/regressions/fuzz_documents/diff_without_a_to_b.json: such a
  // document was written again with "a_to_b": [], which its reader refused.
  const GraphDocument x = load_graph(test::data_path("captures/forkjoin.json"));
  const GraphDocument y = load_graph(test::data_path("captures/wide.json"));
  std::string text = write_diff_json(diff_graphs(x, y), "a.json", "b.json");
  const size_t at = text.find("\"a_to_b\"");
  REQUIRE(at != std::string::npos);
  text.erase(at, text.find('\n', at) + 1 - at);
  const DiffDocument old = read_diff_json(text, "old.json");
  CHECK(old.diff.root.a_to_b.empty());
  const std::string again = write_diff_json(old.diff, old.a_origin, old.b_origin);
  CHECK(again.find("a_to_b") == std::string::npos);
  CHECK_NOTHROW(read_diff_json(again, "again.json"));
}

TEST_CASE("a cluster only one side has reads back (null in the document, none in text)") {
  GraphDocument x = load_graph(test::data_path("captures/forkjoin.json"));
  GraphDocument y = x;
  Node* k = nullptr;
  for (auto& n : y.root.nodes)
    if (n.kernel && n.kernel->geometry_known && !n.kernel->cluster) k = k ? k : &n;
  REQUIRE(k != nullptr);
  k->kernel->cluster = Dim3{2, 1, 1};
  GraphDiff d = diff_graphs(x, y, {});
  const std::string text = write_diff_json(d, "a.json", "b.json");
  CHECK(text.find("\"field\": \"cluster\", \"a\": null, \"b\": [2, 1, 1]") != std::string::npos);
  round_trip(d, "a.json", "b.json");
  round_trip(diff_graphs(y, x, {}), "b.json", "a.json");
}

TEST_CASE("a diff document that contradicts itself is refused") {
  GraphDocument x = load_graph(test::data_path("captures/forkjoin.json"));
  GraphDocument y = load_graph(test::data_path("captures/wide.json"));
  std::string text = write_diff_json(diff_graphs(x, y), "a", "b");
  size_t at = text.find("\"same\": false");
  REQUIRE(at != std::string::npos);
  text.replace(at, 13, "\"same\": true ");
  std::string err;
  try {
    read_diff_json(text, "d.json");
  } catch (const Error& e) {
    err = e.what();
  }
  CHECK(err == "d.json (same: disagrees with the differences listed)");
  err.clear();
  try {
    read_diff_json(R"({"schema": "graphscope.check/1"})", "d.json");
  } catch (const Error& e) {
    err = e.what();
  }
  CHECK(err == "d.json (schema: \"graphscope.check/1\" is not a diff (expected graphscope.diff/1))");
}
