#include "nvdot_label.h"

namespace graphscope::nvdot {

string_view trim(string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

bool starts_with(string_view s, string_view p) { return s.size() >= p.size() && s.compare(0, p.size(), p) == 0; }

// A piece of input quoted in an error message: short, printable ASCII.
std::string shown(const char* s) { return shown(s ? string_view(s) : string_view()); }
std::string shown(string_view s) {
  constexpr size_t kMax = 60;
  std::string out;
  for (size_t i = 0; i < s.size() && i < kMax; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\n') out += "\\n";
    else out.push_back(c >= 0x20 && c < 0x7f ? char(c) : '?');
  }
  if (s.size() > kMax) out += "...";
  return out;
}

// Removes Graphviz record escapes ("\<" -> "<", "\{" -> "{").
void unescape_into(string_view s, std::string& out) {
  out.clear();
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) ++i;
    out.push_back(s[i]);
  }
}

// "graph_G" -> G; false when s is not exactly that form.
bool parse_graph_ref(string_view s, uint32_t* g) {
  if (!starts_with(s, "graph_") || s.size() == 6 || !is_digit(s[6])) return false;
  return parse_uint(s.substr(6), g) == Num::ok;
}

uint64_t tools_id(uint32_t g, uint32_t n) { return (uint64_t(g) << 32) | n; }

// ---------------------------------------------------------------------------
// Node type keywords as cudaGraphDebugDotPrint spells them.

bool keyword_type(string_view k, NodeType* t) {
  struct Entry {
    string_view name;
    NodeType type;
  };
  static constexpr Entry kTable[] = {
      {"KERNEL", NodeType::kernel},
      {"MEMCPY", NodeType::memcpy},
      {"MEMSET", NodeType::memset},
      {"HOST", NodeType::host},
      {"EMPTY", NodeType::empty},
      {"EVENT_RECORD", NodeType::event_record},
      {"EVENT_WAIT", NodeType::wait_event},
      {"WAIT_EVENT", NodeType::wait_event},
      {"MEM_ALLOC", NodeType::mem_alloc},
      {"MEM_FREE", NodeType::mem_free},
      {"CONDITIONAL", NodeType::conditional},
      {"EXT_SEMAS_SIGNAL", NodeType::ext_semas_signal},
      {"EXT_SEMAS_WAIT", NodeType::ext_semas_wait},
      {"BATCH_MEM_OP", NodeType::batch_mem_op},
      {"GRAPH", NodeType::child_graph},
      {"CHILD_GRAPH", NodeType::child_graph},
  };
  for (const Entry& e : kTable)
    if (e.name == k) {
      *t = e.type;
      return true;
    }
  return false;
}

// An upper-case word such as "EXT_SEMAS_SIGNAL": a node type keyword, known
// or not, rather than a kernel name.
bool looks_like_keyword(string_view s) {
  bool letter = false;
  for (char c : s) {
    if (c >= 'A' && c <= 'Z') letter = true;
    else if (!(is_digit(c) || c == '_')) return false;
  }
  return letter;
}

std::string lower(string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return out;
}
}  // namespace graphscope::nvdot
