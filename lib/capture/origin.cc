#include "origin.h"

#include <cuda.h>
#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <generated_nvtx_meta.h>
#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "clock.h"
#include "flat_map.h"
#include "inspect/core/demangle.h"

namespace graphscope::capture {

namespace {

// ---------------------------------------------------------------------------
// Python, reached through the symbols of the interpreter this process runs
// (no Python header: any CPython from 3.9 on). Every call below is made with
// the GIL held, taken with PyGILState_Ensure.
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
  Python() {
    find(IsInitialized, "Py_IsInitialized");
    if (!IsInitialized) return;
    find(IsFinalizing, "Py_IsFinalizing");
    if (!IsFinalizing) find(IsFinalizing, "_Py_IsFinalizing");
    find(ThisThreadState, "PyGILState_GetThisThreadState");
    find(CurrentThreadState, "PyThreadState_GetUnchecked");  // 3.13
    if (!CurrentThreadState) find(CurrentThreadState, "_PyThreadState_UncheckedGet");
    find(SaveThread, "PyEval_SaveThread");
    find(RestoreThread, "PyEval_RestoreThread");
    find(ThreadFrame, "PyThreadState_GetFrame");
    find(Ensure, "PyGILState_Ensure");
    find(Release, "PyGILState_Release");
    find(GetFrame, "PyEval_GetFrame");
    find(FrameBack, "PyFrame_GetBack");
    find(FrameCode, "PyFrame_GetCode");
    find(FrameLine, "PyFrame_GetLineNumber");
    find(FrameLasti, "PyFrame_GetLasti");
    find(FrameVar, "PyFrame_GetVar");
    find(FrameLocals, "PyFrame_GetLocals");
    find(GetAttr, "PyObject_GetAttrString");
    find(GetAttrObj, "PyObject_GetAttr");
    find(DictGet, "PyDict_GetItem");
    find(Intern, "PyUnicode_InternFromString");
    find(IsInstance, "PyObject_IsInstance");
    find(TypeOf, "PyObject_Type");
    find(Utf8, "PyUnicode_AsUTF8");
    find(Str, "PyUnicode_FromString");
    find(DecRef, "Py_DecRef");
    find(IncRef, "Py_IncRef");
    find(ErrFetch, "PyErr_Fetch");
    find(ErrRestore, "PyErr_Restore");
    find(ErrClear, "PyErr_Clear");
    find(DictNext, "PyDict_Next");
    find(MappingItem, "PyMapping_GetItemString");
    find(GetModule, "PyImport_GetModule");
    find(WeakRef, "PyWeakref_NewRef");
    find(WeakGetRef, "PyWeakref_GetRef");
    if (!WeakGetRef) find(WeakGetObject, "PyWeakref_GetObject");
    find(GcDisable, "PyGC_Disable");
    find(GcEnable, "PyGC_Enable");
    find(Addr2Line, "PyCode_Addr2Line");
    find(IsSubtype, "PyType_IsSubtype");
    find(TupleSize, "PyTuple_Size");
    find(TupleItem, "PyTuple_GetItem");
    dict_type = dlsym(RTLD_DEFAULT, "PyDict_Type");
    code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
    cell_type = dlsym(RTLD_DEFAULT, "PyCell_Type");
    const auto* version = static_cast<const unsigned long*>(dlsym(RTLD_DEFAULT, "Py_Version"));
    // Py_TRACE_REFS builds put two more pointers in every object's header.
    const bool plain_header = !dlsym(RTLD_DEFAULT, "_Py_ForgetReference");
    if (version && plain_header && Addr2Line && IsSubtype && TupleSize && TupleItem && code_type && cell_type) {
      const unsigned long minor = (*version >> 16) & 0xff;  // PY_VERSION_HEX: 0x030C....
      if ((*version >> 24) == 3 && minor == 11) frames = FrameLayout{32, 48, 56, 69, 72, -1, 56, 8};
      if ((*version >> 24) == 3 && minor == 12) frames = FrameLayout{0, 8, 56, 70, 72, 3, 56, 0};
      // PyTypeObject's public layout: the variable header, tp_name, tp_basicsize.
      code_header = size_t(*reinterpret_cast<const ssize_t*>(static_cast<const char*>(code_type) + 32));
      if (code_header < 64 || code_header > 4096) frames.reset();
    }
    usable = IsFinalizing && ThisThreadState && Ensure && Release && GetFrame && FrameBack && FrameCode && FrameLine &&
             (FrameVar || (FrameLocals && MappingItem)) && GetAttr && GetAttrObj && DictGet && Intern && IsInstance && TypeOf && Utf8 && Str &&
             DecRef && IncRef && ErrFetch && ErrRestore && ErrClear && DictNext && GetModule && dict_type;
  }
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

const Python& python() {
  static const Python p;
  return p;
}

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

std::string utf8(const Python& py, PyObj* s) {
  if (!s) return "";
  const char* c = py.Utf8(s);
  if (!c) {
    py.ErrClear();
    return "";
  }
  return std::string(c, strnlen(c, 4096));
}

std::string attr_text(const Python& py, PyObj* o, const char* name) {
  PyObj* a = py.GetAttr(o, name);
  if (!a) {
    py.ErrClear();
    return "";
  }
  std::string s = utf8(py, a);
  py.DecRef(a);
  return s;
}

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

thread_local bool g_uncached = false;  // OriginRecorder::uncached_for_tests: this thread's reads
// The thread state whose stack this thread reads (the proxy's, for a
// thread that cannot take the GIL itself: Impl::proxy_loop); null: its own.
thread_local void* g_target = nullptr;
std::atomic<uint64_t> g_reads_cached{0}, g_reads_same{0}, g_reads_prior{0}, g_reads_made{0}, g_reads_full{0},
    g_reads_proxied{0}, g_reads_late{0}, g_reads_tries{0}, g_reads_frames{0},
    g_reads_ns{0};                      // OriginRecorder::read_counts
std::atomic<bool> g_time_reads{false};  // OriginRecorder::time_reads
// With time_reads: where the reads' time goes (ReadCounts).
std::atomic<uint64_t> g_lock_ns{0}, g_compare_ns{0}, g_record_ns{0};
// By how the read was answered: none, the capture before, the read before,
// the walk through the caches.
std::atomic<uint64_t> g_path_ns[4] = {};

struct CodeInfo {
  std::string file, function;
  bool framework = false, forward = false;
  // Where a forward's "self" is among the frame's locals: 0 (the first
  // argument, the method's case), -1 (no local of that name), -2 (a local
  // elsewhere: frames of this code are read through the API).
  int self_slot = -1;
  // Line numbers by instruction offset: PyFrame_GetLineNumber scans the
  // code's line table from its start on every call, and a read without the
  // GIL (read_python_cached) can call nothing of Python's.
  std::vector<std::pair<int, uint32_t>> lines;
  uint32_t line(const Python& py, PyObj* frame);
  // The same from the instruction's byte offset (what PyFrame_GetLasti gives).
  uint32_t line_at(const Python& py, PyObj* code, int offset);
  bool cached_line(int offset, uint32_t& line) const {
    for (const auto& [at, l] : lines)
      if (at == offset) {
        line = l;
        return true;
      }
    return false;
  }
};

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

template <typename V>
using PtrMap = FlatMap<const void*, V>;

// Facts about a module object, checked before they are trusted in a later
// capture: the same object still at its address (a weak reference: a
// strong one would keep a model's memory alive), of the same type under
// the same name. An object that took a dead module's address gets a new
// serial, so nothing made of the old one matches it.
struct ModuleInfo {
  PyObj* ref = nullptr;   // weak reference, owned; null where the module takes none
  PyObj* type = nullptr;  // held
  std::string type_name;
  uint32_t serial = 0;
  uint32_t checked = 0;  // the capture it was last checked in
  uint32_t used = 0;     // PyCache::begun when a read last used it (precheck)
  // Whether mo (alive) is still of this type under this name, the name read
  // from the type itself (only where the object layout is known: a class
  // made in Python keeps its __name__ there).
  bool same_type(const PyObj* mo) const {
    return Python::type_of(mo) == type && std::strcmp(Python::type_name_of(type), type_name.c_str()) == 0;
  }
};

// A module's name under the module that called it: a path through the
// _modules dicts ("layers.3"), or "<Type>" where the caller does not own it.
struct ChildName {
  std::string rel;
  std::vector<PyObj*> parts;  // rel's parts as interned strings, held (empty: looked up by text)
  uint32_t checked = 0;
  uint32_t used = 0;                                  // as ModuleInfo's
  const PyObj *parent = nullptr, *child = nullptr;  // the modules (not held: their ModuleInfo says if alive)
};

// What a read takes from the stack: the innermost user frames and the
// modules whose forward is running (innermost first, each held).
struct PyStack {
  struct UserFrame {
    PyObj* code;
    uint32_t line;
    bool operator==(const UserFrame& o) const { return code == o.code && line == o.line; }
  } user[3];
  size_t users = 0;
  std::vector<PyObj*> modules;
  bool held = true;  // a reference to each module is held
  bool operator==(const PyStack& o) const {
    return users == o.users && std::equal(user, user + users, o.user) && modules == o.modules;
  }
  void release(const Python& py) {
    if (held)
      for (PyObj* mo : modules) py.DecRef(mo);
    modules.clear();
  }
};

// One frame of a stack as a read without the GIL saw it: enough to tell
// that a later stack is the same, frame for frame (Known). Sixteen bytes:
// a stack of thirty frames is eight cache lines, which a read after the
// framework's work between two launches finds cold. The code object's
// address carries what else the frame is (its low bits: objects are at
// least 8-byte aligned), and a frame with anything else has a MarkExtra,
// in order.
constexpr uintptr_t kMarkUser = 1,  // a user frame the origin names (one of the first three)
    kMarkForward = 2,               // a forward whose module was read
    kMarkCell = 4,                  // whose first local is a cell holding the module
    kMarkFlags = 7;
struct FrameMark {
  const char* frame;
  uintptr_t code;  // | kMark*
};
struct MarkExtra {
  const void* instr = nullptr;  // kMarkUser: where it was
  const void* local = nullptr;  // kMarkForward: the first local as the frame holds it (a cell or the module)
  const void* self = nullptr;   // kMarkForward: the module
  uint32_t line = 0;            // kMarkUser: the line it names
};
// A walk's frames (raw_walk), innermost first.
struct Chain {
  std::vector<FrameMark> marks;
  std::vector<MarkExtra> extras;
  bool ok = true;  // false: a code object's address without free low bits
  void clear() {
    marks.clear();
    extras.clear();
    ok = true;
  }
  void add(const char* f, const void* code) {
    const auto a = reinterpret_cast<uintptr_t>(code);
    if (a & kMarkFlags) ok = false;
    marks.push_back({f, a});
  }
  // The last frame's extra, made where it has none yet.
  MarkExtra& extra(uintptr_t flag) {
    if (!(marks.back().code & kMarkFlags)) extras.emplace_back();
    marks.back().code |= flag;
    return extras.back();
  }
};

// A stack a read without the GIL found its origin for, kept to answer later
// reads at the cost of comparing frames (same_stack): every frame at the
// same place running the same code, each forward with the same module,
// each user frame the origin names at the same line. Two keep one: the
// read before (PyCache::last; a PyTorch op that launches several kernels
// makes its nodes while no Python runs, and a framework forward's next op
// differs only in instructions the origin does not name), and this
// thread's capture before, read for read (Script: a server captures the
// same model once per batch size). It answers while no name changed
// (epoch), once its modules and their names passed this round's checks
// (ModuleInfo::checked, ChildName::checked; looked at once a round, see
// PyCache::trust), and while each of its modules is still alive at its
// address (its weak reference's referent).
struct Known {
  // The modules a stack runs the forwards of, shared by every Known of
  // the same ones (the kernels of one attention, say): their checks are
  // looked at once a round for all of them.
  struct Modules {
    std::vector<std::pair<PyObj*, PyObj*>>
        modules;                    // (module, its ModuleInfo's weak reference), outermost first
    std::vector<uint32_t> serials;  // their serials
    // Their facts and each one's name under the one before (null for the
    // first), as PyCache keeps them (valid in the epoch of the Knowns).
    std::vector<ModuleInfo*> infos;
    std::vector<ChildName*> names;
    uint32_t trusted = 0;  // the PyCache::trust they and their names were last found checked at
  };
  uint32_t epoch = 0;
  uint32_t frames = 0;  // marks: every frame walked, innermost first
  const FrameMark* marks = nullptr;
  const MarkExtra* extras = nullptr;  // one for each mark with flags, in order
  std::shared_ptr<Modules> modules;
  std::shared_ptr<const Origin> origin;
};

// A Known with its marks and then its extras right after it, in the same
// block as its reference count (make_shared): a read that compares it
// walks one run of memory, which prefetch_known can ask for ahead.
template <size_t Bytes>
struct KnownIn : Known {
  // Left as it is (make_shared would zero it): only what the marks and
  // extras fill is ever written or read, so the rest of the size class
  // costs no page.
  KnownIn() {}  // NOLINT(modernize-use-equals-default): = default would zero store
  alignas(8) unsigned char store[Bytes];
};

template <size_t Bytes>
std::shared_ptr<Known> known_in(const Chain& ch) {
  auto k = std::make_shared<KnownIn<Bytes>>();
  static_assert(std::is_trivially_copyable_v<FrameMark> && std::is_trivially_copyable_v<MarkExtra>);
  unsigned char* at = k->store;
  // memcpy makes the objects there (both are implicit-lifetime types).
  if (!ch.marks.empty()) std::memcpy(at, ch.marks.data(), ch.marks.size() * sizeof(FrameMark));
  at += ch.marks.size() * sizeof(FrameMark);
  if (!ch.extras.empty()) std::memcpy(at, ch.extras.data(), ch.extras.size() * sizeof(MarkExtra));
  k->frames = uint32_t(ch.marks.size());
  k->marks = reinterpret_cast<const FrameMark*>(k->store);
  k->extras = reinterpret_cast<const MarkExtra*>(at);
  return k;
}

// The Known of a walk's chain, in the smallest block that holds it (null:
// none holds it, or its marks cannot carry their flags).
std::shared_ptr<Known> make_known(const Chain& ch) {
  static_assert(sizeof(FrameMark) % alignof(MarkExtra) == 0, "extras follow the marks aligned");
  const size_t need = ch.marks.size() * sizeof(FrameMark) + ch.extras.size() * sizeof(MarkExtra);
  if (!ch.ok) return nullptr;
  if (need <= 512) return known_in<512>(ch);
  if (need <= 1024) return known_in<1024>(ch);
  if (need <= 2048) return known_in<2048>(ch);
  if (need <= 8192) return known_in<8192>(ch);
  if (need <= 65536) return known_in<65536>(ch);
  return nullptr;
}

// Asks the CPU for the first cache lines of a Known a coming read will
// compare (its header, its marks, a stack's extras): between two launches
// the framework's work pushes them out of the CPU's nearest caches, and
// they are fetched one after another where the compare needs them.
void prefetch_known(const Known* k) {
  const auto* b = reinterpret_cast<const char*>(k);
  for (int at = -64; at < 768; at += 64) __builtin_prefetch(b + at);
}

// A thread's reads in its capture before and in this one, in order (a
// read that found no Known keeps its place with null), and where this
// capture has come to in the one before: each read tries the next few of
// the one before (a batch size may add or drop a kernel) before anything
// else. Only the thread's own captures, between its begin and end.
struct Script {
  static constexpr size_t kAhead = 4, kMax = size_t(1) << 16;
  std::vector<std::shared_ptr<Known>> before, now;
  size_t at = 0;
  bool on = false;
  void begin() {
    before.swap(now);
    now.clear();
    at = 0;
    on = true;
  }
  void end() { on = false; }
  // The Known the next read tries first (null: none).
  const Known* next() const { return on && at < before.size() ? before[at].get() : nullptr; }
};

struct CachedOrigin {
  std::vector<uint64_t> key;
  std::shared_ptr<const Origin> origin;
  uint32_t epoch = 0;
};

// What frame walks keep between calls and between captures (a server
// captures the same model once per batch size: after the first capture,
// almost every read finds its origin made). Code objects are held, so none
// can take another's address; modules and their names are checked once in
// each round (ModuleInfo, ChildName; a round begins with every capture, on
// any thread, and every instantiation: next_graph); a name that changed
// makes every origin made before it stale. "This capture" below means the
// current round.
struct PyCache {
  PtrMap<CodeInfo> code;  // keys held
  FlatMap<const void*, ModuleInfo, std::deque<ModuleInfo>> modules;  // a Known holds their addresses
  PtrMap<uint8_t> module_types;  // types that are torch.nn.Module's, held
  // By parent serial << 32 | child serial; a read holds its names' addresses.
  FlatMap<uint64_t, ChildName, std::deque<ChildName>> child_name;
  FlatMap<uint64_t, CachedOrigin> origins;             // by hash of the key
  std::vector<uint64_t> key;                           // reused
  PyStack stack;                                       // reused by read_python_cached (modules not held)
  Chain chain;                                         // reused by read_python_cached
  std::shared_ptr<Known> last;                         // the read before
  FlatMap<uint64_t, std::shared_ptr<Known::Modules>> module_lists;  // by hash of their serials
  // Counted at every round and every read in full (which may learn a
  // module's facts anew): a Known whose `trusted` is this one needs no
  // module and name checks.
  uint32_t trust = 1;
  std::vector<uint32_t> serials;  // reused by read_python_cached
  // Reused by read_python_cached: each module's facts and each name under
  // the module before, as its checks found them (no insertion follows, so
  // they stay where they are until the read ends).
  std::vector<ModuleInfo*> infos;
  std::vector<ChildName*> names;
  PyObj* module_class = nullptr;  // torch.nn.Module, held
  PyObj* self_name = nullptr;     // "self", held
  PyObj* modules_name = nullptr;  // "_modules", interned, held
  bool looked_for_torch = false;
  uint32_t capture = 1;  // counted at each capture's beginning and each instantiation (next_graph)
  uint32_t begun = 1;    // counted at each capture's beginning (precheck)
  uint32_t next_serial = 1;
  uint32_t epoch = 0;  // bumped when a child's name changed
  int raw_checks_left = 32;  // reads still to be made both ways (read_python)
  bool raw_off = false;      // a raw read differed from the API's

