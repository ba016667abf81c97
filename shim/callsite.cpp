#include "shim/callsite.h"

#include <dlfcn.h>
#include <elf.h>
#include <unistd.h>
#include <libunwind.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
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

// ET_EXEC modules (non-PIE executables) are addressed absolutely by
// addr2line; shared objects and PIE executables by offset from their base.
bool is_fixed_address_module(const char* path) {
  std::ifstream f(path, std::ios::binary);
  Elf64_Ehdr h{};
  if (!f.read(reinterpret_cast<char*>(&h), sizeof h)) return false;
  return std::memcmp(h.e_ident, ELFMAG, SELFMAG) == 0 && h.e_type == ET_EXEC;
}

std::string frame_key(void* pc) {
  Dl_info info{};
  if (dladdr(pc, &info) == 0 || info.dli_fname == nullptr) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "?+0x%zx", reinterpret_cast<std::uintptr_t>(pc));
    return buf;
  }
  std::uintptr_t base = reinterpret_cast<std::uintptr_t>(info.dli_fbase);
  std::string module = info.dli_fname;
  if (module.empty() || module.find('/') == std::string::npos) {
    // The main program is reported with an empty or relative name.
    char exe[4096];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) module.assign(exe, static_cast<std::size_t>(n));
  }
  if (is_fixed_address_module(module.c_str())) base = 0;
  char buf[64];
  std::snprintf(buf, sizeof buf, "+0x%zx", reinterpret_cast<std::uintptr_t>(pc) - base);
  return module + buf;
}

std::string basename_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Runs addr2line for the call instruction (return address - 1).
bool addr2line(const std::string& module, std::uintptr_t offset, std::string& func, std::string& file_line) {
  if (module.find_first_of("'\"$`\\") != std::string::npos) return false;
  char cmd[4352];
  std::snprintf(cmd, sizeof cmd, "addr2line -f -C -e '%s' 0x%zx 2>/dev/null", module.c_str(), offset - 1);
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd, "r"), pclose);
  if (!p) return false;
  char l1[1024] = {0}, l2[1024] = {0};
  if (!std::fgets(l1, sizeof l1, p.get()) || !std::fgets(l2, sizeof l2, p.get())) return false;
  l1[std::strcspn(l1, "\n")] = 0;
  l2[std::strcspn(l2, "\n")] = 0;
  func = l1;
  file_line = l2;
  if (file_line.rfind("??", 0) == 0) file_line.clear();
  if (const auto pos = file_line.find(" (discriminator"); pos != std::string::npos) file_line.resize(pos);
  return true;
}

// Function symbols of a module (nm), sorted by address, cached per module.
struct SymbolTable {
  std::map<std::uintptr_t, std::string> by_addr;
};

const SymbolTable& symbols_of(const std::string& module) {
  static std::map<std::string, SymbolTable> cache;
  auto [it, inserted] = cache.try_emplace(module);
  if (!inserted || module.find_first_of("'\"$`\\") != std::string::npos) return it->second;
  const std::string cmd = "nm -C --defined-only '" + module + "' 2>/dev/null; nm -D -C --defined-only '" + module + "' 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
  if (!p) return it->second;
  char line[2048];
  while (std::fgets(line, sizeof line, p.get())) {
    char* end = nullptr;
    const std::uintptr_t addr = std::strtoull(line, &end, 16);
    if (end == line || end[0] != ' ' || std::strchr("TtWi", end[1]) == nullptr || end[2] != ' ') continue;
    std::string name = end + 3;
    name.erase(name.find_last_not_of("\n") + 1);
    it->second.by_addr.emplace(addr, name);
  }
  return it->second;
}

// "function+0xoff" for the call instruction, or "" when no symbol covers it.
std::string symbol_with_offset(const std::string& module, std::uintptr_t offset) {
  const auto& t = symbols_of(module).by_addr;
  auto it = t.upper_bound(offset - 1);
  if (it == t.begin()) return "";
  --it;
  char off[32];
  std::snprintf(off, sizeof off, "+0x%zx", offset - it->first);
  return it->second + off;
}

}  // namespace

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

ResolvedSite resolve_callsite_key(const std::string& key) {
  ResolvedSite r;
  std::stringstream ss(key);
  std::string frame;
  bool first = true;
  while (std::getline(ss, frame, ';')) {
    std::string module, func, file_line;
    std::uintptr_t offset = 0;
    if (!parse_frame_key(frame, module, offset)) continue;
    char off[32];
    std::snprintf(off, sizeof off, "+0x%zx", offset);
    std::string fn = symbol_with_offset(module, offset);
    const bool have_line = addr2line(module, offset, func, file_line);
    if (fn.empty() && have_line && func != "??") fn = func;
    fn = fn.empty() ? basename_of(module) + off : fn + " (" + basename_of(module) + ")";
    r.function += (first ? "" : " < ") + fn;
    if (first) r.file_line = file_line;
    first = false;
  }
  return r;
}

}  // namespace papshim
