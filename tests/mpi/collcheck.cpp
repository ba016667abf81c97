// collcheck - MPI-level correctness checker for MPI_Allreduce, MPI_Reduce and
// MPI_Allgather.
//
// Every call of a collective under test is compared with the same operation
// performed through the profiling entry points (PMPI_Allreduce, PMPI_Reduce,
// PMPI_Allgather), which an interposition library does not intercept. Run
// without any interposition, the program checks the MPI library against
// itself and must pass.
//
// For every check:
//   * the result bytes must equal the bytes of the PMPI reference;
//   * the holes of the datatype (gaps inside its extent) and guard bytes
//     before and after the receive buffer must be untouched;
//   * the send buffer must be unchanged;
//   * on non-root ranks of MPI_Reduce, a non-NULL receive buffer must be
//     untouched;
//   * user-defined operations must only be called with the datatype of the call.
//
// Input values are chosen so that every reduction order produces the same bits
// (small integers, also in floating point; products of factors in {-1, 1, 2,
// 1/2} with a bounded number of non-unit factors; unsigned types that wrap),
// so any correct algorithm matches PMPI exactly. The two non-commutative user
// operations are exact in integer arithmetic modulo 2^32; their answer is
// defined by rank order and therefore by the reference.
//
// Before each call under test every rank sleeps according to an arrival
// pattern (all together, random, one late rank, one early rank, staggered by
// rank), seeded and different per rank and per call.
//
// The grid (tables at the end of the file): every case (type x op, or
// send/recv type pair for allgather) x every count class up to the case's
// tier x communicator (world, reversed split, odd/even split, dup, self) x
// variant (in place or not; for reduce also every root and receive-buffer
// mode). --quick keeps every case but fewer communicators, counts and
// variants per case.
//
// Usage: collcheck [--ops allreduce,reduce,allgather] [--quick] [--max-count N]
//                  [--seed S] [--iters K] [--delay-us MAX] [--dry-run] [--verbose]
// Rank 0 prints one summary line; each rank prints its first failures (with
// all parameters) to stderr. Exit status: 0 all checks passed, 1 some check
// failed, 2 bad arguments or internal error.

// Only the C bindings are used.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

namespace {

// ===========================================================================
// Options
// ===========================================================================

struct Options {
  bool runAllreduce = true;
  bool runReduce = true;
  bool runAllgather = true;
  bool quick = false;
  bool dryRun = false;   // only count the checks of the plan
  bool verbose = false;  // one line per sweep on rank 0
  long long maxCount = 1 << 20;
  uint64_t seed = 1;
  int iters = 1;
  int delayUs = 2000;
};

const char kUsage[] =
    "usage: collcheck [options]\n"
    "  --ops LIST       collectives to check, comma separated:\n"
    "                   allreduce,reduce,allgather (default: all three)\n"
    "  --quick          smaller grid (for large process counts)\n"
    "  --max-count N    skip counts larger than N (default 1048576)\n"
    "  --seed S         seed of the data and of the delays (default 1)\n"
    "  --iters K        run the whole grid K times (default 1)\n"
    "  --delay-us MAX   largest arrival delay before a call, in microseconds;\n"
    "                   0 disables the delays (default 2000)\n"
    "  --dry-run        print the number of checks of the plan and exit\n"
    "  --verbose        print one line per sweep\n"
    "environment: COLLCHECK_TRACE=1 prints every reduce case before it runs\n"
    "(to find the case that crashes an MPI library)\n";

bool parse_long(const std::string& s, long long& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 0);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

// Returns an empty string on success, otherwise an error message.
std::string parse_options(int argc, char** argv, Options& opt) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool hasValue = false;
    const size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      hasValue = true;
    }
    auto next_value = [&](std::string& out) {
      if (hasValue) {
        out = value;
        return true;
      }
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    auto number = [&](long long lo, long long hi, long long& out) -> std::string {
      std::string text;
      if (!next_value(text)) return "missing value for " + arg;
      if (!parse_long(text, out) || out < lo || out > hi) return "bad value for " + arg + ": " + text;
      return "";
    };
    long long n = 0;
    std::string err;
    if (arg == "--ops") {
      std::string list;
      if (!next_value(list)) return "missing value for --ops";
      opt.runAllreduce = opt.runReduce = opt.runAllgather = false;
      size_t pos = 0;
      while (pos <= list.size()) {
        const size_t comma = std::min(list.find(',', pos), list.size());
        const std::string name = list.substr(pos, comma - pos);
        if (name == "allreduce") opt.runAllreduce = true;
        else if (name == "reduce") opt.runReduce = true;
        else if (name == "allgather") opt.runAllgather = true;
        else if (!name.empty()) return "unknown collective in --ops: " + name;
        pos = comma + 1;
      }
    } else if (arg == "--quick") {
      opt.quick = true;
    } else if (arg == "--dry-run") {
      opt.dryRun = true;
    } else if (arg == "--verbose") {
      opt.verbose = true;
    } else if (arg == "--max-count") {
      if (!(err = number(0, INT32_MAX, n)).empty()) return err;
      opt.maxCount = n;
    } else if (arg == "--seed") {
      if (!(err = number(0, INT64_MAX, n)).empty()) return err;
      opt.seed = static_cast<uint64_t>(n);
    } else if (arg == "--iters") {
      if (!(err = number(1, 1000000, n)).empty()) return err;
      opt.iters = static_cast<int>(n);
    } else if (arg == "--delay-us") {
      if (!(err = number(0, 10000000, n)).empty()) return err;
      opt.delayUs = static_cast<int>(n);
    } else if (arg == "--help" || arg == "-h") {
      return "help";
    } else {
      return std::string("unknown option: ") + argv[i];
    }
  }
  return "";
}

// ===========================================================================
// Deterministic pseudo-random numbers
// ===========================================================================

