# --- behaving like the MPI library: threads, errors, exits, communicators ----
# Included from tests/mpi/CMakeLists.txt (uses its papshim_mpi_test, RUN_MPI,
# PRELOAD).  Each program's header says what it checks.
set(SAME_AS_NATIVE ${PROJECT_SOURCE_DIR}/tests/support/same_as_native.sh)
set(EXPECT_OUTPUT ${PROJECT_SOURCE_DIR}/tests/support/expect_output.sh)
foreach(prog thread_check error_check exit_check comm_check init_check allgather_mixed_check)
  add_executable(${prog} ${prog}.c)
  target_link_libraries(${prog} PRIVATE MPI::MPI_C Threads::Threads)
  papshim_set_warnings(${prog})
endforeach()

# Three threads, each on its own communicator, running allreduce, reduce and
# allgather of a strided type at the same time with imbalanced arrivals:
# auto with both predictors and forced algorithms, exact for 40 iterations.
set(papshim_thread_modes
  "auto_sma:PAPSHIM_PREDICTOR=sma"
  "auto_edge:PAPSHIM_PREDICTOR=edge"
  "forced_a:PAPSHIM_ALLREDUCE=prr;PAPSHIM_REDUCE=clairvoyant;PAPSHIM_ALLGATHER=sparbit"
  "forced_b:PAPSHIM_ALLREDUCE=slt;PAPSHIM_REDUCE=sorted_binomial;PAPSHIM_ALLGATHER=bruck")
foreach(entry IN LISTS papshim_thread_modes)
  string(FIND "${entry}" ":" colon)
  string(SUBSTRING "${entry}" 0 ${colon} mode)
  math(EXPR colon "${colon} + 1")
  string(SUBSTRING "${entry}" ${colon} -1 settings)
  papshim_mpi_test(threads_${mode}_np4 4 TIMEOUT 240 LABELS reliability
    ENV ${PRELOAD} PAPSHIM_REPORT=off PAPSHIM_CHECK=1 ${settings}
    COMMAND $<TARGET_FILE:thread_check> 3 40 4096)
endforeach()

# Calls the library rejects get the library's own error (same error class as
# without the preload), and the next valid call on the communicator works.
# Not in the MPICH subset: MPICH 4.0.2 itself crashes on some of these calls.
foreach(mode auto forced)
  set(settings "")
  if(mode STREQUAL forced)
    set(settings PAPSHIM_ALLREDUCE=prr PAPSHIM_REDUCE=clairvoyant PAPSHIM_ALLGATHER=sparbit)
  endif()
  add_test(NAME errors_${mode}_np3 COMMAND ${SAME_AS_NATIVE} 3 ${PRELOAD} PAPSHIM_REPORT=off ${settings}
    -- $<TARGET_FILE:error_check>)
endforeach()

# exit() without MPI_Finalize keeps the program's exit code (no abort at
# static destruction); a forked child leaves with its own code.
add_test(NAME exit_without_finalize_np2 COMMAND ${SAME_AS_NATIVE} 2 ${PRELOAD} PAPSHIM_REPORT=off
  -- $<TARGET_FILE:exit_check> exit 7)
add_test(NAME exit_forked_child_np2 COMMAND ${SAME_AS_NATIVE} 2 ${PRELOAD} PAPSHIM_REPORT=off
  -- $<TARGET_FILE:exit_check> fork)

# MPI_Query_thread and `provided` say what the application would hear
# without the preload, although papshim asks for MPI_THREAD_MULTIPLE.
foreach(level init single funneled serialized)
  set(arg ${level})
  if(level STREQUAL init)
    set(arg "")
  endif()
  add_test(NAME thread_level_${level}_np2 COMMAND ${SAME_AS_NATIVE} 2 ${PRELOAD} PAPSHIM_REPORT=off
    -- $<TARGET_FILE:init_check> ${arg})
endforeach()

# 20,000 cycles of dup, large allreduce, free: exact, memory flat (within
# 1 MiB after the first tenth); and communicators whose private duplicate the
# library refuses run native instead of aborting (the refusal emulated after
# 50 duplicates; a real one takes about 32,000 live communicators on Open MPI).
# Serial: each cycle synchronises the two ranks three times (dup, allreduce,
# free), and with the cores busy elsewhere each of those waits can take a
# scheduler time slice; natively too (149 s for the 20,000 cycles beside two
# CPU-bound processes, 0.9 s alone).
papshim_mpi_test(comms_cycle_np2 2 TIMEOUT 240 LABELS reliability ENV ${PRELOAD} PAPSHIM_REPORT=off
  COMMAND $<TARGET_FILE:comm_check> cycle 20000)
