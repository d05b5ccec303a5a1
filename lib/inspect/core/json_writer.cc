#include "json_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <unordered_map>

#include "parallel.h"

namespace graphscope {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid.
size_t utf8_len(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n;
  uint32_t cp;
  if (c >= 0xC2 && c <= 0xDF) n = 2, cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, cp = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, cp = c & 0x07;
  else return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    unsigned char d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (d & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  static const char* hex = "0123456789abcdef";
  out.push_back('"');
  size_t i = 0, run = 0;
  auto flush = [&] {
    if (run < i) out.append(s.data() + run, i - run);
  };
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      size_t n = utf8_len(s, i);
      if (n) {
        i += n;
        continue;
      }
      flush();
      out.append("\\ufffd");  // not UTF-8: replaced, so the document stays valid JSON
      run = ++i;
      continue;
    }
    flush();
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\t': out.append("\\t"); break;
      case '\r': out.append("\\r"); break;
      default:
        out.append("\\u00");
        out.push_back(hex[c >> 4]);
        out.push_back(hex[c & 15]);
    }
    run = ++i;
  }
  flush();
  out.push_back('"');
}

void JsonWriter::string(std::string_view s) {
  // Plain ASCII needs no escaping: copy it in one piece; anything else goes
  // through the general escaper.
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') break;
    ++i;
  }
  if (i == s.size()) {
    char* p = grow(s.size() + 2);
    p[0] = '"';
    std::memcpy(p + 1, s.data(), s.size());
    p[s.size() + 1] = '"';
    len_ += s.size() + 2;
    return;
  }
  std::string escaped;
  append_json_string(escaped, s);
  put(escaped);
}

void JsonWriter::newline() {
  put('\n');
  size_t n = 2 * first_.size();
  std::memset(grow(n), ' ', n);
  len_ += n;
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (first_.empty()) return;
  bool pretty = int(first_.size()) <= pretty_depth_;
  if (!first_.back()) put(pretty ? std::string_view(",") : std::string_view(", "));
  first_.back() = false;
  if (pretty) newline();
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  put('{');
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::close(char bracket) {
  bool empty = first_.back();
  bool pretty = int(first_.size()) <= pretty_depth_;
  first_.pop_back();
  if (pretty && !empty) newline();
  put(bracket);
  return *this;
}

JsonWriter& JsonWriter::end_object() { return close('}'); }

JsonWriter& JsonWriter::begin_array() {
  before_value();
  put('[');
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_array() { return close(']'); }

JsonWriter& JsonWriter::key(std::string_view k) {
  before_value();
  string(k);
  put(": ");
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::key_literal(std::string_view k) {
  before_value();
  char* p = grow(k.size() + 4);
  p[0] = '"';
  std::memcpy(p + 1, k.data(), k.size());
  std::memcpy(p + 1 + k.size(), "\": ", 3);
  len_ += k.size() + 4;
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  before_value();
  string(s);
  return *this;
}

JsonWriter& JsonWriter::value(uint64_t v) {
  before_value();
  char* p = grow(24);
  len_ += size_t(std::to_chars(p, p + 24, v).ptr - p);
  return *this;
}

JsonWriter& JsonWriter::value(int64_t v) {
  before_value();
  char* p = grow(24);
  len_ += size_t(std::to_chars(p, p + 24, v).ptr - p);
  return *this;
}

JsonWriter& JsonWriter::value(double v) {
  if (!std::isfinite(v)) return null();  // JSON has no NaN or infinity
  before_value();
  char* p = grow(32);
  len_ += size_t(std::to_chars(p, p + 32, v).ptr - p);
  return *this;
}

JsonWriter& JsonWriter::value(bool v) {
  before_value();
  put(v ? std::string_view("true") : std::string_view("false"));
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  put("null");
  return *this;
}

JsonWriter& JsonWriter::raw_elements(std::string_view text) {
  put(text);
  if (!first_.empty() && !text.empty()) first_.back() = false;
  return *this;
}

JsonWriter& JsonWriter::raw(std::string_view json) {
  before_value();
  put(json);
  return *this;
}

std::string JsonWriter::take() {
  out_.resize(len_);
  if (!out_.empty() && out_.back() != '\n') out_.push_back('\n');
  std::string s;
  s.swap(out_);
  len_ = 0;
  return s;
}

void JsonLine::u64(uint64_t v) {
  char* p = grow(24);
  n_ += size_t(std::to_chars(p, p + 24, v).ptr - p);
}

void JsonLine::real(double v) {
  if (!std::isfinite(v)) return lit("null");
  char* p = grow(32);
  n_ += size_t(std::to_chars(p, p + 32, v).ptr - p);
}

void JsonLine::str(std::string_view v) {
  for (char c : v) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x80 || c == '"' || c == '\\') {
      std::string e;
      append_json_string(e, v);
      lit(e);
      return;
    }
  }
  char* p = grow(v.size() + 2);
  p[0] = '"';
  std::memcpy(p + 1, v.data(), v.size());
  p[v.size() + 1] = '"';
  n_ += v.size() + 2;
}

}  // namespace graphscope