uint64_t mix64(uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t hash2(uint64_t a, uint64_t b) { return mix64(a ^ mix64(b + 0x632be59bd9b4e019ULL)); }

// ===========================================================================
// Datatypes
// ===========================================================================

// The kind of value stored in one "slot" of an element.
enum class Base { U8, I16, I32, I64, U64, F32, F64, PairInt, PairFloat, PairDouble };

enum TypeId {
  T_INT,
  T_FLOAT,
  T_DOUBLE,
  T_LONG_LONG,
  T_UNSIGNED_CHAR,
  T_SHORT,
  T_UINT64,
  T_2INT,
  T_FLOAT_INT,
  T_DOUBLE_INT,
  T_CONTIG3,        // MPI_Type_contiguous(3, MPI_INT)
  T_VECTOR,         // MPI_Type_vector(2, 1, 2, MPI_INT): extent 12, hole at bytes 4..7
  T_VECTOR_PADDED,  // the vector resized to extent 16: holes at 4..7 and 12..15
  T_MAT2X2,         // MPI_Type_contiguous(4, MPI_INT), a row-major 2x2 matrix
  T_NUM_TYPES
};

struct PairII { int v; int i; };
struct PairFI { float v; int i; };
struct PairDI { double v; int i; };

struct Field {
  size_t off;
  size_t size;
};

// The bytes of one slot that carry data (the rest of a pair struct is padding).
std::vector<Field> base_fields(Base b) {
  switch (b) {
    case Base::U8: return {{0, 1}};
    case Base::I16: return {{0, 2}};
    case Base::I32:
    case Base::F32: return {{0, 4}};
    case Base::I64:
    case Base::U64:
    case Base::F64: return {{0, 8}};
    case Base::PairInt: return {{offsetof(PairII, v), 4}, {offsetof(PairII, i), 4}};
    case Base::PairFloat: return {{offsetof(PairFI, v), 4}, {offsetof(PairFI, i), 4}};
    case Base::PairDouble: return {{offsetof(PairDI, v), 8}, {offsetof(PairDI, i), 4}};
  }
  return {};
}

struct TypeInfo {
  const char* name = "";
  MPI_Datatype dt = MPI_DATATYPE_NULL;
  Base base = Base::I32;
  std::vector<size_t> slots;        // byte offset of each slot inside one element
  size_t extent = 0;
  std::vector<unsigned char> mask;  // per byte of one extent: 1 = data, 0 = hole
  bool hasHoles = false;
  std::vector<size_t> words;        // offsets of the 32-bit integers user ops act on
};

std::vector<TypeInfo> g_types(T_NUM_TYPES);

[[noreturn]] void fatal(const std::string& msg) {
  std::fprintf(stderr, "collcheck: internal error: %s\n", msg.c_str());
  std::fflush(stderr);
  PMPI_Abort(MPI_COMM_WORLD, 2);
  std::abort();
}

void add_type(TypeId id, const char* name, MPI_Datatype dt, Base base, std::vector<size_t> slots) {
  TypeInfo t;
  t.name = name;
  t.dt = dt;
  t.base = base;
  t.slots = std::move(slots);
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_get_extent(dt, &lb, &extent);
  if (lb != 0) fatal(std::string("lower bound is not 0 for ") + name);
  t.extent = static_cast<size_t>(extent);
  t.mask.assign(t.extent, 0);
  size_t dataBytes = 0;
  for (size_t s : t.slots) {
    for (const Field& f : base_fields(base)) {
      std::memset(&t.mask[s + f.off], 1, f.size);
      dataBytes += f.size;
    }
  }
  int size = 0;
  MPI_Type_size(dt, &size);
  if (static_cast<size_t>(size) != dataBytes) fatal(std::string("unexpected type size for ") + name);
  t.hasHoles = dataBytes != t.extent;
  if (base == Base::I32) t.words = t.slots;
  if (base == Base::PairInt) {
    for (size_t s : t.slots) {
      t.words.push_back(s + offsetof(PairII, v));
      t.words.push_back(s + offsetof(PairII, i));
    }
  }
  g_types[id] = std::move(t);
}

MPI_Datatype commit(MPI_Datatype dt) {
  MPI_Type_commit(&dt);
  return dt;
}

void create_types() {
  add_type(T_INT, "MPI_INT", MPI_INT, Base::I32, {0});
  add_type(T_FLOAT, "MPI_FLOAT", MPI_FLOAT, Base::F32, {0});
  add_type(T_DOUBLE, "MPI_DOUBLE", MPI_DOUBLE, Base::F64, {0});
  add_type(T_LONG_LONG, "MPI_LONG_LONG", MPI_LONG_LONG, Base::I64, {0});
  add_type(T_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, Base::U8, {0});
  add_type(T_SHORT, "MPI_SHORT", MPI_SHORT, Base::I16, {0});
  add_type(T_UINT64, "MPI_UINT64_T", MPI_UINT64_T, Base::U64, {0});
  add_type(T_2INT, "MPI_2INT", MPI_2INT, Base::PairInt, {0});
  add_type(T_FLOAT_INT, "MPI_FLOAT_INT", MPI_FLOAT_INT, Base::PairFloat, {0});
  add_type(T_DOUBLE_INT, "MPI_DOUBLE_INT", MPI_DOUBLE_INT, Base::PairDouble, {0});

  MPI_Datatype contig3, vec, vecPadded, mat;
  MPI_Type_contiguous(3, MPI_INT, &contig3);
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
  MPI_Type_create_resized(vec, 0, 16, &vecPadded);
  MPI_Type_contiguous(4, MPI_INT, &mat);
  add_type(T_CONTIG3, "contig(3,INT)", commit(contig3), Base::I32, {0, 4, 8});
  add_type(T_VECTOR, "vector(2,1,2,INT)", commit(vec), Base::I32, {0, 8});
  add_type(T_VECTOR_PADDED, "resized(vector(2,1,2,INT),16)", commit(vecPadded), Base::I32, {0, 8});
  add_type(T_MAT2X2, "mat2x2(contig(4,INT))", commit(mat), Base::I32, {0, 4, 8, 12});
}

void free_types() {
  for (TypeId id : {T_CONTIG3, T_VECTOR, T_VECTOR_PADDED, T_MAT2X2}) MPI_Type_free(&g_types[id].dt);
}

// ===========================================================================
// Operations
// ===========================================================================

enum OpId {
  O_SUM,
  O_PROD,
  O_MAX,
  O_MIN,
  O_LAND,
  O_LOR,
  O_LXOR,
  O_BAND,
  O_BOR,
  O_BXOR,
  O_MINLOC,
  O_MAXLOC,
  O_USER_COMM,    // x.y = x + y + xy (mod 2^32) on every int word; commutative
  O_USER_AFFINE,  // composition of affine maps x -> a x + b (mod 2^32); not commutative
  O_USER_MATMUL,  // 2x2 integer matrix product (mod 2^32); not commutative
  O_NONE,         // no operation (allgather data)
  O_NUM_OPS
};

struct OpInfo {
  const char* name;
  MPI_Op op;
};

std::vector<OpInfo> g_ops(O_NUM_OPS, OpInfo{"", MPI_OP_NULL});

// The datatype of the reduction in progress, and the number of calls of a
// user operation with any other datatype (or one it cannot handle).
MPI_Datatype g_callDatatype = MPI_DATATYPE_NULL;
long long g_userOpMisuse = 0;

uint32_t load32(const unsigned char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

void store32(unsigned char* p, uint32_t v) { std::memcpy(p, &v, 4); }

// The integer type a user operation was called with, or nullptr (and a
// recorded misuse) if it is not the datatype of the call or does not have
// 'words' integer words per element (0: any number).
const TypeInfo* user_op_type(MPI_Datatype dt, size_t words) {
  if (dt == g_callDatatype) {
    for (const TypeInfo& t : g_types) {
      if (t.dt == dt && !t.words.empty() && (words == 0 || t.words.size() == words)) return &t;
    }
  }
  ++g_userOpMisuse;
  return nullptr;
}

void user_comm_fn(void* in, void* inout, int* len, MPI_Datatype* dt) {
  const TypeInfo* t = user_op_type(*dt, 0);
  if (t == nullptr) return;
  const auto* a = static_cast<const unsigned char*>(in);
  auto* b = static_cast<unsigned char*>(inout);
  for (int e = 0; e < *len; ++e) {
    for (size_t w : t->words) {
      const size_t off = static_cast<size_t>(e) * t->extent + w;
      const uint32_t x = load32(a + off), y = load32(b + off);
      store32(b + off, x + y + x * y);
    }
  }
}

// Element (a, b) is the map x -> a x + b; inout = in o inout.
void user_affine_fn(void* in, void* inout, int* len, MPI_Datatype* dt) {
  const TypeInfo* t = user_op_type(*dt, 2);
  if (t == nullptr) return;
  const auto* p = static_cast<const unsigned char*>(in);
  auto* q = static_cast<unsigned char*>(inout);
  for (int e = 0; e < *len; ++e) {
    const size_t base = static_cast<size_t>(e) * t->extent;
    const uint32_t a1 = load32(p + base + t->words[0]), b1 = load32(p + base + t->words[1]);
    const uint32_t a2 = load32(q + base + t->words[0]), b2 = load32(q + base + t->words[1]);
    store32(q + base + t->words[0], a1 * a2);
    store32(q + base + t->words[1], a1 * b2 + b1);
  }
}

// Element is a row-major 2x2 matrix; inout = in * inout.
void user_matmul_fn(void* in, void* inout, int* len, MPI_Datatype* dt) {
  const TypeInfo* t = user_op_type(*dt, 4);
  if (t == nullptr) return;
  const auto* p = static_cast<const unsigned char*>(in);
  auto* q = static_cast<unsigned char*>(inout);
  for (int e = 0; e < *len; ++e) {
    const size_t base = static_cast<size_t>(e) * t->extent;
    uint32_t x[4], y[4];
    for (int k = 0; k < 4; ++k) {
      x[k] = load32(p + base + t->words[k]);
      y[k] = load32(q + base + t->words[k]);
    }
    store32(q + base + t->words[0], x[0] * y[0] + x[1] * y[2]);
    store32(q + base + t->words[1], x[0] * y[1] + x[1] * y[3]);
    store32(q + base + t->words[2], x[2] * y[0] + x[3] * y[2]);
    store32(q + base + t->words[3], x[2] * y[1] + x[3] * y[3]);
  }
}

void create_ops() {
  g_ops[O_SUM] = {"MPI_SUM", MPI_SUM};
  g_ops[O_PROD] = {"MPI_PROD", MPI_PROD};
  g_ops[O_MAX] = {"MPI_MAX", MPI_MAX};
  g_ops[O_MIN] = {"MPI_MIN", MPI_MIN};
  g_ops[O_LAND] = {"MPI_LAND", MPI_LAND};
  g_ops[O_LOR] = {"MPI_LOR", MPI_LOR};
  g_ops[O_LXOR] = {"MPI_LXOR", MPI_LXOR};
  g_ops[O_BAND] = {"MPI_BAND", MPI_BAND};
  g_ops[O_BOR] = {"MPI_BOR", MPI_BOR};
  g_ops[O_BXOR] = {"MPI_BXOR", MPI_BXOR};
  g_ops[O_MINLOC] = {"MPI_MINLOC", MPI_MINLOC};
  g_ops[O_MAXLOC] = {"MPI_MAXLOC", MPI_MAXLOC};
  g_ops[O_USER_COMM] = {"user-commutative(x+y+xy)", MPI_OP_NULL};
  g_ops[O_USER_AFFINE] = {"user-noncommutative(affine-compose)", MPI_OP_NULL};
  g_ops[O_USER_MATMUL] = {"user-noncommutative(matmul2x2)", MPI_OP_NULL};
  g_ops[O_NONE] = {"-", MPI_OP_NULL};
  MPI_Op_create(user_comm_fn, 1, &g_ops[O_USER_COMM].op);
  MPI_Op_create(user_affine_fn, 0, &g_ops[O_USER_AFFINE].op);
  MPI_Op_create(user_matmul_fn, 0, &g_ops[O_USER_MATMUL].op);
}

void free_ops() {
  for (OpId id : {O_USER_COMM, O_USER_AFFINE, O_USER_MATMUL}) MPI_Op_free(&g_ops[id].op);
}

// ===========================================================================
// Input values: exact under any reduction order
// ===========================================================================

// An integer value (its low 'bits' bits are stored) for op 'op'.
// h: random bits of the slot; g: logical index of the slot; rank: rank in the
// communicator.
uint64_t int_value(OpId op, int bits, bool isSigned, uint64_t h, uint64_t g, int rank) {
  switch (op) {
    case O_SUM: {
      if (!isSigned) return h;  // wraps modulo 2^bits, any order gives the same
      const int64_t span = bits == 16 ? 100 : bits == 32 ? (int64_t{1} << 20) : (int64_t{1} << 50);
      return static_cast<uint64_t>(static_cast<int64_t>(h % static_cast<uint64_t>(2 * span + 1)) - span);
    }
    case O_PROD: {
      if (!isSigned) return (g & 1) ? (h | 1) : h;  // wraps
      // Factors -1, 1 and 2, where 2 is only used by the first bits-3 ranks:
      // the product never exceeds 2^(bits-3) in magnitude.
      switch (h % 4) {
        case 0: return static_cast<uint64_t>(int64_t{-1});
        case 3: return rank < bits - 3 ? 2 : static_cast<uint64_t>(int64_t{-1});
        default: return 1;
      }
    }
    case O_LAND:
    case O_LOR:
    case O_LXOR: {
      // Per-position zero probability 1/16, 1/2 or 15/16, so that LAND and
      // LOR results are neither always true nor always false.
      static const unsigned kZeroOutOf16[3] = {1, 8, 15};
      if ((h & 15) < kZeroOutOf16[g % 3]) return 0;
      const int64_t v = static_cast<int64_t>((h >> 8) % 5) + 1;
      return static_cast<uint64_t>(isSigned && ((h >> 16) & 1) ? -v : v);
    }
    case O_BAND: return ~(uint64_t{1} << (h % static_cast<uint64_t>(bits)));  // mostly ones
    case O_BOR: return uint64_t{1} << (h % static_cast<uint64_t>(bits));     // mostly zeros
    default: return h;  // MAX, MIN, BXOR, user ops, allgather: any bits
  }
}

// A floating-point value that is exactly representable and keeps SUM/PROD exact.
double float_value(OpId op, bool isDouble, uint64_t h, int rank) {
  switch (op) {
    case O_SUM:
      // Multiples of 1/8: |sum| stays far below 2^(mantissa bits) / 8.
      if (isDouble) return static_cast<double>(static_cast<int64_t>(h % ((uint64_t{1} << 31) + 1)) - (int64_t{1} << 30)) / 8.0;
      return static_cast<double>(static_cast<int64_t>(h % 2049) - 1024) / 8.0;
    case O_PROD: {
      // Factors -1, 1, 2 and 1/2; 2 and 1/2 only on the first 100 ranks.
      const bool scale = rank < 100;
      switch (h % 5) {
        case 0: return -1.0;
        case 1: return scale ? 2.0 : 1.0;
        case 2: return scale ? 0.5 : -1.0;
        default: return 1.0;
      }
    }
    default:  // MAX, MIN, allgather: exactly representable, no -0.0, no NaN
      if (isDouble) return static_cast<double>(static_cast<int64_t>(h) >> 11) / 4.0;
      return static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(h)) >> 8) / 4.0;
  }
}

