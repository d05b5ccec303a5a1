// The fast path of the trace reader: the event scanner and the split of the
// events over threads must read exactly what the strict reader reads.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "inspect/formats/chrome_trace.h"
#include "inspect/core/error.h"
#include "inspect/formats/trace_scan.h"
#include "test_data.h"

using namespace graphscope;
using detail::EventScan;

namespace {

EventScan scan(const std::string& event, bool ours, Activity& a, std::string_view& name,
               GraphLaunch* launch = nullptr) {
  const char* next = nullptr;
  EventScan r = detail::scan_event(event.data(), event.data() + event.size(), ours, 0, a, name, next, launch);
  if (r != EventScan::bail) CHECK(next == event.data() + event.size());
  return r;
}

// Kernel geometry, where the record has it.
std::string geometry(const Activity& a) {
  std::string s;
  if (a.has_geometry() || a.grid[0] || a.block[0])
    s += " grid " + std::to_string(a.grid[0]) + "," + std::to_string(a.grid[1]) + "," + std::to_string(a.grid[2]) +
         " block " + std::to_string(a.block[0]) + "," + std::to_string(a.block[1]) + "," + std::to_string(a.block[2]);
  if (a.has_shared) s += " shm " + std::to_string(a.shared_bytes);
  if (a.context) s += " ctx " + std::to_string(a.context);
  return s;
}

// The strict reader's verdict on one event: "" when refused, else a line per
// activity (or nothing for a skipped event).
std::string strict(const std::string& event, bool ours) {
  std::string doc = ours ? R"({"graphscope": {"schema": "graphscope.trace/1"}, "traceEvents": [)" + event + "]}"
                         : R"({"traceEvents": [)" + event + "]}";
  try {
    Trace t = detail::read_chrome_trace_strict(doc, "strict");
    std::string s = "ok";
    for (const auto& a : t.activities)
      s += " " + std::string(to_string(a.kind)) + " " + t.names[a.name] + " " + std::to_string(a.start_ns) + " " +
           std::to_string(a.end_ns) + " d" + std::to_string(a.device) + " s" + std::to_string(a.stream) + " c" +
           std::to_string(a.channel_id) + "/" + std::to_string(a.channel_type) + " k" +
           std::to_string(a.correlation) + " g" + (a.graph_id ? std::to_string(*a.graph_id) : "-") + " n" +
           (a.graph_node_id ? std::to_string(*a.graph_node_id) : "-") + " b" + std::to_string(a.bytes) + " " +
           std::string(to_string(a.copy)) + geometry(a);
    for (const auto& l : t.launches)
      s += " launch k" + std::to_string(l.correlation) + " " + std::to_string(l.start_ns) + " " +
           std::to_string(l.end_ns);
    return s;
  } catch (const Error&) {
    return "";
  }
}

std::string fast(const std::string& event, bool ours, EventScan* how = nullptr) {
  Activity a;
  std::string_view name;
  GraphLaunch launch;
  EventScan r = scan(event, ours, a, name, &launch);
  if (how) *how = r;
  if (r == EventScan::bail) return "bail";
  std::string s = "ok";
  if (r == EventScan::activity)
    s += " " + std::string(to_string(a.kind)) + " " + std::string(name) + " " + std::to_string(a.start_ns) + " " +
         std::to_string(a.end_ns) + " d" + std::to_string(a.device) + " s" + std::to_string(a.stream) + " c" +
         std::to_string(a.channel_id) + "/" + std::to_string(a.channel_type) + " k" + std::to_string(a.correlation) +
         " g" + (a.graph_id ? std::to_string(*a.graph_id) : "-") + " n" +
         (a.graph_node_id ? std::to_string(*a.graph_node_id) : "-") + " b" + std::to_string(a.bytes) + " " +
         std::string(to_string(a.copy)) + geometry(a);
  if (r == EventScan::launch)
    s += " launch k" + std::to_string(launch.correlation) + " " + std::to_string(launch.start_ns) + " " +
         std::to_string(launch.end_ns);
  return s;
}

}  // namespace

