// The look of graphscope's pictures: see dot_look.h.
#include "dot_look.h"

#include <cstdio>

#include "../core/demangle.h"
#include "../core/text.h"

namespace graphscope::dot_detail {

// ---------------------------------------------------------------------------
// Text helpers

/// "256 KiB", "1.5 MiB", "17 B". Integer arithmetic only, so the output does
/// not depend on the locale.
std::string human_bytes(uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  uint64_t unit = 1;
  while (u < 6 && bytes / unit >= 1024) {
    unit *= 1024;
    ++u;
  }
  uint64_t whole = bytes / unit, rem = bytes % unit;
  uint64_t tenths = u == 0 ? 0 : (rem / (unit / 1024) * 10 + 512) / 1024;  // rem < unit
  if (tenths >= 10) {
    ++whole;
    tenths = 0;
  }
  std::string s = std::to_string(whole);
  if (tenths != 0 && whole < 100) s += "." + std::to_string(tenths);
  return s + " " + kUnits[u];
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string dim3_text(const Dim3& d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

/// Makes arbitrary bytes safe for a Graphviz escString (label, tooltip) and
/// for the SVG that Graphviz writes from it: control characters (C0, DEL,
/// C1), code points XML 1.0 cannot hold (U+FFFE, U+FFFF) and each byte of
/// invalid UTF-8 become '?'; a tab a space. Backslashes are doubled so that
/// "\n", "\N", "\G"... in a kernel name stay literal text, and '&' is
/// written "&amp;": Graphviz reads entities in labels ("&#xFFFF;", "&lt;"),
/// and this one is read back as the literal '&' by every renderer. Quotes
/// need nothing here: agwrite quotes and escapes them itself.
std::string esc(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '&') {
      out += "&amp;";
    } else if (c == '\t') {
      out += ' ';
    } else {
      const Utf8Char u = utf8_char(s, i);
      const bool control = u.cp < 0x20 || (u.cp >= 0x7f && u.cp <= 0x9f);
      if (u.len && xml_char(u.cp) && !control) {
        out.append(s.data() + i, u.len);
        i += u.len;
      } else {
        out += '?';
        i += u.len ? u.len : 1;
      }
      continue;
    }
    ++i;
  }
  return out;
}

/// An escaped text (esc) made ready for a tooltip: Graphviz 2.43 expands a
/// tooltip's escapes twice (a name's "\\N" would show the node's name), so
/// each backslash of the escaped text is doubled once more. Line breaks are
/// added after this (tooltip_lines), as single escapes.
std::string tooltip_text(std::string_view escaped) {
  std::string out;
  out.reserve(escaped.size() + 8);
  for (char c : escaped) {
    if (c == '\\') out += '\\';
    out += c;
  }
  return out;
}

/// Escaped lines as one tooltip, a line break between them.
std::string tooltip_lines(const std::vector<std::string>& escaped) {
  std::string out;
  for (size_t i = 0; i < escaped.size(); ++i) out += (i ? "\\n" : "") + tooltip_text(escaped[i]);
  return out;
}

/// Joins already escaped lines with the escString line break `sep`
/// ("\\n" centred, "\\l" left-justified).
std::string join_lines(const std::vector<std::string>& lines, const char* sep) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out += sep;
    out += lines[i];
  }
  return out;
}

std::string type_words(NodeType t) {
  std::string s(to_string(t));
  for (char& c : s)
    if (c == '_') c = ' ';
  return s;
}

std::string kernel_full_name(const Node& n) {
  if (n.kernel && !n.kernel->demangled.empty()) return n.kernel->demangled;
  return demangle(n.kernel_name);
}

// ---------------------------------------------------------------------------
// The look: one style per node type and per edge type.


NodeStyle node_style(NodeType t) {
  switch (t) {
    case NodeType::kernel: return {"box", "rounded,filled", "#dae8fc", "#4a6fa5"};
    case NodeType::memcpy: return {"cds", "filled", "#d5e8d4", "#5b9a4a"};
    case NodeType::memset: return {"box", "filled", "#ffe6cc", "#c77c00"};
    case NodeType::host: return {"hexagon", "filled", "#fff2cc", "#b8982e"};
    case NodeType::child_graph: return {"folder", "filled", "#e1d5e7", "#7e5a91"};
    case NodeType::empty: return {"ellipse", "filled,dashed", "#f5f5f5", "#8c8c8c"};
    case NodeType::event_record: return {"house", "filled", "#f8cecc", "#b85450"};
    case NodeType::wait_event: return {"invhouse", "filled", "#f8cecc", "#b85450"};
    case NodeType::mem_alloc: return {"cylinder", "filled", "#c9e4e7", "#3f7f8a"};
    case NodeType::mem_free: return {"cylinder", "filled,dashed", "#eef6f7", "#3f7f8a"};
    case NodeType::conditional: return {"diamond", "filled", "#fad7ac", "#b46504"};
    default: return {"note", "filled", "#eeeeee", "#666666"};
  }
}


EdgeStyle edge_style(EdgeType t) {
  switch (t) {
    case EdgeType::programmatic: return {"dashed", "#c0392b", "1.6"};
    case EdgeType::launch_completion: return {"dotted", "#8e44ad", "2"};
    default: return {"solid", "#444444", "1"};
  }
}

}  // namespace graphscope::dot_detail
