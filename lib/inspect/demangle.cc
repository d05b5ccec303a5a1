#include "demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace graphscope {

std::string demangle(std::string_view mangled) {
  if (mangled.size() < 2 || mangled[0] != '_' || mangled[1] != 'Z') return std::string(mangled);
  std::string z(mangled);
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(z.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !out) return z;
  return out.get();
}

namespace {
// Drops everything inside the outermost <...> and (...) groups, keeping
// "operator<" style names intact enough for a picture.
std::string strip_groups(std::string_view s) {
  std::string out;
  int angle = 0, paren = 0;
  for (char c : s) {
    if (c == '<') {
      if (paren == 0) ++angle;
      continue;
    }
    if (c == '>') {
      if (paren == 0 && angle > 0) --angle;
      continue;
    }
    if (c == '(') {
      ++paren;
      continue;
    }
    if (c == ')') {
      if (paren > 0) --paren;
      continue;
    }
    if (angle == 0 && paren == 0) out.push_back(c);
  }
  return out;
}
}  // namespace

std::string short_kernel_name(std::string_view name, size_t max_len) {
  std::string d = demangle(name);
  std::string s = strip_groups(d);
  // "void ns::kernel" -> "kernel": keep the last scope component and drop a
  // leading return type.
  while (!s.empty() && s.back() == ' ') s.pop_back();
  size_t sp = s.rfind(' ');
  if (sp != std::string::npos) s = s.substr(sp + 1);
  size_t colon = s.rfind("::");
  if (colon != std::string::npos && colon + 2 < s.size()) s = s.substr(colon + 2);
  if (s.empty()) s = d.empty() ? std::string(name) : d;
  if (max_len >= 4 && s.size() > max_len) s = s.substr(0, max_len - 3) + "...";
  return s;
}

}  // namespace graphscope
