// File input and output. Every output graphscope writes goes through
// OutputFile: a temporary file beside the target, renamed into place, so no
// half-written file is ever left behind; a device or FIFO is written through,
// never replaced; a command's several outputs are published together
// (OutputSet).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace graphscope {

/// Largest input file graphscope reads (bytes). Larger files are refused
/// before anything is allocated for them.
inline constexpr size_t kMaxInputBytes = size_t(4) << 30;

/// Head of a streamed input: called once with its first bytes (at least 64
/// past any leading white space, or all of a shorter input), before the rest
/// is read, so a stream that is plainly not what is expected (/dev/zero, a
/// binary file behind a pipe) is refused at once instead of after 4 GiB.
/// Throws to refuse. Regular files are read whole without it (their size
/// is known, and their reader says what is wrong).
using HeadCheck = void (*)(std::string_view head, const std::string& origin);

/// A HeadCheck for JSON documents: the first byte past white space (and a
/// UTF-8 byte order mark) must open an object or an array.
void json_head(std::string_view head, const std::string& origin);

/// Reads a whole file ("-" is standard input). Throws Error(bad_input) naming
/// the path and the system's reason.
std::string read_file(const std::string& path, HeadCheck head = nullptr);

/// A file that must be a regular one, such as a file named inside a
/// directory other programs wrote: opened without blocking (a FIFO there
/// would wait for a writer forever), refused unless it is a regular file
/// ("is a FIFO, not a regular file") and, when `expected` is given, the
/// very file (device, inode) checked before ("replaced while being
/// read"); then read whole. Opens `path`; messages name `shown` (the path
/// when empty).
struct FileId {
  uint64_t device = 0, inode = 0;
};
std::string read_regular_file(const std::string& path, const std::string& shown = "",
                              const FileId* expected = nullptr);
/// "a FIFO", "a directory", "a regular file": a file type for messages.
std::string file_type_name(unsigned mode);

/// The program's choice (graphscope's CLI makes it; off by default): map
/// large regular inputs into memory instead of copying them. A mapped file
/// that shrinks while it is read raises SIGBUS in the reading thread, so a
/// program that turns this on handles SIGBUS itself (the CLI writes
/// mapped_input_fault() and exits 3). The library installs no signal
/// handler and never ends the process.
void map_inputs(bool on);

/// For a program's SIGBUS handler: the line "graphscope: PATH (changed while
/// being read)\n" naming every file mapped now, its length in *length (0
/// when none is). Async-signal-safe: no allocation, no lock.
const char* mapped_input_fault(size_t* length);

/// A whole input file, for the large ones (traces run to gigabytes): after
/// map_inputs(true), a regular file is mapped into memory, not
/// copied; anything else ("-" for standard input, pipes, empty files), or
/// every file without that call, is read. Same checks and messages as
/// read_file.
class InputText {
 public:
  explicit InputText(const std::string& path, HeadCheck head = nullptr);
  ~InputText();
  InputText(const InputText&) = delete;
  InputText& operator=(const InputText&) = delete;
  std::string_view view() const { return map_ ? std::string_view(map_, size_) : std::string_view(owned_); }

 private:
  std::string owned_;
  std::string path_;  // of the mapping
  const char* map_ = nullptr;
  size_t size_ = 0;
};

/// The CLI's choice (off by default, so a long-lived program that reads
/// many files through the library keeps nothing): remember every regular
/// file read from now on (device and inode), so that an output that would
/// replace one of them is refused (OutputFile::commit, OutputSet::commit).
void track_inputs(bool on);

/// Writes data to path ("-" writes to standard output) as OutputFile does.
/// Throws Error(bad_input) when the file cannot be created or written, and
/// Error(usage) when path is one of the command's inputs (track_inputs);
/// nothing is left at path or beside it then.
void write_output(const std::string& path, std::string_view data);
/// The same for a document made in pieces, written one after another.
void write_output(const std::string& path, const std::vector<std::string>& pieces);

/// An output, written as a shell redirection would write it but never half:
/// - a new file, or a regular file that exists (through any symbolic links:
///   the link stays, its target is replaced), is made complete in a
///   temporary file beside it and renamed into place at commit(); a file it
///   replaces keeps its permissions (and, where allowed, its owner);
/// - a path that exists and is not a regular file (a character device such
///   as /dev/null, a FIFO, a socket, /dev/stdout and the /proc/self/fd
///   links) is written through, never replaced: held in memory, then opened
///   and written at commit();
/// - "-" is standard output, written as it comes (or at commit() within an
///   OutputSet).
/// A directory is refused when the output is made. write() each piece in
/// order, then commit(); destroyed without commit() (an error on the way),
/// it leaves nothing at path or beside it.
class OutputFile {
 public:
  explicit OutputFile(const std::string& path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  /// About how many bytes will be written in all. Where the file replaces
  /// one on ext4, their blocks are allocated at once (fallocate) and what
  /// is not written is cut off at commit(): otherwise the rename over the
  /// old file makes ext4 allocate the new one's blocks there and then
  /// (auto_da_alloc), which took 18-28 ms for 28.8 MB on the GPU machine,
  /// against 5 ms with the blocks allocated first. Elsewhere it does
  /// nothing (on tmpfs, allocating first would zero the pages twice).
  void expect(uint64_t bytes);
  void write(std::string_view data);
  void commit();
  const std::string& path() const { return path_; }

 private:
  friend class OutputSet;
  enum class Kind { stream, held, replace };  // standard output as it comes; held in memory; temporary + rename
  OutputFile(const std::string& path, bool hold_stdout);
  [[noreturn]] void fail(const std::string& why);
  void seal();                 // everything written and closed; nothing visible yet
  void check_not_input() const;
  void publish();              // visible: written through, renamed or printed
  void discard();
  std::string path_, target_, tmp_;  // as given; the regular file replaced (links followed); the temporary
  std::string held_;
  Kind kind_ = Kind::replace;
  int fd_ = -1;
  bool sealed_ = false, done_ = false, existed_ = false;
  unsigned mode_ = 0, uid_ = 0, gid_ = 0;  // of the file replaced
  uint64_t written_ = 0, allocated_ = 0;
};

/// One command's outputs, all or nothing: each is made complete beside its
/// target (or in memory), and only once every one has succeeded are they
/// published, devices and FIFOs first, then the renames, standard output
/// last. commit() first refuses (Error(usage)) an output that is one of the
/// command's inputs or names the same file as another output. Destroyed
/// without commit(), none exists.
class OutputSet {
 public:
  OutputSet() = default;
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;
  /// The output at path, to be filled by the caller.
  OutputFile& file(const std::string& path);
  /// file(path) with data written in full.
  void add(const std::string& path, std::string_view data);
  bool empty() const { return files_.empty(); }
  void commit();

 private:
  std::vector<std::unique_ptr<OutputFile>> files_;
};

}  // namespace graphscope
