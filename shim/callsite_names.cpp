// Call-site keys back to function names and file:line, on the reporting
// rank (callsite.h, resolve_callsite_key).
#include "shim/callsite.h"

#include <cxxabi.h>
#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace papshim {

namespace {

std::string basename_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string dirname_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}


// ---- keys back to names, on the reporting rank -------------------------------
//
// Works as follows.  Rank 0 resolves the keys of every rank, so a module is
// read from the file its key names (rank 0 need not have loaded it), and
// inside this process: elfutils' libdwfl reads the file and no other
// program runs (a fork at MPI_Finalize is unsafe where the network has
// registered this process's memory).  The module is laid out at bias 0: a
// shared object or PIE executable with its first segment at 0, where its
// keys' offsets count from, a non-PIE executable at its link addresses,
// which its keys hold; so a key's offset is the address to look up either
// way.  The key holds a return address; the call instruction ends there, so
// names and lines are looked up at the return address - 1.
//
// The function is the nearest code symbol at or below the call, from the
// module's symbol tables as `nm -C` lists them: the code symbols (nm types
// T, t, W, i) of .symtab, then those of .dynsym with their version
// (name@@VERSION, or name@VERSION when not the default one); of symbols at
// one address, .symtab's come first, then the smallest name.  C++ names are
// demangled; "+0xoff" is the return address's distance from the symbol.
// The file and line are those of the DWARF line table's row for the call,
// in the module or in its separate debug file (find_local_debuginfo);
// without DWARF there, "file:?" with the source file .symtab gives the
// symbol, as binutils' addr2line answers.  A call no symbol precedes is
// named by its DWARF function, if any.
//
// Each module is opened once and each frame resolved once (its line only
// for a key's first frame, the one the report shows); both stay until the
// process exits.

// Demangled as `nm -C` shows it: a C++ name ("_Z...") demangled, any
// @VERSION suffix kept.  Other names are left alone (__cxa_demangle would
// read a C function "d" as the type double).
std::string display_name(const std::string& name) {
  const auto at = name.find('@');
  const std::string bare = name.substr(0, at);
  if (bare.rfind("_Z", 0) != 0) return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(bare.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || d == nullptr) return name;
  return std::string(d.get()) + (at == std::string::npos ? "" : name.substr(at));
}

// The first section of `type`; with `linked_to`, the first whose sh_link
// is that section.
Elf_Scn* find_section(Elf* elf, GElf_Word type, Elf_Scn* linked_to = nullptr) {
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) != nullptr && sh.sh_type == type &&
        (linked_to == nullptr || sh.sh_link == elf_ndxscn(linked_to)))
      return scn;
  }
  return nullptr;
}

// Whether `nm --defined-only` lists the symbol as code: an indirect
// function (i), a weak symbol that is not an object (W), or a global or
// local one in an executable section (T, t).
bool listed_as_code(Elf* elf, const GElf_Sym& s, GElf_Word shndx) {
  const int type = GELF_ST_TYPE(s.st_info), bind = GELF_ST_BIND(s.st_info);
  if (type == STT_SECTION || type == STT_FILE || s.st_shndx == SHN_UNDEF || s.st_shndx == SHN_COMMON) return false;
  if (type == STT_GNU_IFUNC) return true;
  if (bind == STB_WEAK) return type != STT_OBJECT && type != STT_COMMON;
  if (bind != STB_GLOBAL && bind != STB_LOCAL) return false;
  if (s.st_shndx == SHN_ABS || (s.st_shndx >= SHN_LORESERVE && s.st_shndx != SHN_XINDEX)) return false;
  Elf_Scn* scn = elf_getscn(elf, shndx);
  GElf_Shdr sh;
  return scn != nullptr && gelf_getshdr(scn, &sh) != nullptr && (sh.sh_flags & SHF_EXECINSTR) != 0;
}

// The names of the versions a shared object defines (.gnu.version_d), by
// version index.
std::map<unsigned, std::string> version_names(Elf* elf) {
  std::map<unsigned, std::string> names;
  Elf_Scn* scn = find_section(elf, SHT_GNU_verdef);
  GElf_Shdr sh;
  Elf_Data* data = scn != nullptr ? elf_getdata(scn, nullptr) : nullptr;
  if (data == nullptr || gelf_getshdr(scn, &sh) == nullptr) return names;
  int offset = 0;
  for (GElf_Word i = 0; i < sh.sh_info; ++i) {
    GElf_Verdef def;
    GElf_Verdaux aux;
    if (gelf_getverdef(data, offset, &def) == nullptr ||
        gelf_getverdaux(data, offset + static_cast<int>(def.vd_aux), &aux) == nullptr)
      break;
    if (const char* name = elf_strptr(elf, sh.sh_link, aux.vda_name)) names[def.vd_ndx] = name;
    if (def.vd_next == 0) break;
    offset += static_cast<int>(def.vd_next);
  }
  return names;
}