  bool full() const {
    const size_t cap = size_t(1) << 16;
    return code.size() > cap || modules.size() > cap || module_types.size() > cap ||
           child_name.size() > cap || origins.size() > cap || module_lists.size() > cap;
  }
  // A capture begins, or a graph was instantiated: everything is checked
  // again before it is used; torch is looked for again if it was not
  // imported yet.
  void next_graph() {
    ++capture;
    ++trust;
    if (!module_class) looked_for_torch = false;
  }
  void clear(const Python& py) {
    last.reset();
    ++epoch;  // code objects let go: another may take one's address
    code.each([&](const void* k, CodeInfo&) { py.DecRef(const_cast<void*>(k)); });
    modules.each([&](const void*, ModuleInfo& m) {
      if (m.ref) py.DecRef(m.ref);
      if (m.type) py.DecRef(m.type);
    });
    module_types.each([&](const void* k, uint8_t&) { py.DecRef(const_cast<void*>(k)); });
    child_name.each([&](uint64_t, ChildName& n) {
      for (PyObj* part : n.parts) py.DecRef(part);
    });
    code.clear();
    modules.clear();
    module_types.clear();
    child_name.clear();
    origins.clear();
    module_lists.clear();
    if (module_class) py.DecRef(module_class);
    if (self_name) py.DecRef(self_name);
    if (modules_name) py.DecRef(modules_name);
    module_class = self_name = modules_name = nullptr;
    looked_for_torch = false;
  }
};

// child's name under parent: a path through the _modules dicts ("layers.3"),
// searched breadth-first to depth 3; "" when it is not there.
bool find_child(const Python& py, PyObj* parent, PyObj* child, int depth, std::string& out) {
  PyObj* mods = py.GetAttr(parent, "_modules");
  if (!mods) {
    py.ErrClear();
    return false;
  }
  bool found = false;
  PyObj* type = py.TypeOf(mods);
  if (type == py.dict_type) {
    for (int pass = 0; pass < 2 && !found; ++pass) {
      ssize_t pos = 0;
      PyObj *key, *value;
      while (!found && py.DictNext(mods, &pos, &key, &value)) {
        if (pass == 0 && value == child) {
          out = utf8(py, key);
          found = true;
        } else if (pass == 1 && depth > 1 && value) {
          std::string rest;
          if (find_child(py, value, child, depth - 1, rest)) {
            out = utf8(py, key) + "." + rest;
            found = true;
          }
        }
      }
    }
  }
  if (type) py.DecRef(type);
  py.DecRef(mods);
  return found;
}

// Whether the path of parts ("layers", "3": interned names held in the
// cache, so no string is made per step and the type's attribute cache is
// hit) through the _modules dicts still leads from parent to child. No
// parts: the name was not a path.
bool still_child(const Python& py, PyCache& c, PyObj* parent, PyObj* child, const std::vector<PyObj*>& parts) {
  if (parts.empty()) return false;
  PyObj* at = parent;
  py.IncRef(at);
  for (PyObj* part : parts) {
    PyObj* next = nullptr;
    if (PyObj* mods = py.GetAttrObj(at, c.modules_name)) {
      PyObj* type = py.TypeOf(mods);  // (the object header's layout is not assumed here)
      if (type == py.dict_type && (next = py.DictGet(mods, part))) py.IncRef(next);
      if (type) py.DecRef(type);
      py.DecRef(mods);
    }
    py.ErrClear();
    py.DecRef(at);
    at = next;
    if (!at) break;
  }
  const bool same = at && at == child;
  if (at) py.DecRef(at);
  return same;
}

// rel's parts as interned strings (new references); none where rel is no
// path ("<Type>") or a string could not be made.
std::vector<PyObj*> name_parts(const Python& py, PyCache& c, const std::string& rel) {
  std::vector<PyObj*> parts;
  if (rel.empty() || rel[0] == '<') return parts;
  if (!c.modules_name && !(c.modules_name = py.Intern("_modules"))) {
    py.ErrClear();
    return parts;
  }
  for (size_t from = 0;;) {
    const size_t dot = rel.find('.', from);
    PyObj* part = py.Intern(rel.substr(from, dot == std::string::npos ? std::string::npos : dot - from).c_str());
    if (!part) {
      py.ErrClear();
      for (PyObj* p : parts) py.DecRef(p);
      return {};
    }
    parts.push_back(part);
    if (dot == std::string::npos) break;
    from = dot + 1;
  }
  return parts;
}

// The facts of module mo, checked in this capture.
ModuleInfo& module_info(const Python& py, PyCache& c, PyObj* mo) {
  ModuleInfo* known = c.modules.find(mo);
  // Checked in this capture: still the same object (another may have
  // taken a dead one's address since), of the same type.
  if (known && known->checked == c.capture && Python::type_of(mo) == known->type &&
      (!known->ref || py.refers_to(known->ref, mo)))
    return *known;
  // Checked before: the same object still, of the same type under the same
  // name, read from the type itself where its layout is known (a class
  // made in Python keeps its __name__ there).
  if (known && py.frames && known->ref && known->same_type(mo) && py.refers_to(known->ref, mo)) {
    known->checked = c.capture;
    return *known;
  }
  PyObj* type = py.TypeOf(mo);
  std::string type_name = type ? attr_text(py, type, "__name__") : std::string();
  if (known && type == known->type && type_name == known->type_name && py.refers_to(known->ref, mo)) {
    known->checked = c.capture;
    if (type) py.DecRef(type);
    return *known;
  }
  ModuleInfo m;
  m.ref = py.weak(mo);
  m.type = type;  // the reference is kept
  m.type_name = std::move(type_name);
  m.serial = c.next_serial++;
  m.checked = c.capture;
  if (!known) return c.modules.insert(mo, std::move(m));
  if (known->ref) py.DecRef(known->ref);
  if (known->type) py.DecRef(known->type);
  *known = std::move(m);
  return *known;
}

// child's name under parent (see ChildName), checked in this capture.
const std::string& child_name(const Python& py, PyCache& c, PyObj* parent, uint32_t parent_serial, PyObj* child,
                              uint32_t child_serial, const std::string& child_type) {
  ChildName& n = c.child_name[uint64_t(parent_serial) << 32 | child_serial];
  n.used = c.begun;
  n.parent = parent;
  n.child = child;
  if (n.checked == c.capture) return n.rel;
  if (n.checked &&
      still_child(py, c, parent, child, n.parts)) {
    n.checked = c.capture;
    return n.rel;
  }
  std::string rel;
  for (int d = 1; d <= 3 && rel.empty(); ++d)
    if (!find_child(py, parent, child, d, rel)) rel.clear();
  if (rel.empty()) rel = "<" + child_type + ">";  // called, not owned
  if (n.checked && rel != n.rel) ++c.epoch;  // origins made with the old name are stale
  if (!n.checked || rel != n.rel) {
    for (PyObj* part : n.parts) py.DecRef(part);
    n.parts = name_parts(py, c, rel);
  }
  n.rel = std::move(rel);
  n.checked = c.capture;
  return n.rel;
}

// At a capture's beginning, with the GIL (an API callback's exit, where
// the driver holds no lock of its own): the modules and names that reads
// used since the last capture began (on any thread) are checked for this
// one, as module_info and child_name check them at their first use, so
// that the reads made inside the driver, which cannot take the GIL, find
// them checked.
void precheck(const Python& py, PyCache& c) {
  c.last.reset();
  const uint32_t since = c.begun++;
  if (!py.frames) return;  // no read is made without the GIL then
  c.modules.each([&](const void* k, ModuleInfo& mi) {
    PyObj* mo = const_cast<PyObj*>(k);
    if (mi.used < since || mi.checked == c.capture || !mi.ref || !py.refers_to(mi.ref, mo)) return;
    if (mi.same_type(mo)) mi.checked = c.capture;
  });
  c.child_name.each([&](uint64_t key, ChildName& n) {
    if (n.used < since || n.checked == c.capture || !n.parent) return;
    const ModuleInfo* parent = c.modules.find(n.parent);
    const ModuleInfo* child = c.modules.find(n.child);
    if (!parent || !child || parent->checked != c.capture || child->checked != c.capture ||
        (uint64_t(parent->serial) << 32 | child->serial) != key)
      return;
    if (still_child(py, c, const_cast<PyObj*>(n.parent), const_cast<PyObj*>(n.child), n.parts))
      n.checked = c.capture;
  });
}

std::string join_name(const std::string& a, const std::string& b) { return a.empty() ? b : a + "." + b; }

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

// Whether o is a torch.nn.Module (the type's MRO first: no Python runs).
// Types found to be modules are remembered (and held) for reads without
// the GIL.
bool is_module(const Python& py, PyCache& c, PyObj* o) {
  PyObj* type = Python::type_of(o);
  if (py.IsSubtype && py.IsSubtype(type, c.module_class)) {
    if (!c.module_types.find(type)) {
      py.IncRef(type);
      c.module_types.insert(type, 1);
    }
    return true;
  }
  return py.IsInstance(o, c.module_class) == 1;
}

// The modules under root and their names, learnt at once where a read
// in full met a module it did not know: a new model, or one built after
// the first capture (a server's deeper model, a second model). Its other
// modules' stacks are then read without the GIL (read_python_cached makes
// their origins from what the cache knows); before, each new pairing of
// modules waited for the proxy, 1,500 of them in the serving program's
// 3,157-node graph. Each module reached through the _modules dicts
// (breadth-first, at most kTreeModules) gets its facts (module_info), and
// each name under the modules up to three levels above it the path that
// child_name would find: the least deep, first in the dicts' order.
// Learnt ones are checked in this capture and not marked used, so that
// precheck does not check them at every capture's beginning.
constexpr size_t kTreeModules = 8192, kTreeNames = 32768;
void learn_tree(const Python& py, PyCache& c, PyObj* root) {
  if (!c.module_class || !py.IsSubtype) return;
  if (!c.modules_name && !(c.modules_name = py.Intern("_modules"))) {
    py.ErrClear();
    return;
  }
  const size_t cap = size_t(1) << 15;  // half of PyCache::full's
  if (c.modules.size() >= cap || c.child_name.size() >= cap) return;
  struct Kid {
    std::string key;
    uint32_t at;
  };
  struct TreeNode {
    PyObj* mo;  // held
    uint32_t serial = 0;
    std::vector<Kid> kids;  // in the dict's order
  };
  std::vector<TreeNode> tree;
  std::unordered_map<const void*, uint32_t> seen;
  py.IncRef(root);
  tree.push_back({root, 0, {}});
  seen.emplace(root, 0);
  for (size_t i = 0; i < tree.size(); ++i) {
    PyObj* mods = py.GetAttrObj(tree[i].mo, c.modules_name);
    if (!mods) {
      py.ErrClear();
      continue;
    }
    if (Python::type_of(mods) == py.dict_type) {
      ssize_t pos = 0;
      PyObj *key, *value;
      while (py.DictNext(mods, &pos, &key, &value)) {
        // Modules only, known as such from their type's MRO (no Python runs).
        if (!value || !py.IsSubtype(Python::type_of(value), c.module_class)) continue;
        auto [it, fresh] = seen.emplace(value, uint32_t(tree.size()));
        if (fresh) {
          if (tree.size() >= kTreeModules) {
            seen.erase(it);
            continue;
          }
          py.IncRef(value);
          tree.push_back({value, 0, {}});
        }
        tree[i].kids.push_back({utf8(py, key), it->second});
      }
    }
    py.DecRef(mods);
  }
  for (TreeNode& t : tree) {
    is_module(py, c, t.mo);  // its type, for reads without the GIL
    t.serial = module_info(py, c, t.mo).serial;
  }
  std::vector<uint32_t> named(tree.size(), 0);  // the node + 1 whose names were made last
  size_t names = 0;
  auto name = [&](uint32_t a, uint32_t m, std::string rel) {
    if (m == a || named[m] == a + 1) return;
    named[m] = a + 1;
    if (names >= kTreeNames) return;
    auto [known, fresh] = c.child_name.try_emplace(uint64_t(tree[a].serial) << 32 | tree[m].serial);
    if (!fresh) return;  // known: checked where it is used, as before
    ++names;
    ChildName& n = *known;
    n.parts = name_parts(py, c, rel);
    n.rel = std::move(rel);
    n.checked = c.capture;
    n.parent = tree[a].mo;
    n.child = tree[m].mo;
  };
  for (uint32_t a = 0; a < tree.size() && names < kTreeNames; ++a) {
    for (const Kid& k1 : tree[a].kids) name(a, k1.at, k1.key);
    for (const Kid& k1 : tree[a].kids)
      for (const Kid& k2 : tree[k1.at].kids) name(a, k2.at, k1.key + "." + k2.key);
    for (const Kid& k1 : tree[a].kids)
      for (const Kid& k2 : tree[k1.at].kids)
        for (const Kid& k3 : tree[k2.at].kids) name(a, k3.at, k1.key + "." + k2.key + "." + k3.key);
  }
  for (TreeNode& t : tree) py.DecRef(t.mo);
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

// The pointer at byte `at` of an interpreter structure, read straight.
const char* field(const void* base, size_t at) {
  return *reinterpret_cast<const char* const*>(static_cast<const char*>(base) + at);
}

// Whether weak reference r still refers to o, read straight from
// PyWeakReference's wr_object, after its header (None once the referent is
// gone): no GIL needed, unlike Python::refers_to.
bool referent_is(const PyObj* r, const PyObj* o) { return field(r, 16) == static_cast<const char*>(o); }

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

// The same read straight from the interpreter's frames (Python::frames):
// no frame object is made, no reference taken but the modules'. With
// `gil` false it calls nothing of Python's and takes no reference: it
// gives up (false) at the first fact not already in the cache. False (out
// left empty) also where a frame needs the API. out is cleared first (its
// modules released if held): a reader reuses one to allocate nothing.
bool raw_walk(const Python& py, PyCache& c, PyStack& out, bool gil, Chain* chain = nullptr) {
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

// The origins cache's key of a read (into c.key) and its hash: the user
// frames' code objects and lines, then the modules' serials.
uint64_t origin_key(PyCache& c, const PyStack& s, const std::vector<uint32_t>& serials) {
  c.key.clear();
  for (size_t i = 0; i < s.users; ++i) {
    c.key.push_back(reinterpret_cast<uintptr_t>(s.user[i].code));
    c.key.push_back(s.user[i].line);
  }
  c.key.push_back(UINT64_MAX);
  for (uint32_t serial : serials) c.key.push_back(serial);
  uint64_t hash = 0;
  for (uint64_t k : c.key) hash = (hash ^ k) * 0x9E3779B97F4A7C15ull;
  return hash;
}

// What a read writes into an origin: its user frames (their code objects
// are held by the cache, so their facts are there), then its modules,
// outermost first, each named by where it sits under the one before
// (rel(i), i > 0; the outermost ""), with its class (type(i)).
template <typename Type, typename Rel>
void fill_origin(Origin& o, PyCache& c, const PyStack& s, Type type, Rel rel) {
  o.python.reserve(o.python.size() + s.users);
  o.modules.reserve(s.modules.size());
  for (size_t i = 0; i < s.users; ++i) {
    const CodeInfo& ci = *c.code.find(s.user[i].code);
    o.python.push_back({ci.file, s.user[i].line, ci.function});
  }
  for (size_t i = 0; i < s.modules.size(); ++i)
    o.modules.push_back({i == 0 ? std::string() : join_name(o.modules.back().name, rel(i)), type(i)});
}

// The origin made before for c.key (hashed), if its names still hold.
std::shared_ptr<const Origin> made_origin(PyCache& c, uint64_t hash) {
  const CachedOrigin* o = c.origins.find(hash);
  if (o && o->key == c.key && o->epoch == c.epoch) return o->origin;
  return nullptr;
}

// Whether Known k answers a read now (see Known): its modules and names
// are looked at once a round (their checks, made by precheck or the read
// that used them first), their referents at every read.
bool answers(const Python& py, PyCache& c, const Known& k) {
  const bool timed = g_time_reads.load(std::memory_order_relaxed);
  if (timed) g_reads_tries.fetch_add(1, std::memory_order_relaxed);
  if (k.epoch != c.epoch || !k.marks) return false;
  // Its modules' facts and weak references, asked for while the frames
  // are compared.
  if (const Known::Modules* ms = k.modules.get())
    for (size_t i = 0; i < ms->modules.size(); ++i) {
      __builtin_prefetch(ms->infos[i]);
      __builtin_prefetch(ms->modules[i].second);
    }
  const uint64_t t0 = timed ? monotonic_ns() : 0;
  const bool same = same_stack(py, c, k);
  if (timed) g_compare_ns.fetch_add(monotonic_ns() - t0, std::memory_order_relaxed);
  if (!same) return false;
  Known::Modules& ms = *k.modules;
  if (ms.trusted != c.trust) {
    for (size_t i = 0; i < ms.modules.size(); ++i) {
      ModuleInfo& mi = *ms.infos[i];
      if (mi.serial != ms.serials[i] || mi.ref != ms.modules[i].second || mi.checked != c.capture)
        return false;
      mi.used = c.begun;
      if (ChildName* n = ms.names[i]) {
        if (n->checked != c.capture) return false;
        n->used = c.begun;
      }
    }
    ms.trusted = c.trust;
  }
  return std::all_of(ms.modules.begin(), ms.modules.end(),
                     [](const auto& mr) { return referent_is(mr.second, mr.first); });
}

// The shared Known::Modules of a read's modules (c.stack's, c.serials,
// c.infos), made where none is.
std::shared_ptr<Known::Modules> module_list(PyCache& c, const PyStack& s,
                                            const std::vector<uint32_t>& serials) {
  uint64_t hash = serials.size();
  for (uint32_t serial : serials) hash = (hash ^ serial) * 0x9E3779B97F4A7C15ull;
  std::shared_ptr<Known::Modules>& kept = c.module_lists[hash];
  if (kept && kept->serials == serials) return kept;
  auto ms = std::make_shared<Known::Modules>();
  for (size_t i = 0; i < s.modules.size(); ++i) ms->modules.emplace_back(s.modules[i], c.infos[i]->ref);
  ms->serials = serials;
  ms->infos = c.infos;
  ms->names = c.names;
  ms->trusted = c.trust;
  kept = ms;  // a list of another hash leaves (the Knowns that use it keep it)
  return ms;
}

// The Known that answers this read (null: none), for read_python_cached;
// `path` says how it was found: 1 the capture before, 2 the read before, 3
// a walk through the caches (0 none).
std::shared_ptr<Known> cached_known(const Python& py, PyCache& c, bool gil, Script* sc, int& path) {
  if (c.raw_off || c.raw_checks_left > 0 || !c.looked_for_torch) return nullptr;
  // This thread's capture before, at the same place, a little ahead (this
  // capture lacks a read) or one back (it has one more). Each read takes
  // one place, found or not.
  if (sc && sc->on && !sc->before.empty()) {
    const size_t at = sc->at++;
    for (size_t d = 0; d <= Script::kAhead; ++d) {
      const size_t i = d < Script::kAhead ? at + d : at - 1;
      if (i >= sc->before.size()) continue;
      if (Known* k = sc->before[i].get(); k && answers(py, c, *k)) {
        sc->at = i + 1;
        g_reads_prior.fetch_add(1, std::memory_order_relaxed);
        path = 1;
        if (g_time_reads.load(std::memory_order_relaxed))
          g_reads_frames.fetch_add(k->frames, std::memory_order_relaxed);
        return sc->before[i];
      }
    }
  }
  if (c.last && answers(py, c, *c.last)) {
    g_reads_same.fetch_add(1, std::memory_order_relaxed);
    path = 2;
    if (g_time_reads.load(std::memory_order_relaxed))
      g_reads_frames.fetch_add(c.last->frames, std::memory_order_relaxed);
    return c.last;
  }
  // The cache's own stack and serials, reused (under m): a read allocates
  // nothing but the Known it makes.
  PyStack& s = c.stack;
  if (!raw_walk(py, c, s, false, &c.chain)) return nullptr;
  std::reverse(s.modules.begin(), s.modules.end());
  std::vector<uint32_t>& serials = c.serials;
  serials.resize(s.modules.size());
  c.infos.resize(s.modules.size());
  c.names.assign(s.modules.size(), nullptr);
  for (size_t i = 0; i < s.modules.size(); ++i) {
    ModuleInfo* mi = c.modules.find(s.modules[i]);
    if (!mi || Python::type_of(s.modules[i]) != mi->type || !mi->ref || !referent_is(mi->ref, s.modules[i]))
      return nullptr;
    if (mi->checked != c.capture) {
      if (!gil || !mi->same_type(s.modules[i])) return nullptr;
      mi->checked = c.capture;
    }
    mi->used = c.begun;
    serials[i] = mi->serial;
    c.infos[i] = mi;
    if (i > 0) {
      ChildName* n = c.child_name.find(uint64_t(serials[i - 1]) << 32 | serials[i]);
      if (!n) return nullptr;
      if (n->checked != c.capture) {
        if (!gil) return nullptr;
        bool same;
        {
          KeptError kept(py);
          same = still_child(py, c, s.modules[i - 1], s.modules[i], n->parts);
        }
        if (!same) return nullptr;
        n->checked = c.capture;
      }
      n->used = c.begun;
      c.names[i] = n;
    }
  }
  const uint64_t hash = origin_key(c, s, serials);
  auto made = made_origin(c, hash);
  if (!made) {
    // Every fact known and checked, in a combination not met before (a
    // model's later layers after learn_tree): the origin read_python would
    // make, made from them.
    auto o = std::make_shared<Origin>();
    fill_origin(
        *o, c, s, [&](size_t i) -> const std::string& { return c.infos[i]->type_name; },
        [&](size_t i) -> const std::string& { return c.names[i]->rel; });
    c.origins[hash] = {c.key, o, c.epoch};
    g_reads_made.fetch_add(1, std::memory_order_relaxed);
    made = std::move(o);
  }
  path = 3;
  auto k = make_known(c.chain);
  if (!k) {  // the origin, without marks: it answers no later read
    k = std::make_shared<Known>();
    k->origin = std::move(made);
    return k;
  }
  k->modules = module_list(c, s, serials);
  k->origin = std::move(made);
  k->epoch = c.epoch;
  return k;
}

// A read without the GIL's taking, for the common case of a server
// capturing the same model again: the frames read straight (raw_walk),
// every module still the same object (its weak reference's referent read
// directly) and of the same type, the origin already made; or, cheaper,
// a stack met before (Known) found again. A module or a name not yet
// checked in this capture is checked here where this thread holds the GIL
// (`gil`: a launch from Python, the GIL kept), the module from its type's
// name read straight, the name through the _modules dicts; without the GIL
// they must have been checked in this capture already. Null whenever
// anything is missing: the caller then takes the GIL, where it may, and
// reads in full (read_python). sc: the reading thread's Script, which
// keeps the read's place.
std::shared_ptr<const Origin> read_python_cached(const Python& py, PyCache& c, std::mutex& m, bool gil,
                                                 Script* sc) {
  if (!py.frames || g_uncached) return nullptr;
  const bool timed = g_time_reads.load(std::memory_order_relaxed);
  const uint64_t t0 = timed ? monotonic_ns() : 0;
  // The Known this read tries first, asked for before the lock (the
  // script is this thread's alone: no other thread changes it).
  if (const Known* next = sc ? sc->next() : nullptr) prefetch_known(next);
  std::lock_guard<std::mutex> lock(m);
  if (timed) g_lock_ns.fetch_add(monotonic_ns() - t0, std::memory_order_relaxed);
  int path = 0;
  std::shared_ptr<Known> k = cached_known(py, c, gil, sc, path);
  std::shared_ptr<const Origin> origin = k ? k->origin : nullptr;
  if (k) c.last = k;
  if (sc && sc->on && sc->now.size() < Script::kMax) sc->now.push_back(std::move(k));
  // The place the next read tries first.
  if (const Known* next = sc ? sc->next() : nullptr) prefetch_known(next);
  if (timed) {
    const uint64_t took = monotonic_ns() - t0;
    g_reads_ns.fetch_add(took, std::memory_order_relaxed);
    g_path_ns[path].fetch_add(took, std::memory_order_relaxed);
  }
  return origin;
}

// Reads this thread's Python stack into *o, or, when `reuse` (o holds
// nothing else) and an origin of the same user frames and modules was made
// before (and its names still hold), returns that one instead (null: *o
// was filled). The GIL is taken and given back; the thread's pending
// exception, if any, is kept.
std::shared_ptr<const Origin> read_python(const Python& py, PyCache& cache, std::mutex& m,
                                          const std::shared_ptr<Origin>& o, bool reuse) {
  std::shared_ptr<const Origin> reused;
  HeldGil gil(py);
  KeptError kept(py);
  NoCollection no_gc(py);
  {
    std::lock_guard<std::mutex> lock(m);  // the cache; the GIL already orders Python threads
    // The long way, for tests: nothing learnt before is used.
    PyCache fresh;
    const bool long_way = g_uncached;
    if (!long_way) {  // what it knows of modules may change below
      cache.last.reset();
      ++cache.trust;
    }
    PyCache& c = long_way ? fresh : cache;
    if (long_way) reuse = false;
    if (c.full()) c.clear(py);
    if (!c.looked_for_torch) {
      c.looked_for_torch = true;
      if (PyObj* name = py.Str("torch.nn.modules.module")) {
        if (PyObj* mod = py.GetModule(name)) {  // only if imported: never imports
          c.module_class = py.GetAttr(mod, "Module");
          py.DecRef(mod);
        }
        py.DecRef(name);
      }
      if (c.module_class && !c.self_name) c.self_name = py.Str("self");
      py.ErrClear();
    }
    PyStack stack;
    const bool raw = py.frames && !c.raw_off && !long_way && raw_walk(py, c, stack, true);
    if (raw && c.raw_checks_left > 0) {
      // The first reads of a process are made both ways: any difference
      // and frames are read through the API from then on.
      --c.raw_checks_left;
      PyStack api;
      api_walk(py, c, api);
      if (!(api == stack)) {
        c.raw_off = true;
        std::swap(api, stack);
      }
      api.release(py);
    }
    if (!raw) api_walk(py, c, stack);
    // Outermost first: the outermost module is "", each next one is named
    // by where it sits under the one that called it.
    std::reverse(stack.modules.begin(), stack.modules.end());
    const std::vector<PyObj*>& modules = stack.modules;
    std::vector<uint32_t> serials(modules.size());
    std::vector<const std::string*> types(modules.size()), rels(modules.size());
    const uint32_t known_serials = c.next_serial;
    for (size_t i = 0; i < modules.size(); ++i) {
      ModuleInfo& mi = module_info(py, c, modules[i]);
      mi.used = c.begun;
      serials[i] = mi.serial;
    }
    // A module not known before: the rest of its model at once.
    if (!long_way && !modules.empty() && c.next_serial != known_serials) learn_tree(py, c, modules[0]);
    for (size_t i = 0; i < modules.size(); ++i) {
      types[i] = &c.modules.find(modules[i])->type_name;  // stable now: no insertion below
      if (i > 0) rels[i] = &child_name(py, c, modules[i - 1], serials[i - 1], modules[i], serials[i], *types[i]);
    }
    uint64_t hash = 0;
    if (reuse) {
      hash = origin_key(c, stack, serials);
      reused = made_origin(c, hash);
    }
    if (!reused)
      fill_origin(
          *o, c, stack, [&](size_t i) -> const std::string& { return *types[i]; },
          [&](size_t i) -> const std::string& { return *rels[i]; });
    stack.release(py);
    if (reuse && !reused) c.origins[hash] = {c.key, o, c.epoch};
    if (long_way) c.clear(py);
  }
  return reused;
}

// ---------------------------------------------------------------------------
// NVTX: each thread's open ranges.
struct ThreadState {
  int depth = 0;                           // nesting of runtime/driver API calls
  std::shared_ptr<const Origin> pending;   // made at the outermost call's entry
  struct Open {
    const void* domain;
    uint64_t id;   // started ranges: the range id
    uint64_t seq;  // when it was opened, on this thread
    NvtxRange range;
  };
  std::vector<Open> pushed;   // outermost first
  std::vector<Open> started;  // ranges this thread started and has not ended
  bool copying = false;       // inside a call whose node copies need no origin (copies_nodes())
  uint64_t seq = 0;
  Script script;  // changed by this thread alone, under the origins cache's lock (Impl::py_m)
};

ThreadState& thread_state() {
  // Never freed: a callback may come while the thread is going away.
  static thread_local ThreadState* ts = new ThreadState;
  return *ts;
}

bool has_prefix(const char* s, const char* p) { return std::strncmp(s, p, std::strlen(p)) == 0; }

// API calls that add a node to a capturing stream's graph, or to a graph.
bool makes_node(const char* f) {
  static const char* const kPrefixes[] = {
      "cudaLaunch", "cudaMemcpy", "cudaMemset", "cudaEventRecord", "cudaStreamWaitEvent", "cudaMallocAsync",
      "cudaFreeAsync", "cudaMallocFromPoolAsync", "cudaGraphAdd", "cuLaunch", "cuMemcpy", "cuMemset",
      "cuEventRecord", "cuStreamWaitEvent", "cuMemAllocAsync", "cuMemFreeAsync", "cuMemAllocFromPoolAsync",
      "cuGraphAdd", "cuStreamWriteValue", "cuStreamWaitValue", "cuStreamBatchMemOp"};
  for (const char* p : kPrefixes)
    if (has_prefix(f, p)) return true;
  return false;
}

bool graph_add(const char* f) { return has_prefix(f, "cudaGraphAdd") || has_prefix(f, "cuGraphAdd"); }

// Calls that create or destroy the nodes of an exec graph (instantiation's
// copies): nothing looks those nodes up, so their resource callbacks return
// at once instead of copying and erasing origins (a sixth of an attached
// capture's time went there).
bool copies_nodes(const char* f) {
  return has_prefix(f, "cudaGraphInstantiate") || has_prefix(f, "cuGraphInstantiate") ||
         has_prefix(f, "cudaGraphExecDestroy") || has_prefix(f, "cuGraphExecDestroy");
}

// The function symbols of an object's .symtab (static functions, hidden
// ones: what dladdr, which reads the dynamic table only, cannot name).
// Read once per object, from its file; empty when stripped or unreadable.
class SymbolTable {
 public:
  explicit SymbolTable(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st{};
    if (fstat(fd, &st) == 0 && st.st_size > long(sizeof(Elf64_Ehdr)) && st.st_size < (long(1) << 32)) {
      void* p = mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        read(static_cast<const char*>(p), size_t(st.st_size));
        munmap(p, size_t(st.st_size));
      }
    }
    close(fd);
    std::sort(syms_.begin(), syms_.end(), [](const Sym& a, const Sym& b) { return a.value < b.value; });
  }
  // The function containing the address (relative to the object's first
  // segment's virtual address, as dladdr's base gives it).
  std::string lookup(uint64_t vaddr) const {
    auto it = std::upper_bound(syms_.begin(), syms_.end(), vaddr, [](uint64_t v, const Sym& s) { return v < s.value; });
    if (it == syms_.begin()) return "";
    --it;
    return vaddr < it->value + std::max<uint64_t>(it->size, 1) ? it->name : "";
  }
  uint64_t first_load = 0;  // lowest PT_LOAD vaddr (dli_fbase maps it)

 private:
  struct Sym {
    uint64_t value, size;
    std::string name;
  };
  void read(const char* b, size_t n) {
    auto* eh = reinterpret_cast<const Elf64_Ehdr*>(b);
    if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64) return;
    if (eh->e_phoff && eh->e_phoff + uint64_t(eh->e_phnum) * sizeof(Elf64_Phdr) <= n) {
      first_load = UINT64_MAX;
      auto* ph = reinterpret_cast<const Elf64_Phdr*>(b + eh->e_phoff);
      for (int i = 0; i < eh->e_phnum; ++i)
        if (ph[i].p_type == PT_LOAD) first_load = std::min<uint64_t>(first_load, ph[i].p_vaddr & ~uint64_t(0xfff));
      if (first_load == UINT64_MAX) first_load = 0;
    }
    if (!eh->e_shoff || eh->e_shoff + uint64_t(eh->e_shnum) * sizeof(Elf64_Shdr) > n) return;
    auto* sh = reinterpret_cast<const Elf64_Shdr*>(b + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; ++i) {
      if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum) continue;
      const Elf64_Shdr& str = sh[sh[i].sh_link];
      if (sh[i].sh_offset + sh[i].sh_size > n || str.sh_offset + str.sh_size > n) return;
      auto* sym = reinterpret_cast<const Elf64_Sym*>(b + sh[i].sh_offset);
      const size_t count = sh[i].sh_size / sizeof(Elf64_Sym);
      for (size_t k = 0; k < count && syms_.size() < 4000000; ++k) {
        if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC || !sym[k].st_value || sym[k].st_name >= str.sh_size) continue;
        const char* name = b + str.sh_offset + sym[k].st_name;
        syms_.push_back({sym[k].st_value, sym[k].st_size, std::string(name, strnlen(name, str.sh_size - sym[k].st_name))});
      }
    }
  }
  std::vector<Sym> syms_;
};

