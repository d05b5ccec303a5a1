// Module trees: the facts of each torch.nn.Module a read meets (the same
// object, of the same type under the same name) and each one's name under
// the module that called it, checked once a round before they are trusted,
// and learnt for a whole model at once (learn_tree).
#include <string>
#include <unordered_map>
#include <vector>

#include "python_cache.h"

namespace graphscope::capture::origin_internal {

namespace {

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

}  // namespace

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

}  // namespace graphscope::capture::origin_internal
