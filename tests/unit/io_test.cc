#include <doctest/doctest.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

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

TEST_CASE("write_output writes a document's pieces one after another") {
  std::string dir = temp_dir();
  std::string path = dir + "/out.json";
  write_output(path, std::vector<std::string>{"{\"a\": ", "", "[1, 2]", "}\n"});
  CHECK(read_file(path) == "{\"a\": [1, 2]}\n");
  CHECK(entries(dir) == 1);
  unlink(path.c_str());
  rmdir(dir.c_str());
}

TEST_CASE("a file written over another keeps exactly what was written, whatever was expected") {
  // Over an existing file on ext4 (as /tmp is on the machines graphscope is
  // built on) expect() allocates the blocks first; the file must still end
  // where the writing ended, expected too much or too little.
  std::string dir = temp_dir();
  std::string path = dir + "/out.json";
  write_output(path, std::string(100000, 'a'));
  {
    OutputFile out(path);
    out.expect(1 << 20);
    out.write("second");
    out.commit();
  }
  CHECK(read_file(path) == "second");
  struct stat st {};
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK(st.st_size == 6);
  CHECK(st.st_blocks * 512 < 65536);  // the room allocated first is given back
  {
    OutputFile out(path);
    out.expect(3);
    out.write("third, ");
    out.write("longer than expected");
    out.commit();
  }
  CHECK(read_file(path) == "third, longer than expected");
  write_output(path, std::vector<std::string>{"four", "th"});
  CHECK(read_file(path) == "fourth");
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

TEST_CASE("InputText maps regular files, reads the rest, and refuses what read_file refuses") {
  std::string dir = temp_dir();
  std::string path = dir + "/t.json";
  std::string data(3 << 20, 'x');
  data[12345] = '\n';
  write_output(path, data);
  {
    InputText t(path);
    CHECK(t.view() == data);
  }
  write_output(path, "");
  CHECK(InputText(path).view().empty());
  CHECK_THROWS_AS(InputText{dir + "/missing"}, Error);
  CHECK_THROWS_AS(InputText{dir}, Error);
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("the library installs no signal handler, and reads inputs unless the program asks it to map them") {
  std::string dir = temp_dir();
  std::string path = dir + "/t.json";
  write_output(path, std::string(1 << 16, 'x'));
  int err[2];
  REQUIRE(::pipe(err) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // a fresh process image would be cleaner; a child has not mapped yet either
    struct sigaction before {};
    ::sigaction(SIGBUS, nullptr, &before);
    map_inputs(true);
    { InputText mapped(path); }  // mapping installs nothing either
    map_inputs(false);
    InputText t(path);
    struct sigaction after {};
    ::sigaction(SIGBUS, nullptr, &after);
    const bool untouched = after.sa_handler == before.sa_handler && t.view().size() == (1u << 16);
    // Read, not mapped: shrinking the file leaves the text whole.
    REQUIRE(::truncate(path.c_str(), 0) == 0);
    const bool whole = t.view().size() == (1u << 16) && t.view().back() == 'x';
    ::_exit(untouched && whole ? 0 : 1);
  }
  ::close(err[0]);
  ::close(err[1]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("a mapped input that shrinks while read ends the process with one line and exit code 3") {
  std::string dir = temp_dir();
  std::string path = dir + "/shrinks.json";
  write_output(path, std::string(1 << 20, '{'));
  int err[2];
  REQUIRE(::pipe(err) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::dup2(err[1], STDERR_FILENO);
    // The CLI's handler (apps/graphscope/main.cc), as a program writes it.
    struct sigaction sa {};
    sa.sa_handler = [](int) {
      size_t n = 0;
      const char* line = mapped_input_fault(&n);
      if (n) (void)!::write(STDERR_FILENO, line, n);
      ::_exit(3);
    };
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, nullptr);
    map_inputs(true);
    InputText t(path);
    REQUIRE(::truncate(path.c_str(), 0) == 0);
    volatile char c = t.view()[(1 << 20) - 1];  // past the end now: SIGBUS
    (void)c;
    ::_exit(0);
  }
  ::close(err[1]);
  std::string said;
  char buf[512];
  for (ssize_t n; (n = ::read(err[0], buf, sizeof buf)) > 0;) said.append(buf, size_t(n));
  ::close(err[0]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 3);
  CHECK(said == "graphscope: " + path + " (changed while being read)\n");
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}
