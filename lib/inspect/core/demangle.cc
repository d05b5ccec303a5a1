#include "demangle.h"

#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "hash.h"

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

using sv = std::string_view;
constexpr size_t npos = sv::npos;

bool starts_with(sv s, sv p) { return s.substr(0, p.size()) == p; }
bool ends_with(sv s, sv p) { return s.size() >= p.size() && s.substr(s.size() - p.size()) == p; }

sv trim(sv s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Position of the first c at nesting depth 0 of <>, (), {} and [], from i.
size_t find_top(sv s, char c, size_t i = 0) {
  int depth = 0;
  for (; i < s.size(); ++i) {
    char x = s[i];
    if (depth == 0 && x == c) return i;
    if (x == '<' || x == '(' || x == '{' || x == '[') ++depth;
    else if ((x == '>' || x == ')' || x == '}' || x == ']') && depth > 0) --depth;
  }
  return npos;
}

// The pieces of s between separators at depth 0 ("a::b<c::d>::e" by "::").
std::vector<sv> split_top(sv s, sv sep) {
  std::vector<sv> out;
  size_t from = 0, i = 0;
  for (;;) {
    size_t at = find_top(s, sep[0], i);
    if (at == npos) break;
    if (s.substr(at, sep.size()) == sep) {
      out.push_back(s.substr(from, at - from));
      from = i = at + sep.size();
    } else {
      i = at + 1;
    }
  }
  out.push_back(s.substr(from));
  return out;
}

// Last position of sep at depth 0 (a return type's space).
size_t rfind_top(sv s, sv sep) {
  size_t last = npos, i = 0;
  for (;;) {
    size_t at = find_top(s, sep[0], i);
    if (at == npos) return last;
    if (s.substr(at, sep.size()) == sep) last = at;
    i = at + 1;
  }
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// One piece of a qualified name: "name<targs>(params) const", a lambda
// "{lambda(params)#1}", or "operator()() const".
struct Part {
  sv ident;
  std::vector<sv> targs;
  bool templated = false;
  sv params;  // a lambda's
};

Part parse_part(sv c) {
  c = trim(c);
  Part p;
  if (starts_with(c, "{lambda(")) {
    p.ident = "lambda";
    size_t close = find_top(c, ')', 8);
    p.params = c.substr(8, close == npos ? npos : close - 8);
    return p;
  }
  if (starts_with(c, "{") || starts_with(c, "operator")) {
    p.ident = c;
    return p;
  }
  const size_t lt = find_top(c, '<'), end = std::min({lt, find_top(c, '('), c.size()});
  p.ident = trim(c.substr(0, end));
  if (end == lt) {
    size_t gt = find_top(c, '>', lt + 1);
    if (gt == npos) gt = c.size();
    sv inside = c.substr(lt + 1, gt - lt - 1);
    if (!trim(inside).empty())
      for (sv a : split_top(inside, ",")) p.targs.push_back(trim(a));
    p.templated = true;
  }
  return p;
}

// Integer and boolean template arguments ("128", "3ul", "true", "(char)1").
bool literal(sv t) {
  if (t.empty()) return false;
  if (t == "true" || t == "false") return true;
  size_t i = 0;
  if (t[0] == '(') {
    i = t.find(')');
    if (i == npos) return false;
    ++i;
  }
  if (i < t.size() && t[i] == '-') ++i;
  if (i >= t.size() || !std::isdigit(static_cast<unsigned char>(t[i]))) return false;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  for (; i < t.size(); ++i)
    if (t[i] != 'u' && t[i] != 'l' && t[i] != 'U' && t[i] != 'L') return false;
  return true;
}

std::string literal_text(sv t) {
  if (!t.empty() && t[0] == '(') t.remove_prefix(t.find(')') + 1);
  while (!t.empty() && std::isalpha(static_cast<unsigned char>(t.back())) && t != "true" && t != "false")
    t.remove_suffix(1);
  return std::string(t);
}

// The pieces of a qualified name, anonymous namespaces left out.
std::vector<sv> pieces(sv t) {
  std::vector<sv> v;
  for (sv c : split_top(t, "::"))
    if (trim(c) != "(anonymous namespace)" && !trim(c).empty()) v.push_back(c);
  return v;
}

// A functor or op by its name: what an elementwise or reduce kernel runs.
bool functor_like(sv ident) {
  return ident.find("Functor") != npos || ends_with(ident, "Op") || ends_with(ident, "Ops");
}

constexpr int kMaxDepth = 24;  // template nesting followed; deeper reads "..."

std::string simple(sv t, int depth);

// A lambda's op: the function that encloses the first lambda of the
// pieces ("silu_kernel(TensorIteratorBase&)::{lambda()#1}::...::
// {lambda(float)#1}" is silu_kernel), and the innermost lambda's
// parameters ("float"); none when no piece is a lambda.
struct LambdaOp {
  Part fn;
  std::string params;
};

std::optional<LambdaOp> lambda_op(const std::vector<sv>& ps, int depth) {
  size_t first = npos, last = npos;
  for (size_t i = 0; i < ps.size(); ++i)
    if (starts_with(trim(ps[i]), "{lambda(")) {
      if (first == npos) first = i;
      last = i;
    }
  if (first == npos) return std::nullopt;
  LambdaOp op;
  if (first > 0) op.fn = parse_part(ps[first - 1]);
  if (op.fn.ident.empty()) op.fn.ident = "lambda";
  std::vector<std::string> params;
  Part inner = parse_part(ps[last]);
  if (!trim(inner.params).empty())
    for (sv p : split_top(inner.params, ",")) params.push_back(simple(p, depth + 1));
  op.params = join(params);
  return op;
}

std::vector<std::string> simple_args(const std::vector<sv>& targs, int depth) {
  std::vector<std::string> v;
  for (sv a : targs) v.push_back(simple(a, depth + 1));
  return v;
}

// A type or template argument without namespaces and lambda scopes, its own
// template arguments the same way ("std::array<char*, 3ul>" -> "array<char*, 3>").
std::string simple(sv t, int depth) {
  t = trim(t);
  if (depth > kMaxDepth) return "...";
  if (starts_with(t, "const ")) t = trim(t.substr(6));
  if (literal(t)) return literal_text(t);
  std::vector<sv> ps = pieces(t);
  if (ps.empty()) return std::string(t);
  if (auto op = lambda_op(ps, depth)) {
    std::string s(op->fn.ident);
    if (op->fn.templated) s += "<" + join(simple_args(op->fn.targs, depth)) + ">";
    return s + "(" + op->params + ")";
  }
  sv last = trim(ps.back());
  Part p = parse_part(last);
  std::string s(p.ident);
  if (!p.templated) return std::string(last);
  s += "<" + join(simple_args(p.targs, depth)) + ">";
  // What follows the arguments: " const*", "&".
  size_t gt = find_top(last, '>', find_top(last, '<') + 1);
  if (gt != npos && gt + 1 < last.size()) s += std::string(last.substr(gt + 1));
  return s;
}

// Arguments that all repeat one ("float, float, float, float") as that one:
// MeanOps<float, float, float, float> reads as MeanOps<float>.
std::vector<std::string> one_of_each(std::vector<std::string> args) {
  if (args.size() > 1 && std::all_of(args.begin(), args.end(), [&](const std::string& a) { return a == args[0]; }))
    args.resize(1);
  return args;
}

// The functor or op a template argument carries, when it carries one:
// "BinaryFunctor<float, float, float, MulFunctor<float>>" -> "MulFunctor<float>",
// "gpu_kernel_impl_nocast<F>(...)::{lambda(int)#1}" -> F's,
// "silu_kernel(...)::...::{lambda(float)#1}" -> "silu_kernel(float)".
// detail keeps the wrappers that are functors themselves
// ("BinaryFunctor<MulFunctor<float>>"), a lambda's function's template
// arguments and every argument of the functor.
std::optional<std::string> essence(sv t, bool detail, int depth) {
  t = trim(t);
  if (depth > kMaxDepth) return std::nullopt;
  if (starts_with(t, "const ")) t = trim(t.substr(6));
  if (literal(t)) return std::nullopt;
  std::vector<sv> ps = pieces(t);
  if (ps.empty()) return std::nullopt;
  if (auto op = lambda_op(ps, depth)) {
    for (sv a : op->fn.targs)
      if (auto e = essence(a, detail, depth + 1)) return e;
    // Its function's template arguments say more than the lambda's
    // parameters ("index_kernel_impl<OpaqueType<8>>"), when it has them.
    std::string s(op->fn.ident);
    if (op->fn.templated) s += "<" + join(detail ? simple_args(op->fn.targs, depth) : one_of_each(simple_args(op->fn.targs, depth))) + ">";
    if (!op->fn.templated || detail) s += "(" + op->params + ")";
    return s;
  }
  Part p = parse_part(ps.back());
  for (sv a : p.targs)
    if (auto e = essence(a, detail, depth + 1))
      return detail && functor_like(p.ident) ? std::string(p.ident) + "<" + *e + ">" : *e;
  if (!functor_like(p.ident)) return std::nullopt;
  std::string s(p.ident);
  if (!p.templated) return s;
  std::vector<std::string> args = simple_args(p.targs, depth);
  return s + "<" + join(detail ? args : one_of_each(args)) + ">";
}

// s in at most max characters, its middle elided.
std::string elide_middle(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  if (max < 8) return s.substr(0, max);
  size_t head = (max - 3) * 2 / 3, tail = max - 3 - head;
  return s.substr(0, head) + "..." + s.substr(s.size() - tail);
}

std::string elide_end(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  if (max < 4) return s.substr(0, max);
  return s.substr(0, max - 3) + "...";
}

// A cuBLAS or CUTLASS kernel's generated name: words joined by "_", one of
// them its tile ("tilesize32x32x8") or its family ("xmma", "cutlass...").
bool generated_gemm(const std::vector<std::string>& words) {
  if (!words.empty() && words[0] == "cutlass") return true;
  for (const auto& w : words)
    if (starts_with(w, "tilesize") || w == "xmma") return true;
  return false;
}

// A word of element types: f32, f16f32, bf16bf16, tf32, i8, e4m3 (one or two
// letters, then digits, repeated).
bool type_word(const std::string& w) {
  if (w.empty()) return false;
  size_t i = 0;
  while (i < w.size()) {
    size_t a = i;
    while (i < w.size() && std::isalpha(static_cast<unsigned char>(w[i]))) ++i;
    size_t b = i;
    while (i < w.size() && std::isdigit(static_cast<unsigned char>(w[i]))) ++i;
    if (a == b || b == i || b - a > 2) return false;
  }
  return true;
}

std::string joined(const std::vector<std::string>& words) {
  std::string s;
  for (size_t i = 0; i < words.size(); ++i) s += (i ? "_" : "") + words[i];
  return s;
}

// Whether every type word of a run repeats one type ("f32f32", "f32"); that type.
bool one_type(const std::vector<std::string>& words, size_t a, size_t b, std::string* type) {
  type->clear();
  for (size_t i = a; i < b; ++i) {
    const std::string& w = words[i];
    size_t d = 0;
    while (d < w.size() && std::isalpha(static_cast<unsigned char>(w[d]))) ++d;
    while (d < w.size() && std::isdigit(static_cast<unsigned char>(w[d]))) ++d;
    const std::string first = w.substr(0, d);
    if (type->empty()) *type = first;
    if (first != *type || w.size() % first.size()) return false;
    for (size_t k = 0; k < w.size(); k += first.size())
      if (w.compare(k, first.size(), first) != 0) return false;
  }
  return !type->empty();
}

// A plain name (no template) in at most max characters. A generated
// cuBLAS/CUTLASS name reads by its words: at level 0 without its filler
// (execute, kernel, cublas, the version "5x"), alignment, warp shape and
// stage words, its "tilesize" as "tile", and a run of one repeated type as
// that type ("f32f32_f32f32_f32" -> "f32"), and when still too long
// without its math instruction ("ffma"), "xmma", then "tile"; at level 1 without
// its filler only. Then any name too long is elided in its middle (its
// end often numbers it).
std::string plain_name(sv name, size_t max, int level) {
  std::string s(name);
  std::vector<std::string> words;
  for (sv w : split_top(name, "_")) words.emplace_back(w);
  if (generated_gemm(words)) {
    auto version = [](const std::string& w) {
      return w.size() >= 2 && w.back() == 'x' &&
             std::all_of(w.begin(), w.end() - 1, [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    };
    auto digit_end = [](const std::string& w) { return !w.empty() && std::isdigit(static_cast<unsigned char>(w.back())); };
    auto drop = [&](const std::string& w) {
      if (w.empty() || w == "execute" || w == "kernel" || w == "cublas" || version(w)) return true;
      return level == 0 && ((starts_with(w, "align") && digit_end(w)) || (starts_with(w, "warp") && digit_end(w)) ||
                            (starts_with(w, "stage") && digit_end(w)));
    };
    words.erase(std::remove_if(words.begin(), words.end(), drop), words.end());
    if (level == 0) {
      for (auto& w : words)
        if (starts_with(w, "tilesize")) w = "tile" + w.substr(8);
      for (size_t a = 0; a < words.size();) {
        size_t b = a;
        while (b < words.size() && type_word(words[b])) ++b;
        std::string type;
        if (b - a > 1 && one_type(words, a, b, &type)) {
          words.erase(words.begin() + a + 1, words.begin() + b);
          words[a] = type;
          b = a + 1;
        }
        a = std::max(b, a + 1);  // never part of a run
      }
      // Still too long: the math instruction ("ffma", "hmma"), then "xmma",
      // then the word "tile" before the tile's shape.
      for (auto too_much : {+[](const std::string& w) { return w.size() == 4 && ends_with(w, "ma") && w != "xmma"; },
                            +[](const std::string& w) { return w == "xmma"; }}) {
        if (joined(words).size() <= max) break;
        words.erase(std::remove_if(words.begin(), words.end(), too_much), words.end());
      }
      if (joined(words).size() > max)
        for (auto& w : words)
          if (starts_with(w, "tile") && w.size() > 4 && std::isdigit(static_cast<unsigned char>(w[4]))) w = w.substr(4);
    }
    s = joined(words);
  }
  return elide_middle(s, max);
}

// base<args> in at most max characters. What tells kernels apart is kept
// longest: a functor's name (functor) before the base, which is elided
// first down to its first three letters ("vec...<CUDAFunctor_add<float>>");
// else the base before its arguments.
std::string fit(sv base, const std::vector<std::string>& args, const std::string& params, bool functor,
                size_t max) {
  const std::string inner = join(args), tail = params.empty() ? "" : "(" + params + ")";
  std::string s = std::string(base) + "<" + inner + ">" + tail;
  if (s.size() <= max) return s;
  const size_t keep = std::min<size_t>(6, base.size());
  if (max < keep + 8) return elide_end(s, max);
  if (functor) {
    const size_t a = inner.size() + 2 + tail.size();
    if (max >= a + keep) return elide_end(std::string(base), max - a) + "<" + inner + ">" + tail;
    return elide_end(std::string(base), keep) + "<" + elide_middle(inner + ">" + tail, max - keep - 1);
  }
  if (max >= base.size() + 8) return std::string(base) + "<" + elide_middle(inner + ">" + tail, max - base.size() - 1);
  return elide_end(s, max);
}

// The form of a level: 0 short_kernel_name's; 1 the functors with their
// wrappers (essence's detail), a plain name with its parameters; 2 every
// template argument; 3 the parameters too.
std::string kernel_form(sv name, size_t max, int level) {
  std::string d = demangle(name);
  for (size_t at; (at = d.find("(anonymous namespace)::")) != std::string::npos;) d.erase(at, 23);
  sv v = trim(d), params;
  size_t paren = find_top(v, '(');
  if (paren != npos && paren > 0) {
    size_t close = find_top(v, ')', paren + 1);
    params = v.substr(paren + 1, close == npos ? npos : close - paren - 1);
    v = trim(v.substr(0, paren));
  }
  size_t sp = rfind_top(v, " ");
  if (sp != npos) v = v.substr(sp + 1);
  std::vector<sv> ps = pieces(v);
  Part k = ps.empty() ? Part{} : parse_part(ps.back());
  if (k.ident.empty()) return elide_end(d.empty() ? std::string(name) : d, max);
  std::string shown_params;
  if (level >= (k.templated ? 3 : 1) && !trim(params).empty()) {
    std::vector<std::string> p;
    for (sv x : split_top(params, ",")) p.push_back(simple(x, 1));
    shown_params = join(p);
  }
  if (!k.templated) {
    if (shown_params.empty()) return plain_name(k.ident, max, level);
    return elide_middle(std::string(k.ident) + "(" + shown_params + ")", max);
  }
  std::vector<std::string> args;
  bool functor = false;
  if (level <= 1) {
    for (sv a : k.targs)
      if (auto e = essence(a, level == 1, 0)) args.push_back(*e);
    functor = !args.empty();
    if (args.empty()) args = simple_args(k.targs, 0);
  } else {
    for (sv a : k.targs) {
      auto e = essence(a, true, 0);
      functor = functor || e;
      args.push_back(e ? *e : simple(a, 1));
    }
  }
  return fit(k.ident, args, shown_params, functor, max);
}

std::string tag(std::string_view name, int digits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, " #%0*llx", digits, static_cast<unsigned long long>(hash_mix(hash_text(name)) >> (64 - 4 * digits)));
  return buf;
}

}  // namespace

std::string short_kernel_name(std::string_view name, size_t max_len) {
  if (max_len < 4) max_len = 4;
  // A graph runs a few kernels many times over (pictures and reports name
  // every node): each name is worked out once per thread and width.
  thread_local std::unordered_map<std::string, std::string> known;
  std::string key(name);
  key += '\0' + std::to_string(max_len);
  if (auto it = known.find(key); it != known.end()) return it->second;
  if (known.size() >= 4096) known.clear();
  return known.emplace(std::move(key), kernel_form(name, max_len, 0)).first->second;
}

void KernelNamer::add(std::string_view name) {
  if (shown_.find(name) != shown_.end()) return;
  shown_.emplace(std::string(name), std::string());
  resolved_ = false;
}

std::string KernelNamer::operator()(std::string_view name) const {
  if (!resolved_) resolve();
  auto it = shown_.find(name);
  return it != shown_.end() ? it->second : short_kernel_name(name, max_len_);
}

void KernelNamer::resolve() const {
  resolved_ = true;
  const size_t max = std::max<size_t>(max_len_, 12);
  std::map<std::string, std::vector<std::pair<const std::string*, std::string*>>> alike;
  for (auto& [name, shown] : shown_) {
    shown = short_kernel_name(name, max);
    alike[shown].emplace_back(&name, &shown);
  }
  // Kernels that read alike: longer forms (kernel_form's levels), each for
  // those that still read alike, where it tells them apart.
  for (auto& [first, group] : alike) {
    std::vector<std::pair<const std::string*, std::string*>> pending = group;
    for (int level = 1; level <= 3 && pending.size() > 1; ++level) {
      std::map<std::string, size_t> count;
      std::vector<std::string> longer;
      for (const auto& [name, shown] : pending) ++count[longer.emplace_back(kernel_form(*name, max, level))];
      std::vector<std::pair<const std::string*, std::string*>> still;
      for (size_t i = 0; i < pending.size(); ++i)
        if (count[longer[i]] == 1) *pending[i].second = longer[i];
        else still.push_back(pending[i]);
      pending = std::move(still);
    }
  }
  // What still reads alike gets its tag, longer until the names differ.
  for (int digits : {4, 8, 16}) {
    std::map<std::string, size_t> count;
    for (const auto& [name, shown] : shown_) ++count[shown];
    bool any = false;
    for (auto& [name, shown] : shown_) {
      if (count[shown] < 2) continue;
      any = true;
      const std::string t = tag(name, digits);
      shown = short_kernel_name(name, max > t.size() + 4 ? max - t.size() : 4) + t;  // fitted to the room left
    }
    if (!any) break;
  }
}

}  // namespace graphscope
