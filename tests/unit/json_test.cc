#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <iterator>
#include <thread>

#include "graph_builder.h"
#include "inspect/core/error.h"
#include "inspect/analysis/fold.h"
#include "inspect/formats/graph_json.h"
#include "inspect/core/io.h"
#include "inspect/core/json_writer.h"
#include "inspect/formats/load.h"
#include "inspect/model/validate.h"

using namespace graphscope;
using graphscope::test::fork_join;

namespace {

// Runs f, which must throw a bad-input Error; returns its message.
template <typename F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    return e.what();
  }
  FAIL("no error thrown");
  return "";
}

std::string pytorch_fork_join() {
  // The keys of PyTorch's CUDAGraph.get_graph_data(), nothing else.
  return R"({"exec_graph_id": 7, "nodes": [
    {"index": 0, "node_type": "kernel", "tools_id": 30064771072, "graph_id": 7, "node_id": 0,
     "kernel_name": "_Z4forkv", "event_ptr": 0, "dependencies": [], "dependents": [1, 2]},
    {"index": 1, "node_type": "kernel", "tools_id": 30064771073, "graph_id": 7, "node_id": 1,
     "kernel_name": "_Z1av", "event_ptr": 0, "dependencies": [0], "dependents": [3]},
    {"index": 2, "node_type": "event_record", "tools_id": 30064771074, "graph_id": 7, "node_id": 2,
     "kernel_name": null, "event_ptr": 140000000000, "dependencies": [0], "dependents": [3]},
    {"index": 3, "node_type": "kernel", "tools_id": 30064771075, "graph_id": 7, "node_id": 3,
     "kernel_name": "_Z4joinv", "event_ptr": 0, "dependencies": [1, 2], "dependents": []}]})";
}

}  // namespace

TEST_CASE("json strings are escaped and invalid UTF-8 is replaced") {
  std::string out;
  append_json_string(out, std::string("a\"b\\c\n\x01 \xC3\xA9 \xFF", 12));
  CHECK(out == "\"a\\\"b\\\\c\\n\\u0001 \xC3\xA9 \\ufffd\"");
  CHECK(nlohmann::json::parse(out).get<std::string>().size() > 0);
}

TEST_CASE("graph documents round-trip through JSON unchanged") {
  GraphDocument doc = fork_join();
  doc.name = "forward";
  doc.device = DeviceInfo{"NVIDIA H100 80GB HBM3", 13000, 13000, 9, 0};
  doc.root.nodes[1].dependencies[0].type = EdgeType::programmatic;
  doc.root.nodes[1].dependencies[0].from_port = 1;
  doc.root.nodes[3].memset = MemsetInfo{0x7f, 1, 4096, 1, 4096, 0x7000};
  doc.extra_json.emplace_back("timings", R"({"capture_us": 12.5})");
  std::string text = write_graph_json(doc);
  GraphDocument back = read_graph_json(text, "t.json");
  validate_graph(back, "t.json");
  CHECK(write_graph_json(back) == text);
  CHECK(back.root.nodes[1].dependencies[0].type == EdgeType::programmatic);
  CHECK(back.root.nodes[1].dependencies[0].from_port == 1);
  CHECK(back.root.nodes[0].kernel->grid.x == 1);
  CHECK(back.root.nodes[4].kernel->grid.x == 5);
  CHECK(back.name == "forward");
  CHECK(back.device->driver_version == 13000);
}

TEST_CASE("our JSON carries every key of PyTorch's get_graph_data dict") {
  auto j = nlohmann::json::parse(write_graph_json(fork_join()));
  CHECK(j["schema"] == "graphscope.graph/1");
  CHECK(j["exec_graph_id"] == 7);
  for (const auto& n : j["nodes"])
    for (const char* k : {"index", "node_type", "tools_id", "graph_id", "node_id", "kernel_name", "event_ptr",
                          "dependencies", "dependents"})
      CHECK_MESSAGE(n.contains(k), k);
  CHECK(j["nodes"][3]["kernel_name"].is_null());
  CHECK(j["nodes"][0]["tools_id"] == (uint64_t(7) << 32));
  CHECK(j["nodes"][4]["dependencies"] == nlohmann::json::array({1, 2, 3}));
  CHECK(j["nodes"][0]["dependents"] == nlohmann::json::array({1, 2, 3}));
}

TEST_CASE("PyTorch's get_graph_data dict reads unchanged") {
  std::string text = pytorch_fork_join();
  CHECK(detect_graph_format(text, "p.json") == GraphFormat::pytorch_json);
  GraphDocument doc = parse_graph(text, "p.json");
  CHECK(doc.source_format == "pytorch");
  CHECK(doc.exec_graph_id == 7u);
  REQUIRE(doc.root.nodes.size() == 4);
  CHECK(doc.root.nodes[2].type == NodeType::event_record);
  CHECK(doc.root.nodes[2].event_ptr == 140000000000ull);
  CHECK(doc.root.nodes[3].dependencies.size() == 2);
  CHECK(doc.root.nodes[0].dependents == std::vector<uint32_t>{1, 2});
}

