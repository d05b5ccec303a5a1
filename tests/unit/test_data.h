// Paths to the recorded fixtures in tests/data, for unit tests.
#pragma once

#include <string>

#include "inspect/core/io.h"

namespace graphscope::test {

inline std::string data_path(const std::string& rel) { return std::string(GS_TEST_DATA) + "/" + rel; }
inline std::string read_data(const std::string& rel) { return read_file(data_path(rel)); }

}  // namespace graphscope::test
