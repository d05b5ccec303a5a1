#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <set>
#include <string>

#include "graph_builder.h"
#include "inspect/formats/chrome_trace.h"
#include "inspect/analysis/diff.h"
#include "inspect/render/html_report.h"
#include "inspect/formats/load.h"
#include "inspect/analysis/profile.h"
#include "inspect/core/text.h"
#include "page_data.h"
#include "test_data.h"

using namespace graphscope;
using graphscope::test::data_path;
using graphscope::test::make_doc;
using graphscope::test::page_data;

namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

struct Profiled {
  GraphDocument doc;
  Trace trace;
  TraceJoin join;
  ProfileReport report;
  explicit Profiled(const std::string& graph, const std::string& trace_file) {
    doc = load_graph(data_path(graph));
    InputText text(data_path(trace_file));
    trace = read_chrome_trace(text.view(), trace_file);
    ProfileOptions o;
    join = join_trace(doc, trace, join_options(o));
    report = analyze_profile(doc, trace, join, o);
  }
  ReportGraph graph() const {
    ReportGraph g;
    g.label = "g";
    g.doc = &doc, g.profile = &report, g.trace = &trace, g.join = &join;
    return g;
  }
};

}  // namespace

TEST_CASE("a report holds every node, its profile, and an account that adds up") {
  Profiled p("profiles/copies.c8.graph.json", "profiles/copies.c8.trace.json");
  HtmlReportInput in;
  in.title = "copies";
  in.graphs.push_back(p.graph());
  const std::string html = write_html_report(in);
  CHECK(count(html, "<script") == 2);
  CHECK(count(html, "</script>") == 2);
  CHECK(html.find("http://") == html.find("http://www.w3.org"));  // no address but the SVG namespaces
  const auto d = page_data(html);
  const auto& g = d["graphs"][0];
  const size_t n = p.doc.root.nodes.size();
  CHECK(g["nodes"] == n);
  for (const char* col : {"type", "name", "what", "module", "origin", "deps", "shape", "repeat", "copy"})
    CHECK_MESSAGE(g[col].size() == n, col);
  const auto& pr = g["profile"];
  for (const char* col : {"start", "end", "ready", "delay", "verdict", "blocker", "cause", "lane", "work_ns", "wait_ns"})
    CHECK_MESSAGE(pr[col].size() == n, col);
  size_t fake = 0;
  for (const auto& v : pr["verdict"]) fake += v == 2;
  CHECK(fake == p.report.fake);
  CHECK(fake > 0);
  int64_t sum = 0;
  for (const auto& part : pr["account"]["parts"]) sum += part["ns"].get<int64_t>();
  CHECK(sum == pr["account"]["makespan_ns"].get<int64_t>());
  CHECK(sum == p.report.account.makespan_ns);
  // The timeline: four numbers per record of the account's replay.
  size_t records = 0;
  for (size_t i = 0; i < p.join.replay_of.size(); ++i) records += p.join.replay_of[i] == p.report.account.replay;
  CHECK(pr["timeline"]["items"].size() == 4 * records);
  // Every shape a node names is drawn in the picture.
  const std::string svg = g["svg"];
  for (const auto& s : g["shape"]) {
    REQUIRE(s.get<int64_t>() >= 0);
    const std::string name = d["strings"][s.get<size_t>()];
    CHECK_MESSAGE(svg.find("<title>" + name + "</title>") != std::string::npos, name);
  }
}

TEST_CASE("a folded report points the nodes of later copies at copy 1's shapes") {
  Profiled p("origins/llama_profile/graph-2.json", "origins/llama_profile/trace-2.json");
  HtmlReportInput in;
  in.graphs.push_back(p.graph());
  const auto d = page_data(write_html_report(in));
  const auto& g = d["graphs"][0];
  REQUIRE(g["repeats"].size() >= 1);
  CHECK(g["repeats"][0]["count"] == 8);
  CHECK(g["repeats"][0]["module_type"] == "LlamaDecoderLayer");
  // Nodes in the same place of different copies share a shape.
  std::map<std::pair<int, int>, std::set<int64_t>> shapes;  // (repeat, place) -> shapes
  std::map<std::pair<int, int>, int> place;                 // (repeat, copy) -> next place
  for (size_t v = 0; v < g["nodes"].get<size_t>(); ++v) {
    const int r = g["repeat"][v], c = g["copy"][v];
    if (r < 0) continue;
    shapes[{r, place[{r, c}]++}].insert(g["shape"][v].get<int64_t>());
  }
  CHECK(!shapes.empty());
  for (const auto& [k, s] : shapes) CHECK(s.size() == 1);
  // Every kernel has a module from its origin.
  size_t kernels = 0, with_module = 0;
  for (size_t v = 0; v < g["nodes"].get<size_t>(); ++v)
    if (g["type"][v] == 0) ++kernels, with_module += g["module"][v].get<int64_t>() >= 0;
  CHECK(kernels > 300);
  CHECK(with_module == kernels);
}