TEST_CASE("dependents are computed when a writer leaves them out") {
  std::string text = R"({"nodes": [
    {"index": 0, "node_type": "kernel", "node_id": 0, "kernel_name": "k", "dependencies": []},
    {"index": 1, "node_type": "kernel", "node_id": 1, "kernel_name": "k", "dependencies": [0]}]})";
  GraphDocument doc = parse_graph(text, "p.json");
  CHECK(doc.root.nodes[0].dependents == std::vector<uint32_t>{1});
}

TEST_CASE("an unknown node type is kept, not dropped") {
  std::string text = R"({"nodes": [{"index": 0, "node_type": "tensor_map_copy", "node_id": 0,
    "dependencies": [], "dependents": []}]})";
  GraphDocument doc = parse_graph(text, "p.json");
  CHECK(doc.root.nodes[0].type == NodeType::unknown);
  CHECK(doc.root.nodes[0].type_spelling == "tensor_map_copy");
  CHECK(write_graph_json(doc).find("tensor_map_copy") != std::string::npos);
}

TEST_CASE("malformed JSON is refused with the line and the reason") {
  std::string m = input_error([] { parse_graph("{\"nodes\": [\n{\"index\": 0,,}]}", "bad.json"); });
  CHECK(m.find("bad.json") == 0);
  CHECK(m.find("line 2") != std::string::npos);
  input_error([] { parse_graph(pytorch_fork_join().substr(0, 300), "cut.json"); });
  input_error([] { parse_graph("", "empty.json"); });
  input_error([] { parse_graph("   \n", "blank.json"); });
}

TEST_CASE("wrong value types are refused with the JSON path") {
  std::string m = input_error([] {
    parse_graph(R"({"nodes": [{"index": 0, "node_type": "kernel", "node_id": "zero", "dependencies": []}]})", "w.json");
  });
  CHECK(m == "w.json (nodes[0].node_id: is a string, expected an integer)");
  m = input_error([] { parse_graph(R"({"nodes": {"index": 0}})", "w.json"); });
  CHECK(m == "w.json (nodes: is an object, expected an array of nodes)");
  m = input_error([] {
    parse_graph(R"({"nodes": [{"index": 0, "node_type": "kernel", "node_id": 0, "dependencies": [-1]}]})", "w.json");
  });
  CHECK(m == "w.json (nodes[0].dependencies[0]: is negative (-1))");
  m = input_error([] { parse_graph(R"({"schema": "graphscope.graph/1", "nodes": [1]})", "w.json"); });
  CHECK(m == "w.json (nodes[0]: is an integer, expected a node object)");
}

TEST_CASE("huge numbers are refused, not truncated") {
  std::string m = input_error([] {
    parse_graph(R"({"nodes": [{"index": 0, "node_type": "kernel", "node_id": 4294967296, "dependencies": []}]})",
                "h.json");
  });
  CHECK(m.find("larger than 32 bits") != std::string::npos);
  m = input_error([] {
    parse_graph(R"({"exec_graph_id": 1e400, "nodes": []})", "h.json");
  });
  m = input_error([] {
    parse_graph(R"({"nodes": [{"index": 0, "node_type": "kernel", "node_id": 0, "tools_id": 99999999999999999999999,
      "dependencies": []}]})", "h.json");
  });
  CHECK(m.find("nodes[0].tools_id") != std::string::npos);
}

TEST_CASE("schema versions other than graphscope.graph/1 are refused") {
  std::string m = input_error([] { parse_graph(R"({"schema": "graphscope.graph/2", "nodes": []})", "v.json"); });
  CHECK(m == "v.json (schema: unknown major version 2 (this graphscope reads graphscope.graph/1))");
  m = input_error([] { parse_graph(R"({"schema": "graphscope.profile/1", "nodes": []})", "v.json"); });
  CHECK(m.find("is not a graph document") != std::string::npos);
  // Minor versions of the same major are read.
  CHECK(parse_graph(R"({"schema": "graphscope.graph/1.3", "nodes": []})", "v.json").root.nodes.empty());
}

TEST_CASE("deep nesting is refused without exhausting the stack") {
  std::string deep(100000, '[');
  input_error([&] { parse_graph("{\"nodes\": " + deep, "deep.json"); });
  // Graph bodies nested past the limit.
  std::string text = R"({"nodes": [)";
  for (int i = 0; i < 80; ++i)
    text += R"({"index": 0, "node_type": "child_graph", "node_id": 0, "dependencies": [], "bodies": [{"nodes": [)";
  for (int i = 0; i < 80; ++i) text += "]}]}";
  text += "]}";
  std::string m = input_error([&] { parse_graph(text, "nest.json"); });
  CHECK(m.find("nested deeper than") != std::string::npos);
}