template <typename T>
void put(unsigned char* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

void store_value(unsigned char* p, Base base, OpId op, uint64_t h, uint64_t g, int rank) {
  const bool loc = op == O_MINLOC || op == O_MAXLOC;
  // Pairs for MINLOC/MAXLOC: few distinct values and indices, so ties occur.
  const int locValue = static_cast<int>(h % 4);
  const int locIndex = static_cast<int>((h >> 16) % 6);
  switch (base) {
    case Base::U8: put(p, static_cast<uint8_t>(int_value(op, 8, false, h, g, rank))); break;
    case Base::I16: put(p, static_cast<uint16_t>(int_value(op, 16, true, h, g, rank))); break;
    case Base::I32: put(p, static_cast<uint32_t>(int_value(op, 32, true, h, g, rank))); break;
    case Base::I64: put(p, int_value(op, 64, true, h, g, rank)); break;
    case Base::U64: put(p, int_value(op, 64, false, h, g, rank)); break;
    case Base::F32: put(p, static_cast<float>(float_value(op, false, h, rank))); break;
    case Base::F64: put(p, float_value(op, true, h, rank)); break;
    case Base::PairInt:
      if (loc) {
        put(p + offsetof(PairII, v), locValue);
        put(p + offsetof(PairII, i), locIndex);
      } else {  // user operations and allgather: any bits
        put(p + offsetof(PairII, v), static_cast<uint32_t>(h));
        put(p + offsetof(PairII, i), static_cast<uint32_t>(h >> 32));
      }
      break;
    case Base::PairFloat:
      put(p + offsetof(PairFI, v), loc ? static_cast<float>(locValue) : static_cast<float>(float_value(op, false, h, rank)));
      put(p + offsetof(PairFI, i), loc ? locIndex : static_cast<int>(h >> 40));
      break;
    case Base::PairDouble:
      put(p + offsetof(PairDI, v), loc ? static_cast<double>(locValue) : float_value(op, true, h, rank));
      put(p + offsetof(PairDI, i), loc ? locIndex : static_cast<int>(h >> 40));
      break;
  }
}

// Writes the input of 'rank' for 'count' elements of type 't' into the data
// bytes of 'buf' (holes are left alone). Values depend on the logical slot
// index (position in the type signature), not on the layout, so the same
// data can be written through different datatypes with the same signature.
void fill_values(unsigned char* buf, const TypeInfo& t, size_t count, OpId op, int rank, uint64_t salt) {
  const uint64_t base = hash2(salt, static_cast<uint64_t>(rank) + 1);
  const size_t ns = t.slots.size();
  for (size_t e = 0; e < count; ++e) {
    for (size_t s = 0; s < ns; ++s) {
      const uint64_t g = e * ns + s;
      store_value(buf + e * t.extent + t.slots[s], t.base, op, mix64(base + g), g, rank);
    }
  }
}

// ===========================================================================
// Guarded buffers
// ===========================================================================

constexpr size_t kGuardBefore = 64;
constexpr size_t kGuardAfter = 256;

// Position-dependent filler for guards, holes and unwritten receive buffers,
// periodic with period 251 so that it is never aligned with an element extent.
constexpr size_t kPoisonPeriod = 251;

unsigned char poison_byte(size_t i) {
  const size_t k = i % kPoisonPeriod;
  return static_cast<unsigned char>(0xA5u ^ (k * 0x9Du) ^ (k >> 3));
}

// Many periods of the filler, to fill and compare whole blocks at a time.
const std::vector<unsigned char>& poison_pattern() {
  static const std::vector<unsigned char> pattern = [] {
    std::vector<unsigned char> p(kPoisonPeriod * 256);
    for (size_t i = 0; i < p.size(); ++i) p[i] = poison_byte(i);
    return p;
  }();
  return pattern;
}

// Index of the first byte in [from, to) of 'mem' that differs from the
// filler (byte i of 'mem' is compared with poison_byte(i)), or 'to'.
size_t first_non_poison(const unsigned char* mem, size_t from, size_t to) {
  const std::vector<unsigned char>& pat = poison_pattern();
  size_t i = from;
  while (i < to) {
    const size_t at = i % pat.size();
    const size_t len = std::min(to - i, pat.size() - at);
    if (std::memcmp(mem + i, pat.data() + at, len) != 0) {
      while (mem[i] == pat[i % pat.size()]) ++i;
      return i;
    }
    i += len;
  }
  return to;
}

// The four buffers of a check. Their storage is kept and reused, so that
// large buffers are not faulted in again for every check.
enum BufRole { B_SEND, B_SEND_COPY, B_RECV, B_REF, B_NUM_ROLES };

unsigned char* storage(BufRole role, size_t bytes) {
  static std::unique_ptr<unsigned char[]> mem[B_NUM_ROLES];
  static size_t capacity[B_NUM_ROLES] = {};
  if (capacity[role] < bytes) {
    mem[role].reset();
    mem[role].reset(new unsigned char[bytes]);
    capacity[role] = bytes;
  }
  return mem[role].get();
}

// A buffer of 'bytes' data bytes between two guard areas. Everything,
// guards included, starts out holding the filler.
class GuardedBuf {
 public:
  GuardedBuf(BufRole role, size_t bytes) : size_(bytes + kGuardBefore + kGuardAfter), bytes_(bytes) {
    mem_ = storage(role, size_);
    const std::vector<unsigned char>& pat = poison_pattern();
    for (size_t i = 0; i < size_; i += pat.size()) std::memcpy(mem_ + i, pat.data(), std::min(pat.size(), size_ - i));
  }
  GuardedBuf(const GuardedBuf&) = delete;
  GuardedBuf& operator=(const GuardedBuf&) = delete;

  // A copy of 'other' (data and guards) in the storage of 'role'.
  GuardedBuf(BufRole role, const GuardedBuf& other) : size_(other.size_), bytes_(other.bytes_) {
    mem_ = storage(role, size_);
    std::memcpy(mem_, other.mem_, size_);
  }

  unsigned char* data() { return mem_ + kGuardBefore; }
  const unsigned char* data() const { return mem_ + kGuardBefore; }
  size_t bytes() const { return bytes_; }
  // The whole allocation, guards included.
  const unsigned char* mem() const { return mem_; }
  size_t mem_size() const { return size_; }
  // Filler value of byte 'i' of the data area.
  static unsigned char poison(size_t i) { return poison_byte(i + kGuardBefore); }

 private:
  unsigned char* mem_ = nullptr;
  size_t size_;
  size_t bytes_;
};

// ===========================================================================
// Communicators
// ===========================================================================

struct CommInfo {
  const char* name;
  MPI_Comm comm;
  int rank;
  int size;
  uint64_t salt;   // distinguishes the communicators in the random streams
  uint64_t calls;  // checks run on this communicator (same on all its ranks)
};

std::vector<CommInfo> g_comms;

void add_comm(const char* name, MPI_Comm comm) {
  CommInfo c{name, comm, 0, 0, hash2(0xC011C4EC, g_comms.size()), 0};
  MPI_Comm_rank(comm, &c.rank);
  MPI_Comm_size(comm, &c.size);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  g_comms.push_back(c);
}

void create_comms() {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm reversed, oddeven, dup;
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &oddeven);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  add_comm("world", MPI_COMM_WORLD);
  add_comm("reversed", reversed);
  add_comm("oddeven", oddeven);
  add_comm("dup", dup);
  add_comm("self", MPI_COMM_SELF);
}

