// Graphviz's cgraph and gvc keep process-wide state (the parser, the error
// handler and level, the lexer's buffer): every use of them in graphscope,
// reading or writing, holds this one lock.
#pragma once

#include <mutex>

namespace graphscope {

inline std::mutex& graphviz_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace graphscope