TEST_CASE("the event scanner reads graphscope's and Kineto's device events itself") {
  const std::string ours =
      R"({"ph": "X", "cat": "kernel", "name": "_Z5scalePfif", "pid": 0, "tid": 2, "ts": 12.345, "dur": 1.000, )"
      R"("args": {"device": 0, "stream": 13, "correlation": 1000, "graph node id": 21474836480, "graph id": 5, )"
      R"("channel": 1, "channel_type": 1}})";
  EventScan how;
  CHECK(fast(ours, true, &how) == "ok kernel _Z5scalePfif 12345 13345 d0 s13 c1/1 k1000 g5 n21474836480 b0 none");
  CHECK(how == EventScan::activity);
  CHECK(fast(ours, true) == strict(ours, true));

  // Kineto: absolute microseconds past 2^40 (read through a double, as the
  // strict reader does), more args than we read, arrays among them.
  const std::string kineto =
      R"j({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 0, "tid": 7,)j"
      "\n    "
      R"("ts": 4496281713816.316, "dur": 6.048, "args": {"External id": 31, "device": 0, "context": 1,)"
      R"j( "stream": 7, "correlation": 25, "bytes": 4096, "memory bandwidth (GB/s)": 0.6772, "blocks": [1, 2, 3]}})j";
  CHECK(fast(kineto, false, &how) == strict(kineto, false));
  CHECK(how == EventScan::activity);
  CHECK(fast(kineto, false) == "ok memcpy Memcpy DtoH (Device -> Pinned) 4496281713816316 4496281713822364 d0 s7 c0/0 k25 g- n- b4096 DtoH ctx 1");

  // Metadata, CPU ops, flows: valid, skipped.
  for (std::string e : {R"({"ph": "M", "name": "thread_name", "pid": 0, "tid": 1, "args": {"name": "x"}})",
                        R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1.5, "dur": 2, "args": {}})",
                        R"({"ph": "s", "id": 7, "pid": 0, "tid": 1, "ts": 3, "cat": "ac2g", "name": "ac2g"})", "{}",
                        R"({"ph": "X", "cat": "graph_host", "name": "h", "ts": 1, "dur": 1})"}) {
    CAPTURE(e);
    CHECK(fast(e, false, &how) == "ok");
    CHECK(how == EventScan::skipped);
    CHECK(strict(e, false) == "ok");
  }
  // graphscope's own kinds, in graphscope's traces only.
  CHECK(fast(R"({"ph": "X", "cat": "graph_host", "name": "h", "ts": 1, "dur": 1})", true) ==
        "ok host h 1000 2000 d0 s0 c0/0 k0 g- n- b0 none");
}

