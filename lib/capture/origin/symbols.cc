// ELF symbols: a node's native origin, the first return address of the
// call that made it outside CUDA, CUPTI, graphscope and the C and C++
// runtimes, named from the object's dynamic symbols (dladdr) or its .symtab
// (SymbolTable).
#include "symbols.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "inspect/core/demangle.h"
#include "recorder.h"

namespace graphscope::capture {

namespace origin_internal {

SymbolTable::SymbolTable(const std::string& path) {
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

std::string SymbolTable::lookup(uint64_t vaddr) const {
  auto it = std::upper_bound(syms_.begin(), syms_.end(), vaddr, [](uint64_t v, const Sym& s) { return v < s.value; });
  if (it == syms_.begin()) return "";
  --it;
  return vaddr < it->value + std::max<uint64_t>(it->size, 1) ? it->name : "";
}

void SymbolTable::read(const char* b, size_t n) {
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

}  // namespace origin_internal

// The first return address outside CUDA, CUPTI, graphscope and the C and
// C++ runtimes, and outside kernel launch stubs.
std::optional<NativeFrame> OriginRecorder::Impl::symbolize(const std::vector<void*>& pcs) {
  for (void* pc : pcs) {
    auto it = frames.find(pc);
    if (it == frames.end()) it = frames.emplace(pc, frame_at(pc, tables)).first;
    if (it->second) return it->second;
  }
  return std::nullopt;
}

std::optional<NativeFrame> OriginRecorder::Impl::frame_at(
    void* pc, std::unordered_map<std::string, std::unique_ptr<SymbolTable>>& tables) {
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

}  // namespace graphscope::capture
