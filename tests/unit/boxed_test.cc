#include <doctest/doctest.h>

#include <optional>
#include <utility>

#include "inspect/model/graph.h"

using namespace graphscope;

TEST_CASE("a node's boxed members behave as optionals, copied deeply") {
  Node a;
  CHECK_FALSE(a.memcpy.has_value());
  CHECK_FALSE(a.memcpy);
  CHECK_THROWS_AS((void)a.memcpy.value(), std::bad_optional_access);
  MemcpyInfo m;
  m.kind = "HtoD";
  m.bytes = 4096;
  m.src = 0x1000;
  a.memcpy = m;
  REQUIRE(a.memcpy);
  CHECK(a.memcpy->kind == "HtoD");
  CHECK(a.memcpy.value().bytes == 4096);

  // A copy is its own: changing it leaves the first as it was.
  Node b = a;
  b.memcpy->bytes = 8;
  CHECK(a.memcpy->bytes == 4096);
  CHECK(b.memcpy->bytes == 8);
  b = b;  // NOLINT: assigning to itself keeps the value
  CHECK(b.memcpy->kind == "HtoD");

  // From and to std::optional's spellings.
  std::optional<MemsetInfo> none, some = MemsetInfo{};
  a.memset = some;
  CHECK(a.memset);
  a.memset = none;
  CHECK_FALSE(a.memset);
  a.memset.emplace().value = 7;
  CHECK(a.memset->value == 7);
  a.memset = std::nullopt;
  CHECK_FALSE(a.memset);

  // Moved, the value goes with it.
  Node c = std::move(b);
  REQUIRE(c.memcpy);
  CHECK(c.memcpy->bytes == 8);
  c.memcpy.reset();
  CHECK_FALSE(c.memcpy);
  CHECK(sizeof(a.host) == sizeof(void*));
}

TEST_CASE("boxed values compare as optionals do") {
  Boxed<Dim3> x, y;
  CHECK(x == y);
  x = Dim3{2, 1, 1};
  CHECK(x != y);
  y = Dim3{2, 1, 1};
  CHECK(x == y);
  y->x = 3;
  CHECK(x != y);
}
