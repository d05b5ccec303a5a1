// Small graphs built in memory for unit tests.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "inspect/model/graph.h"

namespace graphscope::test {

/// One node: its type, kernel name (kernels only) and the indices it depends on.
struct Spec {
  NodeType type;
  std::string kernel;
  std::vector<uint32_t> deps;
};

/// A graph of the given nodes with ids as an instantiated graph has them
/// (exec graph id `exec`, template graph id `tmpl`), dependents linked.
inline GraphDocument make_doc(const std::vector<Spec>& specs, uint32_t exec = 7, uint32_t tmpl = 3) {
  GraphDocument doc;
  doc.exec_graph_id = exec;
  doc.root.graph_id = tmpl;
  doc.source_format = "graphscope";
  for (uint32_t i = 0; i < specs.size(); ++i) {
    Node n;
    n.index = i;
    n.node_id = i;
    n.type = specs[i].type;
    n.graph_id = exec;
    n.tools_id = (uint64_t(exec) << 32) | i;
    n.template_tools_id = (uint64_t(tmpl) << 32) | i;
    if (n.type == NodeType::kernel) {
      n.kernel_name = specs[i].kernel;
      KernelInfo k;
      k.grid = {uint32_t(i + 1), 1, 1};
      k.block = {128, 1, 1};
      n.kernel = k;
    }
    for (uint32_t d : specs[i].deps) n.dependencies.push_back({d});
    doc.root.nodes.push_back(std::move(n));
  }
  link_dependents(doc.root);
  return doc;
}

/// Fork-join: 0 -> {1, 2, 3} -> 4.
inline GraphDocument fork_join() {
  return make_doc({{NodeType::kernel, "_Z4forkv", {}},
                   {NodeType::kernel, "_Z5scalePfif", {0}},
                   {NodeType::kernel, "_Z5scalePfif", {0}},
                   {NodeType::memset, "", {0}},
                   {NodeType::kernel, "_Z4joinv", {1, 2, 3}}});
}

}  // namespace graphscope::test