void free_comms() {
  for (CommInfo& c : g_comms) {
    if (c.comm != MPI_COMM_WORLD && c.comm != MPI_COMM_SELF) MPI_Comm_free(&c.comm);
  }
}

CommInfo& comm_by_name(const char* name) {
  for (CommInfo& c : g_comms) {
    if (std::strcmp(c.name, name) == 0) return c;
  }
  fatal(std::string("no communicator ") + name);
}

// ===========================================================================
// Arrival delays
// ===========================================================================

Options g_opt;

void sleep_us(long us) {
  if (us <= 0) return;
  timespec ts{us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

// A delay drawn log-uniformly from [max/10, max] microseconds.
long delay_amount(uint64_t h) {
  const double maxUs = g_opt.delayUs;
  const double u = static_cast<double>(h >> 11) / 9007199254740992.0;  // [0, 1)
  return static_cast<long>(maxUs / 10.0 * std::pow(10.0, u));
}

// Sleeps before the call under test. The arrival pattern is the same on all
// ranks of the communicator; the amounts differ per rank and per call.
void arrival_delay(const CommInfo& c, uint64_t callSalt) {
  if (g_opt.delayUs <= 0) return;
  const uint64_t shared = hash2(callSalt, 0xDE1A7);
  const long amount = delay_amount(hash2(shared, static_cast<uint64_t>(c.rank) + 1));
  const int chosen = static_cast<int>((shared >> 8) % static_cast<uint64_t>(c.size));
  long us = 0;
  switch (shared % 5) {
    case 0: us = 0; break;                              // all together
    case 1: us = amount; break;                         // random
    case 2: us = c.rank == chosen ? amount : 0; break;  // one late rank
    case 3: us = c.rank == chosen ? 0 : amount; break;  // one early rank
    case 4: {                                           // staggered by rank
      const int pos = (shared >> 40) & 1 ? c.rank : c.size - 1 - c.rank;
      us = c.size > 1 ? delay_amount(shared) * pos / (c.size - 1) : 0;
      break;
    }
  }
  sleep_us(us);
}

// ===========================================================================
// Check results and reporting
// ===========================================================================

enum class Coll { Allreduce, Reduce, Allgather };

const char* coll_name(Coll c) {
  switch (c) {
    case Coll::Allreduce: return "MPI_Allreduce";
    case Coll::Reduce: return "MPI_Reduce";
    case Coll::Allgather: return "MPI_Allgather";
  }
  return "?";
}

struct Check {
  Coll coll;
  std::string params;   // human-readable description of all parameters
  std::string problem;  // first problem found; empty if the check passed

  void fail(const std::string& what) {
    if (problem.empty()) problem = what;
  }
};

struct Stats {
  long long checks[3] = {0, 0, 0};
  long long failures = 0;
};

Stats g_stats;
int g_worldRank = 0;
int g_iter = 0;
constexpr int kPrintedFailuresPerRank = 3;

std::string hex_bytes(const unsigned char* p, size_t n) {
  std::string s;
  char b[4];
  for (size_t i = 0; i < n && i < 32; ++i) {
    std::snprintf(b, sizeof b, "%s%02x", i ? " " : "", p[i]);
    s += b;
  }
  return s;
}

void check_guards(Check& ck, const char* what, const GuardedBuf& got) {
  const unsigned char* m = got.mem();
  const size_t before = first_non_poison(m, 0, kGuardBefore);
  if (before != kGuardBefore) {
    ck.fail(std::string(what) + ": written before the buffer, at byte " + std::to_string(static_cast<long>(before) - static_cast<long>(kGuardBefore)));
    return;
  }
  const size_t end = kGuardBefore + got.bytes();
  const size_t after = first_non_poison(m, end, got.mem_size());
  if (after != got.mem_size()) ck.fail(std::string(what) + ": written past the end of the buffer, at byte +" + std::to_string(after - end));
}

// The whole buffer, guards included, must equal 'expect'.
void check_unchanged(Check& ck, const char* what, const GuardedBuf& got, const GuardedBuf& expect) {
  const unsigned char* a = got.mem();
  const unsigned char* b = expect.mem();
  if (std::memcmp(a, b, got.mem_size()) == 0) return;
  size_t i = 0;
  while (a[i] == b[i]) ++i;
  const long off = static_cast<long>(i) - static_cast<long>(kGuardBefore);
  ck.fail(std::string(what) + " was modified, first at byte " + std::to_string(off) + " (expected " + hex_bytes(&b[i], 1) + ", got " + hex_bytes(&a[i], 1) + ")");
}

// The whole buffer must still hold the filler.
void check_untouched(Check& ck, const char* what, const GuardedBuf& got) {
  check_guards(ck, what, got);
  const size_t bad = first_non_poison(got.mem(), kGuardBefore, kGuardBefore + got.bytes());
  if (bad != kGuardBefore + got.bytes()) ck.fail(std::string(what) + " (not significant here) was written, first at byte " + std::to_string(bad - kGuardBefore));
}

// Data bytes of 'n' elements of 't' must equal 'ref'; holes and guards must
// still hold the filler.
void check_result(Check& ck, const char* what, const GuardedBuf& got, const GuardedBuf& ref, const TypeInfo& t, size_t n) {
  check_guards(ck, what, got);
  const unsigned char* g = got.data();
  const unsigned char* r = ref.data();
  const size_t bytes = n * t.extent;
  if (!t.hasHoles && std::memcmp(g, r, bytes) == 0) return;
  // Byte by byte; 'pi' follows the filler pattern, 'mi' the type mask.
  const std::vector<unsigned char>& pat = poison_pattern();
  size_t first = bytes, badElems = 0, pi = kGuardBefore % pat.size(), mi = 0;
  bool elemBad = false;
  for (size_t i = 0; i < bytes; ++i) {
    if (g[i] != (t.mask[mi] ? r[i] : pat[pi])) {
      elemBad = true;
      if (first == bytes) first = i;
    }
    if (++pi == pat.size()) pi = 0;
    if (++mi == t.extent) {
      mi = 0;
      badElems += elemBad;
      elemBad = false;
    }
  }
  if (badElems == 0) return;
  const size_t e = first / t.extent;
  std::vector<unsigned char> want(t.extent);
  for (size_t k = 0; k < t.extent; ++k) want[k] = t.mask[k] ? r[e * t.extent + k] : GuardedBuf::poison(e * t.extent + k);
  ck.fail(std::string(what) + ": " + std::to_string(badElems) + " of " + std::to_string(n) + " elements wrong; first: element " + std::to_string(e) + ", byte " +
          std::to_string(first % t.extent) + (t.mask[first % t.extent] ? " (data)" : " (hole, must stay untouched)") + ", expected [" + hex_bytes(want.data(), t.extent) +
          "] got [" + hex_bytes(g + e * t.extent, t.extent) + "]");
}

void check_rc(Check& ck, int rc) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  PMPI_Error_string(rc, msg, &len);
  ck.fail("returned error " + std::to_string(rc) + " (" + std::string(msg, static_cast<size_t>(len)) + ")");
}

void check_user_ops(Check& ck) {
  if (g_userOpMisuse == 0) return;
  ck.fail("a user operation was called with a datatype other than the one of the call (" + std::to_string(g_userOpMisuse) + " times)");
  g_userOpMisuse = 0;
}

void reference_rc(int rc, const Check& ck) {
  if (rc != MPI_SUCCESS) fatal("the PMPI reference call failed: " + ck.params);
}

void record(const Check& ck) {
  ++g_stats.checks[static_cast<int>(ck.coll)];
  if (ck.problem.empty()) return;
  if (g_stats.failures < kPrintedFailuresPerRank) {
    std::fprintf(stderr, "collcheck: FAIL world rank %d: %s %s: %s\n", g_worldRank, coll_name(ck.coll), ck.params.c_str(), ck.problem.c_str());
    std::fflush(stderr);
  }
  ++g_stats.failures;
}

std::string comm_desc(const CommInfo& c) {
  return std::string(c.name) + " (rank " + std::to_string(c.rank) + " of " + std::to_string(c.size) + ")";
}

// Shared per-call salt: identical on all ranks of the communicator.
uint64_t next_call_salt(CommInfo& c) { return hash2(hash2(g_opt.seed, c.salt), c.calls++); }

// ===========================================================================
// The three checks
// ===========================================================================

// One case of the reduction grid.
enum class Tier { S, M, L, XL };  // largest count: P+1 or 17, 1000, 65537, 1<<20

struct ReduceCase {
  TypeId type;
  OpId op;
  Tier tier;  // largest count class used with this case
  bool core;  // also used by the exhaustive-variant and quick sweeps
};

struct GatherCase {
  TypeId send;
  int sendMul;  // send count = count * sendMul
  TypeId recv;
  int recvMul;  // recv count (per rank) = count * recvMul
  Tier tier;
  bool core;
};

void check_allreduce(const ReduceCase& rc, int count, CommInfo& c, bool inPlace) {
  const TypeInfo& t = g_types[rc.type];
  const OpInfo& op = g_ops[rc.op];
  Check ck{Coll::Allreduce, "type=" + std::string(t.name) + " op=" + op.name + " count=" + std::to_string(count) + " comm=" + comm_desc(c) +
                                " mode=" + (inPlace ? "in-place" : "separate-buffers") + " iter=" + std::to_string(g_iter),
           ""};
  const uint64_t salt = next_call_salt(c);
  const size_t bytes = static_cast<size_t>(count) * t.extent;

  GuardedBuf send(B_SEND, bytes), recv(B_RECV, bytes), ref(B_REF, bytes);
  fill_values(send.data(), t, count, rc.op, c.rank, salt);
  const GuardedBuf sendCopy(B_SEND_COPY, send);
  g_callDatatype = t.dt;
  reference_rc(PMPI_Allreduce(send.data(), ref.data(), count, t.dt, op.op, c.comm), ck);
  check_user_ops(ck);
  if (inPlace) fill_values(recv.data(), t, count, rc.op, c.rank, salt);

  arrival_delay(c, salt);
  check_rc(ck, MPI_Allreduce(inPlace ? MPI_IN_PLACE : send.data(), recv.data(), count, t.dt, op.op, c.comm));

  check_user_ops(ck);
  check_unchanged(ck, "sendbuf", send, sendCopy);
  check_result(ck, "recvbuf", recv, ref, t, count);
  record(ck);
}

enum class ReduceMode { Plain, InPlace, NullRecv };

const char* reduce_mode_name(ReduceMode m) {
  switch (m) {
    case ReduceMode::Plain: return "separate-buffers";
    case ReduceMode::InPlace: return "in-place-at-root+NULL-recvbuf-elsewhere";
    case ReduceMode::NullRecv: return "NULL-recvbuf-on-non-roots";
  }
  return "?";
}

void check_reduce(const ReduceCase& rc, int count, CommInfo& c, int root, ReduceMode mode) {
  const TypeInfo& t = g_types[rc.type];
  const OpInfo& op = g_ops[rc.op];
  Check ck{Coll::Reduce, "type=" + std::string(t.name) + " op=" + op.name + " count=" + std::to_string(count) + " root=" + std::to_string(root) + " comm=" + comm_desc(c) +
                             " mode=" + reduce_mode_name(mode) + " iter=" + std::to_string(g_iter),
           ""};
  const uint64_t salt = next_call_salt(c);
  const size_t bytes = static_cast<size_t>(count) * t.extent;
  const bool isRoot = c.rank == root;

  GuardedBuf send(B_SEND, bytes), recv(B_RECV, bytes), ref(B_REF, bytes);
  fill_values(send.data(), t, count, rc.op, c.rank, salt);
  const GuardedBuf sendCopy(B_SEND_COPY, send);
  g_callDatatype = t.dt;
  if (std::getenv("COLLCHECK_TRACE")) std::fprintf(stderr, "rank %d: %s\n", c.rank, ck.params.c_str());
  reference_rc(PMPI_Reduce(send.data(), isRoot ? ref.data() : nullptr, count, t.dt, op.op, root, c.comm), ck);
  check_user_ops(ck);

  const void* sbuf = send.data();
  void* rbuf = recv.data();
  if (mode == ReduceMode::InPlace && isRoot) {
    sbuf = MPI_IN_PLACE;
    fill_values(recv.data(), t, count, rc.op, c.rank, salt);
  }
  if (mode != ReduceMode::Plain && !isRoot) rbuf = nullptr;

  arrival_delay(c, salt);
  check_rc(ck, MPI_Reduce(sbuf, rbuf, count, t.dt, op.op, root, c.comm));

  check_user_ops(ck);
  check_unchanged(ck, "sendbuf", send, sendCopy);
  if (isRoot) check_result(ck, "recvbuf", recv, ref, t, count);
  else if (rbuf != nullptr) check_untouched(ck, "recvbuf of a non-root rank", recv);
  record(ck);
}

void check_allgather(const GatherCase& gc, int count, CommInfo& c, bool inPlace) {
  const TypeInfo& st = g_types[gc.send];
  const TypeInfo& rt = g_types[gc.recv];
  const int scount = count * gc.sendMul;
  const int rcount = count * gc.recvMul;
  Check ck{Coll::Allgather, "sendtype=" + std::string(st.name) + " sendcount=" + std::to_string(scount) + " recvtype=" + rt.name + " recvcount=" + std::to_string(rcount) +
                                " comm=" + comm_desc(c) + " mode=" + (inPlace ? "in-place" : "separate-buffers") + " iter=" + std::to_string(g_iter),
           ""};
  const uint64_t salt = next_call_salt(c);
  const size_t blockBytes = static_cast<size_t>(rcount) * rt.extent;

  GuardedBuf send(B_SEND, static_cast<size_t>(scount) * st.extent);
  GuardedBuf recv(B_RECV, blockBytes * static_cast<size_t>(c.size)), ref(B_REF, blockBytes * static_cast<size_t>(c.size));
  fill_values(send.data(), st, scount, O_NONE, c.rank, salt);
  const GuardedBuf sendCopy(B_SEND_COPY, send);
  reference_rc(PMPI_Allgather(send.data(), scount, st.dt, ref.data(), rcount, rt.dt, c.comm), ck);
  if (inPlace) fill_values(recv.data() + blockBytes * static_cast<size_t>(c.rank), rt, rcount, O_NONE, c.rank, salt);

  arrival_delay(c, salt);
  // With MPI_IN_PLACE, sendcount and sendtype must be ignored.
  check_rc(ck, inPlace ? MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv.data(), rcount, rt.dt, c.comm)
                       : MPI_Allgather(send.data(), scount, st.dt, recv.data(), rcount, rt.dt, c.comm));

  check_unchanged(ck, "sendbuf", send, sendCopy);
  check_result(ck, "recvbuf", recv, ref, rt, static_cast<size_t>(rcount) * static_cast<size_t>(c.size));
  record(ck);
}