// A node's origin; without Python, the return addresses of the call that
// made it, symbolized when first asked (clones share both).
struct Entry {
  std::shared_ptr<const Origin> origin;
  std::shared_ptr<std::vector<void*>> pcs;
  const void* graph = nullptr;  // the graph the node was made in
};

}  // namespace

struct OriginRecorder::Impl {
  std::mutex m;  // everything below
  FlatMap<uint64_t, Entry> nodes;
  // A node's origin (native frames symbolized on the first ask). Under m.
  std::shared_ptr<const Origin> origin_locked(uint64_t node_handle);
  std::unordered_map<const void*, std::string> domains;  // nvtxDomainHandle_t -> name
  std::unordered_map<const void*, std::string> strings;  // nvtxStringHandle_t -> text
  std::mutex py_m;
  PyCache py_cache;
  std::atomic<int> captures{0};
  // Return address -> its frame, or nullopt for one to step over.
  std::unordered_map<const void*, std::optional<NativeFrame>> frames;
  std::unordered_map<std::string, std::unique_ptr<SymbolTable>> tables;

  std::string message(const nvtxEventAttributes_t* a) {
    if (!a || a->size < offsetof(nvtxEventAttributes_t, message) + sizeof(a->message)) return "";
    if (a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii) return std::string(a->message.ascii, strnlen(a->message.ascii, 4096));
    if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED) {
      std::lock_guard<std::mutex> lock(m);
      auto it = strings.find(a->message.registered);
      return it == strings.end() ? "" : it->second;
    }
    return "";
  }
  std::string domain_name(const void* d) {
    if (!d) return "";
    std::lock_guard<std::mutex> lock(m);
    auto it = domains.find(d);
    return it == domains.end() ? "?" : it->second;
  }

  void nvtx(CUpti_CallbackId cbid, const CUpti_NvtxData* d) {
    ThreadState& ts = thread_state();
    const void* p = d->functionParams;
    const void* ret = d->functionReturnValue;
    if (!p) return;
    auto push = [&](const void* domain, std::string msg) {
      if (ts.pushed.size() < 64) ts.pushed.push_back({domain, 0, ++ts.seq, {domain_name(domain), std::move(msg), false}});
    };
    auto pop = [&](const void* domain) {
      for (size_t i = ts.pushed.size(); i-- > 0;)
        if (ts.pushed[i].domain == domain) {
          ts.pushed.erase(ts.pushed.begin() + long(i));
          return;
        }
    };
    auto start = [&](const void* domain, std::string msg) {
      if (ret && ts.started.size() < 64)
        ts.started.push_back(
            {domain, *static_cast<const nvtxRangeId_t*>(ret), ++ts.seq, {domain_name(domain), std::move(msg), true}});
    };
    auto end = [&](nvtxRangeId_t id) {
      for (size_t i = 0; i < ts.started.size(); ++i)
        if (ts.started[i].id == id) {
          ts.started.erase(ts.started.begin() + long(i));
          return;
        }
    };
    switch (cbid) {
      case CUPTI_CBID_NVTX_nvtxRangePushA:
        push(nullptr, static_cast<const nvtxRangePushA_params*>(p)->message ? static_cast<const nvtxRangePushA_params*>(p)->message : "");
        break;
      case CUPTI_CBID_NVTX_nvtxRangePushEx:
        push(nullptr, message(static_cast<const nvtxRangePushEx_params*>(p)->eventAttrib));
        break;
      case CUPTI_CBID_NVTX_nvtxRangePushW:
        push(nullptr, "(wide text)");
        break;
      case CUPTI_CBID_NVTX_nvtxRangePop:
        pop(nullptr);
        break;
      case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
        auto* q = static_cast<const nvtxDomainRangePushEx_params*>(p);
        push(q->domain, message(q->core.eventAttrib));
        break;
      }
      case CUPTI_CBID_NVTX_nvtxDomainRangePop:
        pop(static_cast<const nvtxDomainRangePop_params*>(p)->domain);
        break;
      case CUPTI_CBID_NVTX_nvtxRangeStartA: {
        const char* s = static_cast<const nvtxRangeStartA_params*>(p)->message;
        start(nullptr, s ? std::string(s, strnlen(s, 4096)) : "");
        break;
      }
      case CUPTI_CBID_NVTX_nvtxRangeStartEx:
        start(nullptr, message(static_cast<const nvtxRangeStartEx_params*>(p)->eventAttrib));
        break;
      case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
        auto* q = static_cast<const nvtxDomainRangeStartEx_params*>(p);
        start(q->domain, message(q->core.eventAttrib));
        break;
      }
      case CUPTI_CBID_NVTX_nvtxRangeEnd:
        end(static_cast<const nvtxRangeEnd_params*>(p)->id);
        break;
      case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
        end(static_cast<const nvtxDomainRangeEnd_params*>(p)->core.id);
        break;
      case CUPTI_CBID_NVTX_nvtxDomainCreateA: {
        const char* name = static_cast<const nvtxDomainCreateA_params*>(p)->name;
        if (ret && name) {
          std::lock_guard<std::mutex> lock(m);
          domains[*static_cast<const nvtxDomainHandle_t*>(ret)] = std::string(name, strnlen(name, 4096));
        }
        break;
      }
      case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA: {
        const char* s = static_cast<const nvtxDomainRegisterStringA_params*>(p)->string;
        if (ret && s) {
          std::lock_guard<std::mutex> lock(m);
          strings[*static_cast<const nvtxStringHandle_t*>(ret)] = std::string(s, strnlen(s, 4096));
        }
        break;
      }
      default:
        break;
    }
  }

  // How a read may reach Python: not at all; at an API call's entry, where
  // the driver holds no lock of its own and the GIL may be waited for; or
  // inside the driver (a node-created callback), where waiting for the GIL
  // without a bound could deadlock against a thread that holds it and
  // waits for the driver: a thread that holds the GIL already reads in
  // full, any other has the proxy read for it (proxy_read), or gives up.
  enum class Read { none, at_entry, in_driver };

  // This thread's origin now: NVTX ranges, and the Python stack as `how`
  // allows.
  std::shared_ptr<const Origin> now(Read how) {
    ThreadState& ts = thread_state();
    const Python& py = python();
    const bool python_ready = how != Read::none && py.ready();
    const bool gil = python_ready && py.holds_gil();
    if (python_ready && ts.pushed.empty() && ts.started.empty())
      if (auto made = read_python_cached(py, py_cache, py_m, gil, &ts.script)) {
        g_reads_cached.fetch_add(1, std::memory_order_relaxed);
        return made;
      }
    auto o = std::make_shared<Origin>();
    // Pushed and started ranges, in the order they were opened.
    for (size_t i = 0, j = 0; i < ts.pushed.size() || j < ts.started.size();)
      if (j == ts.started.size() || (i < ts.pushed.size() && ts.pushed[i].seq < ts.started[j].seq))
        o->nvtx.push_back(ts.pushed[i++].range);
      else
        o->nvtx.push_back(ts.started[j++].range);
    for (size_t i = o->nvtx.size(); i-- > 0;)
      if (o->nvtx[i].message.rfind("aten::", 0) == 0) {
        o->op = o->nvtx[i].message.substr(0, o->nvtx[i].message.find(','));
        break;
      }
    if (python_ready && (how == Read::at_entry || gil)) {
      g_reads_full.fetch_add(1, std::memory_order_relaxed);
      if (auto same = read_python(py, py_cache, py_m, o, o->nvtx.empty())) return same;
    } else if (python_ready) {
      // A Python thread that let the GIL go launches (PyTorch lets it go
      // around every op; ctypes, NCCL through c10d, pynccl).
      std::shared_ptr<const Origin> same;
      switch (proxy_read(py, o, o->nvtx.empty(), same)) {
        case Proxied::read:
          g_reads_proxied.fetch_add(1, std::memory_order_relaxed);
          if (same) return same;
          break;
        case Proxied::late:  // this node goes without its Python stack
          g_reads_late.fetch_add(1, std::memory_order_relaxed);
          break;
        case Proxied::unavailable:  // this one too, and later ones are read at the entry
          read_at_entry();
          break;
      }
    }
    return o;
  }

  // The proxy: a thread of graphscope's that reads the stack of a thread
  // inside the driver that does not hold the GIL (the common case: PyTorch
  // lets it go around every op), when the caches cannot answer (the first
  // capture, a module changed, a new line of code). It takes the GIL, reads
  // the asking thread's frames (which cannot change: that thread is in a
  // CUDA call) and hands the origin back. The asking thread waits at most
  // kProxyWait for the proxy to begin: a thread holding the GIL while it
  // waits for the driver's lock (which the asking thread holds) then
  // costs one node its Python stack, never a deadlock. Once the proxy has
  // the GIL and began, it needs nothing of the asking thread's; its read
  // is waited for up to a second (it runs no Python code of the
  // application's, unless a module overrides __getattribute__).
  static constexpr std::chrono::milliseconds kProxyWait{20};
  enum class Proxied { read, late, unavailable };
  struct ProxyJob {
    std::timed_mutex asking;  // one asking thread at a time
    // idle -> waiting (asked) -> reading (begun, with the GIL) -> done
    // (answered) -> idle; waiting -> idle when the asking thread stops
    // waiting before the read began; reading -> abandoned -> idle when it
    // stops waiting after (the proxy then drops its result).
    enum State : int { idle, waiting, reading, done, abandoned };
    std::atomic<int> state{idle};
    std::mutex m;  // for the condition variables (state changes notify under it)
    std::condition_variable to_proxy, to_asker;
    // The job, written by the asking thread before `waiting` and read by the
    // proxy after it; the result, written by the proxy before `done`.
    void* target = nullptr;  // the asking thread's thread state
    bool uncached = false, reuse = false;
    std::shared_ptr<Origin> o;
    std::shared_ptr<const Origin> result;
    std::atomic<bool> started{false}, failed{false}, off{false};  // off: proxy_off_for_tests
    std::atomic<int> wait_ms{int(kProxyWait.count())};

    // Until state is `want` or the deadline: spinning a little first (a
    // first capture asks for hundreds of reads back to back, and a sleep
    // and a wake-up cost more than a read), then sleeping on `cv`.
    bool wait_for(int want, std::condition_variable& cv, std::chrono::steady_clock::time_point deadline,
                  std::chrono::microseconds spin) {
      const auto spin_end = std::min(deadline, std::chrono::steady_clock::now() + spin);
      do {
        if (state.load(std::memory_order_acquire) == want) return true;
        std::this_thread::yield();
      } while (std::chrono::steady_clock::now() < spin_end);
      std::unique_lock<std::mutex> lock(m);
      return cv.wait_until(lock, deadline, [&] { return state.load(std::memory_order_acquire) == want; });
    }
    void set(int to, std::condition_variable& cv) {
      {
        std::lock_guard<std::mutex> lock(m);
        state.store(to, std::memory_order_release);
      }
      cv.notify_all();
    }
    bool move(int from, int to, std::condition_variable& cv) {
      bool moved;
      {
        std::lock_guard<std::mutex> lock(m);
        moved = state.compare_exchange_strong(from, to, std::memory_order_acq_rel);
      }
      if (moved) cv.notify_all();
      return moved;
    }
  } proxy;

  Proxied proxy_read(const Python& py, const std::shared_ptr<Origin>& o, bool reuse,
                     std::shared_ptr<const Origin>& out) {
    using std::chrono::microseconds;
    ProxyJob& p = proxy;
    if (!py.SaveThread || !py.RestoreThread || !py.ThreadFrame || p.off) return Proxied::unavailable;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(p.wait_ms.load());
    std::unique_lock<std::timed_mutex> asking(p.asking, deadline);
    if (!asking.owns_lock()) return Proxied::late;
    if (p.failed) return Proxied::unavailable;
    if (!p.started.exchange(true)) {
      try {
        std::thread([this] { proxy_loop(); }).detach();
      } catch (...) {
        p.failed = true;
        return Proxied::unavailable;
      }
    }
    // An abandoned read may still run: the proxy is free first.
    if (!p.wait_for(ProxyJob::idle, p.to_asker, deadline, microseconds(0))) return Proxied::late;
    p.target = py.ThisThreadState();
    p.uncached = g_uncached;
    p.reuse = reuse;
    p.o = o;
    p.result.reset();
    p.set(ProxyJob::waiting, p.to_proxy);
    if (!p.wait_for(ProxyJob::done, p.to_asker, deadline, microseconds(100))) {
      if (p.move(ProxyJob::waiting, ProxyJob::idle, p.to_asker)) return Proxied::late;  // never begun
      // Begun: the proxy holds the GIL and needs nothing of this thread's.
      if (!p.wait_for(ProxyJob::done, p.to_asker, std::chrono::steady_clock::now() + std::chrono::seconds(1),
                      microseconds(0)) &&
          p.move(ProxyJob::reading, ProxyJob::abandoned, p.to_asker))
        return Proxied::late;
    }
    out = std::move(p.result);
    p.o.reset();
    p.set(ProxyJob::idle, p.to_asker);
    return Proxied::read;
  }

  void proxy_loop() {
    ProxyJob& p = proxy;
    const Python& py = python();
    auto fail = [&] {  // a job asked for is answered with nothing
      p.failed = true;
      p.result.reset();
      p.move(ProxyJob::waiting, ProxyJob::done, p.to_asker);
    };
    if (!py.usable || !py.IsInitialized() || py.IsFinalizing()) return fail();
    // This thread's own thread state, kept for its life; the GIL is let
    // go while it waits.
    py.Ensure();
    void* mine = py.SaveThread();
    for (;;) {
      // Soon after a read another may come (a first capture's launches).
      while (!p.wait_for(ProxyJob::waiting, p.to_proxy, std::chrono::steady_clock::now() + std::chrono::minutes(10),
                         std::chrono::microseconds(200))) {
      }
      // (Taking the GIL while Python shuts down would end this thread.)
      if (py.IsFinalizing()) return fail();
      py.RestoreThread(mine);
      if (!p.move(ProxyJob::waiting, ProxyJob::reading, p.to_asker)) {  // the asking thread gave up
        py.SaveThread();
        continue;
      }
      const std::shared_ptr<Origin> o = p.o;
      std::shared_ptr<const Origin> result;
      g_target = p.target;
      g_uncached = p.uncached;
      try {
        result = read_python(py, py_cache, py_m, o, p.reuse);
      } catch (...) {
      }
      g_target = nullptr;
      g_uncached = false;
      py.SaveThread();
      p.result = std::move(result);
      if (!p.move(ProxyJob::reading, ProxyJob::done, p.to_asker)) p.set(ProxyJob::idle, p.to_asker);  // abandoned
    }
  }

  // Stack reads at the entry of the calls that make nodes (the driver
  // callbacks that enable() left off: on the H100 host, CUPTI's delivery of
  // them alone added 0.3-0.6 ms to each capture of the Llama's 392 launches,
  // bench/cupti_delivery.sh, 2026-11-26). Turned on once, for the rest of the
  // process, where the proxy cannot be used (a Python without
  // PyEval_SaveThread, PyEval_RestoreThread or PyThreadState_GetFrame, or
  // its thread could not start), by a helper thread: CUPTI is not asked to
  // change its callbacks from inside one. Until it has, nodes made without
  // the GIL go without their Python stack.
  std::atomic<bool> entry_reads{false};
  std::mutex sub_m;  // subscriber
  CUpti_SubscriberHandle subscriber = nullptr;
  void read_at_entry() {
    if (entry_reads.exchange(true)) return;
    std::thread([this] {
      std::lock_guard<std::mutex> lock(sub_m);
      if (!subscriber) return;
      for (int id = 1; id < int(driver_kinds.size()); ++id)
        if (driver_kinds[size_t(id)] == kMakes)
          cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUpti_CallbackId(id));
    }).detach();
  }

  // What an API call is to origins (kind_of), by the driver's callback id:
  // filled by enable(), so a callback compares no names.
  enum Kind : uint8_t { kMakes = 1, kGraphAdd = 2, kCopies = 4, kBegin = 8, kEnd = 16 };
  static uint8_t kind_of(const char* f) {
    return uint8_t((makes_node(f) ? kMakes : 0) | (graph_add(f) ? kGraphAdd : 0) | (copies_nodes(f) ? kCopies : 0) |
                   (has_prefix(f, "cudaStreamBeginCapture") || has_prefix(f, "cuStreamBeginCapture") ? kBegin : 0) |
                   (has_prefix(f, "cudaStreamEndCapture") || has_prefix(f, "cuStreamEndCapture") ? kEnd : 0));
  }
  std::vector<uint8_t> driver_kinds;  // by CUPTI_DRIVER_TRACE_CBID_*

  void api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
    ThreadState& ts = thread_state();
    const uint8_t kind = domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < driver_kinds.size()
                             ? driver_kinds[cbid]
                             : kind_of(cb->functionName ? cb->functionName : "");
    // A call that only makes nodes, while its callbacks should be off (a
    // caller that delivers every call, as the tests' harness does): as if
    // it had not come.
    if (kind == kMakes && !entry_reads.load(std::memory_order_relaxed)) return;
    if (cb->callbackSite == CUPTI_API_ENTER) {
      if (++ts.depth != 1) return;
      if (kind & kCopies) {
        ts.copying = true;
        // A graph is done (instantiated, or an exec graph destroyed): the
        // next one, explicit or captured, checks what it uses again.
        std::lock_guard<std::mutex> lock(py_m);
        py_cache.next_graph();
        return;
      }
      if (kind & kEnd) {
        {
          std::lock_guard<std::mutex> lock(py_m);
          ts.script.end();
        }
        int c = captures.load();
        while (c > 0 && !captures.compare_exchange_weak(c, c - 1)) {
        }
        return;
      }
      // Graph-add calls always; stream-captured launches only once reads
      // at the entry are on (read_at_entry), else in created().
      if ((kind & kGraphAdd) ||
          ((kind & kMakes) && captures.load(std::memory_order_relaxed) > 0 && entry_reads.load(std::memory_order_relaxed)))
        ts.pending = now(Read::at_entry);
      return;
    }
    if (--ts.depth > 0) {
      if (ts.depth < 0) ts.depth = 0;
      return;
    }
    ts.depth = 0;
    ts.pending.reset();
    ts.copying = false;
    if ((kind & kBegin) && cb->functionReturnValue && *static_cast<const int*>(cb->functionReturnValue) == 0) {
      captures.fetch_add(1);
      // Whatever changed before this capture began (on any thread: others
      // may be capturing) is seen by its reads: what was learnt of Python
      // objects is checked again before use, here at once for what the
      // last captures used (precheck), with the GIL, which the reads inside
      // the driver cannot take.
      {
        std::lock_guard<std::mutex> lock(py_m);
        py_cache.next_graph();
        ts.script.begin();
      }
      const Python& py = python();
      if (py.ready() && py.frames) {
        HeldGil gil(py);
        KeptError kept(py);
        std::lock_guard<std::mutex> lock(py_m);
        precheck(py, py_cache);
      }
    }
  }

  void created(const CUpti_GraphData* g) {
    if (!g->node) return;
    ThreadState& ts = thread_state();
    if (ts.copying) return;  // an exec graph's node: never looked up
    // Without a node-making call under way and with no capture active, the
    // node is not the caller's: nothing to record, and whatever an earlier
    // node at its address left goes (see graph_destroyed).
    if (!ts.pending && captures.load(std::memory_order_relaxed) == 0) return forget(g->node);
    Entry e;
    // Inside a call that made its origin at the entry, that one; else
    // (a stream-captured launch) the stack read here, in the driver.
    e.origin = ts.pending ? ts.pending : now(ts.depth > 0 ? Read::none : Read::in_driver);
    if (e.origin->python.empty()) {
      // Deep enough to get past CUPTI's, the driver's and the runtime's
      // own frames to the caller's.
      void* pcs[64];
      const int n = backtrace(pcs, 64);
      if (n > 0) e.pcs = std::make_shared<std::vector<void*>>(pcs, pcs + n);
    }
    if (e.origin->empty() && !e.pcs) return forget(g->node);
    e.graph = g->graph;
    const bool timed = g_time_reads.load(std::memory_order_relaxed);
    const uint64_t t0 = timed ? monotonic_ns() : 0;
    record(g->node, std::move(e));
    if (timed) g_record_ns.fetch_add(monotonic_ns() - t0, std::memory_order_relaxed);
  }

  void cloned(const CUpti_GraphData* g) {
    if (!g->node || !g->originalNode || thread_state().copying) return;
    std::unique_lock<std::mutex> lock(m);
    const Entry* it = nodes.find(reinterpret_cast<uintptr_t>(g->originalNode));
    if (!it) {
      lock.unlock();
      return forget(g->node);
    }
    Entry e = *it;
    e.graph = g->graph;
    lock.unlock();
    record(g->node, std::move(e));
  }

  // Entries go with their graph (CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING,
  // one callback a graph), not with each node: the node-destroy callbacks,
  // three a node in a PyTorch capture (its template, instantiation's copy,
  // the exec graph), are not enabled. A node destroyed alone leaves its
  // entry until its graph goes; a new node at its address replaces it
  // (created, cloned: each node a walk can meet is made by a capture, a
  // graph-add call or a clone).
  std::unordered_map<const void*, std::vector<uint64_t>> by_graph;  // under m
  // The graph the last node was recorded in, and its list (a capture's
  // nodes come one graph at a time; a map's values stay where they are).
  const void* last_graph = nullptr;
  std::vector<uint64_t>* last_list = nullptr;

  void record(const void* node, Entry e) {
    const auto h = reinterpret_cast<uintptr_t>(node);
    const void* graph = e.graph;
    std::lock_guard<std::mutex> lock(m);
    if (nodes.size() >= (size_t(1) << 22)) return;
    nodes[h] = std::move(e);
    if (!graph) return;
    if (graph != last_graph) {
      last_list = &by_graph[graph];
      last_graph = graph;
    }
    last_list->push_back(h);
  }

  void forget(const void* node) {
    std::lock_guard<std::mutex> lock(m);
    if (!nodes.empty()) nodes.erase(reinterpret_cast<uintptr_t>(node));
  }

  void graph_destroyed(const CUpti_GraphData* g) {
    if (!g->graph) return;
    std::lock_guard<std::mutex> lock(m);
    auto it = by_graph.find(g->graph);
    if (it == by_graph.end()) return;
    for (uint64_t h : it->second) {
      const Entry* n = nodes.find(h);
      if (n && n->graph == g->graph) nodes.erase(h);
    }
    if (last_graph == g->graph) {
      last_graph = nullptr;
      last_list = nullptr;
    }
    by_graph.erase(it);
  }

  // The first return address outside CUDA, CUPTI, graphscope and the C and
  // C++ runtimes, and outside kernel launch stubs.
  std::optional<NativeFrame> symbolize(const std::vector<void*>& pcs) {
    for (void* pc : pcs) {
      auto it = frames.find(pc);
      if (it == frames.end()) it = frames.emplace(pc, frame_at(pc, tables)).first;
      if (it->second) return it->second;
    }
    return std::nullopt;
  }
  static std::optional<NativeFrame> frame_at(void* pc,
                                             std::unordered_map<std::string, std::unique_ptr<SymbolTable>>& tables) {
    static const char* const kSkip[] = {"libcuda.so", "libcudart", "libcupti", "libcublas", "libgraphscope",
                                        "/libc.so", "/libc-", "libstdc++", "ld-linux", "libpthread"};
    Dl_info info{};
    if (!dladdr(pc, &info) || !info.dli_fname) return std::nullopt;
    std::string object = info.dli_fname;
    static const std::string self = [] {
      Dl_info me{};
      return dladdr(reinterpret_cast<void*>(&has_prefix), &me) && me.dli_fname ? std::string(me.dli_fname) : "";
    }();
    if (object == self) return std::nullopt;  // graphscope itself (the CLI or the injection library)
    for (const char* s : kSkip)
      if (object.find(s) != std::string::npos) return std::nullopt;
    const uint64_t offset = uint64_t(reinterpret_cast<uintptr_t>(pc) - reinterpret_cast<uintptr_t>(info.dli_fbase));
    std::string fn;
    if (info.dli_sname) {
      fn = demangle(info.dli_sname);
    } else {
      auto& t = tables[object];
      if (!t) t = std::make_unique<SymbolTable>(object);
      // The return address is just past the call: look up the call itself.
      const std::string raw = t->lookup(t->first_load + offset - 1);
      if (!raw.empty()) fn = demangle(raw);
    }
    // Launch stubs and the runtime's inline launch templates are not the
    // code that launched.
    const std::string head = fn.substr(0, fn.find('('));
    if (head.find("__device_stub") != std::string::npos || head.find("cudaLaunch") != std::string::npos ||
        head.rfind("graphscope::", 0) == 0)
      return std::nullopt;
    // The CUDA runtime linked statically into the object.
    for (const char* rt : {"cuda", "cudart", "libcudart_static", "__cudart", "__cuda"})
      if (fn.rfind(rt, 0) == 0) return std::nullopt;
    NativeFrame f;
    f.function = std::move(fn);
    f.object = std::move(object);
    f.offset = offset;
    return f;
  }
};

