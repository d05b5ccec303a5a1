// The grammar of cudaGraphDebugDotPrint's node labels (internal to
// lib/inspect): Graphviz record labels ("{KERNEL | {ID | 0 | name<<<...>>>}
// | ...}") parsed into key/value pairs, the node type keywords, and the
// small text helpers the DOT reader's messages use. nvdot_reader.cc turns
// them into the model.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../model/graph.h"

namespace graphscope::nvdot {

using std::string_view;

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
/// s without blanks at either end.
string_view trim(string_view s);
bool starts_with(string_view s, string_view p);
/// A piece of input quoted in an error message: short, printable ASCII.
std::string shown(string_view s);
std::string shown(const char* s);
/// Appends s to out with DOT's escapes (\\", \\\\, \\n ...) undone.
void unescape_into(string_view s, std::string& out);

enum class Num { ok, bad, range };

// Unsigned number, decimal or 0x-prefixed hexadecimal, all of s.
template <typename T>
Num parse_uint(string_view s, T* out) {
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s.remove_prefix(2);
    base = 16;
  }
  if (s.empty()) return Num::bad;
  T v{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec == std::errc::result_out_of_range) return Num::range;
  if (ec != std::errc() || p != s.data() + s.size()) return Num::bad;
  *out = v;
  return Num::ok;
}

/// "graph_G" -> G; false when s is not exactly that form.
bool parse_graph_ref(string_view s, uint32_t* g);
/// (graph id << 32) | node id.
uint64_t tools_id(uint32_t g, uint32_t n);

// ---------------------------------------------------------------------------
// Graphviz record labels: "{A | {B | C} | D}" parsed into a tree of fields,
// then flattened into key/value pairs.

struct Field {
  string_view text;  // leaf: trimmed, escapes kept
  int32_t first = -1, last = -1, next = -1;
  uint32_t count = 0;  // number of children (groups)
  bool group = false;
};

// Characters of a record label: text, blanks, and "{", "}", "|", "\\".
enum : uint8_t { kText = 0, kBlank = 1, kSpecial = 2 };
struct CharClass {
  uint8_t of[256] = {};
  constexpr CharClass() {
    for (unsigned char c : {' ', '\t', '\n', '\r', '\f', '\v'}) of[c] = kBlank;
    for (unsigned char c : {'{', '}', '|', '\\'}) of[c] = kSpecial;
  }
};
constexpr CharClass kCharClass;

// The pseudo key emitted for the third field of "{ID | N | name<<<...>>>}".
constexpr string_view kLaunchKey = "\x01launch";
constexpr int kMaxRecordDepth = 64;

class RecordLabel {
 public:
  // False when the braces do not balance or nest absurdly deep.
  bool parse(string_view s) {
    f_.clear();
    pairs_.clear();
    leaves_.clear();
    stack_.clear();
    f_.push_back(Field{});
    f_[0].group = true;
    stack_.push_back(0);
    size_t start = 0, end = 0;
    bool in_leaf = false;
    auto flush = [&] {
      if (!in_leaf) return;
      add_child(Field{s.substr(start, end - start)});
      in_leaf = false;
    };
    const size_t n = s.size();
    size_t i = 0;
    while (i < n) {
      const uint8_t k = kCharClass.of[static_cast<unsigned char>(s[i])];
      if (k == kText) {
        // A run of text up to the next special character; trailing blanks
        // are not part of the field.
        if (!in_leaf) start = i, in_leaf = true;
        size_t j = i + 1, last = i + 1;
        for (; j < n; ++j) {
          const uint8_t kj = kCharClass.of[static_cast<unsigned char>(s[j])];
          if (kj == kSpecial) break;
          if (kj == kText) last = j + 1;
        }
        end = last;
        i = j;
        continue;
      }
      if (k == kBlank) {
        ++i;
        continue;
      }
      switch (s[i]) {
        case '\\':
          if (!in_leaf) start = i, in_leaf = true;
          if (i + 1 < n) ++i;
          end = i + 1;
          break;
        case '{': {
          flush();
          if (stack_.size() > kMaxRecordDepth) return false;
          Field g;
          g.group = true;
          stack_.push_back(add_child(g));
          break;
        }
        case '}':
          flush();
          if (stack_.size() == 1) return false;
          stack_.pop_back();
          break;
        default:  // '|'
          flush();
      }
      ++i;
    }
    flush();
    if (stack_.size() != 1) return false;
    // The record's own braces: "{KERNEL | ...}".
    top_ = 0;
    if (f_[0].count == 1 && f_[f_[0].first].group) top_ = f_[0].first;
    for (int32_t c = f_[top_].first; c >= 0; c = f_[c].next) {
      if (f_[c].group) extract(c, 1);
    }
    for (const Field& f : f_)
      if (!f.group) leaves_.push_back(f.text);
    return true;
  }