// ===========================================================================
// The grid
// ===========================================================================

// Reductions: every predefined operation that applies to each type, and the
// user operations (Open MPI rejects predefined operations on derived types).
const ReduceCase kReduceCases[] = {
    // type            op               largest count  core
    {T_INT,            O_SUM,           Tier::XL,      true},
    {T_INT,            O_PROD,          Tier::M,       false},
    {T_INT,            O_MAX,           Tier::L,       false},
    {T_INT,            O_MIN,           Tier::M,       false},
    {T_INT,            O_LAND,          Tier::M,       false},
    {T_INT,            O_LOR,           Tier::M,       false},
    {T_INT,            O_LXOR,          Tier::M,       false},
    {T_INT,            O_BAND,          Tier::M,       false},
    {T_INT,            O_BOR,           Tier::M,       false},
    {T_INT,            O_BXOR,          Tier::L,       false},
    {T_INT,            O_USER_COMM,     Tier::L,       true},
    {T_FLOAT,          O_SUM,           Tier::L,       false},
    {T_FLOAT,          O_PROD,          Tier::M,       false},
    {T_FLOAT,          O_MAX,           Tier::M,       false},
    {T_FLOAT,          O_MIN,           Tier::M,       false},
    {T_DOUBLE,         O_SUM,           Tier::XL,      true},
    {T_DOUBLE,         O_PROD,          Tier::M,       false},
    {T_DOUBLE,         O_MAX,           Tier::L,       false},
    {T_DOUBLE,         O_MIN,           Tier::M,       false},
    {T_LONG_LONG,      O_SUM,           Tier::L,       false},
    {T_LONG_LONG,      O_PROD,          Tier::M,       false},
    {T_LONG_LONG,      O_MAX,           Tier::M,       false},
    {T_LONG_LONG,      O_MIN,           Tier::M,       false},
    {T_LONG_LONG,      O_LAND,          Tier::M,       false},
    {T_LONG_LONG,      O_LOR,           Tier::M,       false},
    {T_LONG_LONG,      O_LXOR,          Tier::M,       false},
    {T_LONG_LONG,      O_BAND,          Tier::M,       false},
    {T_LONG_LONG,      O_BOR,           Tier::M,       false},
    {T_LONG_LONG,      O_BXOR,          Tier::M,       false},
    {T_UNSIGNED_CHAR,  O_SUM,           Tier::L,       true},
    {T_UNSIGNED_CHAR,  O_PROD,          Tier::M,       false},
    {T_UNSIGNED_CHAR,  O_MAX,           Tier::M,       false},
    {T_UNSIGNED_CHAR,  O_MIN,           Tier::M,       false},
    {T_UNSIGNED_CHAR,  O_LAND,          Tier::M,       false},
    {T_UNSIGNED_CHAR,  O_LOR,           Tier::M,       false},
    {T_UNSIGNED_CHAR,  O_LXOR,          Tier::M,       false},
    {T_UNSIGNED_CHAR,  O_BAND,          Tier::M,       false},
    {T_UNSIGNED_CHAR,  O_BOR,           Tier::M,       false},
    {T_UNSIGNED_CHAR,  O_BXOR,          Tier::L,       false},
    {T_SHORT,          O_SUM,           Tier::M,       false},
    {T_SHORT,          O_PROD,          Tier::M,       false},
    {T_SHORT,          O_MAX,           Tier::M,       false},
    {T_SHORT,          O_MIN,           Tier::M,       false},
    {T_SHORT,          O_LAND,          Tier::M,       false},
    {T_SHORT,          O_LOR,           Tier::M,       false},
    {T_SHORT,          O_LXOR,          Tier::M,       false},
    {T_SHORT,          O_BAND,          Tier::M,       false},
    {T_SHORT,          O_BOR,           Tier::M,       false},
    {T_SHORT,          O_BXOR,          Tier::M,       false},
    {T_UINT64,         O_SUM,           Tier::M,       false},
    {T_UINT64,         O_PROD,          Tier::L,       false},
    {T_UINT64,         O_MAX,           Tier::M,       false},
    {T_UINT64,         O_MIN,           Tier::M,       false},
    {T_UINT64,         O_LAND,          Tier::M,       false},
    {T_UINT64,         O_LOR,           Tier::M,       false},
    {T_UINT64,         O_LXOR,          Tier::M,       false},
    {T_UINT64,         O_BAND,          Tier::M,       false},
    {T_UINT64,         O_BOR,           Tier::M,       false},
    {T_UINT64,         O_BXOR,          Tier::M,       false},
    {T_2INT,           O_MINLOC,        Tier::M,       false},
    {T_2INT,           O_MAXLOC,        Tier::L,       false},
    {T_2INT,           O_USER_AFFINE,   Tier::M,       false},
    {T_FLOAT_INT,      O_MINLOC,        Tier::M,       false},
    {T_FLOAT_INT,      O_MAXLOC,        Tier::M,       false},
    {T_DOUBLE_INT,     O_MINLOC,        Tier::L,       true},
    {T_DOUBLE_INT,     O_MAXLOC,        Tier::M,       false},
    {T_CONTIG3,        O_USER_COMM,     Tier::L,       true},
    {T_VECTOR,         O_USER_COMM,     Tier::L,       false},
    {T_VECTOR,         O_USER_AFFINE,   Tier::L,       true},
    {T_VECTOR_PADDED,  O_USER_COMM,     Tier::M,       false},
    {T_VECTOR_PADDED,  O_USER_AFFINE,   Tier::M,       false},
    {T_MAT2X2,         O_USER_MATMUL,   Tier::L,       true},
    {T_MAT2X2,         O_USER_COMM,     Tier::M,       false},
};

