// graph_summary FILE [OTHER]: what graphscope's library says about a graph
// document (any format `graphscope dump` reads), and, given a second one,
// whether the two differ.
#include <graphscope/inspect/analysis/diff.h>
#include <graphscope/inspect/core/error.h>
#include <graphscope/inspect/formats/load.h>
#include <graphscope/inspect/analysis/summary.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: graph_summary FILE [OTHER]\n");
    return 2;
  }
  try {
    graphscope::GraphDocument doc = graphscope::load_graph(argv[1]);
    std::fputs(graphscope::format_summary(doc, graphscope::summarize(doc), argv[1]).c_str(), stdout);
    if (argc > 2) {
      graphscope::GraphDiff d = graphscope::diff_graphs(doc, graphscope::load_graph(argv[2]), {});
      std::printf("%s\n", d.same() ? "same" : "differ");
      return d.same() ? 0 : 1;
    }
  } catch (const graphscope::Error& e) {
    std::fprintf(stderr, "graph_summary: %s\n", e.what());
    return static_cast<int>(e.code());
  }
  return 0;
}
