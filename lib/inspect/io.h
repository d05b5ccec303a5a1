// File input and atomic output. Every output graphscope writes goes through
// write_output(): a temporary file beside the target, renamed into place, so
// no half-written file is ever left behind.
#pragma once

#include <string>
#include <string_view>

namespace graphscope {

/// Largest input file graphscope reads (bytes). Larger files are refused
/// before anything is allocated for them.
inline constexpr size_t kMaxInputBytes = size_t(4) << 30;

/// Reads a whole file ("-" is standard input). Throws Error(bad_input) naming
/// the path and the system's reason.
std::string read_file(const std::string& path);

/// The program's choice (graphscope's CLI makes it; the library never does):
/// map large inputs into memory instead of copying them, and, should a
/// mapped file shrink while it is read, end the process with one line,
/// "graphscope: PATH (changed while being read)", and exit code 3 instead of
/// SIGBUS. Installs a process-wide SIGBUS handler, so a program that links
/// the library and does not call it gets its inputs read, and keeps its own
/// signal handling.
void map_inputs_and_guard_sigbus();

/// A whole input file, for the large ones (traces run to gigabytes): after
/// map_inputs_and_guard_sigbus(), a regular file is mapped into memory, not
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

}  // namespace graphscope
