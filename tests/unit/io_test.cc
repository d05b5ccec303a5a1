#include <doctest/doctest.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "inspect/error.h"
#include "inspect/io.h"

using namespace graphscope;

namespace {
std::string temp_dir() {
  char tmpl[] = "/tmp/gs_io_test.XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  return tmpl;
}
int entries(const std::string& dir) {
  int n = 0;
  DIR* d = opendir(dir.c_str());
  while (dirent* e = readdir(d))
    if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") ++n;
  closedir(d);
  return n;
}
}  // namespace

TEST_CASE("write_output replaces the file whole and leaves no temporary") {
  std::string dir = temp_dir();
  std::string path = dir + "/out.json";
  write_output(path, "first");
  write_output(path, "second");
  CHECK(read_file(path) == "second");
  CHECK(entries(dir) == 1);
  unlink(path.c_str());
  rmdir(dir.c_str());
}

TEST_CASE("write_output into a missing directory fails cleanly") {
  try {
    write_output("/nonexistent-dir-gs/out.json", "x");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    CHECK(std::string(e.what()).find("/nonexistent-dir-gs/out.json (cannot create") == 0);
  }
}

TEST_CASE("reading a missing file or a directory is a bad-input error") {
  CHECK_THROWS_AS(read_file("/nonexistent-file-gs"), Error);
  try {
    read_file("/tmp");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "/tmp (is a directory)");
  }
}
