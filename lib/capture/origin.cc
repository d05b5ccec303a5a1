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
#include <cstddef>
#include <optional>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "inspect/demangle.h"

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
  int (*GcDisable)() = nullptr;  // 3.10; optional
  int (*GcEnable)() = nullptr;
  PyObj* dict_type = nullptr;
  bool usable = false;

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
    find(GcDisable, "PyGC_Disable");
    find(GcEnable, "PyGC_Enable");
    dict_type = dlsym(RTLD_DEFAULT, "PyDict_Type");
    usable = IsFinalizing && ThisThreadState && Ensure && Release && GetFrame && FrameBack && FrameCode && FrameLine &&
             (FrameVar || (FrameLocals && MappingItem)) && GetAttr && IsInstance && TypeOf && Utf8 && Str &&
             DecRef && IncRef && ErrFetch && ErrRestore && ErrClear && DictNext && GetModule && dict_type;
  }
  // Whether this thread can give its Python stack now: Python runs, is not
  // shutting down, and this thread is a Python thread (no thread state is
  // ever created here).
  bool ready() const {
    return usable && IsInitialized() && !IsFinalizing() && ThisThreadState() != nullptr;
  }
};

const Python& python() {
  static const Python p;
  return p;
}

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

std::atomic<bool> g_uncached{false};  // OriginRecorder::uncached_for_tests

struct CodeInfo {
  std::string file, function;
  bool framework = false, forward = false;
  // Line numbers by instruction offset: PyFrame_GetLineNumber scans the
  // code's line table from its start on every call (no gain was measured on
  // the device's Llama; BENCHMARKS.md, 2026-11-26).
  std::vector<std::pair<int, uint32_t>> lines;
  uint32_t line(const Python& py, PyObj* frame);
};

uint32_t CodeInfo::line(const Python& py, PyObj* frame) {
  if (!py.FrameLasti || g_uncached.load(std::memory_order_relaxed)) return uint32_t(py.FrameLine(frame));
  const int lasti = py.FrameLasti(frame);
  for (const auto& [at, l] : lines)
    if (at == lasti) return l;
  const uint32_t l = uint32_t(py.FrameLine(frame));
  if (lines.size() < 256) lines.emplace_back(lasti, l);
  return l;
}

// Facts about Python objects by address: open addressing on a power-of-two
// table (a frame walk looks up every frame's code object, tens per launch,
// where std::unordered_map's division and chains cost most of the walk).
template <typename V>
class PtrMap {
 public:
  V* find(const void* k) {
    if (slots_.empty()) return nullptr;
    for (size_t i = hash(k);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i].key == k) return &values_[slots_[i].value];
      if (!slots_[i].key) return nullptr;
    }
  }
  V& insert(const void* k, V v) {
    if (2 * (values_.size() + 1) > slots_.size()) grow();
    size_t i = hash(k);
    while (slots_[i].key) i = (i + 1) & (slots_.size() - 1);
    slots_[i] = {k, uint32_t(values_.size())};
    values_.push_back(std::move(v));
    return values_.back();
  }
  void clear() {
    slots_.clear();
    values_.clear();
  }

 private:
  struct Slot {
    const void* key = nullptr;
    uint32_t value = 0;
  };
  size_t hash(const void* k) const {
    return size_t((reinterpret_cast<uintptr_t>(k) * 0x9E3779B97F4A7C15ull) >> 32) & (slots_.size() - 1);
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 256 : 2 * old.size(), Slot{});
    for (const Slot& s : old)
      if (s.key) {
        size_t i = hash(s.key);
        while (slots_[i].key) i = (i + 1) & (slots_.size() - 1);
        slots_[i] = s;
      }
  }
  std::vector<Slot> slots_;
  std::vector<V> values_;
};