TEST_CASE("the event scanner leaves to the strict reader what it does not read, and agrees where it reads") {
  // Each member of a device event in spellings good and bad; every event
  // built from one variation of one member (the others plain) must either be
  // left to the strict reader ("bail") or read exactly as it reads it.
  struct Member {
    const char* key;
    std::vector<const char*> values;
  };
  const std::vector<Member> members = {
      {"ph", {R"("X")", R"("M")", R"("x")", "1", "null", R"("X\u0000")", R"("\u0058")"}},
      {"cat", {R"("kernel")", R"("gpu_memcpy")", R"("gpu_memset")", R"("graph_host")", R"("gpu_other")", R"("cpu_op")",
               R"("cuda_runtime")", R"("cuda_driver")",
               R"("")", "[]", R"("kern\"el")"}},
      {"name", {R"("k")", R"("")", R"("cudaGraphLaunch")", R"("cuGraphLaunch_ptsz")", R"("cudaLaunchKernel")", R"j("Memcpy HtoD (Pinned -> Device)")j", R"("caf\u00e9")", "\"caf\xc3\xa9\"",
                "\"bad\xff\"", "7", "{}", R"("a\nb")", "\"tab\there\""}},
      {"ts", {"1", "0", "1.5", "0.000", "12.3456", "999999999999.999", "1099511627776.001", "4000000000000000",
              "4000000000000001", "-1", "-0", "1e3", "1E-2", "01", "1.", ".5", R"("1")", "null",
              "18446744073709551616", "123456789012345678901234567890"}},
      {"dur", {"2", "0", "0.001", "2.5", "-2", "1e2", "[2]"}},
      {"pid", {"0", "3", "4294967295", "4294967296", R"("GPU 0")", "-1", "1.0", "18446744073709551615"}},
      {"tid", {"7", R"("stream 7")", "99999999999", "0"}},
      {"args",
       {"{}", "[]", "null", R"({"device": 1})", R"({"device": 1, "inDevice": 2})", R"({"inDevice": 2, "device": 1})",
        R"({"inDevice": 2})", R"({"device": -1})", R"({"device": 1.0})", R"({"device": 4294967296})",
        R"({"device": "1"})", R"({"stream": 9, "stream": 10})", R"({"correlation": 4294967295})",
        R"({"graph node id": 18446744073709551615})", R"({"graph node id": "21474836480"})",
        R"({"graph node id": 1234567890123456789})", R"({"graph id": 5})", R"({"channel": 3, "channel_type": 2})",
        R"({"channel_type": 256})", R"({"bytes": 4096})", R"({"copy kind": "HtoD"})", R"({"copy kind": 2})",
        R"({"copy kind": 300})", R"({"copy kind": "weird"})", R"({"copy kind": [1]})",
        R"({"x": {"y": [1, 2, {"z": null}]}, "w": true, "v": false})", R"({"n": 1e400})", R"({"n": 1e5})",
        R"({"n": -12.5e-3})", R"({"s": "\ud800"})", R"({"bad": tru})", R"({"x": [1,]})", R"({"d": 1,})",
        R"({"\u0064evice": 3})", R"({"grid": [8, 1, 4], "block": [128, 1, 1], "shared memory": 20480})",
        R"({"grid": [8, 1], "block": [1, 1, 1]})", R"({"grid": [1, 2, 3, 4]})", R"({"grid": [1, -2, 3]})",
        R"({"grid": [1, 2.0, 3]})", R"({"block": [ 1 ,2, 3 ]})", R"({"block": [4294967296, 1, 1]})",
        R"({"grid": "8,1,4"})", R"({"grid": []})", R"({"shared memory": -1})", R"({"shared memory": 4294967296})",
        R"({"context": 1})", R"({"context": "1"})", R"({"correlation": 7, "cbid": 311})",
        R"({"mangled name": "_Z5scalePfif"})", R"({"mangled name": 5})", R"({"mangled name": "caf\u00e9"})"}},
      {"extra", {"1", R"({"a": [[[[]]]]})", R"("v")", "[1, 2.5, -3, true, null]", "01", "1.2.3", "\"unterminated",
                 "[1 2]", "{\"a\" 1}", "nul"}},
  };
  // Each variation on a device event, and on a graph launch.
  const std::map<std::string, std::string> device = {{"ph", R"("X")"}, {"cat", R"("kernel")"}, {"name", R"("k")"},
                                                     {"ts", "1"},      {"dur", "2"},         {"args", R"({"device": 0})"}};
  const std::map<std::string, std::string> launch = {{"ph", R"("X")"},
                                                     {"cat", R"("cuda_runtime")"},
                                                     {"name", R"("cudaGraphLaunch")"},
                                                     {"ts", "1"},
                                                     {"dur", "2"},
                                                     {"args", R"({"correlation": 9})"}};
  size_t read = 0, bailed = 0, launches = 0;
  for (const auto& plain : {device, launch})
  for (const auto& m : members)
    for (const char* v : m.values)
      for (bool ours : {false, true})
        for (int dup = 0; dup < 2; ++dup) {
          std::string e = "{";
          bool placed = false;
          for (const auto& [k, pv] : plain) {
            if (e.size() > 1) e += ", ";
            e += "\"" + k + "\": " + (k == m.key ? v : pv);
            placed |= k == m.key;
          }
          if (!placed || dup) e += std::string(", \"") + m.key + "\": " + v;
          e += "}";
          CAPTURE(e);
          std::string f = fast(e, ours);
          if (f == "bail") {
            bailed += !dup;  // a repeated key always bails
            continue;
          }
          read += !dup;
          launches += f.find(" launch ") != std::string::npos;
          CHECK(f == strict(e, ours));
        }
  // Most variations are plain enough for the scanner.
  CHECK(read > bailed);
  CHECK(launches > 50);
  // Blanks anywhere JSON allows them; none where it does not.
  std::string spaced = "{ \"ph\" :\t\"X\" ,\r\n\"cat\":\"kernel\",\"name\" : \"k\", \"ts\":1 , \"dur\" : 2 ,\"args\":{ } }";
  CHECK(fast(spaced, false) == strict(spaced, false));
  CHECK(fast(spaced, false) != "bail");
  for (std::string cut : {R"({"ph": "X")", R"({"ph": "X",)", R"({"ph")", R"({"ph": )", "{", R"({"ph": "X"} )"}) {
    CAPTURE(cut);
    Activity a;
    std::string_view name;
    const char* next = nullptr;
    EventScan r = detail::scan_event(cut.data(), cut.data() + cut.size(), false, 0, a, name, next);
    if (r != EventScan::bail) CHECK(next == cut.data() + cut.find('}') + 1);
  }
}

TEST_CASE("the scanner bails on a key twice anywhere in an event, and the strict reader refuses it") {
  auto strict_message = [](const std::string& event) {
    try {
      detail::read_chrome_trace_strict(R"({"traceEvents": [)" + event + "]}", "strict");
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::bad_input);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string head = R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2)";
  struct Case {
    std::string members, path;
  };
  for (const Case& c : std::vector<Case>{
           {R"(, "dur": 3)", "dur"},
           {R"(, "id": 1, "bp": "e", "id": 2)", "id"},
           {R"(, "args": {"queued": 0, "stream": 7, "queued": 0})", "args.queued"},
           {R"(, "args": {"stream": 7, "device": 0, "stream": 8})", "args.stream"},
           {R"(, "args": {"x": [1, {"z": null, "y": 1, "z": null}]})", "args.x[1].z"},
           {R"(, "extra": {"a": {"b": 1, "b": 2}})", "extra.a.b"},
           {R"(, "args": [{"q": 1, "q": 1}])", "args[0].q"},
       }) {
    const std::string e = head + c.members + "}";
    CAPTURE(e);
    CHECK(fast(e, false) == "bail");
    CHECK(strict_message(e) == "strict (traceEvents[0]." + c.path + ": appears twice)");
  }
  // Keys that share a prefix, or differ in their last byte, are other keys:
  // read by the scanner as by the strict reader.
  const std::string prefixes = head + R"(, "id": 1, "i": 2, "idx": 3, "ie": 4,)"
                                      R"( "args": {"queued": 0, "queue": 1, "stream": 7, "streams": 8,)"
                                      R"( "x": {"a": 1, "ab": 2, "b": 3, "": 4}}})";
  CHECK(fast(prefixes, false) != "bail");
  CHECK(fast(prefixes, false) == strict(prefixes, false));
  // More keys than the scanner keeps for one object: it bails, and the
  // strict reader reads the event.
  std::string many = head + R"(, "args": {"stream": 7)";
  for (int i = 0; i < 40; ++i) many += ", \"a" + std::to_string(i) + "\": " + std::to_string(i);
  many += "}}";
  CHECK(fast(many, false) == "bail");
  CHECK(strict(many, false) != "");
}

TEST_CASE("microseconds with up to 3 decimals read exactly as through a double") {
  std::mt19937_64 rng(11);
  auto through_double = [](const std::string& s) {
    double d = std::strtod(s.c_str(), nullptr);
    double whole = std::floor(d);
    return uint64_t(whole) * 1000 + uint64_t(std::llround((d - whole) * 1000.0));
  };
  std::vector<std::string> values = {"0", "0.0", "0.001", "0.999", "1.5", "7.05", "999999999999.999",
                                     "999999999999.001", "549755813887.999", "123.4", "100000000000.5"};
  for (int i = 0; i < 200000; ++i) {
    uint64_t whole = rng() % (i % 2 ? 1000000000000ull : 100000ull);
    int decimals = int(rng() % 4);
    std::string s = std::to_string(whole);
    if (decimals) {
      std::string frac = std::to_string(rng() % 1000);
      frac = std::string(3 - frac.size(), '0') + frac;
      s += "." + frac.substr(0, size_t(decimals));
    }
    values.push_back(s);
  }
  for (const auto& s : values) {
    uint64_t ns = 0;
    REQUIRE(detail::exact_micros(s.data(), s.data() + s.size(), ns));
    if (ns != through_double(s)) FAIL_CHECK(s);
  }
  for (std::string s : {"1234567890123.5", "1.2345", "-1", "01", "1.", "", "1e3", ".5"}) {
    uint64_t ns = 0;
    CAPTURE(s);
    CHECK(!detail::exact_micros(s.data(), s.data() + s.size(), ns));
  }
}

TEST_CASE("the events split over threads read the same, whatever the guessed starts") {
  auto same = [](const Trace& a, const Trace& b) {
    REQUIRE(a.activities.size() == b.activities.size());
    CHECK(a.names == b.names);
    CHECK(a.source == b.source);
    for (size_t i = 0; i < a.activities.size(); ++i) {
      const Activity &x = a.activities[i], &y = b.activities[i];
      if (x.name != y.name || x.start_ns != y.start_ns || x.end_ns != y.end_ns || x.stream != y.stream ||
          x.channel_id != y.channel_id || x.graph_node_id != y.graph_node_id || x.kind != y.kind)
        FAIL_CHECK("activity " << i << " differs");
    }
  };
  for (std::string rel : {"profiles/wide.c8.trace.json", "profiles/copies.c1.trace.json", "profiles/mixed.c8.trace.json",
                          "torch/torch_two_stream.kineto.json", "torch/torch_mlp.kineto.json"}) {
    CAPTURE(rel);
    std::string text = test::read_data(rel);
    Trace reference = detail::read_chrome_trace_strict(text, rel);
    REQUIRE(!reference.activities.empty());
    for (unsigned threads : {1u, 2u, 3u, 5u, 8u, 64u}) {
      CAPTURE(threads);
      same(detail::read_chrome_trace_split(text, rel, threads), reference);
    }
  }
  // Names that look like event boundaries put the guesses inside strings:
  // the wrong guesses are found out and the reading starts over on one thread.
  std::string text = R"({"traceEvents": [)";
  for (int i = 0; i < 400; ++i) {
    if (i) text += ",\n";
    std::string name = i % 3 ? "k" + std::to_string(i) : R"(x},\n {\"ph\": \"X\"}, {\"y)";  // escapes: bail too
    if (i % 3 == 1) name = "a},   {b";
    text += R"({"ph": "X", "cat": "kernel", "name": ")" + name + R"(", "ts": )" + std::to_string(i) +
            R"(, "dur": 1, "args": {"stream": 7}})";
  }
  text += "]}";
  Trace reference = detail::read_chrome_trace_strict(text, "tricky.json");
  REQUIRE(reference.activities.size() == 400);
  for (unsigned threads = 1; threads <= 40; ++threads) {
    CAPTURE(threads);
    same(detail::read_chrome_trace_split(text, "tricky.json", threads), reference);
  }
  same(read_chrome_trace(text, "tricky.json"), reference);
}

TEST_CASE("the split reader refuses what the strict reader refuses, with its message") {
  std::string good = R"({"graphscope": {"schema": "graphscope.trace/1", "time_base_ns": 5000}, "traceEvents": [)";
  for (int i = 0; i < 50; ++i)
    good += std::string(i ? ", " : "") + R"({"ph": "X", "cat": "kernel", "name": "k", "ts": )" + std::to_string(i) +
            R"(, "dur": 1})";
  good += "]}";
  Trace t = detail::read_chrome_trace_split(good, "good.json", 4);
  REQUIRE(t.activities.size() == 50);
  CHECK(t.activities[3].start_ns == 5000 + 3000);  // the time base, read before the events
  CHECK(t.source == "graphscope");
  // The time base after the events: the events are read again with it.
  std::string late = R"({"traceEvents": [{"ph": "X", "cat": "graph_host", "name": "h", "ts": 1, "dur": 1}], )"
                     R"("graphscope": {"schema": "graphscope.trace/1", "time_base_ns": 7}})";
  Trace l = detail::read_chrome_trace_split(late, "late.json", 2);
  REQUIRE(l.activities.size() == 1);
  CHECK(l.activities[0].kind == ActivityKind::host);
  CHECK(l.activities[0].start_ns == 1007);

  auto message = [](const std::string& text, unsigned threads) {
    try {
      if (threads) detail::read_chrome_trace_split(text, "bad.json", threads);
      else detail::read_chrome_trace_strict(text, "bad.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  std::vector<std::string> bad = {good.substr(0, good.size() - 1), good + "x", good.substr(0, good.size() - 2) + ",]}"};
  std::string dur = good;
  dur.replace(dur.rfind("\"dur\": 1"), 8, "\"dur\": -1");
  bad.push_back(dur);
  std::string schema = good;
  schema.replace(schema.find("trace/1"), 7, "trace/9");
  bad.push_back(schema);
  for (const auto& b : bad) {
    std::string strict_message = message(b, 0);
    CHECK(strict_message != "accepted");
    for (unsigned threads : {1u, 3u}) CHECK(message(b, threads) == strict_message);
  }
}
