// A thread's Python frames: through the API (a frame object for every
// frame), read straight from the interpreter's own structures without the
// GIL (raw_walk), and compared with a stack met before (same_stack); and
// what is learnt once of each code object (CodeInfo).
#include <cstring>
#include <string>

#include "python_cache.h"

namespace graphscope::capture::origin_internal {

uint32_t CodeInfo::line_at(const Python& py, PyObj* code, int offset) {
  uint32_t l = 0;
  if (cached_line(offset, l)) return l;
  l = uint32_t(py.Addr2Line(code, offset));
  if (lines.size() < 256) lines.emplace_back(offset, l);
  return l;
}

uint32_t CodeInfo::line(const Python& py, PyObj* frame) {
  if (!py.FrameLasti || g_uncached) return uint32_t(py.FrameLine(frame));
  const int lasti = py.FrameLasti(frame);
  for (const auto& [at, l] : lines)
    if (at == lasti) return l;
  const uint32_t l = uint32_t(py.FrameLine(frame));
  if (lines.size() < 256) lines.emplace_back(lasti, l);
  return l;
}

namespace {

// Files of the framework and of Python itself: the frames a person did not
// write. The innermost frames outside these name the code that made a node.
bool framework_file(const std::string& f) {
  if (f.empty() || f[0] == '<') return true;  // <frozen ...>, <string>
  // An installed package: the first directory after site- or dist-packages.
  if (size_t p = f.rfind("-packages/"); p != std::string::npos) {
    const std::string pkg = f.substr(p + 10, f.find('/', p + 10) - (p + 10));
    for (const char* fw : {"torch", "triton", "jax", "jaxlib", "cupy", "cupy_backends", "functorch", "nvidia"})
      if (pkg == fw) return true;
    return false;
  }
  // PyTorch from a source tree.
  if (size_t t = f.rfind("/torch/"); t != std::string::npos)
    for (const char* sub : {"nn/", "_", "utils/", "cuda/", "autograd/", "fx/", "functional.py", "overrides.py"})
      if (f.compare(t + 7, std::strlen(sub), sub) == 0) return true;
  // The standard library: .../lib/python3.X/NAME.py.
  size_t lib = f.rfind("/lib/python3");
  return lib != std::string::npos && f.find('/', lib + 12) != std::string::npos;
}

// A code object's facts that every frame of a read needs, kept beside its
// key (a frame of the framework that runs no forward costs one lookup).
// The tag also says where a forward's self is (kSelfFirst: the first local;
// kSelfElsewhere: read through the API), so that a forward of the
// framework's, five or so on every stack, needs nothing but the tag.
constexpr uint32_t kFramework = 1, kForward = 2, kSelfFirst = 4, kSelfElsewhere = 8;
uint32_t code_tag(const CodeInfo& ci) {
  return (ci.framework ? kFramework : 0) | (ci.forward ? kForward : 0) |
         (ci.self_slot == 0 ? kSelfFirst : 0) | (ci.self_slot == -2 ? kSelfElsewhere : 0);
}

// The facts of a code object, learnt once (the cache holds the code).
CodeInfo& code_info(const Python& py, PyCache& c, PyObj* code) {
  if (CodeInfo* known = c.code.find(code)) return *known;
  CodeInfo ci;
  ci.file = attr_text(py, code, "co_filename");
  ci.function = attr_text(py, code, "co_qualname");
  if (ci.function.empty()) ci.function = attr_text(py, code, "co_name");
  ci.framework = framework_file(ci.file);
  size_t dot = ci.function.rfind('.');
  ci.forward = (dot == std::string::npos ? ci.function : ci.function.substr(dot + 1)) == "forward";
  if (ci.forward && py.TupleSize) {
    for (const char* names : {"co_varnames", "co_cellvars", "co_freevars"}) {
      PyObj* t = py.GetAttr(code, names);
      if (!t) {
        py.ErrClear();
        ci.self_slot = -2;
        continue;
      }
      const ssize_t n = py.TupleSize(t);
      for (ssize_t i = 0; i < n; ++i)
        if (utf8(py, py.TupleItem(t, i)) == "self") {
          const bool first = names[3] == 'v' && i == 0;
          if (first) ci.self_slot = 0;
          else if (ci.self_slot != 0) ci.self_slot = -2;
        }
      if (n < 0) py.ErrClear();
      py.DecRef(t);
    }
  }
  py.IncRef(code);  // held by the cache
  const uint32_t tag = code_tag(ci);
  return c.code.insert(code, std::move(ci), tag);
}

// Frame f's first local (a method's self), read straight; a cell's contents
// (ob_ref, after its header) where a closure holds it.
const char* first_local(const Python& py, const char* f) {
  const char* v = field(f, py.frames->locals);
  return v && Python::type_of(v) == py.cell_type ? field(v, 16) : v;
}

// This thread's innermost interpreter frame, from its thread state (no GIL
// needed: a thread's frames change only while it runs Python, and this one
// is in a CUDA call).
const char* current_frame(const Python& py) {
  const Python::FrameLayout& L = *py.frames;
  const char* ts = static_cast<const char*>(g_target ? g_target : py.ThisThreadState());
  const char* cframe = ts ? field(ts, L.tstate_cframe) : nullptr;
  return cframe ? field(cframe, L.cframe_current) : nullptr;
}

}  // namespace

// A key of this thread's Python stack for launch sites: the code and the
// instruction of each frame, read straight (no GIL: the thread is in a CUDA
// call). 0 where frames cannot be read straight or there are none.
uint64_t frames_key(const Python& py) {
  if (!py.frames) return 0;
  const Python::FrameLayout& L = *py.frames;
  uint64_t h = 0xcbf29ce484222325ull;
  int seen = 0;
  for (const char* f = current_frame(py); f && seen < 256; f = field(f, L.previous), ++seen) {
    h = (h ^ reinterpret_cast<uintptr_t>(field(f, L.code))) * 0x100000001b3ull;
    h = (h ^ reinterpret_cast<uintptr_t>(field(f, L.instr))) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  return seen ? (h | 1) : 0;
}

// The stack through the API: a frame object for every frame.
void api_walk(const Python& py, PyCache& c, PyStack& s) {
  PyObj* self_name = c.module_class ? c.self_name : nullptr;
  PyObj* frame = g_target ? py.ThreadFrame(g_target) : py.GetFrame();  // new, borrowed
  if (frame && !g_target) py.IncRef(frame);
  for (int depth = 0; frame && depth < 256; ++depth) {
    PyObj* code = py.FrameCode(frame);
    CodeInfo& info = code_info(py, c, code);
    if (!info.framework && s.users < 3) s.user[s.users++] = {code, info.line(py, frame)};
    if (info.forward && self_name) {
      PyObj* self = nullptr;
      if (py.FrameVar) {
        self = py.FrameVar(frame, self_name);
      } else if (PyObj* locals = py.FrameLocals(frame)) {
        self = py.MappingItem(locals, "self");
        py.DecRef(locals);
      }
      if (!self) py.ErrClear();
      else if (py.IsInstance(self, c.module_class) == 1 && (s.modules.empty() || s.modules.back() != self))
        s.modules.push_back(self);
      else
        py.DecRef(self);
      py.ErrClear();
    }
    py.DecRef(code);
    PyObj* back = py.FrameBack(frame);
    py.DecRef(frame);
    frame = back;
  }
  if (frame) py.DecRef(frame);
}

// The same read straight from the interpreter's frames (Python::frames):
// no frame object is made, no reference taken but the modules'. With
// `gil` false it calls nothing of Python's and takes no reference: it
// gives up (false) at the first fact not already in the cache. False (out
// left empty) also where a frame needs the API. out is cleared first (its
// modules released if held): a reader reuses one to allocate nothing.
bool raw_walk(const Python& py, PyCache& c, PyStack& out, bool gil, Chain* chain) {
  const Python::FrameLayout& L = *py.frames;
  out.release(py);
  out.users = 0;
  out.held = gil;
  auto give_up = [&] {
    out.release(py);
    out.users = 0;
    return false;
  };
  if (chain) chain->clear();
  int depth = 0, seen = 0;
  for (const char* f = current_frame(py); f && depth < 256 && ++seen < 1024; f = field(f, L.previous)) {
    if (chain) chain->add(f, field(f, L.code));
    if (L.cstack_owner >= 0 && f[L.owner] == L.cstack_owner) continue;
    ++depth;
    PyObj* code = const_cast<char*>(field(f, L.code));
    if (!code) return give_up();
    // A code object the cache knows is one it holds: nothing else can be at
    // its address, and its header (a cache miss a frame, on a stack of
    // tens) need not be read.
    uint32_t tag = 0;
    CodeInfo* info = c.code.find(code, tag);
    if (!info) {
      if (Python::type_of(code) != py.code_type || !gil) return give_up();
      info = &code_info(py, c, code);
      tag = code_tag(*info);
    }
    if ((tag & kFramework) && !(tag & kForward)) continue;
    if (!(tag & kFramework) && out.users < 3) {
      const int offset = int(field(f, L.instr) - (static_cast<const char*>(code) + py.code_header));
      uint32_t line = 0;
      if (!info->cached_line(offset, line)) {
        if (!gil) return give_up();
        line = info->line_at(py, code, offset);
      }
      out.user[out.users++] = {code, line};
      if (chain) {
        MarkExtra& x = chain->extra(kMarkUser);
        x.instr = field(f, L.instr);
        x.line = line;
      }
    }
    if ((tag & kForward) && c.module_class) {
      if (tag & kSelfElsewhere) return give_up();
      if (tag & kSelfFirst) {
        PyObj* self = const_cast<char*>(first_local(py, f));
        if (chain) {
          MarkExtra& x = chain->extra(kMarkForward);
          x.local = field(f, L.locals);
          x.self = self;
          if (x.local != x.self) chain->marks.back().code |= kMarkCell;
        }
        if (self && (out.modules.empty() || out.modules.back() != self)) {
          const uint8_t* known = c.module_types.find(Python::type_of(self));
          if (!known && !gil) return give_up();
          if (known ? *known == 1 : is_module(py, c, self)) {
            if (gil) py.IncRef(self);
            out.modules.push_back(self);
          }
          if (gil) py.ErrClear();
        }
      }
    }
  }
  return true;
}

// Whether this thread's stack gives the origin k's marks did (raw_walk): the
// same frames running the same code, each forward with the same first
// local, and each user frame the origin names at the same line. An origin
// names no other frame's place, so other instructions are not compared
// (a framework forward's ops follow one another in one frame). A line is
// taken only from the cache (an instruction not met before: false). Reads
// without the GIL.
bool same_stack(const Python& py, PyCache& c, const Known& k) {
  const Python::FrameLayout& L = *py.frames;
  const FrameMark* m = k.marks;
  const FrameMark* const end = m + k.frames;
  const MarkExtra* x = k.extras;
  if (current_frame(py) != (m == end ? nullptr : m->frame)) return false;
  // Each frame is loaded from the address the Known kept, and its link to
  // the one before compared with the next mark's: no load waits for the
  // one before it, so the CPU fetches the cold outer frames together.
  for (; m != end; ++m) {
    const char* f = m->frame;
    const uintptr_t flags = m->code & kMarkFlags;
    if (reinterpret_cast<uintptr_t>(field(f, L.code)) != (m->code & ~kMarkFlags) ||
        field(f, L.previous) != (m + 1 == end ? nullptr : m[1].frame))
      return false;
    if (!flags) continue;
    if (flags & kMarkUser) {
      const char* instr = field(f, L.instr);
      if (instr != x->instr) {
        const auto* code = reinterpret_cast<const char*>(m->code & ~kMarkFlags);
        const CodeInfo* info = c.code.find(code);
        const int offset = int(instr - (code + py.code_header));
        uint32_t line = 0;
        if (!info || !info->cached_line(offset, line) || line != x->line) return false;
      }
    }
    // The first local as the frame holds it: the module itself (its
    // object not looked at), or the cell that holds it.
    if (flags & kMarkForward) {
      const char* v = field(f, L.locals);
      if (v != x->local || ((flags & kMarkCell) && field(v, 16) != x->self)) return false;
    }
    ++x;
  }
  return true;
}

}  // namespace graphscope::capture::origin_internal
