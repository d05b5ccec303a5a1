#include <doctest/doctest.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <vector>

#include "inspect/core/error.h"
#include "inspect/core/io.h"

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

namespace {
std::string read_back(const std::string& path) {
  std::string out;
  int fd = ::open(path.c_str(), O_RDONLY);
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, size_t(n));
  ::close(fd);
  return out;
}
mode_t type_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & S_IFMT;
}
void remove_all(const std::string& dir) { REQUIRE(std::system(("rm -rf '" + dir + "'").c_str()) == 0); }
}  // namespace

TEST_CASE("an output that is a FIFO is written through, never replaced") {
  std::string dir = temp_dir();
  std::string fifo = dir + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  pid_t reader = ::fork();
  REQUIRE(reader >= 0);
  if (reader == 0) {  // a shell's `cat fifo`: what it reads goes back through the pipe
    ::close(fds[0]);
    int fd = ::open(fifo.c_str(), O_RDONLY);
    char buf[256];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) (void)!::write(fds[1], buf, size_t(n));
    ::_exit(0);
  }
  ::close(fds[1]);
  write_output(fifo, "through the fifo\n");
  std::string got;
  char buf[256];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) got.append(buf, size_t(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(reader, &status, 0);
  CHECK(got == "through the fifo\n");
  CHECK(type_of(fifo) == S_IFIFO);
  CHECK(entries(dir) == 1);
  remove_all(dir);
}

TEST_CASE("an output that is a character device is written through, never replaced") {
  // /dev/null itself, which a replacing rename as root would have destroyed.
  write_output("/dev/null", "nothing\n");
  CHECK(type_of("/dev/null") == S_IFCHR);
  // /dev/full: the device says why it failed; nothing else happens.
  try {
    write_output("/dev/full", "x");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    CHECK(std::string(e.what()) == "/dev/full (cannot write: No space left on device)");
  }
  CHECK(type_of("/dev/full") == S_IFCHR);
}

TEST_CASE("a symbolic link to a regular file stays a link, and its target is replaced whole") {
  std::string dir = temp_dir();
  write_output(dir + "/real.json", "old");
  REQUIRE(::symlink("real.json", (dir + "/link.json").c_str()) == 0);
  write_output(dir + "/link.json", "new");
  CHECK(type_of(dir + "/link.json") == S_IFLNK);
  CHECK(read_back(dir + "/real.json") == "new");
  CHECK(entries(dir) == 2);
  // A dangling link makes its target, as a shell redirection does.
  REQUIRE(::symlink("made.json", (dir + "/dangling.json").c_str()) == 0);
  write_output(dir + "/dangling.json", "made");
  CHECK(read_back(dir + "/made.json") == "made");
  remove_all(dir);
}

TEST_CASE("a link into /proc, as /dev/stdout is, names an open file: written through") {
  std::string dir = temp_dir();
  std::string path = dir + "/stdout.txt";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(::symlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), (dir + "/out").c_str()) == 0);
  write_output(dir + "/out", "via the descriptor");
  ::close(fd);
  CHECK(type_of(dir + "/out") == S_IFLNK);
  CHECK(read_back(path) == "via the descriptor");
  remove_all(dir);
}

TEST_CASE("an output over an existing file keeps that file's permissions") {
  std::string dir = temp_dir();
  std::string path = dir + "/secret.json";
  write_output(path, "first");
  REQUIRE(::chmod(path.c_str(), 0600) == 0);
  write_output(path, "second");
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  REQUIRE(::chmod(path.c_str(), 0640) == 0);
  write_output(path, "third");
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  remove_all(dir);
}

TEST_CASE("an output that names a directory is refused before anything is written") {
  std::string dir = temp_dir();
  try {
    OutputFile out(dir);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == dir + " (is a directory)");
  }
  CHECK(entries(dir) == 0);
  remove_all(dir);
}

TEST_CASE("an output that would replace an input of the command is a usage error, the input untouched") {
  std::string dir = temp_dir();
  std::string in = dir + "/in.json", alias = dir + "/alias.json";
  write_output(in, "the input");
  REQUIRE(::symlink("in.json", alias.c_str()) == 0);
  track_inputs(true);
  CHECK(read_file(in) == "the input");
  for (const std::string& out : {in, alias}) {
    try {
      write_output(out, "clobbered");
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::usage);
      CHECK(std::string(e.what()) == out + " (is an input of this command: writing it would replace that input)");
    }
  }
  CHECK(read_back(in) == "the input");
  CHECK(entries(dir) == 2);
  track_inputs(false);  // forgets: the same write is now allowed
  write_output(in, "rewritten");
  CHECK(read_back(in) == "rewritten");
  remove_all(dir);
}

TEST_CASE("a command's outputs are all or nothing") {
  std::string dir = temp_dir();
  {
    OutputSet set;
    set.add(dir + "/a.txt", "a");
    set.add(dir + "/b.txt", "b");
    CHECK(entries(dir) == 2);  // two temporaries, not yet the outputs
    // Destroyed without commit: an error on the way.
  }
  CHECK(entries(dir) == 0);
  {
    OutputSet set;
    set.add(dir + "/a.txt", "a");
    CHECK_THROWS_AS(set.add("/nonexistent-dir-gs/b.txt", "b"), Error);
  }
  CHECK(entries(dir) == 0);
  {
    // A device that fails at the end: the files are never published.
    OutputSet set;
    set.add(dir + "/a.txt", "a");
    set.add("/dev/full", "b");
    CHECK_THROWS_AS(set.commit(), Error);
  }
  CHECK(entries(dir) == 0);
  {
    OutputSet set;
    set.add(dir + "/a.txt", "a");
    set.add(dir + "/b.txt", "b");
    set.commit();
  }
  CHECK(read_back(dir + "/a.txt") == "a");
  CHECK(read_back(dir + "/b.txt") == "b");
  CHECK(entries(dir) == 2);
  remove_all(dir);
}

TEST_CASE("two outputs of one command naming the same file are a usage error") {
  std::string dir = temp_dir();
  OutputSet set;
  set.add(dir + "/a.txt", "one");
  set.add(dir + "/../" + dir.substr(dir.rfind('/') + 1) + "/a.txt", "two");
  try {
    set.commit();
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::usage);
    CHECK(std::string(e.what()).find("names the same file as another output of this command") != std::string::npos);
  }
  remove_all(dir);
}

TEST_CASE("a stream that plainly is not what is expected is refused at its first bytes") {
  // /dev/zero: refused at once, not after reading 4 GiB.
  try {
    read_file("/dev/zero", json_head);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "/dev/zero (not JSON: it starts with byte 0x00)");
  }
  // The same check does not apply to regular files (their reader says what
  // is wrong), nor does it refuse JSON arriving a few bytes at a time.
  std::string dir = temp_dir();
  write_output(dir + "/x.txt", "not json");
  CHECK(read_file(dir + "/x.txt", json_head) == "not json");
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  pid_t writer = ::fork();
  REQUIRE(writer >= 0);
  if (writer == 0) {
    ::close(fds[0]);
    for (const char* piece : {"  \n", "{", "\"a\"", ": 1}"}) {
      (void)!::write(fds[1], piece, std::strlen(piece));
      ::usleep(1000);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  CHECK(read_file("/proc/self/fd/" + std::to_string(fds[0]), json_head) == "  \n{\"a\": 1}");
  ::close(fds[0]);
  int status = 0;
  ::waitpid(writer, &status, 0);
  remove_all(dir);
}