OriginRecorder::OriginRecorder() : impl_(new Impl) {}

void OriginRecorder::uncached_for_tests(bool on) { g_uncached = on; }

void OriginRecorder::proxy_wait_for_tests(int milliseconds) {
  impl_->proxy.wait_ms = milliseconds;
}

void OriginRecorder::proxy_off_for_tests() { impl_->proxy.off = true; }

bool OriginRecorder::reads_at_entry() const { return impl_->entry_reads.load(); }

bool OriginRecorder::copying() const { return thread_state().copying; }

int OriginRecorder::captures_active() const {
  return impl_->captures.load(std::memory_order_relaxed);
}

OriginRecorder::ReadCounts OriginRecorder::read_counts() const {
  auto n = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  return {n(g_reads_cached), n(g_reads_same),
          n(g_reads_prior),  n(g_reads_made),
          n(g_reads_full),   n(g_reads_proxied),
          n(g_reads_late),   n(g_reads_tries),
          n(g_reads_frames), n(g_reads_ns),
          n(g_lock_ns),      n(g_compare_ns),
          n(g_record_ns),    {n(g_path_ns[0]), n(g_path_ns[1]), n(g_path_ns[2]), n(g_path_ns[3])}};
}

void OriginRecorder::time_reads(bool on) {
  g_time_reads = on;
}

