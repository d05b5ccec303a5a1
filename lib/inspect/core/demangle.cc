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

// Position of the first c at nesting depth 0 of <>, (), {} and [], from i.
size_t find_top(std::string_view s, char c, size_t i = 0) {
  int depth = 0;
  for (; i < s.size(); ++i) {
    char x = s[i];
    if (depth == 0 && x == c) return i;
    if (x == '<' || x == '(' || x == '{' || x == '[') ++depth;
    else if ((x == '>' || x == ')' || x == '}' || x == ']') && depth > 0) --depth;
  }
  return std::string_view::npos;
}

// Last position of c at depth 0 (e.g. the last "::" separator).
size_t rfind_top(std::string_view s, std::string_view sep) {
  size_t last = std::string_view::npos, i = 0;
  for (;;) {
    size_t at = find_top(s, sep[0], i);
    if (at == std::string_view::npos) return last;
    if (s.substr(at, sep.size()) == sep) last = at;
    i = at + 1;
  }
}

// "a::b::c<T>" -> "c<T>"; "void f" -> "f" (a return type dropped).
std::string_view last_component(std::string_view s) {
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  size_t sp = rfind_top(s, " ");
  if (sp != std::string_view::npos) s = s.substr(sp + 1);
  size_t colon = rfind_top(s, "::");
  if (colon != std::string_view::npos) s = s.substr(colon + 2);
  return s;
}

}  // namespace

std::string short_kernel_name(std::string_view name, size_t max_len) {
  std::string d = demangle(name);
  // Anonymous namespaces print with parentheses that would end the name.
  for (size_t at; (at = d.find("(anonymous namespace)")) != std::string::npos;) d.replace(at, 21, "anon");
  std::string_view v = d;
  size_t paren = find_top(v, '(');
  if (paren != std::string_view::npos) v = v.substr(0, paren);
  v = last_component(v);
  std::string out;
  size_t lt = find_top(v, '<');
  if (lt == std::string_view::npos) {
    out = std::string(v);
  } else {
    out = std::string(v.substr(0, lt));
    // A short generic name (cutlass::Kernel2<...>, fill<float>) says little on
    // its own: keep its first template argument, itself shortened.
    if (out.size() <= 12) {
      std::string_view args = v.substr(lt + 1);
      size_t comma = find_top(args, ',');
      size_t close = find_top(args, '>');
      std::string_view first = args.substr(0, std::min(comma, close));
      first = last_component(first);
      size_t inner = find_top(first, '<');
      if (inner != std::string_view::npos) first = first.substr(0, inner);
      if (!first.empty()) out += "<" + std::string(first) + ">";
    }
  }
  if (out.empty()) out = d.empty() ? std::string(name) : d;
  if (max_len >= 4 && out.size() > max_len) out = out.substr(0, max_len - 3) + "...";
  return out;
}

}  // namespace graphscope
