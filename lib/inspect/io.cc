#include "io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <algorithm>
#include <atomic>
#include <cstring>
#include <iostream>
#include <mutex>
#include <vector>

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

// The message for SIGBUS on a mapped input (a file shrank under us): kept
// ready, naming every file mapped now, for the program's handler to write
// with write(2) alone (mapped_input_fault).
char g_sigbus_message[4096];
std::atomic<size_t> g_sigbus_length{0};
std::mutex g_mapped_lock;
std::vector<std::string> g_mapped;  // paths, one per live mapping

// Rebuilds the message after a mapping comes or goes (with the lock held).
void set_sigbus_message() {
  std::string m;
  for (const auto& p : g_mapped) m += (m.empty() ? "" : " or ") + p;
  m = "graphscope: " + m + " (changed while being read)\n";
  if (m.size() > sizeof g_sigbus_message) m = "graphscope: an input file (changed while being read)\n";
  g_sigbus_length.store(0);
  std::memcpy(g_sigbus_message, m.data(), m.size());
  g_sigbus_length.store(m.size());
}

std::atomic<bool> g_map_inputs{false};

void mapped(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_mapped_lock);
  g_mapped.push_back(path);
  set_sigbus_message();
}

void unmapped(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_mapped_lock);
  auto it = std::find(g_mapped.begin(), g_mapped.end(), path);
  if (it != g_mapped.end()) g_mapped.erase(it);
  set_sigbus_message();
}

// Opens path for reading; refuses directories and files over the limit.
// The size when it is a regular file, else -1.
int open_input(const std::string& path, int64_t& regular_size) {
  regular_size = -1;
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
      regular_size = int64_t(st.st_size);
    }
  }
  return fd;
}

// Reads the rest of fd into out and closes it; throws with the reason.
void read_rest(int fd, std::string& out, const std::string& path) {
  bool ok = read_all(fd, out, path);
  int saved = errno;
  ::close(fd);
  if (!ok) {
    errno = saved;
    throw_input(path, sys_error());
  }
}

}  // namespace

void map_inputs(bool on) { g_map_inputs.store(on); }

const char* mapped_input_fault(size_t* length) {
  *length = g_sigbus_length.load();
  return g_sigbus_message;
}

InputText::InputText(const std::string& path) {
  if (path == "-") {
    if (!read_all(0, owned_, "standard input")) throw_input("standard input", sys_error());
    return;
  }
  int64_t size = 0;
  int fd = open_input(path, size);
  if (size > 0 && g_map_inputs.load()) {
    void* m = ::mmap(nullptr, size_t(size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (m != MAP_FAILED) {
      ::close(fd);
      map_ = static_cast<const char*>(m);
      size_ = size_t(size);
      path_ = path;
      mapped(path_);
      return;
    }
  }
  if (size > 0) owned_.reserve(size_t(size));
  read_rest(fd, owned_, path);
}

InputText::~InputText() {
  if (!map_) return;
  ::munmap(const_cast<char*>(map_), size_);
  unmapped(path_);
}

std::string read_file(const std::string& path) {
  std::string out;
  if (path == "-") {
    if (!read_all(0, out, "standard input")) throw_input("standard input", sys_error());
    return out;
  }
  int64_t size = 0;
  int fd = open_input(path, size);
  if (size > 0) out.reserve(size_t(size));
  read_rest(fd, out, path);
  return out;
}

OutputFile::OutputFile(const std::string& path) : path_(path), to_stdout_(path == "-") {
  if (to_stdout_) return;
  // A temporary file in the target's directory, so the final rename is atomic.
  tmp_ = path + ".tmp.XXXXXX";
  fd_ = ::mkstemp(tmp_.data());
  if (fd_ < 0) throw Error(ExitCode::bad_input, path, "cannot create: " + sys_error());
}

OutputFile::~OutputFile() {
  if (done_ || to_stdout_) return;
  if (fd_ >= 0) ::close(fd_);
  ::unlink(tmp_.c_str());
}

void OutputFile::fail(const std::string& why) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(tmp_.c_str());
  done_ = true;
  throw Error(ExitCode::bad_input, path_, why);
}

void OutputFile::expect(uint64_t bytes) {
  if (to_stdout_ || fd_ < 0 || bytes == 0 || allocated_) return;
  struct stat old {};
  if (::stat(path_.c_str(), &old) != 0 || !S_ISREG(old.st_mode)) return;  // nothing is replaced
  struct statfs fs {};
  constexpr long kExt4 = 0xEF53;  // EXT4_SUPER_MAGIC (ext2 and ext3 share it)
  if (::fstatfs(fd_, &fs) != 0 || long(fs.f_type) != kExt4) return;
  if (::fallocate(fd_, 0, 0, off_t(bytes)) == 0) allocated_ = bytes;  // else as without
}

void OutputFile::write(std::string_view data) {
  if (to_stdout_) {
    std::cout.write(data.data(), std::streamsize(data.size()));
    if (!std::cout) throw Error(ExitCode::bad_input, "standard output", "write failed");
    return;
  }
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot write: " + sys_error());
    }
    done += size_t(n);
  }
  written_ += data.size();
}

void OutputFile::commit() {
  if (to_stdout_) {
    std::cout.flush();
    if (!std::cout) throw Error(ExitCode::bad_input, "standard output", "write failed");
    return;
  }
  // Room allocated beyond what was written (expect) is cut off.
  if (allocated_ > written_ && ::ftruncate(fd_, off_t(written_)) != 0) fail("cannot write: " + sys_error());
  // mkstemp creates 0600; give the file the permissions a plain create would.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd_, 0666 & ~mask);
  // No fsync: the rename makes the file appear whole or not at all to every
  // reader; surviving a power cut is not what an analysis tool's output
  // needs, and fsync of a large document cost more than writing it.
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("cannot write: " + sys_error());
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) fail("cannot write: " + sys_error());
  done_ = true;
}

namespace {
void write_pieces(const std::string& path, const std::string_view* pieces, size_t count) {
  OutputFile out(path);
  uint64_t total = 0;
  for (size_t i = 0; i < count; ++i) total += pieces[i].size();
  out.expect(total);
  for (size_t i = 0; i < count; ++i) out.write(pieces[i]);
  out.commit();
}
}  // namespace

void write_output(const std::string& path, std::string_view data) { write_pieces(path, &data, 1); }

void write_output(const std::string& path, const std::vector<std::string>& pieces) {
  std::vector<std::string_view> views(pieces.begin(), pieces.end());
  write_pieces(path, views.data(), views.size());
}

}  // namespace graphscope
