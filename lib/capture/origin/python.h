// Python, reached through the symbols of the interpreter this process runs
// (no Python header: any CPython from 3.9 on). Every call below is made with
// the GIL held, taken with PyGILState_Ensure.
#pragma once

#include <dlfcn.h>
#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>

namespace graphscope::capture {
// What lib/capture/origin's files share, in a namespace of their own (it was
// one file's unnamed namespace), hidden from libgraphscope_capture.so's
// exports like the rest of the internals.
namespace origin_internal __attribute__((visibility("hidden"))) {

using PyObj = void;
struct Python {
  int (*IsInitialized)() = nullptr;
  int (*IsFinalizing)() = nullptr;
  void* (*ThisThreadState)() = nullptr;
  void* (*CurrentThreadState)() = nullptr;  // the thread state holding the GIL where this thread holds it
  void* (*SaveThread)() = nullptr;          // the proxy's (Impl::proxy_loop)
  void (*RestoreThread)(void*) = nullptr;
  PyObj* (*ThreadFrame)(void*) = nullptr;   // PyThreadState_GetFrame: a new reference
  int (*Ensure)() = nullptr;
  void (*Release)(int) = nullptr;
  PyObj* (*GetFrame)() = nullptr;
  PyObj* (*FrameBack)(PyObj*) = nullptr;
  PyObj* (*FrameCode)(PyObj*) = nullptr;
  int (*FrameLine)(PyObj*) = nullptr;
  int (*FrameLasti)(PyObj*) = nullptr;           // 3.11; optional
  PyObj* (*FrameVar)(PyObj*, PyObj*) = nullptr;  // 3.12
  PyObj* (*FrameLocals)(PyObj*) = nullptr;       // 3.11
  PyObj* (*GetAttr)(PyObj*, const char*) = nullptr;
  PyObj* (*GetAttrObj)(PyObj*, PyObj*) = nullptr;
  PyObj* (*DictGet)(PyObj*, PyObj*) = nullptr;  // borrowed
  PyObj* (*Intern)(const char*) = nullptr;
  int (*IsInstance)(PyObj*, PyObj*) = nullptr;
  PyObj* (*TypeOf)(PyObj*) = nullptr;
  const char* (*Utf8)(PyObj*) = nullptr;
  PyObj* (*Str)(const char*) = nullptr;
  void (*DecRef)(PyObj*) = nullptr;
  void (*IncRef)(PyObj*) = nullptr;
  void (*ErrFetch)(PyObj**, PyObj**, PyObj**) = nullptr;
  void (*ErrRestore)(PyObj*, PyObj*, PyObj*) = nullptr;
  void (*ErrClear)() = nullptr;
  int (*DictNext)(PyObj*, ssize_t*, PyObj**, PyObj**) = nullptr;
  PyObj* (*MappingItem)(PyObj*, const char*) = nullptr;
  PyObj* (*GetModule)(PyObj*) = nullptr;
  PyObj* (*WeakRef)(PyObj*, PyObj*) = nullptr;
  int (*WeakGetRef)(PyObj*, PyObj**) = nullptr;  // 3.13
  PyObj* (*WeakGetObject)(PyObj*) = nullptr;     // borrowed; before 3.13
  int (*GcDisable)() = nullptr;  // 3.10; optional
  int (*GcEnable)() = nullptr;
  int (*Addr2Line)(PyObj*, int) = nullptr;
  int (*IsSubtype)(PyObj*, PyObj*) = nullptr;
  ssize_t (*TupleSize)(PyObj*) = nullptr;
  PyObj* (*TupleItem)(PyObj*, ssize_t) = nullptr;  // borrowed
  PyObj* dict_type = nullptr;
  PyObj* code_type = nullptr;
  PyObj* cell_type = nullptr;
  bool usable = false;

  // Where the interpreter keeps a frame's code, caller, instruction and
  // locals (struct _PyInterpreterFrame, internal to CPython 3.11 and 3.12;
  // other versions, and builds whose object header differs, read frames
  // through the API only). A PyFrameObject points to its frame at offset 24
  // in both.
  struct FrameLayout {
    size_t code, previous, instr, owner, locals;
    int cstack_owner;  // frames the C stack owns (3.12's entry frames), or -1
    // PyThreadState's cframe, and _PyCFrame's current_frame.
    size_t tstate_cframe, cframe_current;
  };
  std::optional<FrameLayout> frames;
  size_t code_header = 0;  // offsetof(PyCodeObject, co_code_adaptive): PyCode_Type's tp_basicsize