TEST_CASE("the deepest nesting accepted reads back from its own JSON") {
  // 64 levels of child graphs below the root (found by fuzz_nvidia_dot: the
  // DOT reader accepted them, and its JSON was then nested too deep to read).
  GraphDocument doc;
  Graph* g = &doc.root;
  for (int depth = 0; depth <= kMaxNesting; ++depth) {
    Node n;
    n.type = depth < kMaxNesting ? NodeType::child_graph : NodeType::kernel;
    n.kernel_name = "_Z1kv";
    if (n.type == NodeType::kernel) n.kernel.emplace();
    g->nodes.push_back(n);
    if (depth < kMaxNesting) g = &g->nodes[0].bodies.emplace_back();
  }
  validate_graph(doc, "deep");
  GraphDocument back = parse_graph(write_graph_json(doc), "deep.json");
  CHECK(total_nodes(back.root) == size_t(kMaxNesting) + 1);
}

TEST_CASE("node lines of every length near the formatting buffer's size write valid JSON") {
  // A key that ended exactly at the end of the node buffer was written one
  // byte past it, and the next growth turned that byte into a NUL (found by
  // fuzz_nvidia_dot).
  for (size_t len = 900; len < 2200; ++len) {
    GraphDocument doc;
    Node n;
    n.type = NodeType::kernel;
    n.kernel_name = std::string(len, 'k');
    n.kernel.emplace();
    n.kernel->function_handle = 1;
    n.host.emplace();  // keys after the long name
    n.host->fn = 2;
    doc.root.nodes.push_back(n);
    std::string text = write_graph_json(doc);
    CAPTURE(len);
    REQUIRE(text.find('\0') == std::string::npos);
    CHECK(read_graph_json(text, "long.json").root.nodes.at(0).kernel_name.size() == len);
  }
}

TEST_CASE("nodes out of index order are refused") {
  std::string m = input_error([] {
    parse_graph(R"({"nodes": [{"index": 1, "node_type": "empty", "node_id": 0, "dependencies": []}]})", "o.json");
  });
  CHECK(m == "o.json (nodes[0].index: is 1, expected 0 (nodes are listed in index order))");
}

TEST_CASE("large graphs written in parallel slices read back node for node") {
  // Above the parallel threshold (20k nodes): a chain with one fork per 7,
  // a block of 7 that repeats.
  std::vector<graphscope::test::Spec> specs;
  for (uint32_t i = 0; i < 25000; ++i) {
    graphscope::test::Spec s{NodeType::kernel, i % 7 ? "_Z1av" : "_Z1bv", {}};
    if (i) s.deps.push_back(i - 1);
    if (i >= 7 && i % 7 == 0) s.deps.push_back(i - 7);
    specs.push_back(s);
  }
  GraphDocument doc = graphscope::test::make_doc(specs);
  for (auto& node : doc.root.nodes) node.kernel->grid = {1, 1, 1};  // same geometry in each block
  std::string text = write_graph_json(doc);
  GraphDocument back = read_graph_json(text, "big.json");
  validate_graph(back, "big.json");
  REQUIRE(back.root.nodes.size() == 25000);
  for (uint32_t i = 0; i < 25000; i += 997) {
    CHECK(back.root.nodes[i].index == i);
    CHECK(back.root.nodes[i].dependencies.size() == doc.root.nodes[i].dependencies.size());
  }
  CHECK(write_graph_json(back) == text);
  const auto parsed = nlohmann::json::parse(text);
  CHECK(parsed["nodes"].size() == 25000);
  // The repeats, found while the nodes were formatted and written, come
  // after them in a large graph's text (before them in a small one's, and
  // on a machine of one core, where nothing is formatted in slices).
  const graphscope::Folding f = graphscope::find_repeats(doc.root);
  REQUIRE(!f.repeats.empty());
  REQUIRE(parsed["repeats"].size() == f.repeats.size());
  CHECK(parsed["repeats"][0]["count"] == f.repeats[0].count);
  CHECK(parsed["repeats"][0]["members"].size() == f.repeats[0].copies.size());
  if (std::thread::hardware_concurrency() >= 2) CHECK(text.find("\"repeats\"") > text.find("\"nodes\""));
  // In pieces (the slices not joined), the same text.
  const std::vector<std::string> pieces = graphscope::write_graph_json_pieces(doc);
  std::string joined;
  for (const auto& p : pieces) joined += p;
  CHECK(joined == text);
  if (std::thread::hardware_concurrency() >= 2) CHECK(pieces.size() >= 3);
  // Written to a file while the slices are formatted: the same text, and
  // nothing left beside it.
  const auto dir = std::filesystem::temp_directory_path() / ("gs_json_file_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "big.json").string();
  graphscope::write_graph_json_file(path, doc);
  CHECK(graphscope::read_file(path) == text);
  CHECK(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()) == 1);
  CHECK_THROWS_AS(graphscope::write_graph_json_file((dir / "no" / "such.json").string(), doc), graphscope::Error);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a UTF-8 byte order mark before a graph document is ignored") {
  std::string json = graphscope::write_graph_json(graphscope::test::make_doc({{graphscope::NodeType::empty, "", {}}}, 3));
  CHECK(graphscope::parse_graph("\xEF\xBB\xBF" + json, "bom.json").root.nodes.size() == 1);
  // Only one, at the very start.
  CHECK_THROWS_AS(graphscope::parse_graph("\xEF\xBB\xBF\xEF\xBB\xBF" + json, "twice.json"), graphscope::Error);
}
