// CUPTI record conversion, on hand-built records: needs no GPU.
#include <doctest/doctest.h>

#include <cstring>

#include "capture/activity.h"

using graphscope::Activity;
using graphscope::ActivityKind;
using graphscope::CopyKind;
using graphscope::Trace;
using graphscope::capture::ActivityCollector;
using graphscope::capture::append_record;

namespace {

template <typename R>
R blank(CUpti_ActivityKind kind) {
  R r;
  std::memset(static_cast<void*>(&r), 0, sizeof r);
  r.kind = kind;
  return r;
}

template <typename R>
void append(const R& r, Trace& t) {
  append_record(reinterpret_cast<const CUpti_Activity*>(&r), t);
}

CUpti_ActivityKernel10 graph_kernel() {
  auto k = blank<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.name = "_Z4spinPfx";
  k.start = 1000;
  k.end = 1500;
  k.deviceId = 0;
  k.contextId = 1;
  k.streamId = 13;
  k.correlationId = 42;
  k.graphId = 5;
  k.graphNodeId = (uint64_t(5) << 32) | 3;
  k.channelID = 4;
  k.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
  k.gridX = k.gridY = k.gridZ = 1;
  k.blockX = 128;
  k.blockY = k.blockZ = 1;
  return k;
}

}  // namespace

TEST_CASE("a graph replay's kernel record becomes a kernel activity with graph ids and channel") {
  Trace t;
  append(graph_kernel(), t);
  REQUIRE(t.activities.size() == 1);
  const Activity& a = t.activities[0];
  CHECK(a.kind == ActivityKind::kernel);
  CHECK(a.copy == CopyKind::none);
  REQUIRE(t.names.size() == 1);
  CHECK(a.name == 0);
  CHECK(t.names[0] == "_Z4spinPfx");
  CHECK(a.start_ns == 1000);
  CHECK(a.end_ns == 1500);
  CHECK(a.device == 0);
  CHECK(a.stream == 13);
  CHECK(a.channel_id == 4);
  CHECK(a.channel_type == 1);
  CHECK(a.correlation == 42);
  REQUIRE(a.graph_id.has_value());
  CHECK(*a.graph_id == 5);
  REQUIRE(a.graph_node_id.has_value());
  CHECK(*a.graph_node_id == 21474836483ull);
  CHECK(a.bytes == 0);
}

TEST_CASE("a host-to-device memcpy record on a copy channel") {
  auto m = blank<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = uint64_t(64) << 20;
  m.start = 2000;
  m.end = 1300000;
  m.deviceId = 1;
  m.streamId = 17;
  m.correlationId = 42;
  m.runtimeCorrelationId = 0;
  m.graphId = 5;
  m.graphNodeId = (uint64_t(5) << 32) | 7;
  m.channelID = 9;
  m.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
  m.copyCount = 1;
  Trace t;
  append(m, t);
  REQUIRE(t.activities.size() == 1);
  const Activity& a = t.activities[0];
  CHECK(a.kind == ActivityKind::memcpy);
  CHECK(a.copy == CopyKind::htod);
  CHECK(t.names.at(a.name) == "Memcpy HtoD");
  CHECK(a.bytes == (uint64_t(64) << 20));
  CHECK(a.start_ns == 2000);
  CHECK(a.end_ns == 1300000);
  CHECK(a.device == 1);
  CHECK(a.stream == 17);
  CHECK(a.channel_id == 9);
  CHECK(a.channel_type == 2);
  CHECK(a.correlation == 42);
  CHECK(a.graph_id == std::optional<uint32_t>(5));
  CHECK(a.graph_node_id == std::optional<uint64_t>((uint64_t(5) << 32) | 7));
}

TEST_CASE("a memset record") {
  auto m = blank<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  m.value = 0;
  m.bytes = 4096;
  m.start = 3000;
  m.end = 3100;
  m.deviceId = 0;
  m.streamId = 14;
  m.correlationId = 43;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.graphId = 6;
  m.graphNodeId = (uint64_t(6) << 32) | 0x1;
  m.channelID = 2;
  m.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
  Trace t;
  append(m, t);
  REQUIRE(t.activities.size() == 1);
  const Activity& a = t.activities[0];
  CHECK(a.kind == ActivityKind::memset);
  CHECK(a.copy == CopyKind::none);
  CHECK(t.names.at(a.name) == "Memset");
  CHECK(a.bytes == 4096);
  CHECK(a.start_ns == 3000);
  CHECK(a.end_ns == 3100);
  CHECK(a.stream == 14);
  CHECK(a.channel_id == 2);
  CHECK(a.channel_type == 1);
  CHECK(a.correlation == 43);
  CHECK(a.graph_id == std::optional<uint32_t>(6));
  CHECK(a.graph_node_id == std::optional<uint64_t>((uint64_t(6) << 32) | 1));
}

TEST_CASE("a kernel outside any graph has no graph ids, and names are interned once") {
  auto k = graph_kernel();
  k.graphId = 0;
  k.graphNodeId = 0;
  k.correlationId = 7;
  k.start = 10;
  k.end = 20;
  k.channelID = 0;
  k.channelType = CUPTI_CHANNEL_TYPE_INVALID;
  Trace t;
  append(graph_kernel(), t);
  append(k, t);
  REQUIRE(t.activities.size() == 2);
  const Activity& a = t.activities[1];
  CHECK(a.kind == ActivityKind::kernel);
  CHECK_FALSE(a.graph_id.has_value());
  CHECK_FALSE(a.graph_node_id.has_value());
  CHECK(a.channel_id == 0);
  CHECK(a.channel_type == 0);
  CHECK(a.correlation == 7);
  CHECK(t.names.size() == 1);
  CHECK(a.name == t.activities[0].name);
}