  template <typename F>
  static void find(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
  }
  Python();
  static PyObj* type_of(const PyObj* o) { return *reinterpret_cast<PyObj* const*>(static_cast<const char*>(o) + 8); }
  // A type's tp_name, after the variable object header (read only where
  // the header is the plain one: `frames` known). For a class made in
  // Python it is its __name__.
  static const char* type_name_of(const PyObj* type) {
    return *reinterpret_cast<const char* const*>(static_cast<const char*>(type) + 24);
  }
  // Whether this thread can give its Python stack now: Python runs, is not
  // shutting down, and this thread is a Python thread (no thread state is
  // ever created here).
  bool ready() const {
    return usable && IsInitialized() && !IsFinalizing() && ThisThreadState() != nullptr;
  }
  // Whether this thread holds the GIL now (a Python thread in a C call
  // that did not let it go: PyTorch's launches). Through the current
  // thread state, which is the GIL holder's (3.9-3.11) or this thread's
  // only while it holds it (3.12 on), against this thread's own:
  // PyGILState_Check says yes to every thread once subinterpreters exist.
  bool holds_gil() const {
    if (!CurrentThreadState) return false;
    void* t = CurrentThreadState();
    return t && t == ThisThreadState();
  }
  // A weak reference to o, or null where o takes none (the error cleared).
  PyObj* weak(PyObj* o) const {
    PyObj* r = WeakRef && (WeakGetRef || WeakGetObject) ? WeakRef(o, nullptr) : nullptr;
    if (!r) ErrClear();
    return r;
  }
  // Whether the weak reference r still refers to o (alive, so no other
  // object can have taken its address).
  bool refers_to(PyObj* r, PyObj* o) const {
    if (!r) return false;
    if (WeakGetRef) {
      PyObj* now = nullptr;
      const int alive = WeakGetRef(r, &now);
      if (alive < 0) ErrClear();
      if (now) DecRef(now);
      return alive == 1 && now == o;
    }
    PyObj* now = WeakGetObject(r);
    if (!now) ErrClear();
    return now == o;
  }
};

const Python& python();

// Scoped states of the interpreter, undone in reverse order when the scope
// ends, also when what runs inside throws (a GIL kept by mistake would
// stop the application).
// The GIL, taken the way a C extension takes it back.
class HeldGil {
 public:
  explicit HeldGil(const Python& py) : py_(py), state_(py.Ensure()) {}
  ~HeldGil() { py_.Release(state_); }
  HeldGil(const HeldGil&) = delete;
  HeldGil& operator=(const HeldGil&) = delete;

 private:
  const Python& py_;
  int state_;
};

// The thread's pending exception, if any, put aside and put back (with the
// GIL held).
class KeptError {
 public:
  explicit KeptError(const Python& py) : py_(py) { py_.ErrFetch(&type_, &value_, &trace_); }
  ~KeptError() { py_.ErrRestore(type_, value_, trace_); }
  KeptError(const KeptError&) = delete;
  KeptError& operator=(const KeptError&) = delete;

 private:
  const Python& py_;
  PyObj *type_ = nullptr, *value_ = nullptr, *trace_ = nullptr;
};

// No garbage collection (a finalizer must not run while a stack is read),
// where the Python has PyGC_Disable.
class NoCollection {
 public:
  explicit NoCollection(const Python& py)
      : py_(py), was_on_(py.GcDisable && py.GcEnable && py.GcDisable() == 1) {}
  ~NoCollection() {
    if (was_on_) py_.GcEnable();
  }
  NoCollection(const NoCollection&) = delete;
  NoCollection& operator=(const NoCollection&) = delete;

 private:
  const Python& py_;
  bool was_on_;
};

std::string utf8(const Python& py, PyObj* s);
std::string attr_text(const Python& py, PyObj* o, const char* name);

}  // namespace origin_internal
// Seen from graphscope::capture unqualified, as the unnamed namespace's
// names were (OriginRecorder::Impl's members use them).
using namespace origin_internal;
}  // namespace graphscope::capture