  // The first field of the record ("KERNEL", "MEMSET", ...); empty if none.
  string_view keyword() const {
    int32_t c = f_[top_].first;
    return c >= 0 && !f_[c].group ? f_[c].text : string_view();
  }
  const std::vector<std::pair<string_view, string_view>>& pairs() const { return pairs_; }
  const std::vector<string_view>& leaves() const { return leaves_; }

 private:
  int32_t add_child(const Field& f) {
    int32_t parent = stack_.back();
    int32_t idx = int32_t(f_.size());
    f_.push_back(f);
    Field& p = f_[parent];
    if (p.last >= 0) f_[p.last].next = idx;
    else p.first = idx;
    p.last = idx;
    ++p.count;
    return idx;
  }

  // A group of leaves only; its size, or -1.
  int leaf_group_size(int32_t g) const {
    if (!f_[g].group) return -1;
    for (int32_t c = f_[g].first; c >= 0; c = f_[c].next)
      if (f_[c].group) return -1;
    return int(f_[g].count);
  }
  bool digit_led(int32_t leaf) const { return !f_[leaf].text.empty() && is_digit(f_[leaf].text[0]); }

  void extract(int32_t g, int depth) {
    const Field& grp = f_[g];
    int32_t a = grp.first;
    if (grp.count == 2 && !f_[a].group && !f_[f_[a].next].group) {
      pairs_.emplace_back(f_[a].text, f_[f_[a].next].text);  // {key | value}
      return;
    }
    if (grp.count >= 3 && leaf_group_size(g) >= 3 && f_[a].text == "ID") {
      int32_t b = f_[a].next;  // {ID | N (topoId: T) | name<<<...>>>}
      pairs_.emplace_back(f_[a].text, f_[b].text);
      pairs_.emplace_back(kLaunchKey, f_[f_[b].next].text);
      return;
    }
    if (grp.count >= 2) {
      // {{k1 | k2} | {v1 | v2}}: a header row of names and a value row with
      // at least one number, zipped. ({{x | 0} | {y | 0}} is a list of pairs.)
      int32_t h = a;
      for (uint32_t i = 0; i + 2 < grp.count; ++i) h = f_[h].next;
      int32_t v = f_[h].next;
      int n = leaf_group_size(h);
      if (n >= 1 && n == leaf_group_size(v)) {
        bool header = true, values = false;
        for (int32_t k = f_[h].first; k >= 0; k = f_[k].next) header = header && !digit_led(k);
        for (int32_t k = f_[v].first; k >= 0; k = f_[k].next) values = values || digit_led(k);
        if (header && values) {
          for (int32_t k = f_[h].first, x = f_[v].first; k >= 0; k = f_[k].next, x = f_[x].next)
            pairs_.emplace_back(f_[k].text, f_[x].text);
          return;
        }
      }
    }
    if (depth >= kMaxRecordDepth) return;
    for (int32_t c = grp.first; c >= 0; c = f_[c].next)
      if (f_[c].group) extract(c, depth + 1);
  }

  std::vector<Field> f_;
  std::vector<int32_t> stack_;
  std::vector<std::pair<string_view, string_view>> pairs_;
  std::vector<string_view> leaves_;
  int32_t top_ = 0;
};


/// The node type a keyword of cudaGraphDebugDotPrint names ("KERNEL",
/// "MEM_ALLOC", "GRAPH", ...); false for any other word.
bool keyword_type(string_view k, NodeType* t);
/// An upper-case word such as "EXT_SEMAS_SIGNAL": a node type keyword, known
/// or not, rather than a kernel name.
bool looks_like_keyword(string_view s);
/// s in lower case (ASCII).
std::string lower(string_view s);

}  // namespace graphscope::nvdot
