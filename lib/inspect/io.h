// File input and atomic output. Every output graphscope writes goes through
// write_output(): a temporary file beside the target, renamed into place, so
// no half-written file is ever left behind.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace graphscope {

/// Largest input file graphscope reads (bytes). Larger files are refused
/// before anything is allocated for them.
inline constexpr size_t kMaxInputBytes = size_t(4) << 30;

/// Reads a whole file ("-" is standard input). Throws Error(bad_input) naming
/// the path and the system's reason.
std::string read_file(const std::string& path);

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
  explicit InputText(const std::string& path);
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

/// Writes data to path atomically ("-" writes to standard output). Throws
/// Error(bad_input) when the file cannot be created or written; nothing is
/// left at path or beside it then.
void write_output(const std::string& path, std::string_view data);
/// The same for a document made in pieces, written one after another.
void write_output(const std::string& path, const std::vector<std::string>& pieces);

/// The same, for a document written while it is still being made: write()
/// each piece in order, then commit(). Destroyed without commit() (an error
/// on the way), it leaves nothing at path or beside it.
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

 private:
  [[noreturn]] void fail(const std::string& why);
  std::string path_, tmp_;
  int fd_ = -1;  // -1: standard output, or done
  bool to_stdout_ = false, done_ = false;
  uint64_t written_ = 0, allocated_ = 0;
};

}  // namespace graphscope
