#include "io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
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

// Where the text of a stream starts, past a UTF-8 byte order mark and white
// space.
size_t text_start(std::string_view s) {
  size_t i = s.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) ++i;
  return i;
}

// Reads everything from fd into out; false on a read error. head, when
// given, sees the first bytes as soon as there are enough of them.
bool read_all(int fd, std::string& out, const std::string& path, HeadCheck head) {
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) {
      if (head) head(out, path);
      return true;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (out.size() + size_t(n) > kMaxInputBytes)
      throw_input(path, "larger than " + std::to_string(kMaxInputBytes >> 30) + " GiB");
    out.append(buf, size_t(n));
    if (head && out.size() - text_start(out) >= 64) {
      head(out, path);
      head = nullptr;
    }
  }
}

// The regular files read since track_inputs(true), by device and inode.
struct InputFile {
  dev_t dev;
  ino_t ino;
};
std::atomic<bool> g_track_inputs{false};
std::mutex g_inputs_lock;
std::vector<InputFile> g_inputs;

void note_input(const struct stat& st) {
  if (!g_track_inputs.load() || !S_ISREG(st.st_mode)) return;
  std::lock_guard<std::mutex> lock(g_inputs_lock);
  for (const auto& f : g_inputs)
    if (f.dev == st.st_dev && f.ino == st.st_ino) return;
  g_inputs.push_back({st.st_dev, st.st_ino});
}

