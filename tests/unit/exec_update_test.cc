// Exec graphs changed after instantiation (exec_update.h): what each setter
// does to the document of the version before, ids carried over
// cudaGraphExecUpdate, and the versions an attached session records
// (attach_session.h) with their JSON.
#include <doctest/doctest.h>

#include <string>

#include "graph_builder.h"
#include "inspect/formats/attach_json.h"
#include "inspect/runs/attach_session.h"
#include "inspect/model/exec_update.h"
#include "inspect/formats/graph_json.h"

using namespace graphscope;
using test::make_doc;

namespace {

GraphDocument chain() {
  GraphDocument d = make_doc({{NodeType::memset, "", {}}, {NodeType::kernel, "_Z3addPii", {0}},
                              {NodeType::kernel, "_Z3addPii", {1}}, {NodeType::event_record, "", {2}}});
  MemsetInfo m;
  m.value = 0;
  m.element_size = 4;
  m.width = 64;
  m.bytes = 256;
  m.dst = 0x1000;
  d.root.nodes[0].memset = m;
  d.root.nodes[3].event_ptr = 0xe1;
  return d;
}

NodeUpdate kernel_call(const std::string& name, uint32_t grid) {
  NodeUpdate u;
  u.call = "cuGraphExecKernelNodeSetParams";
  u.type = NodeType::kernel;
  u.kernel_name = name;
  KernelInfo k;
  k.grid = {grid, 1, 1};
  k.block = {128, 1, 1};
  k.function_handle = 0xf00;  // the call names a function; the document records none
  u.kernel = k;
  return u;
}

}  // namespace

TEST_CASE("a kernel setter changes name and geometry, and only when they differ") {
  GraphDocument d = chain();
  std::string why;
  // Node 1 has grid 2 (make_doc: index + 1), block 128: the same again changes nothing.
  CHECK(apply_node_update(d, 1, kernel_call("_Z3addPii", 2), &why) == UpdateEffect::unchanged);
  CHECK(same_recorded_content(d, chain()));
  CHECK(apply_node_update(d, 1, kernel_call("_Z5scalePii", 4), &why) == UpdateEffect::changed);
  CHECK(d.root.nodes[1].kernel_name == "_Z5scalePii");
  CHECK(d.root.nodes[1].kernel->grid.x == 4);
  CHECK_FALSE(d.root.nodes[1].kernel->function_handle.has_value());
  CHECK_FALSE(same_recorded_content(d, chain()));
  // The demangled name of a kernel new to the document joins its table.
  NodeUpdate u = kernel_call("_Z4cubePii", 4);
  u.demangled = "cube(int*, int)";
  CHECK(apply_node_update(d, 2, u, &why) == UpdateEffect::changed);
  REQUIRE(d.kernel_names.size() == 1);
  CHECK(d.kernel_names[0].second == "cube(int*, int)");
  // A name that could not be read is not guessed.
  CHECK(apply_node_update(d, 2, kernel_call("", 8), &why) == UpdateEffect::not_recorded);
  CHECK(why.find("name could not be read") != std::string::npos);
  CHECK(d.root.nodes[2].kernel->grid.x == 4);
}

TEST_CASE("memset, event and enabled setters, and calls the document cannot show say why") {
  GraphDocument d = chain();
  std::string why;
  NodeUpdate m;
  m.call = "cuGraphExecMemsetNodeSetParams";
  m.type = NodeType::memset;
  m.memset = *d.root.nodes[0].memset;
  CHECK(apply_node_update(d, 0, m, &why) == UpdateEffect::unchanged);
  m.memset->value = 10;
  CHECK(apply_node_update(d, 0, m, &why) == UpdateEffect::changed);
  CHECK(d.root.nodes[0].memset->value == 10);

  NodeUpdate e;
  e.call = "cuGraphExecEventRecordNodeSetEvent";
  e.type = NodeType::event_record;
  e.event_ptr = 0xe2;
  CHECK(apply_node_update(d, 3, e, &why) == UpdateEffect::changed);
  CHECK(d.root.nodes[3].event_ptr == 0xe2);

  NodeUpdate off;
  off.call = "cuGraphNodeSetEnabled";
  off.enabled = false;
  CHECK(apply_node_update(d, 2, off, &why) == UpdateEffect::changed);
  CHECK(apply_node_update(d, 2, off, &why) == UpdateEffect::unchanged);
  REQUIRE(d.exec_version.has_value());
  CHECK(d.exec_version->disabled_nodes == std::vector<uint32_t>{2});
  off.enabled = true;
  CHECK(apply_node_update(d, 2, off, &why) == UpdateEffect::changed);
  CHECK(d.exec_version->disabled_nodes.empty());

  // The wrong node type, an unknown node, parameters not read.
  CHECK(apply_node_update(d, 1, m, &why) == UpdateEffect::not_recorded);
  CHECK(why == "cuGraphExecMemsetNodeSetParams changed node 1: the call sets a memset node, the document has a kernel");
  CHECK(apply_node_update(d, UINT32_MAX, m, &why) == UpdateEffect::not_recorded);
  NodeUpdate child;
  child.call = "cuGraphExecChildGraphNodeSetParams";
  child.why_not = "graphscope does not read the new parameters of child graph nodes";
  CHECK(apply_node_update(d, 1, child, &why) == UpdateEffect::not_recorded);
  CHECK(why == "cuGraphExecChildGraphNodeSetParams changed node 1: graphscope does not read the new parameters of "
               "child graph nodes");
}

