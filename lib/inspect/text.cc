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

std::string printable(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return out;
}

std::string display_name(const std::string& path) { return path == "-" ? "standard input" : path; }

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '&':
        out += "&amp;";
        ++i;
        continue;
      case '<':
        out += "&lt;";
        ++i;
        continue;
      case '>':
        out += "&gt;";
        ++i;
        continue;
      case '"':
        out += "&quot;";
        ++i;
        continue;
      case '\'':
        out += "&apos;";
        ++i;
        continue;
      case '\n':
        out += "&#10;";
        ++i;
        continue;
      case '\r':
        out += "&#13;";
        ++i;
        continue;
      case '\t':
        out += "&#9;";
        ++i;
        continue;
      default:
        break;
    }
    if (c < 0x20) {  // XML 1.0 cannot hold these, not even as references
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    if (c < 0x80) {
      out.push_back(char(c));
      ++i;
      continue;
    }
    // A whole, valid UTF-8 sequence passes; anything else becomes U+FFFD.
    size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    bool ok = n && i + n <= s.size();
    uint32_t cp = n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
    for (size_t k = 1; ok && k < n; ++k) {
      unsigned char d = static_cast<unsigned char>(s[i + k]);
      ok = (d & 0xC0) == 0x80;
      cp = (cp << 6) | (d & 0x3F);
    }
    ok = ok && !(n == 3 && cp < 0x800) && !(n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) &&
         !(cp >= 0xD800 && cp <= 0xDFFF) && cp != 0xFFFE && cp != 0xFFFF;
    if (!ok) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    out.append(s.data() + i, n);
    i += n;
  }
  return out;
}

}  // namespace graphscope
