#include <doctest/doctest.h>

#include "graph_builder.h"
#include "inspect/analysis/summary.h"

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

namespace {
size_t count_lines(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}
}  // namespace

TEST_CASE("hostile names reach the summary escaped, whole, and on their own lines") {
  const std::string nul_name("fj_square\0after a NUL", 21);
  auto plain = make_doc({{NodeType::kernel, "fj_load", {}}, {NodeType::kernel, "fj_square", {0}}});
  auto doc = make_doc({{NodeType::kernel, "fj_load\x1b]0;title\x07", {}},
                       {NodeType::kernel, nul_name, {0}},
                       {NodeType::kernel, "fj_join\nnot a line\t\x7f\xC2\x85\xFF", {1}}});
  doc.name = "g\x1b[2J";
  plain.name = "g";
  Origin o;
  o.modules.push_back({"layer\n0", "Block\x07"});
  doc.root.nodes[0].origin = std::make_shared<Origin>(o);
  o.modules.back() = {"layer", "Block"};
  plain.root.nodes[0].origin = std::make_shared<Origin>(o);
  const std::string text = format_summary(doc, summarize(doc), "in\x1b.json");
  // The same lines as a document with ordinary names.
  CHECK(count_lines(text) ==
        count_lines(format_summary(plain, summarize(plain), "in.json")) + 1);  // one more kernel
  for (char c : text)
    CHECK_MESSAGE((c == '\n' || (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f)), int(c));
  CHECK(text.find("graph          in\\x1b.json (graphscope)\n") != std::string::npos);
  CHECK(text.find("name           g\\x1b[2J\n") != std::string::npos);
  CHECK(text.find("fj_load\\x1b]0;title\\x07\n") != std::string::npos);
  CHECK(text.find("fj_square\\x00after a NUL\n") != std::string::npos);
  CHECK(text.find("fj_join\\nnot a line\\t\\x7f\\u0085\\xff\n") != std::string::npos);
  CHECK(text.find("layer\\n0 (Block\\x07)") != std::string::npos);
}