// Allgather: every type, plus send/receive datatypes that differ but have
// the same type signature.
const GatherCase kGatherCases[] = {
    // send type       x   recv type        x   largest count  core
    {T_INT,            1,  T_INT,           1,  Tier::XL,      true},
    {T_FLOAT,          1,  T_FLOAT,         1,  Tier::M,       false},
    {T_DOUBLE,         1,  T_DOUBLE,        1,  Tier::L,       true},
    {T_LONG_LONG,      1,  T_LONG_LONG,     1,  Tier::M,       false},
    {T_UNSIGNED_CHAR,  1,  T_UNSIGNED_CHAR, 1,  Tier::L,       true},
    {T_SHORT,          1,  T_SHORT,         1,  Tier::M,       false},
    {T_UINT64,         1,  T_UINT64,        1,  Tier::M,       false},
    {T_2INT,           1,  T_2INT,          1,  Tier::M,       false},
    {T_FLOAT_INT,      1,  T_FLOAT_INT,     1,  Tier::M,       false},
    {T_DOUBLE_INT,     1,  T_DOUBLE_INT,    1,  Tier::M,       true},
    {T_CONTIG3,        1,  T_CONTIG3,       1,  Tier::M,       false},
    {T_VECTOR,         1,  T_VECTOR,        1,  Tier::L,       true},
    {T_VECTOR_PADDED,  1,  T_VECTOR_PADDED, 1,  Tier::M,       false},
    {T_MAT2X2,         1,  T_MAT2X2,        1,  Tier::M,       false},
    {T_CONTIG3,        1,  T_INT,           3,  Tier::M,       false},
    {T_VECTOR,         1,  T_INT,           2,  Tier::L,       true},
    {T_INT,            2,  T_VECTOR_PADDED, 1,  Tier::M,       true},
};

