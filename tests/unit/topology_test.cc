#include <doctest/doctest.h>

#include <vector>

#include "graph_builder.h"
#include "inspect/core/error.h"
#include "inspect/model/topology.h"

using namespace graphscope;
using graphscope::test::make_doc;

namespace {
constexpr auto K = NodeType::kernel;
}

TEST_CASE("a chain's levels count nodes from the root, and depth is its length, width 1") {
  GraphDocument d = make_doc({{K, "a", {}}, {K, "b", {0}}, {K, "c", {1}}});
  Topology t = topology(d.root, "nodes", "g");
  CHECK(t.order == std::vector<uint32_t>{0, 1, 2});
  CHECK(t.level == std::vector<uint32_t>{1, 2, 3});
  CHECK(t.height == std::vector<uint32_t>{3, 2, 1});
  CHECK(t.depth == 3);
  CHECK(t.width == 1);
  CHECK(t.width_level == 1);
}

TEST_CASE("a node's level is set by its longest way from a root, not its shortest") {
  // 0 -> 1 -> 2 -> 4, and 0 -> 3 -> 4: node 4 is on level 4.
  GraphDocument d = make_doc({{K, "a", {}}, {K, "b", {0}}, {K, "c", {1}}, {K, "d", {0}}, {K, "e", {2, 3}}});
  Topology t = topology(d.root, "nodes", "g");
  CHECK(t.level == std::vector<uint32_t>{1, 2, 3, 2, 4});
  CHECK(t.height == std::vector<uint32_t>{4, 3, 2, 2, 1});
  CHECK(t.depth == 4);
  CHECK(t.width == 2);       // nodes 1 and 3
  CHECK(t.width_level == 2);
}

TEST_CASE("a wide fan-out is one level wide, and several roots are all level 1") {
  std::vector<test::Spec> specs = {{K, "root", {}}};
  for (uint32_t i = 0; i < 64; ++i) specs.push_back({K, "leaf", {0}});
  specs.push_back({K, "other root", {}});
  Topology t = topology(make_doc(specs).root, "nodes", "g");
  CHECK(t.depth == 2);
  CHECK(t.width == 64);
  CHECK(t.width_level == 2);
  CHECK(t.level[65] == 1);
  CHECK(t.order.front() == 0);
  CHECK(t.order[1] == 65);  // roots first, in index order
}

TEST_CASE("an empty graph has depth and width 0") {
  Topology t = topology(Graph{}, "nodes", "g");
  CHECK(t.order.empty());
  CHECK(t.depth == 0);
  CHECK(t.width == 0);
  CHECK(t.width_level == 0);
}

TEST_CASE("a cycle is named, node by node") {
  GraphDocument d = make_doc({{K, "a", {}}, {K, "b", {0, 2}}, {K, "c", {1}}});
  std::string what;
  try {
    topology(d.root, "nodes", "g.json");
  } catch (const Error& e) {
    what = e.what();
  }
  CHECK(what == "g.json (nodes[1]: on a dependency cycle (1 -> 2 -> 1))");
}