// Whether the ELF file open as `fd` has the build id `id` (any file has
// an empty one).
bool has_build_id(int fd, const std::string& id) {
  if (id.empty()) return true;
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  const void* bits = nullptr;
  const ssize_t n = elf != nullptr ? dwelf_elf_gnu_build_id(elf, &bits) : -1;
  const bool same = n > 0 && std::string(static_cast<const char*>(bits), static_cast<std::size_t>(n)) == id;
  if (elf != nullptr) elf_end(elf);
  return same;
}

// libdwfl's find_debuginfo callback: a module's separate debug file, looked
// for on this machine only, as binutils does: by build id under
// /usr/lib/debug/.build-id, then by the .gnu_debuglink name next to the
// module, in its .debug directory and under /usr/lib/debug (the file found
// by name must have the module's build id).  libdwfl asks again, with
// another name than the module's debuglink, for the file that dwz moved
// DWARF shared between modules to (.gnu_debugaltlink: an absolute path,
// or one relative to the debug file).  Never from a debuginfod server: a
// download at MPI_Finalize may take minutes, or wait for a network that
// compute nodes do not have.
int find_local_debuginfo(Dwfl_Module* mod, void** /*userdata*/, const char* /*modname*/, GElf_Addr /*base*/,
                         const char* file_name, const char* link, GElf_Word /*crc*/, char** found) {
  const unsigned char* bits = nullptr;
  GElf_Addr id_at = 0;
  const int n = dwfl_module_build_id(mod, &bits, &id_at);
  const std::string id = n > 0 ? std::string(reinterpret_cast<const char*>(bits), static_cast<std::size_t>(n)) : "";
  GElf_Addr bias = 0;
  GElf_Word crc = 0;
  Elf* elf = dwfl_module_getelf(mod, &bias);
  const char* own_link = elf != nullptr ? dwelf_elf_gnu_debuglink(elf, &crc) : nullptr;
  const bool alt = link != nullptr && (own_link == nullptr || std::strcmp(own_link, link) != 0);
  const std::string file = file_name != nullptr ? file_name : "", dir = dirname_of(file);
  std::vector<std::pair<std::string, bool>> candidates;  // path, whether its build id must be the module's
  if (alt) {
    candidates.emplace_back(link[0] == '/' ? std::string(link) : dir + "/" + link, false);
  } else {
    if (id.size() >= 2) {
      std::string path = "/usr/lib/debug/.build-id/";
      char hex[3];
      for (std::size_t i = 0; i < id.size(); ++i) {
        std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(id[i]));
        path += (i == 1 ? "/" : "") + std::string(hex);
      }
      candidates.emplace_back(path + ".debug", false);
    }
    if (link != nullptr)
      for (const std::string& d : {dir, dir + "/.debug", "/usr/lib/debug" + dir}) candidates.emplace_back(d + "/" + link, true);
  }
  for (const auto& [path, check] : candidates) {
    if (path == file) continue;
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    if (!check || has_build_id(fd, id)) {
      *found = strdup(path.c_str());
      return fd;
    }
    close(fd);
  }
  return -1;
}

// libdwfl's find_elf callback, never needed: every module is reported
// with its file.
int no_other_elf(Dwfl_Module* /*mod*/, void** /*userdata*/, const char* /*modname*/, Dwarf_Addr /*base*/,
                 char** /*file_name*/, Elf** /*elf*/) {
  return -1;
}

// One module file: its code symbols and its DWARF.
class Module {
 public:
  explicit Module(const std::string& path) {
    static const Dwfl_Callbacks callbacks = {no_other_elf, find_local_debuginfo, dwfl_offline_section_address, nullptr};
    dwfl_ = dwfl_begin(&callbacks);
    if (dwfl_ == nullptr) return;
    dwfl_report_begin(dwfl_);
    mod_ = dwfl_report_elf(dwfl_, basename_of(path).c_str(), path.c_str(), -1, 0, false);
    dwfl_report_end(dwfl_, nullptr, nullptr);
    GElf_Addr bias = 0;
    if (Elf* elf = mod_ != nullptr ? dwfl_module_getelf(mod_, &bias) : nullptr) read_symbols(elf, bias);
  }
  ~Module() {
    if (dwfl_ != nullptr) dwfl_end(dwfl_);
  }
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // "name+0xoff" for the return address `ret`, the DWARF function's name
  // when no symbol precedes the call, or "".
  std::string function_at(GElf_Addr ret) const {
    if (const Symbol* s = symbol_before(ret)) return display_name(s->name) + plus_hex(ret - s->addr);
    return dwarf_function_at(ret - 1);
  }