// What a frame walk needs to keep between calls: facts about code objects
// and module objects, valid while they live (dropped at the end of every
// capture, when objects may go).
struct PyCache {
  PtrMap<CodeInfo> code;
  PtrMap<std::string> type_name;
  std::unordered_map<uint64_t, std::string> child_name;  // hash(parent, child) -> relative name
  // Origins already made, by what they were made of (the user frames' code
  // objects and lines, the module objects): the 44 launches of a decoder
  // layer's MLP share a handful, and building one is most of a read.
  std::unordered_map<uint64_t, std::pair<std::vector<uint64_t>, std::shared_ptr<const Origin>>> origins;
  std::vector<uint64_t> key;  // reused
  PyObj* module_class = nullptr;  // torch.nn.Module, held
  PyObj* self_name = nullptr;     // "self", held
  bool looked_for_torch = false;
  void clear(const Python& py) {
    code.clear();
    type_name.clear();
    child_name.clear();
    origins.clear();
    if (module_class) py.DecRef(module_class);
    module_class = self_name = nullptr;
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

std::string join_name(const std::string& a, const std::string& b) { return a.empty() ? b : a + "." + b; }

// Reads this thread's Python stack into *o, or, when `reuse` (o holds
// nothing else) and an origin of the same user frames and modules was made
// before in this capture, returns that one instead (null: *o was filled).
// The GIL is taken and given back; the thread's pending exception, if any,
// is kept.
std::shared_ptr<const Origin> read_python(const Python& py, PyCache& cache, std::mutex& m,
                                          const std::shared_ptr<Origin>& o, bool reuse) {
  std::shared_ptr<const Origin> reused;
  int gil = py.Ensure();
  PyObj *et, *ev, *tb;
  py.ErrFetch(&et, &ev, &tb);
  // No collection while the stack is read: a finalizer must not run here.
  const bool gc_was_on = py.GcDisable && py.GcEnable && py.GcDisable() == 1;
  {
    std::lock_guard<std::mutex> lock(m);  // the cache; the GIL already orders Python threads
    if (!cache.looked_for_torch) {
      cache.looked_for_torch = true;
      if (PyObj* name = py.Str("torch.nn.modules.module")) {
        if (PyObj* mod = py.GetModule(name)) {  // only if imported: never imports
          cache.module_class = py.GetAttr(mod, "Module");
          py.DecRef(mod);
        }
        py.DecRef(name);
      }
      if (cache.module_class) cache.self_name = py.Str("self");
      py.ErrClear();
    }
    PyObj* self_name = cache.module_class ? cache.self_name : nullptr;
    std::vector<PyObj*> modules;  // innermost first, held
    modules.reserve(16);
    struct UserFrame {
      PyObj* code;
      uint32_t line;
    } user[3];
    size_t users = 0;
    PyObj* frame = py.GetFrame();
    if (frame) py.IncRef(frame);
    for (int depth = 0; frame && depth < 256; ++depth) {
      PyObj* code = py.FrameCode(frame);
      CodeInfo* info = cache.code.find(code);
      if (!info) {
        CodeInfo c;
        c.file = attr_text(py, code, "co_filename");
        c.function = attr_text(py, code, "co_qualname");
        if (c.function.empty()) c.function = attr_text(py, code, "co_name");
        c.framework = framework_file(c.file);
        size_t dot = c.function.rfind('.');
        c.forward = (dot == std::string::npos ? c.function : c.function.substr(dot + 1)) == "forward";
        info = &cache.code.insert(code, std::move(c));
      }
      CodeInfo& c = *info;
      if (!c.framework && users < 3) user[users++] = {code, c.line(py, frame)};
      if (c.forward && self_name) {
        PyObj* self = nullptr;
        if (py.FrameVar) {
          self = py.FrameVar(frame, self_name);
        } else if (PyObj* locals = py.FrameLocals(frame)) {
          self = py.MappingItem(locals, "self");
          py.DecRef(locals);
        }
        if (!self) py.ErrClear();
        else if (py.IsInstance(self, cache.module_class) == 1 && (modules.empty() || modules.back() != self))
          modules.push_back(self);
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
    uint64_t hash = 0;
    if (reuse) {
      cache.key.clear();
      for (size_t i = 0; i < users; ++i) {
        cache.key.push_back(reinterpret_cast<uintptr_t>(user[i].code));
        cache.key.push_back(user[i].line);
      }
      cache.key.push_back(UINT64_MAX);
      for (PyObj* mo : modules) cache.key.push_back(reinterpret_cast<uintptr_t>(mo));
      for (uint64_t k : cache.key) hash = (hash ^ k) * 0x9E3779B97F4A7C15ull;
      auto it = cache.origins.find(hash);
      if (it != cache.origins.end() && it->second.first == cache.key) reused = it->second.second;
    }
    // Code objects outlive the walk (their functions hold them): their
    // facts are in the cache.
    for (size_t i = 0; i < users && !reused; ++i) {
      const CodeInfo& c = *cache.code.find(user[i].code);
      o->python.push_back({c.file, user[i].line, c.function});
    }
    // Outermost first: the outermost module is "", each next one is named
    // by where it sits under the one that called it.
    std::reverse(modules.begin(), modules.end());
    for (size_t i = 0; i < modules.size() && !reused; ++i) {
      const std::string* tn = cache.type_name.find(modules[i]);
      if (!tn) {
        PyObj* type = py.TypeOf(modules[i]);
        tn = &cache.type_name.insert(modules[i], type ? attr_text(py, type, "__name__") : std::string());
        if (type) py.DecRef(type);
      }
      std::string name;
      if (i > 0) {
        uint64_t key = reinterpret_cast<uintptr_t>(modules[i - 1]) * 0x9E3779B97F4A7C15ull ^
                       reinterpret_cast<uintptr_t>(modules[i]);
        auto cn = cache.child_name.find(key);
        if (cn == cache.child_name.end()) {
          std::string rel;
          for (int d = 1; d <= 3 && rel.empty(); ++d)
            if (!find_child(py, modules[i - 1], modules[i], d, rel)) rel.clear();
          if (rel.empty()) rel = "<" + *tn + ">";  // called, not owned
          cn = cache.child_name.emplace(key, rel).first;
        }
        name = join_name(o->modules.back().name, cn->second);
      }
      o->modules.push_back({std::move(name), *tn});
    }
    for (PyObj* mo : modules) py.DecRef(mo);
    if (reuse && !reused && cache.origins.size() < (size_t(1) << 16)) cache.origins[hash] = {cache.key, o};
  }
  if (gc_was_on) py.GcEnable();
  py.ErrRestore(et, ev, tb);
  py.Release(gil);
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

bool capture_bound(const char* f) {
  return has_prefix(f, "cudaStreamBeginCapture") || has_prefix(f, "cuStreamBeginCapture") ||
         has_prefix(f, "cudaStreamEndCapture") || has_prefix(f, "cuStreamEndCapture");
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
};

}  // namespace

struct OriginRecorder::Impl {
  std::mutex m;  // everything below
  std::unordered_map<uint64_t, Entry> nodes;
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

  // This thread's origin now: NVTX ranges, and the Python stack when asked.
  std::shared_ptr<const Origin> now(bool with_python) {
    auto o = std::make_shared<Origin>();
    ThreadState& ts = thread_state();
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
    if (with_python) {
      const Python& py = python();
      if (py.ready())
        if (auto same = read_python(py, py_cache, py_m, o, o->nvtx.empty())) return same;
    }
    return o;
  }

  void api(CUpti_CallbackDomain, const CUpti_CallbackData* cb) {
    ThreadState& ts = thread_state();
    const char* f = cb->functionName ? cb->functionName : "";
    if (cb->callbackSite == CUPTI_API_ENTER) {
      if (++ts.depth != 1) return;
      if (copies_nodes(f)) {
        ts.copying = true;
        return;
      }
      if (has_prefix(f, "cudaStreamEndCapture") || has_prefix(f, "cuStreamEndCapture")) {
        int c = captures.load();
        while (c > 0 && !captures.compare_exchange_weak(c, c - 1)) {
        }
        return;
      }
      if ((captures.load(std::memory_order_relaxed) > 0 || graph_add(f)) && makes_node(f)) ts.pending = now(true);
      return;
    }
    if (--ts.depth > 0) {
      if (ts.depth < 0) ts.depth = 0;
      return;
    }
    ts.depth = 0;
    ts.pending.reset();
    ts.copying = false;
    if ((has_prefix(f, "cudaStreamBeginCapture") || has_prefix(f, "cuStreamBeginCapture")) && cb->functionReturnValue &&
        *static_cast<const int*>(cb->functionReturnValue) == 0)
      captures.fetch_add(1);
    if (captures.load() == 0 && (has_prefix(f, "cudaStreamEndCapture") || has_prefix(f, "cuStreamEndCapture"))) {
      const Python& py = python();
      if (py.ready()) {  // objects may go now: forget what was learnt of them
        int gil = py.Ensure();
        {
          std::lock_guard<std::mutex> lock(py_m);
          py_cache.clear(py);
        }
        py.Release(gil);
      }
    }
  }

  void created(const CUpti_GraphData* g) {
    if (!g->node) return;
    ThreadState& ts = thread_state();
    if (ts.copying) return;
    // Without a node-making call under way and with no capture active, the
    // node is instantiation's own copy (or a clone, which cloned() handles):
    // nothing of the caller's to record.
    if (!ts.pending && captures.load(std::memory_order_relaxed) == 0) return;
    Entry e;
    e.origin = ts.pending ? ts.pending : now(false);
    if (e.origin->python.empty()) {
      // Deep enough to get past CUPTI's, the driver's and the runtime's
      // own frames to the caller's.
      void* pcs[64];
      const int n = backtrace(pcs, 64);
      if (n > 0) e.pcs = std::make_shared<std::vector<void*>>(pcs, pcs + n);
    }
    if (e.origin->empty() && !e.pcs) return;
    std::lock_guard<std::mutex> lock(m);
    if (nodes.size() < (size_t(1) << 22)) nodes[reinterpret_cast<uintptr_t>(g->node)] = std::move(e);
  }

  void cloned(const CUpti_GraphData* g) {
    if (!g->node || !g->originalNode || thread_state().copying) return;
    std::lock_guard<std::mutex> lock(m);
    auto it = nodes.find(reinterpret_cast<uintptr_t>(g->originalNode));
    if (it != nodes.end()) {
      Entry e = it->second;
      nodes[reinterpret_cast<uintptr_t>(g->node)] = e;
    }
  }

  void destroyed(const CUpti_GraphData* g) {
    if (thread_state().copying) return;
    std::lock_guard<std::mutex> lock(m);
    nodes.erase(reinterpret_cast<uintptr_t>(g->node));
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

void OriginRecorder::uncached_for_tests(bool on) { g_uncached.store(on, std::memory_order_relaxed); }

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
  for (int id = 1; id < int(CUPTI_DRIVER_TRACE_CBID_SIZE) && ok; ++id) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, CUpti_CallbackId(id), &name) != CUPTI_SUCCESS || !name) continue;
    if (makes_node(name) || capture_bound(name) || copies_nodes(name))
      ok = cuptiEnableCallback(1, s, domain, CUpti_CallbackId(id)) == CUPTI_SUCCESS;
  }
  for (CUpti_CallbackId id : {CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED,
                              CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING})
    ok = ok && cuptiEnableCallback(1, s, CUPTI_CB_DOMAIN_RESOURCE, id) == CUPTI_SUCCESS;
  // NVTX callbacks come only when NVTX was pointed at CUPTI; not an error.
  (void)cuptiEnableDomain(1, s, CUPTI_CB_DOMAIN_NVTX);
  return ok;
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
        impl_->api(domain, static_cast<const CUpti_CallbackData*>(data));
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
        else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING) impl_->destroyed(g);
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
  auto it = impl_->nodes.find(node_handle);
  if (it == impl_->nodes.end()) return nullptr;
  Entry& e = it->second;
  if (e.pcs) {
    auto native = impl_->symbolize(*e.pcs);
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
