#include "graphviz.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace graphscope::graphviz {
namespace {

std::mutex& lock() {
  static std::mutex m;
  return m;
}

std::string* g_messages = nullptr;  // the live session's, guarded by lock()

int collect(char* msg) {
  if (g_messages && msg && g_messages->size() < 4096) {
    try {
      g_messages->append(msg);
    } catch (...) {
    }
  }
  return 0;
}

}  // namespace

Session::Session() : lock_(lock()) {
  prev_handler_ = agseterrf(collect);
  prev_level_ = agseterr(AGWARN);  // every message goes to the handler
  g_messages = &messages_;
}

Session::~Session() {
  g_messages = nullptr;
  agseterr(prev_level_);
  agseterrf(prev_handler_);
}

std::string Session::message(const char* fallback) {
  std::string out;
  bool space = false;
  for (char c : g_messages ? *g_messages : std::string()) {
    const bool ws = c == '\n' || c == '\r' || c == '\t' || c == ' ';
    if (ws) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  for (std::string_view prefix : {"Error: ", "Warning: "})
    if (out.compare(0, prefix.size(), prefix) == 0) out.erase(0, prefix.size());
  if (out.size() > 300) out = out.substr(0, 297) + "...";
  return out.empty() ? fallback : out;
}

namespace {

using std::string_view;

// cgraph reading: one parse at a time (graphviz::Session), errors captured
// instead of printed, the text read from
// memory in large pieces (agmemread hands the lexer one line at a time,
// which costs a third of the parse).

struct MemChannel {
  const char* data;
  size_t size, pos;
};

int channel_read(void* chan, char* buf, int bufsize) {
  auto* c = static_cast<MemChannel*>(chan);
  if (bufsize <= 0 || c->pos >= c->size) return 0;
  size_t n = std::min(c->size - c->pos, size_t(bufsize));
  std::memcpy(buf, c->data + c->pos, n);
  c->pos += n;
  return int(n);
}

Agiodisc_t g_io_disc = {channel_read, nullptr, nullptr};
Agdisc_t g_disc = {&AgMemDisc, &AgIdDisc, &g_io_disc};


class CgraphSession {
 public:
  CgraphSession() : errors_(session_.messages()) {
    g_io_disc.putstr = AgIoDisc.putstr;
    g_io_disc.flush = AgIoDisc.flush;
    // The lexer keeps what it buffered past the end of the last graph it
    // read, for the next read: drain whatever an earlier reader left.
    MemChannel empty{"", 0, 0};
    drain(empty);
  }
  CgraphSession(const CgraphSession&) = delete;
  CgraphSession& operator=(const CgraphSession&) = delete;

  // One graph from the channel; null when there was none or it had errors
  // (errors() then says why).
  GraphPtr read(MemChannel& ch) {
    errors_.clear();
    agreseterrors();
    agreadline(1);
    if (ch.size) text_ = string_view(ch.data, ch.size);
    GraphPtr g(agread(&ch, &g_disc));
    failed_ = agerrors() >= AGERR;
    if (failed_ && g) {
      // A parser stack overflow ("memory exhausted") returns the partial
      // graph with the lexer's buffer still full.
      g.reset();
      MemChannel empty{"", 0, 0};
      drain(empty);
    }
    // No graph: the text ended, or the parser gave up, possibly inside a
    // string or comment.
    unterminated_ = !g && reset_lexer() && !failed_;
    return failed_ ? GraphPtr() : std::move(g);
  }
  bool failed() const { return failed_; }
  // The last read found no graph because the text ended inside a quoted
  // string, an HTML string or a comment.
  bool unterminated() const { return unterminated_; }
  const std::string& errors() const { return errors_; }

  // Reads graphs until none is left, so the lexer holds nothing more.
  // Keeps errors() as it was.
  void drain(MemChannel& ch) {
    std::string kept;
    kept.swap(errors_);
    for (int i = 0; i < 1000000; ++i) {
      agreseterrors();
      GraphPtr g(agread(&ch, &g_disc));
      if (!g) {
        reset_lexer();
        break;
      }
    }
    errors_.swap(kept);
  }

 private:
  // A text that ends inside a quoted string, an HTML string or a comment
  // (at the end, or skipped over by the parser after a syntax error) leaves
  // cgraph's lexer in that state: the next read, of another text, would
  // start inside the string. A syntax error puts the lexer back, so feed it
  // closers until one comes. Returns whether the lexer had been left inside
  // something.
  bool reset_lexer() {
    std::string kept;
    kept.swap(errors_);
    bool inside = true;
    for (int i = 0; i < 4; ++i) {
      std::string closer = i == 0 ? "}" : i == 1 ? "\"}" : "*/}";
      // The last closes an HTML string, nested at most once per '<' read.
      if (i == 3) closer = std::string(size_t(std::count(text_.begin(), text_.end(), '<')) + 1, '>') + "}";
      MemChannel c{closer.data(), closer.size(), 0};
      agreseterrors();
      GraphPtr g(agread(&c, &g_disc));
      if (agerrors() >= AGERR) {
        inside = i > 0;
        break;
      }
    }
    agreseterrors();
    errors_.swap(kept);
    return inside;
  }

  graphviz::Session session_;  // the lock, and cgraph's messages
  std::string& errors_;
  bool failed_ = false, unterminated_ = false;
  string_view text_;  // the text read in this session
};

}  // namespace

struct DotText::Impl {
  CgraphSession session;
  MemChannel channel;
};

DotText::DotText(std::string_view text) : impl_(new Impl{{}, {text.data(), text.size(), 0}}) {}
DotText::~DotText() = default;
GraphPtr DotText::read() { return impl_->session.read(impl_->channel); }
void DotText::drain() { impl_->session.drain(impl_->channel); }
bool DotText::failed() const { return impl_->session.failed(); }
bool DotText::unterminated() const { return impl_->session.unterminated(); }
const std::string& DotText::errors() const { return impl_->session.errors(); }

size_t layout_segments(Agraph_t* g) {
  // Kahn's order over the picture's nodes (clusters' nodes are the root
  // graph's too), each node's rank one past its latest predecessor's.
  std::unordered_map<Agnode_t*, size_t> index;
  std::vector<Agnode_t*> nodes;
  for (Agnode_t* n = agfstnode(g); n; n = agnxtnode(g, n)) {
    index.emplace(n, nodes.size());
    nodes.push_back(n);
  }
  std::vector<size_t> waiting(nodes.size(), 0), rank(nodes.size(), 0), ready;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (Agedge_t* e = agfstin(g, nodes[i]); e; e = agnxtin(g, e))
      if (aghead(e) != agtail(e)) ++waiting[i];
    if (!waiting[i]) ready.push_back(i);
  }
  while (!ready.empty()) {
    const size_t i = ready.back();
    ready.pop_back();
    for (Agedge_t* e = agfstout(g, nodes[i]); e; e = agnxtout(g, e)) {
      if (aghead(e) == agtail(e)) continue;
      const size_t j = index[aghead(e)];
      rank[j] = std::max(rank[j], rank[i] + 1);
      if (--waiting[j] == 0) ready.push_back(j);
    }
  }
  size_t segments = 0;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (Agedge_t* e = agfstout(g, nodes[i]); e; e = agnxtout(g, e)) {
      const size_t j = index[aghead(e)];
      segments += rank[j] > rank[i] ? rank[j] - rank[i] : 1;
    }
  return segments;
}

}  // namespace graphscope::graphviz