bool is_input(const struct stat& st) {
  std::lock_guard<std::mutex> lock(g_inputs_lock);
  for (const auto& f : g_inputs)
    if (f.dev == st.st_dev && f.ino == st.st_ino) return true;
  return false;
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
    note_input(st);
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
void read_rest(int fd, std::string& out, const std::string& path, HeadCheck head) {
  bool ok = false;
  try {
    ok = read_all(fd, out, path, head);
  } catch (...) {
    ::close(fd);
    throw;
  }
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

InputText::InputText(const std::string& path, HeadCheck head) {
  if (path == "-") {
    if (!read_all(0, owned_, "standard input", head)) throw_input("standard input", sys_error());
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
  read_rest(fd, owned_, path, size >= 0 ? nullptr : head);
}

InputText::~InputText() {
  if (!map_) return;
  ::munmap(const_cast<char*>(map_), size_);
  unmapped(path_);
}

std::string read_file(const std::string& path, HeadCheck head) {
  std::string out;
  if (path == "-") {
    if (!read_all(0, out, "standard input", head)) throw_input("standard input", sys_error());
    return out;
  }
  int64_t size = 0;
  int fd = open_input(path, size);
  if (size > 0) out.reserve(size_t(size));
  read_rest(fd, out, path, size >= 0 ? nullptr : head);
  return out;
}

std::string file_type_name(unsigned mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISREG(mode)) return "a regular file";
  return "of an unknown type";
}

std::string read_regular_file(const std::string& path, const std::string& shown_as, const FileId* expected) {
  const std::string& shown = shown_as.empty() ? path : shown_as;
  // O_NONBLOCK: a FIFO opens at once instead of waiting for a writer, and
  // fstat() refuses it before any read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw_input(shown, sys_error());
  auto fail = [&](const std::string& why) {
    ::close(fd);
    throw_input(shown, why);
  };
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(sys_error());
  if (!S_ISREG(st.st_mode)) fail("is " + file_type_name(st.st_mode) + ", not a regular file");
  if (expected && (uint64_t(st.st_dev) != expected->device || uint64_t(st.st_ino) != expected->inode))
    fail("replaced while being read");
  if (uint64_t(st.st_size) > kMaxInputBytes) fail("larger than " + std::to_string(kMaxInputBytes >> 30) + " GiB");
  note_input(st);
  const int flags = ::fcntl(fd, F_GETFL);  // a regular file: read normally from here on
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  std::string out;
  out.reserve(size_t(st.st_size));
  read_rest(fd, out, shown, nullptr);
  return out;
}

void json_head(std::string_view head, const std::string& origin) {
  const size_t i = text_start(head);
  if (i == head.size() || head[i] == '{' || head[i] == '[') return;  // empty: the parser says so
  const auto c = static_cast<unsigned char>(head[i]);
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%02x", c);
  throw_input(origin, std::string("not JSON: it starts with ") +
                          (c >= 0x20 && c < 0x7f ? "'" + std::string(1, char(c)) + "'" : std::string("byte ") + buf));
}

void track_inputs(bool on) {
  g_track_inputs.store(on);
  if (!on) {
    std::lock_guard<std::mutex> lock(g_inputs_lock);
    g_inputs.clear();
  }
}

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// The permissions a plain create gives a new file: 0666 less the umask.
mode_t new_file_mode() {
  static const mode_t mode = [] {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return mode_t(0666 & ~mask);
  }();
  return mode;
}

// The text of symbolic link `at`, made absolute or relative as `at` is.
std::string follow_link(const std::string& at, const std::string& path) {
  std::string link(4096, '\0');
  const ssize_t n = ::readlink(at.c_str(), link.data(), link.size());
  if (n < 0 || size_t(n) >= link.size()) throw Error(ExitCode::bad_input, path, "cannot create: " + sys_error());
  link.resize(size_t(n));
  if (!link.empty() && link[0] == '/') return link;
  const size_t slash = at.rfind('/');
  return slash == std::string::npos ? link : at.substr(0, slash + 1) + link;
}

// A file's path as one spelling: its directory resolved, its name as it is.
std::string canonical_file(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  char* real = ::realpath(dir.c_str(), nullptr);
  if (!real) return path;
  std::string out = std::string(real) + "/" + path.substr(slash == std::string::npos ? 0 : slash + 1);
  std::free(real);
  return out;
}

}  // namespace

OutputFile::OutputFile(const std::string& path) : OutputFile(path, false) {}

OutputFile::OutputFile(const std::string& path, bool hold_stdout) : path_(path) {
  if (path == "-") {
    kind_ = hold_stdout ? Kind::held : Kind::stream;
    return;
  }
  // Symbolic links are followed by hand, as open() would: a link into /proc
  // (/dev/stdout, /dev/fd/N) names a file this process has open, which is
  // written through like a device; a link to a regular file stays, and its
  // target is what gets replaced.
  std::string at = path;
  bool through = starts_with(path, "/proc/") || starts_with(path, "/dev/fd/");
  bool exists = false;
  struct stat st {};
  for (int hops = 0; !through; ++hops) {
    if (::lstat(at.c_str(), &st) != 0) {
      if (errno != ENOENT) throw Error(ExitCode::bad_input, path, "cannot create: " + sys_error());
      break;  // a new file (or a dangling link's target, as a shell makes it)
    }
    if (!S_ISLNK(st.st_mode)) {
      exists = true;
      break;
    }
    if (hops == 40) throw Error(ExitCode::bad_input, path, "cannot create: too many levels of symbolic links");
    at = follow_link(at, path);
    through = starts_with(at, "/proc/");
  }
  if (exists && S_ISDIR(st.st_mode)) throw Error(ExitCode::bad_input, path, "is a directory");
  if (exists && !S_ISREG(st.st_mode)) through = true;
  if (through) {
    kind_ = Kind::held;
    return;
  }
  if (exists) {
    existed_ = true;
    mode_ = st.st_mode & 07777;
    uid_ = st.st_uid;
    gid_ = st.st_gid;
  }
  target_ = at;
  // A temporary file in the target's directory, so the final rename is atomic.
  tmp_ = target_ + ".tmp.XXXXXX";
  fd_ = ::mkstemp(tmp_.data());
  if (fd_ < 0) throw Error(ExitCode::bad_input, path, "cannot create: " + sys_error());
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::discard() {
  if (done_ || kind_ != Kind::replace) return;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(tmp_.c_str());
  done_ = true;
}

void OutputFile::fail(const std::string& why) {
  discard();
  done_ = true;
  throw Error(ExitCode::bad_input, kind_ == Kind::stream ? std::string("standard output") : path_, why);
}

void OutputFile::expect(uint64_t bytes) {
  if (kind_ != Kind::replace || fd_ < 0 || bytes == 0 || allocated_ || !existed_) return;  // nothing is replaced
  struct statfs fs {};
  constexpr long kExt4 = 0xEF53;  // EXT4_SUPER_MAGIC (ext2 and ext3 share it)
  if (::fstatfs(fd_, &fs) != 0 || long(fs.f_type) != kExt4) return;
  if (::fallocate(fd_, 0, 0, off_t(bytes)) == 0) allocated_ = bytes;  // else as without
}

namespace {
// Writes all of data to fd; false with errno on failure.
bool write_all(int fd, std::string_view data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += size_t(n);
  }
  return true;
}
}  // namespace

void OutputFile::write(std::string_view data) {
  switch (kind_) {
    case Kind::stream:
      std::cout.write(data.data(), std::streamsize(data.size()));
      if (!std::cout) fail("write failed");
      return;
    case Kind::held: held_.append(data); return;
    case Kind::replace:
      if (!write_all(fd_, data)) fail("cannot write: " + sys_error());
      written_ += data.size();
      return;
  }
}

void OutputFile::seal() {
  if (sealed_) return;
  sealed_ = true;
  if (kind_ != Kind::replace) return;
  // Room allocated beyond what was written (expect) is cut off.
  if (allocated_ > written_ && ::ftruncate(fd_, off_t(written_)) != 0) fail("cannot write: " + sys_error());
  // mkstemp creates 0600: a new file gets what a plain create would give it,
  // a replaced one keeps its permissions and, where this process may give
  // it, its owner (the owner first: changing it clears set-id bits).
  if (existed_ && (uid_ != ::geteuid() || gid_ != ::getegid())) {
    int ignored = ::fchown(fd_, uid_t(uid_), gid_t(gid_));  // not ours to give away: it stays ours
    (void)ignored;
  }
  ::fchmod(fd_, existed_ ? mode_t(mode_) : new_file_mode());
  // No fsync: the rename makes the file appear whole or not at all to every
  // reader; surviving a power cut is not what an analysis tool's output
  // needs, and fsync of a large document cost more than writing it.
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("cannot write: " + sys_error());
}

void OutputFile::check_not_input() const {
  if (kind_ != Kind::replace) return;
  struct stat st {};
  if (::stat(target_.c_str(), &st) == 0 && S_ISREG(st.st_mode) && is_input(st))
    throw Error(ExitCode::usage, path_, "is an input of this command: writing it would replace that input");
}

void OutputFile::publish() {
  if (done_) return;
  switch (kind_) {
    case Kind::stream:
      std::cout.flush();
      if (!std::cout) fail("write failed");
      break;
    case Kind::held:
      if (path_ == "-") {
        std::cout.write(held_.data(), std::streamsize(held_.size()));
        std::cout.flush();
        if (!std::cout) fail("write failed");
      } else {
        // As a shell redirection opens it: a device, FIFO or /proc link is
        // written through, never replaced.
        const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0) fail("cannot write: " + sys_error());
        const bool ok = write_all(fd, held_);
        const int saved = errno;
        if (::close(fd) != 0 && ok) fail("cannot write: " + sys_error());
        errno = saved;
        if (!ok) fail("cannot write: " + sys_error());
      }
      held_.clear();
      held_.shrink_to_fit();
      break;
    case Kind::replace:
      if (::rename(tmp_.c_str(), target_.c_str()) != 0) fail("cannot write: " + sys_error());
      break;
  }
  done_ = true;
}

