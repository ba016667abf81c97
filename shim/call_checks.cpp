#include "shim/call_checks.h"

#include <climits>
#include <initializer_list>
#include <vector>

namespace papshim {

namespace {

bool one_of(MPI_Datatype t, std::initializer_list<MPI_Datatype> set) {
  for (MPI_Datatype s : set)
    if (s != MPI_DATATYPE_NULL && t == s) return true;
  return false;
}

// The MPI standard's groups of basic datatypes for reduction operations.
bool c_integer(MPI_Datatype t) {
  return one_of(t, {MPI_INT, MPI_LONG, MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_UNSIGNED, MPI_UNSIGNED_LONG,
                    MPI_LONG_LONG_INT, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR,
                    MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T,
                    MPI_UINT64_T, MPI_AINT, MPI_OFFSET, MPI_COUNT});
}
bool fortran_integer(MPI_Datatype t) {
  return one_of(t, {MPI_INTEGER, MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8});
}
bool floating(MPI_Datatype t) {
  return one_of(t, {MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_REAL, MPI_DOUBLE_PRECISION, MPI_REAL4, MPI_REAL8});
}
bool logical(MPI_Datatype t) { return one_of(t, {MPI_LOGICAL, MPI_C_BOOL, MPI_CXX_BOOL}); }
bool complex_type(MPI_Datatype t) {
  return one_of(t, {MPI_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_C_COMPLEX, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
                    MPI_C_LONG_DOUBLE_COMPLEX, MPI_CXX_FLOAT_COMPLEX, MPI_CXX_DOUBLE_COMPLEX});
}
bool pair_type(MPI_Datatype t) {
  return one_of(t, {MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT,
                    MPI_2REAL, MPI_2DOUBLE_PRECISION, MPI_2INTEGER});
}

bool op_defined_for_basic(MPI_Op op, MPI_Datatype t) {
  const bool integer = c_integer(t) || fortran_integer(t);
  if (op == MPI_MAX || op == MPI_MIN) return integer || floating(t);
  if (op == MPI_SUM || op == MPI_PROD) return integer || floating(t) || complex_type(t);
  if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR) return c_integer(t) || logical(t);
  if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR) return integer || t == MPI_BYTE;
  if (op == MPI_MAXLOC || op == MPI_MINLOC) return pair_type(t);
  return false;  // MPI_REPLACE, MPI_NO_OP: not for reductions
}

bool builtin_op(MPI_Op op) {
  for (MPI_Op b : {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR,
                   MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP})
    if (op == b) return true;
  return false;
}

// Calls fn on every named type `t` is built from; false if it cannot tell.
template <typename Fn>
bool for_each_basic(MPI_Datatype t, const Fn& fn, int depth = 0) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  if (depth > 16 || PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS) return false;
  if (combiner == MPI_COMBINER_NAMED) return fn(t);
  std::vector<int> ints(static_cast<std::size_t>(ni));
  std::vector<MPI_Aint> addrs(static_cast<std::size_t>(na));
  std::vector<MPI_Datatype> types(static_cast<std::size_t>(nd));
  if (PMPI_Type_get_contents(t, ni, na, nd, ints.data(), addrs.data(), types.data()) != MPI_SUCCESS) return false;
  bool ok = true;
  for (MPI_Datatype sub : types) {
    ok = ok && for_each_basic(sub, fn, depth + 1);
    int sni = 0, sna = 0, snd = 0, scomb = 0;
    PMPI_Type_get_envelope(sub, &sni, &sna, &snd, &scomb);
    if (scomb != MPI_COMBINER_NAMED) PMPI_Type_free(&sub);
  }
  return ok;
}

}  // namespace

int type_size(MPI_Datatype t) {
  int s = 0;
  PMPI_Type_size(t, &s);
  return s;
}

bool op_defined_for(MPI_Op op, MPI_Datatype type) {
  if (!builtin_op(op)) return true;
  return for_each_basic(type, [op](MPI_Datatype t) { return op_defined_for_basic(op, t); });
}

const char* erroneous_arguments(const CallArgs& a, int comm_rank, int comm_size) {
  if (a.count < 0) return "negative count";
  if (a.type == MPI_DATATYPE_NULL) return "null datatype";
  const bool root = a.coll != Collective::Reduce || comm_rank == a.root;
  const bool bottom = a.sendbuf == MPI_BOTTOM;
  if (a.coll == Collective::Allgather) {
    if (a.recvbuf == MPI_IN_PLACE) return "MPI_IN_PLACE as receive buffer";
    if (a.sendbuf == MPI_IN_PLACE) return nullptr;
    if (a.sendcount < 0) return "negative count";
    if (a.sendtype == MPI_DATATYPE_NULL) return "null datatype";
    if (a.sendbuf == a.recvbuf && !bottom && a.count > 0) return "aliased buffers";
    if (static_cast<long long>(type_size(a.sendtype)) * a.sendcount !=
        static_cast<long long>(type_size(a.type)) * a.count)
      return "send and receive sizes differ";
    return nullptr;
  }
  if (a.op == MPI_OP_NULL) return "null op";
  if (a.coll == Collective::Reduce && (a.root < 0 || a.root >= comm_size)) return "root out of range";
  if (root && a.recvbuf == MPI_IN_PLACE) return "MPI_IN_PLACE as receive buffer";
  if (!root && a.sendbuf == MPI_IN_PLACE) return "MPI_IN_PLACE on a non-root rank";
  if (root && a.sendbuf == a.recvbuf && !bottom && a.count > 0) return "aliased buffers";
  return nullptr;
}

std::string ineligible(const CallArgs& a, int comm_size, bool needs_commutative) {
  if (comm_size == 1) return "communicator of size 1";
  if (a.count == 0) return "count 0";
  if (a.coll == Collective::Allgather) {
    if (static_cast<long long>(type_size(a.type)) * a.count > INT_MAX) return "block of 2 GiB or more";
    return "";
  }
  if (needs_commutative) {
    int commute = 0;
    PMPI_Op_commutative(a.op, &commute);
    if (!commute) return "non-commutative op";
  }
  if (!op_defined_for(a.op, a.type)) return "op not defined for the datatype (the library reports it)";
#if defined(OPEN_MPI) && OPEN_MPI
  // Open MPI 4.1's vectorised op component saturates MPI_SUM of 8- and
  // 16-bit integers on long runs but wraps on short ones, so its result
  // depends on how a vector is cut: such calls stay native.
  if (a.op == MPI_SUM) {
    bool small = false;
    const bool known = for_each_basic(a.type, [&small](MPI_Datatype t) {
      small = small || one_of(t, {MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_INT8_T, MPI_UINT8_T,
                                  MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_INT16_T, MPI_UINT16_T});
      return true;
    });
    if (small || !known) return "8/16-bit integer sum (library saturates)";
  }
#endif
  return "";
}

}  // namespace papshim
