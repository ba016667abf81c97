# Warnings, set per target; sanitizers, set for every target.
function(papshim_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wpedantic>
    $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra>)
  if(PAPSHIM_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX,C>:-Werror>)
  endif()
endfunction()

# PAPSHIM_SANITIZE (e.g. address,undefined or thread): every target of the
# project (libraries, the preload, tests, benchmarks, C, C++ and Fortran) is
# compiled and linked with it; this file is included before any target is
# defined. Errors are not recovered from, so a report fails the program.
# The runtime the preload needs ahead of everything else (LD_PRELOAD of an
# uninstrumented program) is written to <build>/sanitizer/runtime.
if(PAPSHIM_SANITIZE)
  add_compile_options(-fsanitize=${PAPSHIM_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${PAPSHIM_SANITIZE})
  set(PAPSHIM_SANITIZER_RUNTIME "")
  foreach(pair address:libasan.so thread:libtsan.so)
    string(REPLACE ":" ";" pair "${pair}")
    list(GET pair 0 kind)
    list(GET pair 1 lib)
    if(",${PAPSHIM_SANITIZE}," MATCHES ",${kind},")
      execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${lib}
        OUTPUT_VARIABLE runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
      get_filename_component(runtime "${runtime}" REALPATH)
      set(PAPSHIM_SANITIZER_RUNTIME "${runtime}")
    endif()
  endforeach()
  # Settings for MPI programs run with the preload (the `sanitize` tests):
  # the preload comes ahead of the runtime the instrumented program links,
  # which is harmless here (the program initialises the runtime before any
  # library constructor). Leaks are checked in the unit tests only: Open
  # MPI leaves allocations behind in components it unloads before the check
  # (their frames cannot be named, so not suppressed), and full unwinding at
  # each allocation, which would name them, deadlocks in Open MPI's dlclose
  # (the rtld lock against libunwind's). ThreadSanitizer cannot see the
  # synchronisation inside the uninstrumented Open MPI (a request's
  # completion orders its memcpy into a buffer before the thread that tested
  # it reads the buffer; its allocator's locks look held forever), so reports
  # with a frame in, or a copy made by, Open MPI's libraries are suppressed;
  # races between papshim's own threads in papshim's code are not.
  set(dir ${PROJECT_BINARY_DIR}/sanitizer)
  file(WRITE ${dir}/tsan-mpi.supp "# Open MPI's synchronisation, invisible to ThreadSanitizer\n")
  foreach(lib libmpi.so libopen-pal.so libopen-rte.so mca_)
    foreach(kind race mutex deadlock)
      file(APPEND ${dir}/tsan-mpi.supp "${kind}:${lib}\n")
    endforeach()
  endforeach()
  foreach(lib libmpi.so libopen-pal.so libopen-rte.so)  # components are unloaded: not here
    file(APPEND ${dir}/tsan-mpi.supp "called_from_lib:${lib}\n")
  endforeach()
  set(PAPSHIM_SANITIZER_ENV_MPI "ASAN_OPTIONS=verify_asan_link_order=0:halt_on_error=1:detect_leaks=0"
    "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1"
    "TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=${dir}/tsan-mpi.supp")
  file(WRITE ${PROJECT_BINARY_DIR}/sanitizer/runtime "${PAPSHIM_SANITIZER_RUNTIME}\n")
  message(STATUS "sanitizers: ${PAPSHIM_SANITIZE} (runtime to preload first: ${PAPSHIM_SANITIZER_RUNTIME})")
endif()
