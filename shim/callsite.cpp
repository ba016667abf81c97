#include "shim/callsite.h"

#include <dlfcn.h>
#include <elf.h>
#include <libunwind.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <unordered_map>

namespace papshim {

bool in_binding_library(void* pc) {
  // Return addresses repeat (one per call site), so the answer is cached;
  // the last one first, as loops call the same site again and again.
  thread_local void* last_pc = nullptr;
  thread_local bool last_answer = false;
  if (pc == last_pc) return last_answer;
  thread_local std::unordered_map<void*, bool> known;
  if (auto it = known.find(pc); it != known.end()) {
    last_pc = pc;
    last_answer = it->second;
    return last_answer;
  }
  bool binding = false;
  Dl_info info{};
  if (dladdr(pc, &info) != 0 && info.dli_fname != nullptr) {
    const char* slash = std::strrchr(info.dli_fname, '/');
    const std::string base = slash ? slash + 1 : info.dli_fname;
    for (const char* prefix : {"libmpichfort", "libmpifort", "libmpi_mpifh", "libmpi_usempi", "libmpicxx", "libmpi_cxx"})
      binding = binding || base.rfind(prefix, 0) == 0;
  }
  if (known.size() < 4096) known.emplace(pc, binding);
  last_pc = pc;
  last_answer = binding;
  return binding;
}

CallSite capture_callsite(void* ret, int depth) {
  CallSite c;
  c.pc[0] = ret;
  c.depth = 1;
  const bool binding = in_binding_library(ret);
  if (depth <= 1 && !binding) return c;
  void* frames[32];
  const int n = unw_backtrace(frames, 32);
  int i = 0;
  while (i < n && frames[i] != ret) ++i;
  if (i == n) return c;
  // Called through the MPI library's Fortran or C++ binding: the site is the
  // first frame outside it.
  while (i + 1 < n && in_binding_library(frames[i])) ++i;
  c.pc[0] = frames[i];
  for (int k = i + 1; k < n && c.depth < depth && c.depth < kMaxCallsiteDepth; ++k) c.pc[c.depth++] = frames[k];
  return c;
}

namespace {

// ET_EXEC modules (non-PIE executables) are keyed by absolute address;
// shared objects and PIE executables by offset from their base.
bool is_fixed_address_module(const char* path) {
  std::ifstream f(path, std::ios::binary);
  Elf64_Ehdr h{};
  if (!f.read(reinterpret_cast<char*>(&h), sizeof h)) return false;
  return std::memcmp(h.e_ident, ELFMAG, SELFMAG) == 0 && h.e_type == ET_EXEC;
}

std::string frame_key(void* pc) {
  Dl_info info{};
  if (dladdr(pc, &info) == 0 || info.dli_fname == nullptr) return "?" + plus_hex(reinterpret_cast<std::uintptr_t>(pc));
  std::uintptr_t base = reinterpret_cast<std::uintptr_t>(info.dli_fbase);
  std::string module = info.dli_fname;
  if (module.empty() || module.find('/') == std::string::npos) {
    // The main program is reported with an empty or relative name.
    char exe[4096];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) module.assign(exe, static_cast<std::size_t>(n));
  }
  if (is_fixed_address_module(module.c_str())) base = 0;
  return module + plus_hex(reinterpret_cast<std::uintptr_t>(pc) - base);
}

}  // namespace

std::string plus_hex(std::uintptr_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "+0x%zx", v);
  return buf;
}

std::string callsite_key(const CallSite& c) {
  std::string key;
  for (int i = 0; i < c.depth; ++i) key += (i ? ";" : "") + frame_key(c.pc[i]);
  return key;
}

bool parse_frame_key(const std::string& frame, std::string& module, std::uintptr_t& offset) {
  const auto plus = frame.rfind("+0x");
  if (plus == std::string::npos) return false;
  module = frame.substr(0, plus);
  offset = static_cast<std::uintptr_t>(std::strtoull(frame.c_str() + plus + 3, nullptr, 16));
  return true;
}

}  // namespace papshim
