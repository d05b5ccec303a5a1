#include "io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "error.h"

namespace graphscope {
namespace {

std::string sys_error() { return std::strerror(errno); }

// Reads everything from fd into out; false on a read error.
bool read_all(int fd, std::string& out, const std::string& path) {
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) return true;
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (out.size() + size_t(n) > kMaxInputBytes)
      throw_input(path, "larger than " + std::to_string(kMaxInputBytes >> 30) + " GiB");
    out.append(buf, size_t(n));
  }
}

}  // namespace

std::string read_file(const std::string& path) {
  std::string out;
  if (path == "-") {
    if (!read_all(0, out, "standard input")) throw_input("standard input", sys_error());
    return out;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_input(path, sys_error());
  struct stat st;
  if (::fstat(fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      ::close(fd);
      throw_input(path, "is a directory");
    }
    if (S_ISREG(st.st_mode)) {
      if (uint64_t(st.st_size) > kMaxInputBytes) {
        ::close(fd);
        throw_input(path, "larger than " + std::to_string(kMaxInputBytes >> 30) + " GiB");
      }
      out.reserve(size_t(st.st_size));
    }
  }
  bool ok = read_all(fd, out, path);
  int saved = errno;
  ::close(fd);
  if (!ok) {
    errno = saved;
    throw_input(path, sys_error());
  }
  return out;
}

void write_output(const std::string& path, std::string_view data) {
  if (path == "-") {
    std::cout.write(data.data(), std::streamsize(data.size()));
    std::cout.flush();
    if (!std::cout) throw Error(ExitCode::bad_input, "standard output", "write failed");
    return;
  }
  // A temporary file in the target's directory, so the final rename is atomic.
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw Error(ExitCode::bad_input, path, "cannot create: " + sys_error());
  auto fail = [&](const std::string& why) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw Error(ExitCode::bad_input, path, why);
  };
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot write: " + sys_error());
    }
    done += size_t(n);
  }
  // mkstemp creates 0600; give the file the permissions a plain create would.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  // No fsync: the rename makes the file appear whole or not at all to every
  // reader; surviving a power cut is not what an analysis tool's output
  // needs, and fsync of a large document cost more than writing it.
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw Error(ExitCode::bad_input, path, "cannot write: " + sys_error());
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = sys_error();
    ::unlink(tmp.c_str());
    throw Error(ExitCode::bad_input, path, "cannot write: " + why);
  }
}

}  // namespace graphscope