OriginRecorder& OriginRecorder::instance() {
  static OriginRecorder* r = new OriginRecorder;
  return *r;
}

bool OriginRecorder::enable(CUpti_SubscriberHandle s) {
  // Only the calls that make nodes or begin and end a capture: every other
  // API call of the application then costs nothing.
  bool ok = true;
  // The driver's calls alone: the runtime makes each node through one of
  // them, whose callbacks come on the same thread with the same Python
  // stack, so the runtime's callbacks would only double the count (on an
  // H200, 2026-11-26, the Llama capture with origins took 17.2 ms with both
  // domains and 13.7 ms with the driver's alone, medians of 20 captures;
  // every one of its 392 nodes had the same origin either way).
  const auto domain = CUPTI_CB_DOMAIN_DRIVER_API;
  // Each call's kind by its id, filled once, before any of its callbacks
  // is enabled (and never changed after: callbacks read it unlocked).
  if (impl_->driver_kinds.empty()) {
    std::vector<uint8_t> kinds(CUPTI_DRIVER_TRACE_CBID_SIZE, 0);
    for (int id = 1; id < int(CUPTI_DRIVER_TRACE_CBID_SIZE); ++id) {
      const char* name = nullptr;
      if (cuptiGetCallbackName(domain, CUpti_CallbackId(id), &name) == CUPTI_SUCCESS && name)
        kinds[size_t(id)] = Impl::kind_of(name);
    }
    impl_->driver_kinds = std::move(kinds);
  }
  // Launches and the other calls that only make nodes (Impl::kMakes
  // alone) are left off: their nodes' stacks are read in the node-created
  // callback (Impl::created), unless reads at the entry were turned on.
  std::lock_guard<std::mutex> lock(impl_->sub_m);
  const bool all = impl_->entry_reads.load();
  for (int id = 1; id < int(CUPTI_DRIVER_TRACE_CBID_SIZE) && ok; ++id) {
    const uint8_t kind = impl_->driver_kinds[size_t(id)];
    if (kind && (all || kind != Impl::kMakes))
      ok = cuptiEnableCallback(1, s, domain, CUpti_CallbackId(id)) == CUPTI_SUCCESS;
  }
  for (CUpti_CallbackId id : {CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED,
                              CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING})
    ok = ok && cuptiEnableCallback(1, s, CUPTI_CB_DOMAIN_RESOURCE, id) == CUPTI_SUCCESS;
  // NVTX callbacks come only when NVTX was pointed at CUPTI; not an error.
  (void)cuptiEnableDomain(1, s, CUPTI_CB_DOMAIN_NVTX);
  if (ok) impl_->subscriber = s;
  return ok;
}