set_tests_properties(comms_cycle_np2 PROPERTIES RUN_SERIAL ON)
set(prefix ${REPORT_DIR}/comms_refused)
add_test(NAME comms_refused_np3 COMMAND ${CHECK_REPORT} --report ${prefix}
  --expect-fallback "no private communicator" --
  ${RUN_MPI} 3 ${PRELOAD} PAPSHIM_REPORT=${prefix} PAPSHIM_TEST_MAX_PRIVATE=50 PAPSHIM_ALLREDUCE=prr --
  $<TARGET_FILE:comm_check> live 200)

# PAPSHIM_CHECK accepts an allgather whose receive count and type differ
# between ranks with the same type signature.
foreach(alg sparbit ring bruck recursive_doubling auto)
  papshim_mpi_test(allgather_mixed_types_${alg}_np3 3 LABELS reliability
    ENV ${PRELOAD} PAPSHIM_REPORT=off PAPSHIM_CHECK=1 PAPSHIM_ALLGATHER=${alg}
    COMMAND $<TARGET_FILE:allgather_mixed_check> 4096)
endforeach()
# The straggler allgather cuts blocks of 64 KiB and more into chunks, which
# cannot be cut in elements when the types differ: 8195 pairs are 3 chunks
# of bytes at P = 5 (2 at P = 4), split inside a pair; with "gaps" the odd
# ranks' receive type is not contiguous and with "permuted" its fields are
# not in signature order, so the call runs on a staging buffer there.
foreach(np 4 5)
  foreach(mode plain gaps permuted)
    papshim_mpi_test(allgather_mixed_types_straggler_${mode}_np${np} ${np} LABELS reliability
      ENV ${PRELOAD} PAPSHIM_REPORT=off PAPSHIM_CHECK=1 PAPSHIM_ALLGATHER=straggler
      COMMAND $<TARGET_FILE:allgather_mixed_check> 8195 ${mode})
  endforeach()
endforeach()

# The Fortran MPI_INIT asks for MPI_THREAD_MULTIPLE itself, so no warning
# about a level the application never asked for.
if(PAPSHIM_FORTRAN_TESTS)
  add_test(NAME fortran_init_no_thread_warning_np2 COMMAND ${EXPECT_OUTPUT} --absent "MPI_THREAD_MULTIPLE" --
    ${RUN_MPI} 2 ${PRELOAD} PAPSHIM_REPORT=off -- $<TARGET_FILE:fortran_check>)
endif()

set(papshim_reliability errors_auto_np3 errors_forced_np3 exit_without_finalize_np2 exit_forked_child_np2
  thread_level_init_np2 thread_level_single_np2 thread_level_funneled_np2 thread_level_serialized_np2
  comms_refused_np3 fortran_init_no_thread_warning_np2)
foreach(t IN LISTS papshim_reliability)
  if(TEST ${t})
    set_tests_properties(${t} PROPERTIES TIMEOUT 120 LABELS "mpi;reliability" ENVIRONMENT PAPSHIM_TEST_TIMEOUT=100)
  endif()
endforeach()

# The executor's scratch memory is released after a call that needed more
# than 32 MiB: after a 64 MiB reduce and allreduce on 4 ranks, each rank
# keeps at most 40 MiB more than without the preload (it kept up to 130 MiB
# more at the root before).
add_executable(scratch_check scratch_check.c)
target_link_libraries(scratch_check PRIVATE MPI::MPI_C)
papshim_set_warnings(scratch_check)
add_test(NAME memory_scratch_np4 COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/tests/support/check_memory.py
  --kept-only --max-extra-kb 40960 --
  ${RUN_MPI} 4 -- $<TARGET_FILE:scratch_check> 64
  ::: ${RUN_MPI} 4 ${PRELOAD} PAPSHIM_REPORT=off PAPSHIM_REDUCE=sorted_binomial PAPSHIM_ALLREDUCE=prr --
  $<TARGET_FILE:scratch_check> 64
  ::: ${RUN_MPI} 4 ${PRELOAD} PAPSHIM_REPORT=off PAPSHIM_REDUCE=clairvoyant PAPSHIM_ALLREDUCE=slt --
  $<TARGET_FILE:scratch_check> 64)
set_tests_properties(memory_scratch_np4 PROPERTIES TIMEOUT 300 LABELS "mpi;reliability" RUN_SERIAL ON
  ENVIRONMENT PAPSHIM_TEST_TIMEOUT=280)