// How the variants of a cell (in-place or not; for reduce also root and
// buffer mode) are covered: all of them, or one per cell in rotation so that
// consecutive cells use consecutive variants.
enum class Variants { All, Rotate };
enum class Cases { All, Core };

struct Sweep {
  Coll coll;
  const char* comm;
  Cases cases;
  Tier tier;  // largest count class of the sweep (a case's own tier also caps it)
  Variants variants;
};

const Sweep kFullPlan[] = {
    // collective      communicator  cases        largest   variants
    {Coll::Allreduce,  "world",      Cases::All,  Tier::XL, Variants::All},
    {Coll::Allreduce,  "reversed",   Cases::All,  Tier::L,  Variants::Rotate},
    {Coll::Allreduce,  "oddeven",    Cases::All,  Tier::M,  Variants::Rotate},
    {Coll::Allreduce,  "dup",        Cases::All,  Tier::M,  Variants::Rotate},
    {Coll::Allreduce,  "self",       Cases::All,  Tier::M,  Variants::All},
    {Coll::Reduce,     "world",      Cases::All,  Tier::XL, Variants::Rotate},
    {Coll::Reduce,     "world",      Cases::Core, Tier::S,  Variants::All},
    {Coll::Reduce,     "reversed",   Cases::All,  Tier::L,  Variants::Rotate},
    {Coll::Reduce,     "oddeven",    Cases::All,  Tier::M,  Variants::Rotate},
    {Coll::Reduce,     "dup",        Cases::All,  Tier::M,  Variants::Rotate},
    {Coll::Reduce,     "self",       Cases::All,  Tier::M,  Variants::Rotate},
    {Coll::Allgather,  "world",      Cases::All,  Tier::XL, Variants::All},
    {Coll::Allgather,  "reversed",   Cases::All,  Tier::L,  Variants::Rotate},
    {Coll::Allgather,  "oddeven",    Cases::All,  Tier::M,  Variants::Rotate},
    {Coll::Allgather,  "dup",        Cases::All,  Tier::M,  Variants::Rotate},
    {Coll::Allgather,  "self",       Cases::All,  Tier::M,  Variants::All},
};

