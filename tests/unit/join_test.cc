// join.h: which exec graph, which node and which replay each record is,
// computed once for the analysis and the trace writer.
#include <doctest/doctest.h>

#include <string>

#include "graph_builder.h"
#include "inspect/core/error.h"
#include "inspect/analysis/join.h"

using namespace graphscope;
using graphscope::test::fork_join;

namespace {

struct Records {
  Trace t;
  // A record of node `local` of exec graph `graph`, launch `corr`; `packed`:
  // the graph node id carries the graph id in its high bits (CUPTI's form),
  // else only the local id, with "graph id" beside it (newer Kineto).
  void add(std::optional<uint32_t> graph, uint32_t local, uint32_t corr, uint64_t start, bool packed = true,
           bool with_graph_id = true) {
    Activity a;
    a.kind = ActivityKind::kernel;
    a.correlation = corr;
    a.start_ns = start;
    a.end_ns = start + 100;
    if (graph) {
      if (with_graph_id) a.graph_id = *graph;
      a.graph_node_id = packed ? (uint64_t(*graph) << 32) | local : uint64_t(local);
    }
    t.activities.push_back(a);
  }
};

std::string error_of(const GraphDocument& doc, const Trace& t, JoinOptions o = {}) {
  try {
    join_trace(doc, t, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("records join their nodes by local id, in either id form") {
  GraphDocument doc = fork_join();  // exec graph 7, local ids = indices
  Records r;
  r.add(7, 0, 1, 0);                // packed, with graph id
  r.add(7, 1, 1, 200, false);       // lower 32 bits with graph id
  r.add(7, 2, 1, 300, true, false); // packed without graph id: the high bits say which graph
  r.add(7, 9, 1, 400);              // no such node
  r.add(std::nullopt, 0, 0, 500);   // outside any graph
  r.add(8, 3, 2, 600);              // another exec graph
  TraceJoin j = join_trace(doc, r.t);
  CHECK(j.exec_graph_id == 7);
  CHECK(j.node_of == std::vector<uint32_t>{0, 1, 2, kNoNode, kNoNode, kNoNode});
  CHECK(j.unmatched_records == 1);
  CHECK(j.other_records == 2);
  CHECK(j.replays == 1);
  CHECK(j.replay_of == std::vector<uint32_t>{0, 0, 0, 0, kNoNode, kNoNode});
}

TEST_CASE("replays are numbered by their first start, by launch correlation or else by occurrence") {
  GraphDocument doc = fork_join();
  Records r;
  r.add(7, 0, 50, 1000);  // launch 50 runs after launch 40
  r.add(7, 1, 50, 1200);
  r.add(7, 0, 40, 10);
  r.add(7, 1, 40, 200);
  TraceJoin j = join_trace(doc, r.t);
  CHECK(j.replays == 2);
  CHECK(j.replay_of == std::vector<uint32_t>{1, 1, 0, 0});
  // Without correlation ids, a node's k-th record (by start) is in replay k.
  Records u;
  u.add(7, 0, 0, 1000);
  u.add(7, 0, 0, 10);
  u.add(7, 1, 0, 200);
  u.add(7, 1, 0, 1200);
  TraceJoin k = join_trace(doc, u.t);
  CHECK(k.replays == 2);
  CHECK(k.replay_of == std::vector<uint32_t>{1, 0, 0, 1});
}

TEST_CASE("the exec graph: asked for, the document's, the trace's only one, else say which") {
  GraphDocument doc = fork_join();
  Records r;
  r.add(7, 0, 1, 0);
  r.add(8, 0, 2, 0);
  CHECK(join_trace(doc, r.t).exec_graph_id == 7);  // the document's
  CHECK(join_trace(doc, r.t, JoinOptions{8u}).exec_graph_id == 8);
  doc.exec_graph_id.reset();
  CHECK(error_of(doc, r.t) == "several exec graphs in the trace (pick one with --exec-graph-id; the trace has 7 (1 "
                              "records), 8 (1 records))");
  CHECK(error_of(doc, r.t, JoinOptions{9u}) ==
        "trace (no record of exec graph 9; the trace has 7 (1 records), 8 (1 records))");
  Records none;
  none.add(std::nullopt, 0, 0, 0);
  CHECK(error_of(doc, none.t) ==
        "trace (no record has a graph id or a correlation id: nothing to join)");
  Records one;
  one.add(8, 1, 3, 0);
  CHECK(join_trace(doc, one.t).exec_graph_id == 8);  // the trace's only one
}
