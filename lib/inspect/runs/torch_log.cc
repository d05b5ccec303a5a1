#include "torch_log.h"

#include <algorithm>

#include "../core/error.h"
#include "../core/json_read.h"
#include "../core/json_tape.h"

namespace graphscope {
namespace {

constexpr size_t kMaxRecords = 100000;

bool contains(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }

// The first `File "PATH", line N, in F` of a message (PyTorch's "Found
// from:" traceback of the user's code).
void user_frame(TorchLogRecord& r) {
  const std::string& m = r.message;
  size_t p = m.find("File \"");
  if (p == std::string::npos) return;
  p += 6;
  const size_t q = m.find('"', p);
  if (q == std::string::npos) return;
  const size_t l = m.find(", line ", q);
  if (l != q + 1) return;
  size_t k = l + 7;
  uint64_t line = 0;
  size_t digits = 0;
  while (k < m.size() && m[k] >= '0' && m[k] <= '9' && digits < 12) line = line * 10 + uint64_t(m[k++] - '0'), ++digits;
  if (!digits) return;
  r.user_file = m.substr(p, q - p);
  r.user_line = line;
  if (m.compare(k, 5, ", in ") == 0) {
    k += 5;
    size_t e = k;
    while (e < m.size() && m[e] != '\n' && m[e] != ' ') ++e;
    r.user_function = m.substr(k, e - k);
  }
}

}  // namespace

TorchLogRecord::Kind torch_log_kind(std::string_view m) {
  if (contains(m, "re-recording limit") || contains(m, "re-recording threshold")) return TorchLogRecord::Kind::rerecord_limit;
  if (contains(m, "skipping cudagraph")) return TorchLogRecord::Kind::skip;
  if (contains(m, "distinct sizes")) return TorchLogRecord::Kind::sizes;
  return TorchLogRecord::Kind::other;
}

std::string torch_log_headline(const TorchLogRecord& r, size_t max) {
  std::string s = r.message.substr(0, r.message.find('\n'));
  // "... Found from : " ends the line PyTorch wrote before its traceback.
  if (size_t f = s.find(" Found from"); f != std::string::npos) s.resize(f);
  while (!s.empty() && (s.back() == ' ' || s.back() == ':' || s.back() == '.')) s.pop_back();
  if (s.size() > max) s = s.substr(0, max - 3) + "...";
  return s;
}

TorchLog read_torch_log(std::string_view text, const std::string& origin, double attached_s) {
  TorchLog log;
  size_t line_no = 0;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string where = origin + " line " + std::to_string(line_no);
    if (log.records.size() >= kMaxRecords)
      throw Error(ExitCode::bad_input, origin, "more than " + std::to_string(kMaxRecords) + " records");
    const JsonTape t = JsonTape::parse(line, where, 4);
    const JsonRead r(t, where);
    const uint32_t o = r.object(t.root(), "", "an object a line");
    const double t_s = r.number(r.required(o, "t", ""), "t") - attached_s;
    if (uint32_t c = r.find(o, "counters"); c != kJsonAbsent) {
      r.object(c, "counters");
      const auto& v = t.at(c);
      for (uint32_t i = 0; i < v.count; ++i) {
        const std::string key(t.member_key(c, i));
        const JsonPath cp("counters");
        log.counters[key] = r.u64(t.member_value(c, i), JsonPath(cp, key));
      }
      continue;
    }
    TorchLogRecord rec;
    rec.t_s = t_s;
    rec.message = std::string(r.string(r.required(o, "message", ""), "message", 1 << 16));
    if (uint32_t v = r.find(o, "level"); v != kJsonAbsent) rec.level = std::string(r.string(v, "level", 64));
    if (uint32_t v = r.find(o, "logger"); v != kJsonAbsent) rec.logger = std::string(r.string(v, "logger", 4096));
    if (uint32_t v = r.find(o, "file"); v != kJsonAbsent) rec.file = std::string(r.string(v, "file", 4096));
    if (uint32_t v = r.find(o, "line"); v != kJsonAbsent) rec.line = r.u64(v, "line");
    rec.kind = torch_log_kind(rec.message);
    user_frame(rec);
    log.records.push_back(std::move(rec));
  }
  std::stable_sort(log.records.begin(), log.records.end(),
                   [](const TorchLogRecord& a, const TorchLogRecord& b) { return a.t_s < b.t_s; });
  return log;
}

}  // namespace graphscope