TEST_CASE("cudaGraphExecUpdate's graph takes the ids of the graph the exec was instantiated from") {
  GraphDocument before = chain();
  GraphDocument after = make_doc({{NodeType::memset, "", {}}, {NodeType::kernel, "_Z3addPii", {0}},
                                  {NodeType::kernel, "_Z3addPii", {1}}, {NodeType::event_record, "", {2}}},
                                 /*exec=*/7, /*tmpl=*/9);
  for (auto& n : after.root.nodes) n.node_id += 40, n.tools_id = (uint64_t(7) << 32) | n.node_id;
  std::string why;
  REQUIRE(carry_exec_node_ids(before, after, &why));
  for (size_t i = 0; i < after.root.nodes.size(); ++i) {
    CHECK(after.root.nodes[i].tools_id == before.root.nodes[i].tools_id);
    CHECK(after.root.nodes[i].node_id == before.root.nodes[i].node_id);
  }
  GraphDocument other = make_doc({{NodeType::kernel, "k", {}}, {NodeType::kernel, "k", {0}}});
  CHECK_FALSE(carry_exec_node_ids(before, other, &why));
  CHECK(why == "the update's graph has 2 nodes, the instantiated one 4");
}

TEST_CASE("a document's version survives its JSON") {
  GraphDocument d = chain();
  ExecVersion v;
  v.version = 3;
  v.updated_by = {"cuGraphExecUpdate", "cuGraphExecKernelNodeSetParams"};
  v.not_recorded = {"cuGraphExecChildGraphNodeSetParams changed node 1: not read"};
  v.disabled_nodes = {2};
  d.exec_version = v;
  GraphDocument back = read_graph_json(write_graph_json(d), "t.json");
  REQUIRE(back.exec_version.has_value());
  CHECK(back.exec_version->version == 3);
  CHECK(back.exec_version->updated_by == v.updated_by);
  CHECK(back.exec_version->not_recorded == v.not_recorded);
  CHECK(back.exec_version->disabled_nodes == v.disabled_nodes);
  CHECK(write_graph_json(back) == write_graph_json(d));
  // Version 0 is no version: kept aside as unknown JSON, not read.
  std::string text = write_graph_json(d);
  size_t at = text.find('3', text.find("\"version\"", text.find("\"exec_version\"")));
  REQUIRE(at != std::string::npos);
  text[at] = '0';
  CHECK_FALSE(read_graph_json(text, "t.json").exec_version.has_value());
}

TEST_CASE("a session records each version of an exec graph with its own file, launches and profile") {
  AttachConfig c;
  c.profile = true;
  c.skip_replays = 0;
  AttachSession s(c, 42, {"app"});
  GraphDocument d = chain();
  const size_t g1 = s.dumped(7, AttachSession::summary_of(d));
  CHECK(s.launched(g1, 100));
  ExecVersion v;
  v.version = 2;
  v.updated_by = {"cuGraphExecUpdate"};
  d.exec_version = v;
  std::optional<size_t> g2 = s.updated(g1, d);
  REQUIRE(g2.has_value());
  CHECK(s.launched(*g2, 101));
  s.unchanged_update(*g2);
  const AttachIndex& x = s.index();
  REQUIRE(x.graphs.size() == 2);
  CHECK(x.graphs[0].file == "graph-7.json");
  CHECK(x.graphs[0].superseded);
  CHECK(x.graphs[1].file == "graph-7.v2.json");
  CHECK(x.graphs[1].version == 2);
  CHECK(x.graphs[1].updated_by == std::vector<std::string>{"cuGraphExecUpdate"});
  CHECK(x.graphs[1].unchanged_updates == 1);
  CHECK(x.graphs[0].launches == 1);
  CHECK(x.graphs[1].launches == 1);
  ProfileReport r;
  s.profiled(*g2, r);
  CHECK(x.graphs[1].profile_file == "profile-7.v2.json");
  CHECK(x.graphs[1].trace_file == "trace-7.v2.json");

  // The index says it all and reads back the same.
  AttachIndex back = read_attach_index(write_attach_index(x), "index.json");
  REQUIRE(back.graphs.size() == 2);
  CHECK(back.graphs[0].version == 1);
  CHECK(back.graphs[0].superseded);
  CHECK(back.graphs[1].version == 2);
  CHECK(back.graphs[1].updated_by == x.graphs[1].updated_by);
  CHECK(back.graphs[1].unchanged_updates == 1);
  CHECK(write_attach_index(back) == write_attach_index(x));

  // Past the limit, the last version stays and says that later ones are not recorded.
  size_t g = *g2;
  for (uint32_t k = 3; k <= AttachSession::kMaxExecVersions; ++k) {
    d.exec_version->version = k;
    g = *s.updated(g, d);
  }
  d.exec_version->version = AttachSession::kMaxExecVersions + 1;
  CHECK_FALSE(s.updated(g, d).has_value());
  CHECK_FALSE(s.updated(g, d).has_value());
  REQUIRE(s.index().graphs[g].not_recorded.size() == 1);
  CHECK(s.index().graphs[g].not_recorded[0].find("later updates of this exec graph are not recorded") !=
        std::string::npos);
}
