#include "text.h"

#include <cstdint>
#include <cstdio>

#include "json_writer.h"

namespace graphscope {

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string signed_percent(double percent, int decimals) {
  decimals = decimals < 0 ? 0 : decimals > 6 ? 6 : decimals;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%+.*f", decimals, percent);
  // Rounded to zero: no sign ("-0", "+0.0").
  bool zero = true;
  for (const char* c = buf; *c; ++c) zero = zero && (*c == '+' || *c == '-' || *c == '0' || *c == '.');
  return zero ? std::string(buf + 1) + "%" : std::string(buf) + "%";
}

std::string num(double v) { return fmt("%.15g", v); }

std::string num2(double v) {
  std::string s = fmt("%.2f", v);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

std::string plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string padded(std::string_view s, size_t width) {
  std::string out(s);
  if (out.size() < width) out.append(width - out.size(), ' ');
  return out;
}

std::string shortened(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t n = max - 3;
  // Back to the start of a character (at most 3 continuation bytes).
  for (size_t k = 0; k < 3 && n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80; ++k) --n;
  return std::string(s.substr(0, n)) + "...";
}

std::string joined(const std::vector<std::string_view>& items) {
  std::string s;
  for (auto x : items) s += (s.empty() ? "" : ", ") + std::string(x);
  return s;
}

std::string quoted(std::string_view s, size_t max) {
  bool cut = s.size() > max;
  if (cut) {
    size_t n = max;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // whole UTF-8 characters
    s = s.substr(0, n);
  }
  std::string out;
  append_json_string(out, s);
  if (cut) out.insert(out.size() - 1, "...");
  return out;
}

namespace {

const char kHex[] = "0123456789abcdef";

// printable() and terminal_safe(): `layout` keeps line feeds and tabs.
std::string escape_controls(std::string_view s, bool layout) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(char(c));
      ++i;
      continue;
    }
    if (c < 0x80) {
      if (layout && (c == '\n' || c == '\t'))
        out.push_back(char(c));
      else if (c == '\n')
        out += "\\n";
      else if (c == '\r')
        out += "\\r";
      else if (c == '\t')
        out += "\\t";
      else
        out += {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
      ++i;
      continue;
    }
    const Utf8Char u = utf8_char(s, i);
    if (u.len == 0) {  // not UTF-8: the byte itself, visibly
      out += {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
      ++i;
    } else if (u.cp <= 0x9f) {  // a C1 control
      out += {'\\', 'u', '0', '0', kHex[u.cp >> 4], kHex[u.cp & 15]};
      i += u.len;
    } else {
      out.append(s.data() + i, u.len);
      i += u.len;
    }
  }
  return out;
}

}  // namespace

std::string printable(std::string_view s) {
  return escape_controls(s, false);
}

std::string terminal_safe(std::string_view s) {
  return escape_controls(s, true);
}

Utf8Char utf8_char(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return {c, 1};
  const size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return {};
  uint32_t cp = n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
  for (size_t k = 1; k < n; ++k) {
    const auto d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xC0) != 0x80) return {};
    cp = (cp << 6) | (d & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
    return {};
  return {cp, n};
}

bool xml_char(uint32_t cp) {
  return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
         (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
}

std::string display_name(const std::string& path) {
  return path == "-" ? "standard input" : path;
}

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    switch (s[i]) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\n':
        out += "&#10;";
        break;
      case '\r':
        out += "&#13;";
        break;
      case '\t':
        out += "&#9;";
        break;
      default: {
        // A character XML can hold passes whole; anything else (a control,
        // U+FFFE, U+FFFF, or one byte of invalid UTF-8) becomes U+FFFD.
        const Utf8Char u = utf8_char(s, i);
        if (u.len && xml_char(u.cp))
          out.append(s.data() + i, u.len);
        else
          out += "\xEF\xBF\xBD";
        i += u.len ? u.len : 1;
        continue;
      }
    }
    ++i;
  }
  return out;
}

}  // namespace graphscope