void OutputFile::commit() {
  seal();
  check_not_input();
  publish();
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

OutputFile& OutputSet::file(const std::string& path) {
  files_.push_back(std::unique_ptr<OutputFile>(new OutputFile(path, true)));
  return *files_.back();
}

void OutputSet::add(const std::string& path, std::string_view data) {
  OutputFile& f = file(path);
  f.expect(data.size());
  f.write(data);
}

void OutputSet::commit() {
  for (auto& f : files_) f->seal();
  for (auto& f : files_) f->check_not_input();
  // Two outputs naming one file: the second would silently replace the first.
  std::vector<std::string> names;
  for (auto& f : files_) {
    if (f->kind_ != OutputFile::Kind::replace) continue;
    std::string name = canonical_file(f->target_);
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) throw Error(ExitCode::usage, f->path_, "names the same file as another output of this command");
    names.push_back(std::move(name));
  }
  // Devices and FIFOs first (they can still fail: /dev/full), then the
  // renames, which fail only if the directory changed under us: the files
  // new by then are taken back. Standard output last.
  for (auto& f : files_)
    if (f->kind_ == OutputFile::Kind::held && f->path_ != "-") f->publish();
  std::vector<OutputFile*> renamed;
  try {
    for (auto& f : files_)
      if (f->kind_ == OutputFile::Kind::replace) {
        f->publish();
        renamed.push_back(f.get());
      }
  } catch (...) {
    for (OutputFile* f : renamed)
      if (!f->existed_) ::unlink(f->target_.c_str());
    throw;
  }
  for (auto& f : files_)
    if (f->kind_ != OutputFile::Kind::replace) f->publish();
}

}  // namespace graphscope