  // "file:line" of the call before `ret` ("file:?" for a row without a
  // line); without a row, "file:?" with the source file .symtab gives the
  // symbol (binutils' answer); else "".
  std::string file_line_at(GElf_Addr ret) const {
    Dwarf_Addr bias = 0;
    Dwfl_Line* row = unit_at(ret - 1, bias) != nullptr ? dwfl_module_getsrc(mod_, ret - 1) : nullptr;
    int line = 0;
    const char* file = row != nullptr ? dwfl_lineinfo(row, nullptr, &line, nullptr, nullptr, nullptr) : nullptr;
    if (file != nullptr) return std::string(file) + ":" + (line > 0 ? std::to_string(line) : "?");
    const Symbol* s = symbol_before(ret);
    return s != nullptr && s->file != nullptr ? std::string(s->file) + ":?" : "";
  }

 private:
  struct Symbol {
    GElf_Addr addr;
    bool dynamic;         // from .dynsym
    std::size_t index;    // in its table
    std::string name;     // as nm shows it: with @VERSION or @@VERSION
    std::size_t raw;      // the length of the name in the table
    const char* file;     // the source file, or null (in the module's string table)
  };

  // The symbol naming the call before `ret`, or null.
  const Symbol* symbol_before(GElf_Addr ret) const {
    const auto above = std::upper_bound(symbols_.begin(), symbols_.end(), ret - 1,
                                        [](GElf_Addr a, const Symbol& s) { return a < s.addr; });
    return above == symbols_.begin() ? nullptr : &*std::prev(above);
  }

  // The compilation unit whose own address ranges hold `pc`, or null.
  // libdwfl's lookup also takes the unit of the nearest range below an
  // address outside every unit (code built without -g, such as crtstuff)
  // and would give it that unit's last line.
  Dwarf_Die* unit_at(GElf_Addr pc, Dwarf_Addr& bias) const {
    Dwarf_Die* cu = mod_ != nullptr ? dwfl_module_addrdie(mod_, pc, &bias) : nullptr;
    return cu != nullptr && dwarf_haspc(cu, pc - bias) > 0 ? cu : nullptr;
  }

  // One address, one symbol: .symtab's before .dynsym's, then by name as
  // nm sorts them (without the version), then the first in the table.
  void read_symbols(Elf* elf, GElf_Addr bias) {
    if (Elf_Scn* symtab = find_section(elf, SHT_SYMTAB)) add_symbols(elf, symtab, false, bias);
    if (Elf_Scn* dynsym = find_section(elf, SHT_DYNSYM)) add_symbols(elf, dynsym, true, bias);
    std::sort(symbols_.begin(), symbols_.end(), [](const Symbol& a, const Symbol& b) {
      if (a.addr != b.addr || a.dynamic != b.dynamic) return std::tie(a.addr, a.dynamic) < std::tie(b.addr, b.dynamic);
      const int by_name = a.name.compare(0, a.raw, b.name, 0, b.raw);
      return by_name != 0 ? by_name < 0 : a.index < b.index;
    });
    symbols_.erase(std::unique(symbols_.begin(), symbols_.end(),
                               [](const Symbol& a, const Symbol& b) { return a.addr == b.addr; }),
                   symbols_.end());
  }

