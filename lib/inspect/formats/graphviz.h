// Graphviz, used by both the DOT reader (cgraph) and the picture writer
// (cgraph and gvc). Internal to lib/inspect.
#pragma once

#include <graphviz/cgraph.h>

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace graphscope::graphviz {

struct GraphCloser {
  void operator()(Agraph_t* g) const {
    if (g) agclose(g);
  }
};
using GraphPtr = std::unique_ptr<Agraph_t, GraphCloser>;

/// For as long as it lives: holds the one lock of every use of Graphviz in
/// the process (cgraph's parser, error handler and level, and its lexer's
/// buffer are process-wide), and collects what cgraph says (up to 4 KiB)
/// instead of letting it print. Restores the previous handler afterwards.
class Session {
 public:
  Session();
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// What cgraph said so far, as it said it; callers may clear or swap it.
  std::string& messages() { return messages_; }
  /// The live session's messages on one line without "Error: " /
  /// "Warning: " (at most 300 characters); `fallback` when there were none.
  /// Call with a session alive.
  static std::string message(const char* fallback);

 private:
  std::lock_guard<std::mutex> lock_;
  agusererrf prev_handler_ = nullptr;
  agerrlevel_t prev_level_ = AGWARN;
  std::string messages_;
};

/// How much routing dot's layout of g would do: every edge counted once per
/// rank it crosses, ranks taken as the longest path from a source (an upper
/// bound of dot's own ranking, which shortens edges). dot splits an edge
/// crossing k ranks into k segments and orders them on every rank: its
/// time grows with this count, not with the nodes alone (a 40-node dense
/// DAG routes 10,660 segments and took 9 s; a 5,000-node chain 4,999 and
/// 1.7 s). Edges of a cycle, which dot reverses, count once each.
size_t layout_segments(Agraph_t* g);

/// DOT graphs read one after another from a text in memory, in a Session
/// of its own: one read at a time, cgraph's messages captured, and cgraph's
/// lexer left clean for the next text whatever this one held.
class DotText {
 public:
  explicit DotText(std::string_view text);  // the text must outlive this
  ~DotText();
  DotText(const DotText&) = delete;
  DotText& operator=(const DotText&) = delete;

  /// The next graph; null when there was none or it had errors (failed(),
  /// unterminated() and errors() say which).
  GraphPtr read();
  /// Reads graphs until none is left; keeps errors() as it was.
  void drain();
  /// The last read met a syntax error (errors() has cgraph's words).
  bool failed() const;
  /// The last read found no graph because the text ended inside a quoted
  /// string, an HTML string or a comment.
  bool unterminated() const;
  const std::string& errors() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphscope::graphviz
