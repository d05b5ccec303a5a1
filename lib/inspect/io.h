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

/// Writes data to path atomically ("-" writes to standard output). Throws
/// Error(bad_input) when the file cannot be created or written; nothing is
/// left at path or beside it then.
void write_output(const std::string& path, std::string_view data);

}  // namespace graphscope