void OriginRecorder::unsubscribing() {
  std::lock_guard<std::mutex> lock(impl_->sub_m);
  impl_->subscriber = nullptr;
}

namespace {
void CUPTIAPI own_callback(void* self, CUpti_CallbackDomain d, CUpti_CallbackId id, const void* data) {
  static_cast<OriginRecorder*>(self)->on_callback(d, id, data);
}
}  // namespace

bool OriginRecorder::subscribe() {
  CUpti_SubscriberHandle s = nullptr;
  if (cuptiSubscribe(&s, own_callback, this) != CUPTI_SUCCESS) return false;
  if (!enable(s)) {
    unsubscribing();
    cuptiUnsubscribe(s);
    return false;
  }
  return true;
}

void OriginRecorder::on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) noexcept {
  if (!data) return;
  try {
    switch (domain) {
      case CUPTI_CB_DOMAIN_RUNTIME_API:
      case CUPTI_CB_DOMAIN_DRIVER_API:
        impl_->api(domain, cbid, static_cast<const CUpti_CallbackData*>(data));
        break;
      case CUPTI_CB_DOMAIN_NVTX:
        impl_->nvtx(cbid, static_cast<const CUpti_NvtxData*>(data));
        break;
      case CUPTI_CB_DOMAIN_RESOURCE: {
        auto* rd = static_cast<const CUpti_ResourceData*>(data);
        auto* g = static_cast<const CUpti_GraphData*>(rd->resourceDescriptor);
        if (!g) break;
        if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) impl_->created(g);
        else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) impl_->cloned(g);
        else if (cbid == CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING) impl_->graph_destroyed(g);
        break;
      }
      default:
        break;
    }
  } catch (...) {
    // An origin is a nicety: never let it disturb the application.
  }
}

