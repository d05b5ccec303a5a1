#include <doctest/doctest.h>

#include "graph_builder.h"
#include "inspect/core/error.h"
#include "inspect/formats/load.h"
#include "inspect/model/topology.h"
#include "inspect/model/validate.h"

using namespace graphscope;
using graphscope::test::fork_join;

namespace {
std::string problem(const GraphDocument& doc) {
  try {
    validate_graph(doc, "g.json");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("a well-formed graph validates") { CHECK(problem(fork_join()) == ""); }

TEST_CASE("a dependency on a node that does not exist names the node and field") {
  auto doc = fork_join();
  doc.root.nodes[4].dependencies.push_back({9});
  CHECK(problem(doc) == "g.json (nodes[4].dependencies[3]: node 9 does not exist: its graph has 5 nodes)");
}

TEST_CASE("dependents that disagree with dependencies are refused") {
  auto doc = fork_join();
  doc.root.nodes[1].dependents.clear();
  CHECK(problem(doc) == "g.json (nodes[1].dependents: does not list 4, but nodes[4].dependencies lists 1)");
  doc = fork_join();
  doc.root.nodes[2].dependents.push_back(3);
  CHECK(problem(doc) == "g.json (nodes[2].dependents: lists 3, but nodes[3].dependencies does not list 2)");
}

TEST_CASE("a cycle is refused with the nodes on it") {
  auto doc = fork_join();
  doc.root.nodes[0].dependencies.push_back({4});
  link_dependents(doc.root);
  CHECK(problem(doc) == "g.json (nodes[0]: on a dependency cycle (0 -> 1 -> 4 -> 0))");
}

TEST_CASE("self dependencies and duplicate edges are refused") {
  auto doc = fork_join();
  doc.root.nodes[2].dependencies.push_back({2});
  CHECK(problem(doc).find("the node depends on itself") != std::string::npos);
  doc = fork_join();
  doc.root.nodes[4].dependencies.push_back({1});
  link_dependents(doc.root);
  CHECK(problem(doc) == "g.json (nodes[4].dependencies: lists node 1 twice)");
}

TEST_CASE("tools ids must be (graph_id << 32) | node_id") {
  auto doc = fork_join();
  doc.root.nodes[3].tools_id = 12345;
  CHECK(problem(doc) == "g.json (nodes[3].tools_id: 12345 is not (graph_id << 32) | node_id = 30064771075)");
  doc = fork_join();
  doc.root.nodes[2].node_id = 1;
  doc.root.nodes[2].tools_id = (uint64_t(7) << 32) | 1;
  CHECK(problem(doc) == "g.json (nodes[2].node_id: 1 is used by an earlier node too)");
}

TEST_CASE("a repeated node id is found whether ids are dense or sparse") {
  for (uint32_t base : {0u, 3000000000u}) {
    CAPTURE(base);
    auto doc = fork_join();
    for (auto& n : doc.root.nodes) {
      n.node_id += base;
      n.tools_id.reset();
    }
    CHECK(problem(doc) == "");
    doc.root.nodes[3].node_id = doc.root.nodes[1].node_id;
    CHECK(problem(doc) == "g.json (nodes[3].node_id: " + std::to_string(base + 1) + " is used by an earlier node too)");
  }
}

TEST_CASE("the first node with a problem is named, whichever check finds it") {
  auto doc = fork_join();
  doc.root.nodes[3].node_id = 0;
  doc.root.nodes[3].tools_id.reset();
  doc.root.nodes[2].dependencies.push_back({9});
  CHECK(problem(doc) == "g.json (nodes[2].dependencies[1]: node 9 does not exist: its graph has 5 nodes)");
  doc.root.nodes[2].dependencies.pop_back();
  doc.root.nodes[3].index = 7;
  CHECK(problem(doc) == "g.json (nodes[3].index: is 7, expected 3)");
}

TEST_CASE("errors inside nested bodies carry the full path") {
  auto doc = fork_join();
  auto inner = fork_join().root;
  inner.nodes[0].dependencies.push_back({7});
  doc.root.nodes[3].type = NodeType::child_graph;
  doc.root.nodes[3].bodies.push_back(inner);
  CHECK(problem(doc) ==
        "g.json (nodes[3].bodies[0].nodes[0].dependencies[0]: node 7 does not exist: its graph has 5 nodes)");
}

TEST_CASE("only child graph and conditional nodes have bodies") {
  auto doc = fork_join();
  doc.root.nodes[1].bodies.push_back(fork_join().root);
  CHECK(problem(doc) == "g.json (nodes[1].bodies: a kernel node has no bodies)");
}

TEST_CASE("topological order puts every node after its dependencies") {
  auto doc = fork_join();
  auto order = topological_order(doc.root, "nodes", "g");
  REQUIRE(order.size() == 5);
  std::vector<size_t> pos(5);
  for (size_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  for (const auto& n : doc.root.nodes)
    for (const auto& d : n.dependencies) CHECK(pos[d.from] < pos[n.index]);
}
