// Issue 46: kernel arguments in graph documents (their values as written,
// the reader's checks, diff's comparison with addresses left out), and the
// input liveness tracker (lib/inspect/model/liveness.h) driven by synthetic
// allocations, frees, captures and launches.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "graph_builder.h"
#include "inspect/analysis/diff.h"
#include "inspect/core/error.h"
#include "inspect/formats/graph_json.h"
#include "inspect/model/liveness.h"

using namespace graphscope;
using test::make_doc;

namespace {

std::string bytes_of(uint64_t v, size_t n) {
  std::string s(n, '\0');
  std::memcpy(s.data(), &v, std::min<size_t>(n, 8));
  return s;
}

KernelArg arg(uint32_t offset, const std::string& raw) {
  KernelArg a;
  a.offset = offset, a.size = uint32_t(raw.size()), a.raw = raw;
  a.value = kernel_arg_value(reinterpret_cast<const unsigned char*>(raw.data()), raw.size(), offset);
  return a;
}

GraphDocument kernel_doc(std::vector<KernelArg> args) {
  GraphDocument d = make_doc({{NodeType::kernel, "_Z5scalePKfPfif", {}}});
  KernelInfo k;
  k.grid = {4, 1, 1}, k.block = {256, 1, 1};
  k.args = std::move(args);
  d.root.nodes[0].kernel = k;
  return d;
}

}  // namespace

TEST_CASE("kernel argument values: numbers, hex, and hashes that leave addresses out") {
  CHECK(kernel_arg_value(reinterpret_cast<const unsigned char*>(bytes_of(0x7f1200a00000, 8).data()), 8, 0) ==
        "0x7f1200a00000");
  CHECK(kernel_arg_value(reinterpret_cast<const unsigned char*>(bytes_of(1024, 4).data()), 4, 16) == "0x400");
  CHECK(kernel_arg_value(reinterpret_cast<const unsigned char*>(bytes_of(0, 4).data()), 4, 16) == "0x0");
  std::string twelve = bytes_of(0x0102030405060708ull, 8) + bytes_of(0x0a0b0c0d, 4);
  CHECK(kernel_arg_value(reinterpret_cast<const unsigned char*>(twelve.data()), 12, 0) == "08070605040302010d0c0b0a");
  // 72 bytes: a hash; an address that moved in an aligned word leaves it as it was, a value does not.
  std::string big(72, '\x05');
  std::string moved = big, other = big;
  std::memcpy(big.data() + 8, bytes_of(0x7f0000001000, 8).data(), 8);
  std::memcpy(moved.data() + 8, bytes_of(0x7f0000802000, 8).data(), 8);
  std::memcpy(other.data() + 8, bytes_of(0x7f0000001000, 8).data(), 8);
  other[40] = 6;
  auto h = [](const std::string& s) {
    return kernel_arg_value(reinterpret_cast<const unsigned char*>(s.data()), s.size(), 8);
  };
  CHECK(h(big).size() == 17);
  CHECK(h(big)[0] == '#');
  CHECK(h(big) == h(moved));
  CHECK(h(big) != h(other));
}

TEST_CASE("kernel arguments round-trip through the graph document, and a bad one is refused") {
  GraphDocument d = kernel_doc({arg(0, bytes_of(0x7f0000001000, 8)), arg(8, bytes_of(0x7f0000002000, 8)),
                                arg(16, bytes_of(1 << 20, 4)), arg(20, bytes_of(0x3f800000, 4))});
  const std::string text = write_graph_json(d);
  CHECK(text.find("\"args\": [[0, 8, \"0x7f0000001000\"], [8, 8, \"0x7f0000002000\"], [16, 4, \"0x100000\"], "
                  "[20, 4, \"0x3f800000\"]]") != std::string::npos);
  GraphDocument back = read_graph_json(text, "t.json");
  REQUIRE(back.root.nodes[0].kernel);
  REQUIRE(back.root.nodes[0].kernel->args.size() == 4);
  CHECK(back.root.nodes[0].kernel->args == d.root.nodes[0].kernel->args);
  std::string bad = text;
  bad.replace(bad.find("0x100000"), 8, "0xzz0000");
  CHECK_THROWS_AS(read_graph_json(bad, "t.json"), Error);
  std::string wrong_size = text;
  wrong_size.replace(wrong_size.find("[16, 4,"), 7, "[16, 3,");
  CHECK_THROWS_AS(read_graph_json(wrong_size, "t.json"), Error);
}