std::shared_ptr<const Origin> OriginRecorder::origin_of(uint64_t node_handle) {
  std::lock_guard<std::mutex> lock(impl_->m);
  return impl_->origin_locked(node_handle);
}

void OriginRecorder::origins_of(const uint64_t* handles, size_t n, std::shared_ptr<const Origin>* out) {
  std::lock_guard<std::mutex> lock(impl_->m);
  for (size_t i = 0; i < n; ++i) out[i] = impl_->origin_locked(handles[i]);
}

std::shared_ptr<const Origin> OriginRecorder::Impl::origin_locked(uint64_t node_handle) {
  Entry* it = nodes.find(node_handle);
  if (!it) return nullptr;
  Entry& e = *it;
  if (e.pcs) {
    auto native = symbolize(*e.pcs);
    e.pcs.reset();
    if (native) {
      auto o = std::make_shared<Origin>(*e.origin);
      o->native = std::move(native);
      e.origin = std::move(o);
    }
  }
  if (e.origin->empty()) return nullptr;
  return e.origin;
}

std::string OriginRecorder::cupti_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiGetResultString), &info) && info.dli_fname) return info.dli_fname;
  return "";
}

std::string OriginRecorder::inject_nvtx() {
  const char* set = std::getenv("NVTX_INJECTION64_PATH");
  if (set && *set) return "";
  std::string p = cupti_path();
  if (p.empty()) return "";
  setenv("NVTX_INJECTION64_PATH", p.c_str(), 1);
  return p;
}

}  // namespace graphscope::capture
