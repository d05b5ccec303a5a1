// Graphviz plumbing: see dot_cgraph.h.
#include "dot_cgraph.h"

#include <cstring>
#include <unordered_map>

namespace graphscope::dot_detail {
namespace {

// ---------------------------------------------------------------------------
// Graphviz plumbing


// ID discipline. cgraph's default one uses the address of a named object's
// interned name as its ID, and orders subgraphs by ID when writing: sibling
// clusters would then come out in heap-address order. This one hands out IDs
// in creation order, so the output is the same bytes on every run. Names are
// still interned with agstrdup (cgraph's writer looks at the interned
// string's header) and released when their object goes, as the default does.
// (Leaving names to cgraph's internal map instead would leak: cgraph 2.x
// closes that shared map when it closes the first subgraph.)
struct IdState {
  Agraph_t* root = nullptr;
  IDTYPE next = 1;
  std::unordered_map<std::string, IDTYPE> by_name[3];  // graph, node, edge names
  std::unordered_map<IDTYPE, char*> names;             // ID -> interned name
};
int id_kind(int objtype) { return objtype == AGRAPH ? 0 : objtype == AGNODE ? 1 : 2; }
void* id_open(Agraph_t* g, Agdisc_t*) {
  auto* st = new IdState;
  st->root = g;
  return st;
}
long id_map(void* state, int objtype, char* str, IDTYPE* id, int createflag) {
  auto* st = static_cast<IdState*>(state);
  if (str != nullptr) {
    auto& by_name = st->by_name[id_kind(objtype)];
    auto it = by_name.find(str);
    if (it != by_name.end()) {
      *id = it->second;
      return 1;
    }
    if (!createflag) return 0;
    *id = st->next;
    st->next += 2;  // odd, like cgraph's own anonymous IDs
    by_name.emplace(str, *id);
    st->names.emplace(*id, agstrdup(st->root, str));
    return 1;
  }
  if (!createflag) return 0;
  *id = st->next;
  st->next += 2;
  return 1;
}
void id_free(void* state, int objtype, IDTYPE id) {
  auto* st = static_cast<IdState*>(state);
  auto it = st->names.find(id);
  if (it == st->names.end()) return;
  st->by_name[id_kind(objtype)].erase(it->second);
  agstrfree(st->root, it->second);
  st->names.erase(it);
}
char* id_print(void* state, int, IDTYPE id) {
  auto* st = static_cast<IdState*>(state);
  auto it = st->names.find(id);
  return it == st->names.end() ? nullptr : it->second;
}
void id_close(void* state) { delete static_cast<IdState*>(state); }
void id_register(void*, int, void*) {}

// Older cgraph (2.x) has an `alloc` member (explicit IDs); newer has none.
template <class D>
auto set_id_alloc(D& d, int) -> decltype(d.alloc = nullptr, void()) {
  d.alloc = [](void*, int, IDTYPE) -> long { return 0; };
}
template <class D>
void set_id_alloc(D&, long) {}

Agiddisc_t make_id_disc() {
  Agiddisc_t d{};
  d.open = id_open;
  d.map = id_map;
  set_id_alloc(d, 0);
  d.free = id_free;
  d.print = id_print;
  d.close = id_close;
  d.idregister = id_register;
  return d;
}

// IO discipline: agwrite appends to a std::string.
int io_read(void*, char*, int) { return 0; }
int io_put(void* chan, const char* s) {
  static_cast<std::string*>(chan)->append(s);
  return 0;
}
int io_flush(void*) { return 0; }

Agiodisc_t make_io_disc() {
  Agiodisc_t d{};
  d.afread = io_read;
  d.putstr = io_put;
  d.flush = io_flush;
  return d;
}

Agiddisc_t g_id_disc = make_id_disc();
Agiodisc_t g_io_disc = make_io_disc();

Agdisc_t make_disc() {
  Agdisc_t d{};  // a null mem discipline means cgraph's default
  d.id = &g_id_disc;
  d.io = &g_io_disc;
  return d;
}
}  // namespace

Agdisc_t g_disc = make_disc();

namespace {


struct ContextFreer {
  void operator()(GVC_t* c) const {
    if (c) gvFreeContext(c);
  }
};
using ContextPtr = std::unique_ptr<GVC_t, ContextFreer>;

}  // namespace

[[noreturn]] void graphviz_failed(const char* what) {
  throw Error(ExitCode::bad_input, what, GraphvizSession::message("Graphviz gave no reason"));
}

[[noreturn]] void gvc_failed(const char* what) {
  const std::string msg = GraphvizSession::message("Graphviz gave no reason");
  // Graphviz's plugins missing or not registered: its own words ("Layout
  // type: "dot" not recognized. Use one of:" and an empty list) do not say
  // how to fix it.
  if (msg.find("not recognized") != std::string::npos || msg.find("unavailable") != std::string::npos)
    throw Error(ExitCode::usage, what,
                "Graphviz's \"dot\" plugin is missing: apt install libgvc6, then `dot -c` as root; or set "
                "GVBINDIR to the plugins' folder");
  throw Error(ExitCode::bad_input, what, msg);
}

/// The one gvc context of the process, made on first use and freed at exit.
/// Not one per call: Graphviz 2.x's pango plugin caches a pointer to the last
/// font name, which lives in the context, so a second context reads freed
/// memory (AddressSanitizer shows it on the second render_svg). Call with a
/// GraphvizSession held.
GVC_t* shared_context() {
  static ContextPtr context;
  if (!context) {
    context.reset(gvContext());
    if (!context) graphviz_failed("cannot start Graphviz");
  }
  return context.get();
}

}  // namespace graphscope::dot_detail