TEST_CASE("KIND_KERNEL records convert like CONCURRENT_KERNEL ones") {
  auto k = graph_kernel();
  k.kind = CUPTI_ACTIVITY_KIND_KERNEL;
  Trace t;
  append(k, t);
  REQUIRE(t.activities.size() == 1);
  CHECK(t.activities[0].kind == ActivityKind::kernel);
  CHECK(t.activities[0].graph_node_id == std::optional<uint64_t>((uint64_t(5) << 32) | 3));
}

TEST_CASE("a kernel record without a name gets a placeholder") {
  auto k = graph_kernel();
  k.name = nullptr;
  Trace t;
  append(k, t);
  REQUIRE(t.activities.size() == 1);
  CHECK(t.names.at(t.activities[0].name) == "(unnamed kernel)");
}

TEST_CASE("memcpy directions: names and copy kinds") {
  struct Case {
    uint8_t kind;
    const char* name;
    CopyKind copy;
  };
  const Case cases[] = {
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, "Memcpy HtoD", CopyKind::htod},
      {CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, "Memcpy DtoH", CopyKind::dtoh},
      {CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, "Memcpy DtoD", CopyKind::dtod},
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, "Memcpy HtoH", CopyKind::htoh},
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOA, "Memcpy HtoA", CopyKind::htod},
      {CUPTI_ACTIVITY_MEMCPY_KIND_ATOH, "Memcpy AtoH", CopyKind::dtoh},
      {CUPTI_ACTIVITY_MEMCPY_KIND_ATOD, "Memcpy AtoD", CopyKind::dtod},
      {CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, "Memcpy PtoP", CopyKind::other},
      {CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, "Memcpy", CopyKind::other},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    auto m = blank<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
    m.copyKind = c.kind;
    Trace t;
    append(m, t);
    REQUIRE(t.activities.size() == 1);
    CHECK(t.names.at(t.activities[0].name) == c.name);
    CHECK(t.activities[0].copy == c.copy);
    CHECK_FALSE(t.activities[0].graph_id.has_value());
  }
}

TEST_CASE("a peer-to-peer copy record (MEMCPY2)") {
  auto m = blank<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2);
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  m.bytes = 1 << 20;
  m.start = 5;
  m.end = 9;
  m.deviceId = 1;
  m.streamId = 21;
  m.srcDeviceId = 0;
  m.dstDeviceId = 1;
  m.correlationId = 44;
  m.graphId = 5;
  m.graphNodeId = (uint64_t(5) << 32) | 9;
  m.channelID = 10;
  m.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
  Trace t;
  append(m, t);
  REQUIRE(t.activities.size() == 1);
  const Activity& a = t.activities[0];
  CHECK(a.kind == ActivityKind::memcpy);
  CHECK(a.copy == CopyKind::other);
  CHECK(t.names.at(a.name) == "Memcpy PtoP");
  CHECK(a.bytes == (1u << 20));
  CHECK(a.device == 1);
  CHECK(a.stream == 21);
  CHECK(a.channel_id == 10);
  CHECK(a.channel_type == 2);
  CHECK(a.correlation == 44);
  CHECK(a.graph_node_id == std::optional<uint64_t>((uint64_t(5) << 32) | 9));
}

TEST_CASE("records of other kinds, and null, are ignored") {
  Trace t;
  auto api = blank<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  api.correlationId = 42;
  append(api, t);
  auto marker = blank<CUpti_Activity>(CUPTI_ACTIVITY_KIND_MARKER);
  append(marker, t);
  auto odd = blank<CUpti_Activity>(static_cast<CUpti_ActivityKind>(0x7ffff));
  append(odd, t);
  append_record(nullptr, t);
  CHECK(t.activities.empty());
  CHECK(t.names.empty());
}

TEST_CASE("a graph trace record is one replay: an activity with its graph id and no node") {
  Trace t;
  auto g = blank<CUpti_ActivityGraphTrace2>(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
  g.start = 1000;
  g.end = 5000;
  g.graphId = 7;
  g.streamId = 13;
  g.correlationId = 99;
  g.deviceId = 0;
  g.contextId = 1;
  append(g, t);
  REQUIRE(t.activities.size() == 1);
  const Activity& a = t.activities[0];
  CHECK(a.kind == ActivityKind::other);
  CHECK(t.names[a.name] == "graph");
  CHECK(a.graph_id == std::optional<uint32_t>(7));
  CHECK_FALSE(a.graph_node_id);
  CHECK(a.start_ns == 1000);
  CHECK(a.end_ns == 5000);
  CHECK(a.stream == 13);
  CHECK(a.correlation == 99);
}

TEST_CASE("a mixed sequence keeps order and shares names") {
  Trace t;
  append(graph_kernel(), t);
  auto m = blank<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  append(m, t);
  append(blank<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_DRIVER), t);
  append(graph_kernel(), t);
  append(m, t);
  REQUIRE(t.activities.size() == 4);
  CHECK(t.names.size() == 2);
  CHECK(t.activities[0].kind == ActivityKind::kernel);
  CHECK(t.activities[1].kind == ActivityKind::memset);
  CHECK(t.activities[2].name == t.activities[0].name);
  CHECK(t.activities[3].name == t.activities[1].name);
}

TEST_CASE("a collector that never started is empty, and stopping it is harmless") {
  ActivityCollector c;
  CHECK_FALSE(c.running());
  CHECK_NOTHROW(c.stop());
  CHECK(c.dropped_records() == 0);
  CHECK(c.untimed_records() == 0);
  Trace t = c.take();
  CHECK(t.activities.empty());
  CHECK(t.source == "cupti");
}
