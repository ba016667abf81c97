// Call sites: an intercepted call is identified by the return addresses of
// the PAPSHIM_CALLSITE_DEPTH frames above the MPI entry point.
//
// Works as follows: the wrapper passes its own return address (the
// application's call instruction + 1); for deeper stacks libunwind walks the
// stack, finds that frame and keeps the next depth-1 frames.  Raw addresses
// differ between processes (ASLR), so the report uses a portable key: for
// each frame the module path and the offset inside it (dladdr), which is the
// same on every rank running the same binaries.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "common/hash.h"

namespace papshim {

constexpr int kMaxCallsiteDepth = 8;

struct CallSite {
  std::array<void*, kMaxCallsiteDepth> pc{};
  int depth = 0;
  bool operator==(const CallSite& o) const {
    if (depth != o.depth) return false;
    for (int i = 0; i < depth; ++i)
      if (pc[i] != o.pc[i]) return false;
    return true;
  }
};

struct CallSiteHash {
  std::size_t operator()(const CallSite& c) const {
    std::uint64_t h = kFnvOffset;
    for (int i = 0; i < c.depth; ++i) h = fnv1a_word(h, reinterpret_cast<std::uintptr_t>(c.pc[i]));
    return static_cast<std::size_t>(h);
  }
};

// `ret` is the wrapper's __builtin_return_address(0).  A call that comes
// through the MPI library's own Fortran or C++ binding (MPICH's Fortran
// bindings call the C functions) is keyed by the first frame outside it.
bool in_binding_library(void* pc);
CallSite capture_callsite(void* ret, int depth);

// Portable key: "module+0xoffset" per frame, joined by ';'.
std::string callsite_key(const CallSite& c);

// Human form of one key, resolved on the reporting rank inside the process
// (symbol tables and DWARF read from the modules' files; no other program
// runs): "function+0xoff (module)" per frame, and the first frame's
// "file:line" when debug info is present.  Each module is read once and
// each frame resolved once.
struct ResolvedSite {
  std::string function;  // "main+0x4f (demo)", "main (demo)" from DWARF alone, or "demo+0x1234"
  std::string file_line; // "/src/demo.c:42", "demo.c:?" from the symbol table alone, or ""
};
ResolvedSite resolve_callsite_key(const std::string& key);

// "+0x<v in hex>": the offset part of a frame key, and of a resolved name.
std::string plus_hex(std::uintptr_t v);

// Splits one "module+0xoffset" frame key; false when malformed.
bool parse_frame_key(const std::string& frame, std::string& module, std::uintptr_t& offset);

}  // namespace papshim
