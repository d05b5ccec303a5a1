// A small streaming JSON writer shared by all of graphscope's documents.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>


namespace graphscope {

/// A streaming JSON writer into a string: no intermediate tree, keys written
/// in call order. Pretty-prints objects one key per line up to `pretty_depth`
/// levels of nesting, compactly below (so 100k-node documents stay readable
/// one node per line, and small).
class JsonWriter {
 public:
  explicit JsonWriter(int pretty_depth = 2) : pretty_depth_(pretty_depth) {}
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  /// A key known to need no escaping (a literal of ours): written as is.
  JsonWriter& key_literal(std::string_view k);
  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(uint64_t v);
  JsonWriter& value(int64_t v);
  JsonWriter& value(uint32_t v) { return value(uint64_t(v)); }
  JsonWriter& value(int v) { return value(int64_t(v)); }
  JsonWriter& value(double v);
  JsonWriter& value(bool v);
  JsonWriter& null();
  /// Inserts already-serialized JSON text as a value.
  JsonWriter& raw(std::string_view json);
  /// Inserts array elements formatted elsewhere, separators and
  /// indentation included (see indent()).
  JsonWriter& raw_elements(std::string_view text);
  /// Spaces before a key or element at the current depth, minus one level.
  size_t indent() const { return 2 * (first_.empty() ? 0 : first_.size() - 1); }
  /// What has been written so far, and starting over.
  std::string_view view() const { return std::string_view(out_.data(), len_); }
  void clear() {
    len_ = 0;
    first_.clear();
    after_key_ = false;
  }
  std::string take();
  /// The text written so far, handed over; the writer goes on from the same
  /// place in the document (for documents written in pieces).
  std::string cut() {
    std::string s(out_.data(), len_);
    len_ = 0;
    return s;
  }
  /// Expects about n more bytes (saves regrowing a large document). Takes
  /// capacity only: the pages are touched when written, not zeroed first.
  void reserve(size_t n) {
    out_.resize(len_);
    out_.reserve(len_ + n);
  }

 private:
  void before_value();
  void newline();
  JsonWriter& close(char bracket);
  void string(std::string_view s);
  // The output: out_ is kept larger than what is written (len_ bytes), so
  // appends are plain copies with one capacity check. grow() makes room for
  // n more bytes at len_: a little within the capacity, doubling beyond.
  char* grow(size_t n) {
    if (len_ + n > out_.size()) {
      const size_t want = len_ + n + 4096;
      out_.resize(want <= out_.capacity() ? want : std::max(out_.size() * 2, want));
    }
    return &out_[len_];
  }
  void put(char c) { *grow(1) = c, ++len_; }
  void put(std::string_view s) {
    if (s.size() >= (size_t(1) << 16)) {  // large: appended, not zeroed and then overwritten
      out_.resize(len_);
      out_.append(s);
      len_ += s.size();
      return;
    }
    std::memcpy(grow(s.size()), s.data(), s.size());
    len_ += s.size();
  }
  std::string out_;
  size_t len_ = 0;
  std::vector<bool> first_;  // per open container: no element written yet
  int pretty_depth_;
  bool after_key_ = false;
};

/// Appends s as a quoted, escaped JSON string.
void append_json_string(std::string& out, std::string_view s);

/// One line of JSON formatted straight into a reused buffer, for documents
/// with a line per node (100k of them in large graphs): appends are copies
/// after one size check, with none of JsonWriter's state per value, which
/// took most of the time of such documents. The caller writes the
/// punctuation; JsonWriter::raw() then takes the line whole.
class JsonLine {
 public:
  std::string_view view() const { return std::string_view(buf_.data(), n_); }
  void clear() { n_ = 0; }
  void push(char c) { *grow(1) = c, ++n_; }
  void pop() { --n_; }
  void lit(std::string_view x) {
    if (x.empty()) return;
    std::memcpy(grow(x.size()), x.data(), x.size());
    n_ += x.size();
  }
  void u64(uint64_t v);
  /// Shortest round-trip form; null when not finite (JSON has neither NaN
  /// nor infinity), as JsonWriter writes.
  void real(double v);
  /// Quoted, escaped as JsonWriter escapes.
  void str(std::string_view v);

 protected:
  char* grow(size_t k) {
    if (n_ + k > buf_.size()) buf_.resize(std::max(buf_.size() * 2, n_ + k + 1024));
    return &buf_[n_];
  }
  std::string buf_;
  size_t n_ = 0;
};

}  // namespace graphscope
