// Symbols of an ELF object's .symtab, for naming native frames.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace graphscope::capture {
namespace origin_internal __attribute__((visibility("hidden"))) {

// The function symbols of an object's .symtab (static functions, hidden
// ones: what dladdr, which reads the dynamic table only, cannot name).
// Read once per object, from its file; empty when stripped or unreadable.
class SymbolTable {
 public:
  explicit SymbolTable(const std::string& path);
  // The function containing the address (relative to the object's first
  // segment's virtual address, as dladdr's base gives it).
  std::string lookup(uint64_t vaddr) const;
  uint64_t first_load = 0;  // lowest PT_LOAD vaddr (dli_fbase maps it)

 private:
  struct Sym {
    uint64_t value, size;
    std::string name;
  };
  void read(const char* b, size_t n);
  std::vector<Sym> syms_;
};

}  // namespace origin_internal
}  // namespace graphscope::capture