TEST_CASE("diff compares kernel argument values and counts moved addresses apart") {
  GraphDocument a = kernel_doc({arg(0, bytes_of(0x7f0000001000, 8)), arg(8, bytes_of(0x7f0000002000, 8)),
                                arg(16, bytes_of(1 << 20, 4)), arg(20, bytes_of(0x3f800000, 4))});
  // Only addresses moved: the same graph, the moves said in a note.
  GraphDocument b = kernel_doc({arg(0, bytes_of(0x7f0000101000, 8)), arg(8, bytes_of(0x7f0000102000, 8)),
                                arg(16, bytes_of(1 << 20, 4)), arg(20, bytes_of(0x3f800000, 4))});
  GraphDiff d = diff_graphs(a, b);
  CHECK(d.same());
  CHECK(d.root.moved_addresses == 2);
  CHECK(d.root.moved_address_nodes == 1);
  bool noted = false;
  for (const auto& n : d.notes) noted = noted || n.find("2 kernel argument addresses of 1 matched kernels") != std::string::npos;
  CHECK(noted);
  // A scalar changed (n 2^20 -> 2^21): a change of "argument 2".
  GraphDocument c = kernel_doc({arg(0, bytes_of(0x7f0000101000, 8)), arg(8, bytes_of(0x7f0000102000, 8)),
                                arg(16, bytes_of(1 << 21, 4)), arg(20, bytes_of(0x3f800000, 4))});
  GraphDiff e = diff_graphs(a, c);
  REQUIRE(e.root.changed.size() == 1);
  REQUIRE(e.root.changed[0].changes.size() == 1);
  CHECK(e.root.changed[0].changes[0].field == "argument 2");
  CHECK(e.root.changed[0].changes[0].a == "1048576");
  CHECK(e.root.changed[0].changes[0].b == "2097152");
  // One side without arguments: not compared, said.
  GraphDocument none = kernel_doc({});
  GraphDiff f = diff_graphs(a, none);
  CHECK(f.same());
  CHECK(f.root.args_unknown == 1);
}

TEST_CASE("liveness: a driver allocation freed and handed out again is found at the next launch") {
  LivenessTracker t;
  using S = LivenessTracker::Source;
  t.allocated(S::driver, 0x7f0000000000, 4 << 20, 11, false);  // the input
  t.allocated(S::driver, 0x7f0000400000, 4 << 20, 12, false);  // the output
  const uint64_t since = t.allocations();
  t.watch(0xe1, 2, {{0, 0, 0, 0x7f0000000000}, {0, 1, 0, 0x7f0000400000}, {1, 0, 0, 0x7f0000400000}}, since);
  CHECK(t.watched() == 3);
  t.launched(0xe1, 1, false);
  CHECK_FALSE(t.lost(0xe1));
  t.freed(S::driver, 0x7f0000000000, 0, 21);
  t.allocated(S::driver, 0x7f0000000000, 4 << 20, 22, false);
  LivenessTracker::Finding f;
  REQUIRE(t.lost(0xe1, &f));
  CHECK(f.exec_graph_id == 2);
  CHECK(f.at.node == 0);
  CHECK(f.at.arg == 0);
  t.launched(0xe1, 2, false);
  t.launched(0xe1, 3, true);
  auto all = t.findings();
  REQUIRE(all.size() == 1);
  CHECK(all[0].allocated_site == 11);
  CHECK(all[0].freed_site == 21);
  CHECK(all[0].reused);
  CHECK(all[0].reused_site == 22);
  CHECK(all[0].first_replay == 2);
  CHECK(all[0].replays == 2);
  CHECK(all[0].refused == 1);
  CHECK(all[0].block_size == (4u << 20));
  // Destroyed: forgotten, nothing more counted.
  t.forget(0xe1);
  CHECK_FALSE(t.lost(0xe1));
}