const Sweep kQuickPlan[] = {
    // collective      communicator  cases        largest   variants
    {Coll::Allreduce,  "world",      Cases::All,  Tier::M,  Variants::Rotate},
    {Coll::Allreduce,  "world",      Cases::Core, Tier::XL, Variants::Rotate},
    {Coll::Allreduce,  "reversed",   Cases::Core, Tier::M,  Variants::Rotate},
    {Coll::Allreduce,  "oddeven",    Cases::Core, Tier::S,  Variants::Rotate},
    {Coll::Allreduce,  "dup",        Cases::Core, Tier::S,  Variants::Rotate},
    {Coll::Allreduce,  "self",       Cases::Core, Tier::S,  Variants::All},
    {Coll::Reduce,     "world",      Cases::All,  Tier::M,  Variants::Rotate},
    {Coll::Reduce,     "world",      Cases::Core, Tier::XL, Variants::Rotate},
    {Coll::Reduce,     "reversed",   Cases::Core, Tier::M,  Variants::Rotate},
    {Coll::Reduce,     "oddeven",    Cases::Core, Tier::S,  Variants::Rotate},
    {Coll::Reduce,     "dup",        Cases::Core, Tier::S,  Variants::Rotate},
    {Coll::Reduce,     "self",       Cases::Core, Tier::S,  Variants::All},
    {Coll::Allgather,  "world",      Cases::All,  Tier::M,  Variants::Rotate},
    {Coll::Allgather,  "world",      Cases::Core, Tier::L,  Variants::Rotate},
    {Coll::Allgather,  "reversed",   Cases::Core, Tier::M,  Variants::Rotate},
    {Coll::Allgather,  "oddeven",    Cases::Core, Tier::S,  Variants::Rotate},
    {Coll::Allgather,  "dup",        Cases::Core, Tier::S,  Variants::Rotate},
    {Coll::Allgather,  "self",       Cases::Core, Tier::S,  Variants::All},
};

// Allgather receive buffers larger than this are skipped (large P).
constexpr size_t kMaxGatherBytes = size_t{64} << 20;

std::vector<int> counts_for(Tier tier, int p) {
  std::vector<int> counts = {0, 1, p - 1, p, p + 1, 17};
  if (tier >= Tier::M) counts.push_back(1000);
  if (tier >= Tier::L) counts.push_back(65537);
  if (tier >= Tier::XL) counts.push_back(1 << 20);
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  counts.erase(std::remove_if(counts.begin(), counts.end(), [](int n) { return n < 0 || n > g_opt.maxCount; }), counts.end());
  return counts;
}

// One variant of a cell.
struct Variant {
  bool inPlace;
  int root;
  ReduceMode mode;
};

std::vector<Variant> variants_for(Coll coll, int commSize, bool inPlaceAllowed) {
  std::vector<Variant> v;
  if (coll == Coll::Reduce) {
    for (ReduceMode m : {ReduceMode::Plain, ReduceMode::InPlace, ReduceMode::NullRecv}) {
      for (int root = 0; root < commSize; ++root) v.push_back({m == ReduceMode::InPlace, root, m});
    }
  } else {
    v.push_back({false, -1, ReduceMode::Plain});
    if (inPlaceAllowed) v.push_back({true, -1, ReduceMode::Plain});
  }
  return v;
}

// Runs (or, with --dry-run, counts) the checks of one sweep; returns their number.
long long run_sweep(const Sweep& sw) {
  CommInfo& c = comm_by_name(sw.comm);
  long long n = 0;
  size_t cell = 0;
  auto run_cell = [&](const std::vector<Variant>& variants, auto&& run_one) {
    if (sw.variants == Variants::All) {
      for (const Variant& v : variants) run_one(v);
    } else {
      run_one(variants[cell % variants.size()]);
    }
    ++cell;
  };
  if (sw.coll == Coll::Allgather) {
    for (const GatherCase& gc : kGatherCases) {
      if (sw.cases == Cases::Core && !gc.core) continue;
      const auto variants = variants_for(sw.coll, c.size, gc.send == gc.recv && gc.sendMul == gc.recvMul);
      for (int count : counts_for(std::min(sw.tier, gc.tier), c.size)) {
        const size_t total = static_cast<size_t>(count) * static_cast<size_t>(gc.recvMul) * g_types[gc.recv].extent * static_cast<size_t>(c.size);
        if (total > kMaxGatherBytes) continue;
        run_cell(variants, [&](const Variant& v) {
          ++n;
          if (!g_opt.dryRun) check_allgather(gc, count, c, v.inPlace);
        });
      }
    }
    return n;
  }
  const auto variants = variants_for(sw.coll, c.size, true);
  for (const ReduceCase& rc : kReduceCases) {
    if (sw.cases == Cases::Core && !rc.core) continue;
    for (int count : counts_for(std::min(sw.tier, rc.tier), c.size)) {
      run_cell(variants, [&](const Variant& v) {
        ++n;
        if (g_opt.dryRun) return;
        if (sw.coll == Coll::Allreduce) check_allreduce(rc, count, c, v.inPlace);
        else check_reduce(rc, count, c, v.root, v.mode);
      });
    }
  }
  return n;
}

bool selected(Coll c) {
  switch (c) {
    case Coll::Allreduce: return g_opt.runAllreduce;
    case Coll::Reduce: return g_opt.runReduce;
    case Coll::Allgather: return g_opt.runAllgather;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int worldSize = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);

  const std::string err = parse_options(argc, argv, g_opt);
  if (!err.empty()) {
    if (g_worldRank == 0) {
      if (err != "help") std::fprintf(stderr, "collcheck: %s\n", err.c_str());
      std::fputs(kUsage, err == "help" ? stdout : stderr);
    }
    MPI_Finalize();
    return err == "help" ? 0 : 2;
  }

  create_types();
  create_ops();
  create_comms();

  const Sweep* const planBegin = g_opt.quick ? std::begin(kQuickPlan) : std::begin(kFullPlan);
  const Sweep* const planEnd = g_opt.quick ? std::end(kQuickPlan) : std::end(kFullPlan);

  PMPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (g_iter = 0; g_iter < g_opt.iters; ++g_iter) {
    for (const Sweep* swp = planBegin; swp != planEnd; ++swp) {
      const Sweep& sw = *swp;
      if (!selected(sw.coll)) continue;
      const double ts = MPI_Wtime();
      const long long n = run_sweep(sw);
      if ((g_opt.verbose || g_opt.dryRun) && g_worldRank == 0) {
        std::printf("collcheck: iter %d %-13s comm=%-8s cases=%s tier<=%s variants=%s: %lld checks, %.2f s\n", g_iter, coll_name(sw.coll), sw.comm,
                    sw.cases == Cases::All ? "all " : "core", sw.tier == Tier::S ? "S" : sw.tier == Tier::M ? "M" : sw.tier == Tier::L ? "L" : "XL",
                    sw.variants == Variants::All ? "all" : "rotate", n, MPI_Wtime() - ts);
        std::fflush(stdout);
      }
      if (g_opt.dryRun) {
        g_stats.checks[static_cast<int>(sw.coll)] += n;
      }
    }
  }
  PMPI_Barrier(MPI_COMM_WORLD);
  const double elapsed = MPI_Wtime() - t0;

  // Bookkeeping through PMPI, independent of the collectives under test.
  long long failures = 0, failedRanks = 0;
  const long long mineFailed = g_stats.failures > 0 ? 1 : 0;
  PMPI_Allreduce(&g_stats.failures, &failures, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  PMPI_Allreduce(&mineFailed, &failedRanks, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (g_worldRank == 0) {
    const long long total = g_stats.checks[0] + g_stats.checks[1] + g_stats.checks[2];
    std::printf("collcheck: P=%d %s%s checks=%lld (allreduce %lld, reduce %lld, allgather %lld) failures=%lld on %lld rank(s) seed=%" PRIu64
                " iters=%d delay-us=%d max-count=%lld time=%.1fs\n",
                worldSize, g_opt.quick ? "quick" : "full", g_opt.dryRun ? " (dry run)" : "", total, g_stats.checks[0], g_stats.checks[1], g_stats.checks[2], failures,
                failedRanks, g_opt.seed, g_opt.iters, g_opt.delayUs, g_opt.maxCount, elapsed);
    std::fflush(stdout);
  }

  free_comms();
  free_ops();
  free_types();
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
