#include "exec_update.h"

#include <algorithm>

namespace graphscope {

namespace {

std::string node_text(uint32_t index) { return "node " + std::to_string(index); }

bool same_kernel(const Node& a, const Node& b) {
  if (a.kernel_name != b.kernel_name || a.kernel.has_value() != b.kernel.has_value()) return false;
  if (!a.kernel) return true;
  const KernelInfo &x = *a.kernel, &y = *b.kernel;
  return x.grid == y.grid && x.block == y.block && x.shared_mem_bytes == y.shared_mem_bytes &&
         x.cluster.has_value() == y.cluster.has_value() && (!x.cluster || *x.cluster == *y.cluster) &&
         (x.args.empty() || y.args.empty() || x.args == y.args);
}

// A and B: std::optional<MemsetInfo> or Node's Boxed<MemsetInfo>, compared without copies.
template <class A, class B>
bool same_memset(const A& a, const B& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || (a->value == b->value && a->element_size == b->element_size && a->width == b->width &&
                a->height == b->height && a->bytes == b->bytes && a->dst == b->dst);
}

// A and B: std::optional<MemcpyInfo> or Node's Boxed<MemcpyInfo>, compared without copies.
template <class A, class B>
bool same_memcpy(const A& a, const B& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || (a->kind == b->kind && a->bytes == b->bytes && a->src == b->src && a->dst == b->dst);
}

// A and B: std::optional<HostInfo> or Node's Boxed<HostInfo>, compared without copies.
template <class A, class B>
bool same_host(const A& a, const B& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || (a->fn == b->fn && a->user_data == b->user_data);
}

bool same_graph(const Graph& a, const Graph& b) {
  if (a.nodes.size() != b.nodes.size()) return false;
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const Node &x = a.nodes[i], &y = b.nodes[i];
    if (x.type != y.type || x.dependencies != y.dependencies || !same_kernel(x, y) ||
        !same_memset(x.memset, y.memset) || !same_memcpy(x.memcpy, y.memcpy) || !same_host(x.host, y.host) ||
        x.event_ptr != y.event_ptr || x.bodies.size() != y.bodies.size())
      return false;
    for (size_t k = 0; k < x.bodies.size(); ++k)
      if (!same_graph(x.bodies[k], y.bodies[k])) return false;
  }
  return true;
}

// The demangled name of a kernel new to this document goes into its table.
void add_kernel_name(GraphDocument& doc, const std::string& mangled, const std::string& demangled) {
  if (mangled.empty() || demangled.empty()) return;
  for (const auto& kn : doc.kernel_names)
    if (kn.first == mangled) return;
  doc.kernel_names.emplace_back(mangled, demangled);
}

}  // namespace

UpdateEffect apply_node_update(GraphDocument& doc, uint32_t index, const NodeUpdate& u, std::string* why) {
  auto cannot = [&](std::string w) {
    if (why) *why = u.call + " changed " + node_text(index) + ": " + std::move(w);
    return UpdateEffect::not_recorded;
  };
  if (index >= doc.root.nodes.size()) return cannot("not a node of the graph it was instantiated from");
  Node& n = doc.root.nodes[index];
  if (u.enabled) {
    ExecVersion& v = doc.exec_version ? *doc.exec_version : doc.exec_version.emplace();
    auto it = std::find(v.disabled_nodes.begin(), v.disabled_nodes.end(), index);
    const bool was_enabled = it == v.disabled_nodes.end();
    if (was_enabled == *u.enabled) return UpdateEffect::unchanged;
    if (*u.enabled) v.disabled_nodes.erase(it);
    else v.disabled_nodes.insert(std::upper_bound(v.disabled_nodes.begin(), v.disabled_nodes.end(), index), index);
    return UpdateEffect::changed;
  }
  if (u.type == NodeType::unknown) return cannot(u.why_not.empty() ? "its parameters are not read" : u.why_not);
  if (u.type != n.type)
    return cannot("the call sets a " + std::string(to_string(u.type)) + " node, the document has a " +
                  std::string(to_string(n.type)));
  switch (u.type) {
    case NodeType::kernel: {
      if (!u.kernel) return cannot("its parameters are not read");
      if (u.kernel_name.empty()) return cannot("the kernel's name could not be read");
      Node want = n;
      want.kernel_name = u.kernel_name;
      KernelInfo k = *u.kernel;
      if (n.kernel) {
        // A setter does not change the cluster (a launch attribute). Function
        // handles are compared only where the document records them.
        k.cluster = n.kernel->cluster;
        if (!n.kernel->function_handle) k.function_handle.reset();
        else if (!k.function_handle) k.function_handle = n.kernel->function_handle;
      }
      want.kernel = k;
      if (n.kernel && same_kernel(n, want) && n.kernel->function_handle == k.function_handle)
        return UpdateEffect::unchanged;
      add_kernel_name(doc, want.kernel_name, u.demangled);
      n.kernel_name = std::move(want.kernel_name);
      n.kernel = std::move(want.kernel);
      return UpdateEffect::changed;
    }
    case NodeType::memset:
      if (!u.memset) return cannot("its parameters are not read");
      if (same_memset(n.memset, u.memset)) return UpdateEffect::unchanged;
      n.memset = u.memset;
      return UpdateEffect::changed;
    case NodeType::memcpy:
      if (!u.memcpy) return cannot("its parameters are not read");
      if (same_memcpy(n.memcpy, u.memcpy)) return UpdateEffect::unchanged;
      n.memcpy = u.memcpy;
      return UpdateEffect::changed;
    case NodeType::host: {
      if (!u.host) return cannot("its parameters are not read");
      if (same_host(n.host, u.host)) return UpdateEffect::unchanged;
      n.host = u.host;
      return UpdateEffect::changed;
    }
    case NodeType::event_record:
    case NodeType::wait_event:
      if (n.event_ptr == u.event_ptr) return UpdateEffect::unchanged;
      n.event_ptr = u.event_ptr;
      return UpdateEffect::changed;
    default:
      return cannot("graphscope does not read the parameters of " + std::string(to_string(u.type)) + " nodes");
  }
}

bool carry_exec_node_ids(const GraphDocument& instantiated, GraphDocument& updated, std::string* why) {
  const auto &from = instantiated.root.nodes;
  auto& to = updated.root.nodes;
  if (from.size() != to.size()) {
    if (why) *why = "the update's graph has " + std::to_string(to.size()) + " nodes, the instantiated one " +
                    std::to_string(from.size());
    return false;
  }
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i].type != to[i].type) {
      if (why) *why = node_text(uint32_t(i)) + " is a " + std::string(to_string(to[i].type)) +
                      " node in the update's graph and a " + std::string(to_string(from[i].type)) +
                      " node in the instantiated one";
      return false;
    }
  for (size_t i = 0; i < from.size(); ++i) {
    to[i].node_id = from[i].node_id;
    to[i].tools_id = from[i].tools_id;
    to[i].graph_id = from[i].graph_id;
  }
  updated.exec_graph_id = instantiated.exec_graph_id;
  return true;
}

bool same_recorded_content(const GraphDocument& a, const GraphDocument& b) {
  static const std::vector<uint32_t> none;
  const auto& da = a.exec_version ? a.exec_version->disabled_nodes : none;
  const auto& db = b.exec_version ? b.exec_version->disabled_nodes : none;
  return da == db && same_graph(a.root, b.root);
}

}  // namespace graphscope
