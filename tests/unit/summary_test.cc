#include <doctest/doctest.h>

#include "graph_builder.h"
#include "inspect/summary.h"

using namespace graphscope;
using graphscope::test::fork_join;
using graphscope::test::make_doc;

TEST_CASE("summary counts types, edges, depth and width of a fork-join") {
  auto s = summarize(fork_join());
  CHECK(s.nodes == 5);
  CHECK(s.edges == 6);
  CHECK(s.depth == 3);
  CHECK(s.width == 3);
  CHECK(s.width_level == 2);
  CHECK(s.roots == 1);
  CHECK(s.leaves == 1);
  REQUIRE(s.by_type.size() == 2);
  CHECK(s.by_type[0] == std::pair<std::string, size_t>("kernel", 4));
  CHECK(s.by_type[1] == std::pair<std::string, size_t>("memset", 1));
  REQUIRE(s.top_kernels.size() == 3);
  CHECK(s.top_kernels[0] == std::pair<std::string, size_t>("_Z5scalePfif", 2));
}

TEST_CASE("depth follows the longest path, not the first one found") {
  // 0 -> 1 -> 2 -> 3 and 0 -> 3: depth 4; levels 1,2,3,4 each one node wide.
  auto doc = make_doc({{NodeType::kernel, "a", {}},
                       {NodeType::kernel, "b", {0}},
                       {NodeType::kernel, "c", {1}},
                       {NodeType::kernel, "d", {0, 2}}});
  auto s = summarize(doc);
  CHECK(s.depth == 4);
  CHECK(s.width == 1);
}

TEST_CASE("summary counts nested bodies and typed edges") {
  auto doc = fork_join();
  doc.root.nodes[3].type = NodeType::child_graph;
  doc.root.nodes[3].bodies.push_back(fork_join().root);
  doc.root.nodes[1].dependencies[0].type = EdgeType::programmatic;
  auto s = summarize(doc);
  CHECK(s.nodes == 10);
  CHECK(s.top_nodes == 5);
  CHECK(s.nested_graphs == 1);
  CHECK(s.edges == 12);
  REQUIRE(s.edge_types.size() == 1);
  CHECK(s.edge_types[0].first == "programmatic");
  std::string text = format_summary(doc, s, "g.json");
  CHECK(text.find("10 (5 in the root graph, 5 in 1 nested graph)") != std::string::npos);
  CHECK(text.find("1 programmatic") != std::string::npos);
}

TEST_CASE("an empty graph summarizes to zeros") {
  GraphDocument doc;
  auto s = summarize(doc);
  CHECK(s.nodes == 0);
  CHECK(s.depth == 0);
  CHECK(s.width == 0);
  CHECK(!format_summary(doc, s, "e.json").empty());
}

TEST_CASE("the summary counts collective kernels and shows them only when there are some") {
  auto plain = summarize(fork_join());
  CHECK(plain.collectives == 0);
  CHECK(format_summary(fork_join(), plain, "g.json").find("collectives") == std::string::npos);
  auto doc = make_doc({{NodeType::kernel, "_Z4gemmv", {}},
                       {NodeType::kernel, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", {0}},
                       {NodeType::kernel, "_ZN4vllm26cross_device_reduce_1stageIfLi2EEEvv", {1}}});
  auto s = summarize(doc);
  CHECK(s.collectives == 2);
  CHECK(format_summary(doc, s, "g.json").find("collectives    2 (") != std::string::npos);
}