TEST_CASE("liveness: PyTorch's blocks, its capture pool and memory freed before the watch") {
  LivenessTracker t;
  using S = LivenessTracker::Source;
  // One segment of the caching allocator, three blocks: an input, a
  // parameter, and a capture's pool block (an output).
  t.allocated(S::driver, 0x7e0000000000, 2 << 20, 1, false);
  t.allocated(S::torch, 0x7e0000000000, 0, 31, false);  // static_x
  t.allocated(S::torch, 0x7e0000010000, 0, 32, false);  // weight
  t.allocated(S::driver, 0x7e0000200000, 2 << 20, 2, true);  // the private pool's segment, in capture
  t.allocated(S::torch, 0x7e0000200000, 0, 33, true);         // static_y
  t.allocated(S::torch, 0x7e0000208000, 0, 34, true);         // an intermediate
  t.freed(S::torch, 0x7e0000208000, 0, 35);                   // freed during the capture: the pool's
  const uint64_t since = t.allocations();
  t.watch(0xa, 5,
          {{0, 1, 8, 0x7e0000000100},   // inside static_x (a view)
           {0, 2, 0, 0x7e0000010000},   // the weight
           {1, 0, 0, 0x7e0000200000},   // static_y: the pool's
           {1, 1, 0, 0x7e0000208000},   // the intermediate: the pool's
           {2, 0, 0, 0x10000}},         // in no allocation seen
          since);
  CHECK(t.watched() == 2);
  // Correct program: outputs freed (pool), nothing lost.
  t.freed(S::torch, 0x7e0000200000, 0, 36);
  t.launched(0xa, 1, false);
  CHECK_FALSE(t.lost(0xa));
  // The classic bug: static_x garbage-collected, its block handed to another tensor.
  t.freed(S::torch, 0x7e0000000000, 0, 40);
  t.allocated(S::torch, 0x7e0000000000, 0, 41, false);
  t.launched(0xa, 2, false);
  auto all = t.findings();
  REQUIRE(all.size() == 1);
  CHECK(all[0].source == S::torch);
  CHECK(all[0].at.node == 0);
  CHECK(all[0].at.arg == 1);
  CHECK(all[0].at.offset == 8);
  CHECK(all[0].allocated_site == 31);
  CHECK(all[0].freed_site == 40);
  CHECK(all[0].reused_site == 41);
  CHECK(all[0].first_replay == 2);
  // A graph watched after its input was freed (the walk came late): found at once.
  LivenessTracker u;
  u.allocated(S::driver, 0x7d0000000000, 1 << 20, 1, false);
  u.allocated(S::torch, 0x7d0000000000, 0, 2, false);
  const uint64_t at_instantiation = u.allocations();
  u.freed(S::torch, 0x7d0000000000, 0, 3);
  u.watch(0xb, 7, {{0, 0, 0, 0x7d0000000040}}, at_instantiation);
  CHECK(u.lost(0xb));
  // Freed before the graph was instantiated: not this graph's input, no finding.
  LivenessTracker v;
  v.allocated(S::driver, 0x7c0000000000, 1 << 20, 1, false);
  v.allocated(S::torch, 0x7c0000000000, 0, 2, false);
  v.freed(S::torch, 0x7c0000000000, 0, 3);
  v.watch(0xc, 8, {{0, 0, 0, 0x7c0000000040}}, v.allocations());
  CHECK(v.watched() == 0);
  CHECK_FALSE(v.lost(0xc));
}

TEST_CASE("liveness: a driver allocation that holds PyTorch's blocks is PyTorch's") {
  LivenessTracker t;
  using S = LivenessTracker::Source;
  t.allocated(S::driver, 0x7b0000000000, 2 << 20, 1, false);
  t.allocated(S::torch, 0x7b0000100000, 0, 2, false);
  // An address below the first block of the segment: no block holds it.
  t.watch(0xd, 9, {{0, 0, 0, 0x7b0000000800}}, t.allocations());
  CHECK(t.watched() == 0);
  t.freed(S::driver, 0x7b0000000000, 0, 3);
  CHECK_FALSE(t.lost(0xd));
}

TEST_CASE("liveness: the history of freed blocks keeps the newest kMaxHistory") {
  LivenessTracker t;
  using S = LivenessTracker::Source;
  const uint64_t seg = 0x7a0000000000, n = LivenessTracker::kMaxHistory + 1000;
  t.allocated(S::driver, seg, n * 512 + 512, 1, false);
  const uint64_t since = t.allocations();
  for (uint64_t i = 0; i < n; ++i) {
    t.allocated(S::torch, seg + i * 512, 0, 2, false);
    t.freed(S::torch, seg + i * 512, 0, 3);
  }
  // The oldest free is out of the history: an address in it resolves to no
  // block that lost memory since (not watched); the newest still is (found).
  t.watch(0x1, 1, {{0, 0, 0, seg + 16}}, since);
  CHECK_FALSE(t.lost(0x1));
  t.watch(0x2, 2, {{0, 0, 0, seg + (n - 1) * 512 + 16}}, since);
  CHECK(t.lost(0x2));
}
