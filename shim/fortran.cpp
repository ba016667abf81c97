// Fortran entry points (Open MPI).  Open MPI's Fortran bindings (mpif.h,
// `use mpi`, `use mpi_f08`) call PMPI_* directly, so the C wrappers never see
// Fortran callers.  These replacements convert the handles (*_f2c), translate
// Fortran's MPI_IN_PLACE and MPI_BOTTOM sentinels, and dispatch exactly once.
// MPI_Init / MPI_Finalize forward to the library's own Fortran routine (found
// with dlsym(RTLD_NEXT)) and run the shim's hooks around it.
#include <dlfcn.h>
#include <mpi.h>

#include "shim/dispatch.h"
#include "shim/runtime.h"

#if defined(OPEN_MPI) && OPEN_MPI

// Open MPI's Fortran sentinels; weak so a library without them still loads.
extern "C" {
extern int mpi_fortran_in_place_ __attribute__((weak));
extern int mpi_fortran_bottom_ __attribute__((weak));
}

namespace {

using papshim::CallArgs;
using papshim::Collective;

const void* c_buffer(const void* f) {
  if (&mpi_fortran_in_place_ != nullptr && f == &mpi_fortran_in_place_) return MPI_IN_PLACE;
  if (&mpi_fortran_bottom_ != nullptr && f == &mpi_fortran_bottom_) return MPI_BOTTOM;
  return f;
}
void* c_buffer(void* f) { return const_cast<void*>(c_buffer(static_cast<const void*>(f))); }

void set_ierr(MPI_Fint* ierr, int rc) {
  if (ierr) *ierr = static_cast<MPI_Fint>(rc);
}

bool shim_on(const papshim::ReentryGuard& g) { return g.first() && papshim::runtime().active.load(); }

int run(const CallArgs& a, const papshim::ReentryGuard& g) {
  return shim_on(g) ? papshim::dispatch(a) : papshim::call_native(a);
}

void f_allreduce(void* sb, void* rb, MPI_Fint* count, MPI_Fint* type, MPI_Fint* op, MPI_Fint* comm, MPI_Fint* ierr,
                 void* ret) {
  papshim::ReentryGuard g;
  set_ierr(ierr, run(CallArgs{Collective::Allreduce, c_buffer(static_cast<const void*>(sb)), c_buffer(rb),
                              static_cast<int>(*count), PMPI_Type_f2c(*type), 0, MPI_DATATYPE_NULL,
                              PMPI_Op_f2c(*op), 0, PMPI_Comm_f2c(*comm), ret},
                     g));
}

void f_reduce(void* sb, void* rb, MPI_Fint* count, MPI_Fint* type, MPI_Fint* op, MPI_Fint* root, MPI_Fint* comm,
              MPI_Fint* ierr, void* ret) {
  papshim::ReentryGuard g;
  set_ierr(ierr, run(CallArgs{Collective::Reduce, c_buffer(static_cast<const void*>(sb)), c_buffer(rb),
                              static_cast<int>(*count), PMPI_Type_f2c(*type), 0, MPI_DATATYPE_NULL,
                              PMPI_Op_f2c(*op), static_cast<int>(*root), PMPI_Comm_f2c(*comm), ret},
                     g));
}

void f_allgather(void* sb, MPI_Fint* scount, MPI_Fint* stype, void* rb, MPI_Fint* rcount, MPI_Fint* rtype,
                 MPI_Fint* comm, MPI_Fint* ierr, void* ret) {
  papshim::ReentryGuard g;
  set_ierr(ierr, run(CallArgs{Collective::Allgather, c_buffer(static_cast<const void*>(sb)), c_buffer(rb),
                              static_cast<int>(*rcount), PMPI_Type_f2c(*rtype), static_cast<int>(*scount),
                              PMPI_Type_f2c(*stype), MPI_OP_NULL, 0, PMPI_Comm_f2c(*comm), ret},
                     g));
}

template <typename Fn>
Fn next_symbol(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

using InitFn = void (*)(MPI_Fint*);
using InitThreadFn = void (*)(MPI_Fint*, MPI_Fint*, MPI_Fint*);

// MPI_INIT: the shim asks for MPI_THREAD_MULTIPLE for its helper thread
// through the library's own MPI_INIT_THREAD, as the C MPI_Init does.
void f_init(const char* next_name, const char* next_thread_name, MPI_Fint* ierr) {
  papshim::ReentryGuard g;
  const int ask = papshim::thread_level_to_request(MPI_THREAD_SINGLE);
  int granted = MPI_THREAD_SINGLE;
  if (ask != MPI_THREAD_SINGLE) {
    if (auto next = next_symbol<InitThreadFn>(next_thread_name)) {
      MPI_Fint req = static_cast<MPI_Fint>(ask), prov = 0;
      next(&req, &prov, ierr);
      granted = static_cast<int>(prov);
    } else {
      set_ierr(ierr, PMPI_Init_thread(nullptr, nullptr, ask, &granted));
    }
  } else {
    if (auto next = next_symbol<InitFn>(next_name)) next(ierr);
    else set_ierr(ierr, PMPI_Init(nullptr, nullptr));
    PMPI_Query_thread(&granted);
  }
  if ((!ierr || *ierr == MPI_SUCCESS) && g.first())
    papshim::on_init(granted, ask != MPI_THREAD_SINGLE, papshim::thread_level_to_report(MPI_THREAD_SINGLE, granted));
}

void f_init_thread(const char* next_name, MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) {
  papshim::ReentryGuard g;
  const int want = static_cast<int>(*required);
  const int ask = papshim::thread_level_to_request(want);
  MPI_Fint req = static_cast<MPI_Fint>(ask), prov = 0;
  if (auto next = next_symbol<InitThreadFn>(next_name)) {
    next(&req, &prov, ierr);
  } else {
    int p = 0;
    set_ierr(ierr, PMPI_Init_thread(nullptr, nullptr, ask, &p));
    prov = static_cast<MPI_Fint>(p);
  }
  const int granted = static_cast<int>(prov);
  const int told = ask == want ? granted : papshim::thread_level_to_report(want, granted);
  *provided = static_cast<MPI_Fint>(told);
  if ((!ierr || *ierr == MPI_SUCCESS) && g.first()) papshim::on_init(granted, ask != want, told);
}

void f_finalize(const char* next_name, MPI_Fint* ierr) {
  papshim::ReentryGuard g;
  if (g.first()) papshim::on_finalize();
  auto next = next_symbol<InitFn>(next_name);
  if (next) next(ierr);
  else set_ierr(ierr, PMPI_Finalize());
}

}  // namespace

// Every spelling a Fortran compiler may use, and the mpi_f08 names.
extern "C" {
#define ALLREDUCE(name)                                                                                          \
  __attribute__((visibility("default"))) void name(void* sb, void* rb, MPI_Fint* c, MPI_Fint* t, MPI_Fint* o,    \
                                                   MPI_Fint* comm, MPI_Fint* ierr) {                             \
    f_allreduce(sb, rb, c, t, o, comm, ierr, __builtin_return_address(0));                                       \
  }
#define REDUCE(name)                                                                                             \
  __attribute__((visibility("default"))) void name(void* sb, void* rb, MPI_Fint* c, MPI_Fint* t, MPI_Fint* o,    \
                                                   MPI_Fint* root, MPI_Fint* comm, MPI_Fint* ierr) {             \
    f_reduce(sb, rb, c, t, o, root, comm, ierr, __builtin_return_address(0));                                    \
  }
#define ALLGATHER(name)                                                                                          \
  __attribute__((visibility("default"))) void name(void* sb, MPI_Fint* sc, MPI_Fint* st, void* rb,               \
                                                   MPI_Fint* rc, MPI_Fint* rt, MPI_Fint* comm, MPI_Fint* ierr) { \
    f_allgather(sb, sc, st, rb, rc, rt, comm, ierr, __builtin_return_address(0));                                \
  }
#define INIT(name, next, next_thread)                                                                             \
  __attribute__((visibility("default"))) void name(MPI_Fint* ierr) { f_init(next, next_thread, ierr); }
#define INIT_THREAD(name, next)                                                                                  \
  __attribute__((visibility("default"))) void name(MPI_Fint* req, MPI_Fint* prov, MPI_Fint* ierr) {             \
    f_init_thread(next, req, prov, ierr);                                                                        \
  }
#define FINALIZE(name, next)                                                                                     \
  __attribute__((visibility("default"))) void name(MPI_Fint* ierr) { f_finalize(next, ierr); }

ALLREDUCE(mpi_allreduce) ALLREDUCE(mpi_allreduce_) ALLREDUCE(mpi_allreduce__) ALLREDUCE(MPI_ALLREDUCE)
ALLREDUCE(mpi_allreduce_f08_)
REDUCE(mpi_reduce) REDUCE(mpi_reduce_) REDUCE(mpi_reduce__) REDUCE(MPI_REDUCE) REDUCE(mpi_reduce_f08_)
ALLGATHER(mpi_allgather) ALLGATHER(mpi_allgather_) ALLGATHER(mpi_allgather__) ALLGATHER(MPI_ALLGATHER)
ALLGATHER(mpi_allgather_f08_)
INIT(mpi_init, "mpi_init", "mpi_init_thread") INIT(mpi_init_, "mpi_init_", "mpi_init_thread_")
INIT(mpi_init__, "mpi_init__", "mpi_init_thread__") INIT(MPI_INIT, "MPI_INIT", "MPI_INIT_THREAD")
INIT(mpi_init_f08_, "mpi_init_f08_", "mpi_init_thread_f08_")
INIT_THREAD(mpi_init_thread, "mpi_init_thread") INIT_THREAD(mpi_init_thread_, "mpi_init_thread_")
INIT_THREAD(mpi_init_thread__, "mpi_init_thread__") INIT_THREAD(MPI_INIT_THREAD, "MPI_INIT_THREAD")
INIT_THREAD(mpi_init_thread_f08_, "mpi_init_thread_f08_")
FINALIZE(mpi_finalize, "mpi_finalize") FINALIZE(mpi_finalize_, "mpi_finalize_")
FINALIZE(mpi_finalize__, "mpi_finalize__") FINALIZE(MPI_FINALIZE, "MPI_FINALIZE")
FINALIZE(mpi_finalize_f08_, "mpi_finalize_f08_")
}  // extern "C"

#endif  // OPEN_MPI
