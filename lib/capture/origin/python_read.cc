// The reads of a thread's Python stack: through the caches without the GIL
// (read_python_cached: a stack met before, Known, found again, or the
// frames read straight and every fact already known), and in full with the
// GIL (read_python), which learns what the caches keep.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "capture/clock.h"
#include "python_cache.h"

namespace graphscope::capture::origin_internal {

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

namespace {

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

// Whether weak reference r still refers to o, read straight from
// PyWeakReference's wr_object, after its header (None once the referent is
// gone): no GIL needed, unlike Python::refers_to.
bool referent_is(const PyObj* r, const PyObj* o) { return field(r, 16) == static_cast<const char*>(o); }

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

std::string join_name(const std::string& a, const std::string& b) { return a.empty() ? b : a + "." + b; }

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

}  // namespace

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

}  // namespace graphscope::capture::origin_internal
