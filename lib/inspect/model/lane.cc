#include "lane.h"

#include <charconv>

namespace graphscope {

std::string describe(const Lane& l) {
  std::string s = l.channel_type == 1   ? "compute channel "
                  : l.channel_type == 2 ? "copy channel "
                  : l.channel_type == 0 ? "stream "
                                        : "channel type " + std::to_string(l.channel_type) + " id ";
  s += std::to_string(l.id);
  if (l.device) s += " (device " + std::to_string(l.device) + ")";
  return s;
}

namespace {

bool eat(std::string_view& s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix) return false;
  s.remove_prefix(prefix.size());
  return true;
}

template <typename T>
bool number(std::string_view& s, T* out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  if (r.ec != std::errc() || r.ptr == s.data()) return false;
  s.remove_prefix(size_t(r.ptr - s.data()));
  return true;
}

}  // namespace

bool parse_lane(std::string_view s, Lane* out) {
  Lane l;
  if (eat(s, "compute channel ")) l.channel_type = 1;
  else if (eat(s, "copy channel ")) l.channel_type = 2;
  else if (eat(s, "stream ")) l.channel_type = 0;
  else if (eat(s, "channel type ")) {
    unsigned t = 0;
    if (!number(s, &t) || t < 3 || t > 255 || !eat(s, " id ")) return false;
    l.channel_type = uint8_t(t);
  } else {
    return false;
  }
  if (!number(s, &l.id)) return false;
  if (eat(s, " (device ")) {
    if (!number(s, &l.device) || l.device == 0 || !eat(s, ")")) return false;
  }
  if (!s.empty()) return false;
  *out = l;
  return true;
}

int lane_rank(uint8_t type) { return type == 1 ? 0 : type == 2 ? 1 : type == 0 ? 3 : 2; }

bool listed_before(const Lane& a, const Lane& b) {
  if (a.device != b.device) return a.device < b.device;
  if (lane_rank(a.channel_type) != lane_rank(b.channel_type))
    return lane_rank(a.channel_type) < lane_rank(b.channel_type);
  return a < b;
}

}  // namespace graphscope