  // The code symbols of one table.  The source file of a .symtab symbol,
  // as binutils tells it: the STT_FILE symbol before it, for a global one
  // only while no STT_FILE has followed another symbol.
  void add_symbols(Elf* elf, Elf_Scn* table, bool dynamic, GElf_Addr bias) {
    GElf_Shdr sh;
    Elf_Data* data = elf_getdata(table, nullptr);
    if (data == nullptr || gelf_getshdr(table, &sh) == nullptr || sh.sh_entsize == 0) return;
    Elf_Scn* xndx_scn = find_section(elf, SHT_SYMTAB_SHNDX, table);
    Elf_Data* xndx = xndx_scn != nullptr ? elf_getdata(xndx_scn, nullptr) : nullptr;
    Elf_Scn* versym_scn = dynamic ? find_section(elf, SHT_GNU_versym, table) : nullptr;
    Elf_Data* versym = versym_scn != nullptr ? elf_getdata(versym_scn, nullptr) : nullptr;
    const auto versions = versym != nullptr ? version_names(elf) : std::map<unsigned, std::string>();
    const char* file = nullptr;
    bool symbol_seen = false, file_after_symbol = false;
    const std::size_t count = sh.sh_size / sh.sh_entsize;
    for (std::size_t i = 1; i < count; ++i) {
      GElf_Sym s;
      GElf_Word shndx = 0;
      if (gelf_getsymshndx(data, xndx, static_cast<int>(i), &s, &shndx) == nullptr) continue;
      if (s.st_shndx != SHN_XINDEX) shndx = s.st_shndx;
      const char* name = elf_strptr(elf, sh.sh_link, s.st_name);
      if (GELF_ST_TYPE(s.st_info) == STT_FILE) {
        file = name != nullptr && *name != '\0' ? name : nullptr;
        file_after_symbol = file_after_symbol || symbol_seen;
        continue;
      }
      symbol_seen = true;
      if (!listed_as_code(elf, s, shndx) || name == nullptr || *name == '\0') continue;
      Symbol sym{s.st_value + bias, dynamic, i, name, std::strlen(name), nullptr};
      if (!dynamic && (GELF_ST_BIND(s.st_info) == STB_LOCAL || !file_after_symbol)) sym.file = file;
      GElf_Versym v = 0;
      if (versym != nullptr && gelf_getversym(versym, static_cast<int>(i), &v) != nullptr) {
        // The low 15 bits: the version index (local and global ones, and
        // the base version, add nothing); the top bit: not the default.
        const auto it = versions.find(v & 0x7fffu);
        if (it != versions.end() && it->first > VER_NDX_GLOBAL) sym.name += ((v & 0x8000u) != 0 ? "@" : "@@") + it->second;
      }
      symbols_.push_back(std::move(sym));
    }
  }

  // The innermost function (inlined or not) around `pc` in DWARF: its
  // linkage name demangled, else its name.
  std::string dwarf_function_at(GElf_Addr pc) const {
    Dwarf_Addr bias = 0;
    Dwarf_Die* cu = unit_at(pc, bias);
    Dwarf_Die* scopes = nullptr;
    const int n = cu != nullptr ? dwarf_getscopes(cu, pc - bias, &scopes) : 0;
    std::string name;
    for (int i = 0; i < n && name.empty(); ++i) {
      const int tag = dwarf_tag(&scopes[i]);
      if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine) continue;
      Dwarf_Attribute attr;
      for (const unsigned at : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name}) {
        if (const char* s = dwarf_formstring(dwarf_attr_integrate(&scopes[i], at, &attr))) {
          name = display_name(s);
          break;
        }
      }
    }
    std::free(scopes);
    return name;
  }

  Dwfl* dwfl_ = nullptr;
  Dwfl_Module* mod_ = nullptr;
  std::vector<Symbol> symbols_;  // by address, one per address
};

// One frame as the report shows it: "function+0xoff (module)", or
// "module+0xoffset" when nothing names it; its file:line when `want_line`.
ResolvedSite resolve_frame(const std::string& frame, const std::string& module, std::uintptr_t offset,
                           bool want_line) {
  struct Frame {
    ResolvedSite site;
    bool line_known = false;
  };
  static std::map<std::string, std::unique_ptr<Module>> modules;
  static std::unordered_map<std::string, Frame> frames;
  std::unique_ptr<Module>& m = modules[module];
  if (m == nullptr) m = std::make_unique<Module>(module);
  auto [it, inserted] = frames.try_emplace(frame);
  Frame& f = it->second;
  if (inserted) {
    const std::string fn = m->function_at(offset);
    f.site.function = fn.empty() ? basename_of(module) + plus_hex(offset) : fn + " (" + basename_of(module) + ")";
  }
  if (want_line && !f.line_known) {
    f.site.file_line = m->file_line_at(offset);
    f.line_known = true;
  }
  return f.site;
}

}  // namespace

ResolvedSite resolve_callsite_key(const std::string& key) {
  static std::mutex mu;  // over the caches of resolve_frame
  const std::lock_guard<std::mutex> lock(mu);
  ResolvedSite r;
  std::stringstream ss(key);
  std::string frame;
  bool first = true;
  while (std::getline(ss, frame, ';')) {
    std::string module;
    std::uintptr_t offset = 0;
    if (!parse_frame_key(frame, module, offset)) continue;
    const ResolvedSite f = resolve_frame(frame, module, offset, first);
    r.function += (first ? "" : " < ") + f.function;
    if (first) r.file_line = f.file_line;
    first = false;
  }
  return r;
}

}  // namespace papshim
