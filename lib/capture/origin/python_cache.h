// What the reads of a thread's Python stack keep between calls and between
// captures (the caches), and the functions the files of lib/capture/origin
// share to make and check them (README.md says which file does what).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "capture/flat_map.h"
#include "inspect/model/graph.h"
#include "python.h"

namespace graphscope::capture {
namespace origin_internal __attribute__((visibility("hidden"))) {

// This thread's reads made the long way (OriginRecorder::uncached_for_tests),
// the thread state whose stack this thread reads (the proxy's), and the
// reads' counts and timings: python_read.cc defines them and says what each is.
extern thread_local bool g_uncached;
extern thread_local void* g_target;
extern std::atomic<uint64_t> g_reads_cached, g_reads_same, g_reads_prior, g_reads_made, g_reads_full,
    g_reads_proxied, g_reads_late, g_reads_tries, g_reads_frames, g_reads_ns;
extern std::atomic<bool> g_time_reads;
extern std::atomic<uint64_t> g_lock_ns, g_compare_ns, g_record_ns;
extern std::atomic<uint64_t> g_path_ns[4];

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

// The pointer at byte `at` of an interpreter structure, read straight.
inline const char* field(const void* base, size_t at) {
  return *reinterpret_cast<const char* const*>(static_cast<const char*>(base) + at);
}

// module_tree.cc: modules' facts and names, checked before they are trusted.
// Whether o is a torch.nn.Module (its type remembered for reads without the GIL).
bool is_module(const Python& py, PyCache& c, PyObj* o);
// The facts of module mo, checked in this capture.
ModuleInfo& module_info(const Python& py, PyCache& c, PyObj* mo);
// child's name under parent (see ChildName), checked in this capture.
const std::string& child_name(const Python& py, PyCache& c, PyObj* parent, uint32_t parent_serial, PyObj* child,
                              uint32_t child_serial, const std::string& child_type);
// Whether the path of parts through the _modules dicts still leads from
// parent to child.
bool still_child(const Python& py, PyCache& c, PyObj* parent, PyObj* child, const std::vector<PyObj*>& parts);
// At a capture's beginning, with the GIL: what the last captures' reads used,
// checked for this one.
void precheck(const Python& py, PyCache& c);
// The modules under root and their names, learnt at once.
void learn_tree(const Python& py, PyCache& c, PyObj* root);

// frames.cc: a thread's frames, read through the API or straight.
// The stack through the API: a frame object for every frame.
void api_walk(const Python& py, PyCache& c, PyStack& s);
// The same read straight from the interpreter's frames (false: given up).
bool raw_walk(const Python& py, PyCache& c, PyStack& out, bool gil, Chain* chain = nullptr);
// A key of this thread's Python stack (code and instruction of each frame),
// read without the GIL; 0 where it cannot be read straight.
uint64_t frames_key(const Python& py);
// Whether this thread's stack gives the origin k's marks did.
bool same_stack(const Python& py, PyCache& c, const Known& k);

// python_read.cc: the reads, through the caches without the GIL, and in full.
std::shared_ptr<const Origin> read_python_cached(const Python& py, PyCache& c, std::mutex& m, bool gil,
                                                 Script* sc);
std::shared_ptr<const Origin> read_python(const Python& py, PyCache& cache, std::mutex& m,
                                          const std::shared_ptr<Origin>& o, bool reuse);

}  // namespace origin_internal
}  // namespace graphscope::capture