TEST_CASE("a hostile kernel name cannot end the page's script") {
  const std::string evil = "</script><script>alert(1)</script><!--<script>";
  GraphDocument doc = make_doc({{NodeType::kernel, evil, {}}, {NodeType::kernel, "_Z1kv", {0}}});
  HtmlReportInput in;
  in.title = "</title><script>alert(2)</script>";
  ReportGraph g;
  g.label = evil;
  g.doc = &doc;
  in.graphs.push_back(g);
  const std::string html = write_html_report(in);
  CHECK(count(html, "<script") == 2);
  CHECK(count(html, "</script>") == 2);
  CHECK(count(html, "<!--") == 0);
  const auto d = page_data(html);
  CHECK(d["title"] == in.title);
  CHECK(d["graphs"][0]["label"] == evil);
  bool named = false;
  for (const auto& s : d["strings"]) named |= s.get<std::string>().find(evil) != std::string::npos;
  CHECK(named);
}

TEST_CASE(
    "hostile names leave the page and its picture with XML characters only, the names whole in its data") {
  const std::string fffe = "fj_scale\xEF\xBF\xBE\xEF\xBF\xBF", controls = "fj_load\x7f\xC2\x85\xC2\x9B[31m";
  GraphDocument doc = make_doc({{NodeType::kernel, fffe, {}},
                                {NodeType::kernel, controls, {0}},
                                {NodeType::kernel, "k &#xFFFF; &#0;", {1}}});
  doc.name = "g\xEF\xBF\xBF";
  HtmlReportInput in;
  in.title = "t\xEF\xBF\xBE\x1b";
  ReportGraph g;
  g.label = fffe;
  g.doc = &doc;
  in.graphs.push_back(g);
  const std::string html = write_html_report(in);
  // Every character of the page, and of the SVG in its data, is one XML
  // (and HTML) takes: no U+FFFE or U+FFFF, no DEL or C1 control raw.
  auto clean = [](const std::string& s) {
    for (size_t i = 0; i < s.size();) {
      const Utf8Char u = utf8_char(s, i);
      if (!u.len || !xml_char(u.cp) || (u.cp >= 0x7f && u.cp <= 0x9f))
        return "U+" + std::to_string(u.cp) + " at " + std::to_string(i);
      i += u.len;
    }
    return std::string();
  };
  CHECK(clean(html) == "");
  const auto d = page_data(html);
  const std::string svg = d["graphs"][0]["svg"];
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(clean(svg) == "");
  CHECK(svg.find("&amp;#xFFFF;") != std::string::npos);  // shown as written, not decoded
  // The data still holds each name as the document has it.
  CHECK(d["graphs"][0]["label"] == fffe);
  bool named_fffe = false, named_controls = false;
  for (const auto& x : d["strings"]) {
    named_fffe |= x.get<std::string>().find(fffe) != std::string::npos;
    named_controls |= x.get<std::string>().find(controls) != std::string::npos;
  }
  CHECK(named_fffe);
  CHECK(named_controls);
}

TEST_CASE("a diff report marks what only one side has and what changed") {
  GraphDocument a = load_graph(data_path("captures/forkjoin.json"));
  GraphDocument b = load_graph(data_path("captures/wide.json"));
  GraphDiff diff = diff_graphs(a, b);
  HtmlReportInput in;
  ReportGraph ga, gb;
  ga.doc = &a, gb.doc = &b;
  in.graphs = {ga, gb};
  in.diff = &diff;
  in.diff_text = "text";
  const auto d = page_data(write_html_report(in));
  size_t removed = 0, added = 0, changed = 0;
  for (const auto& grp : diff.root.removed) removed += grp.nodes.size();
  for (const auto& grp : diff.root.added) added += grp.nodes.size();
  for (const auto& grp : diff.root.changed) changed += grp.nodes.size();
  size_t ma = 0, mb = 0, ca = 0;
  for (const auto& m : d["diff"]["a_mark"]) ma += m == 1, ca += m == 2;
  for (const auto& m : d["diff"]["b_mark"]) mb += m == 1;
  CHECK(ma == removed);
  CHECK(mb == added);
  CHECK(ca == changed);
  CHECK(removed + added + changed > 0);
  CHECK(d["diff"]["a_to_b"].size() == a.root.nodes.size());
}

TEST_CASE("a graph too large to lay out still gets a page, without a picture") {
  GraphDocument doc = make_doc({{NodeType::kernel, "_Z1av", {}}, {NodeType::kernel, "_Z1bv", {0}},
                                {NodeType::kernel, "_Z1cv", {0}}});
  HtmlReportInput in;
  in.svg_max_nodes = 1;
  ReportGraph g;
  g.doc = &doc;
  in.graphs.push_back(g);
  const auto d = page_data(write_html_report(in));
  CHECK(d["graphs"][0]["svg"].is_null());
  CHECK(d["graphs"][0]["svg_note"].get<std::string>().find("no picture") == 0);
  CHECK(d["graphs"][0]["nodes"] == 3);
}
