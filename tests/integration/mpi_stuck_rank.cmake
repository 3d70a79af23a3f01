# CTest script: a rank that stops in the middle of an MPI reference run must end the whole job, non-zero
# and in bounded time, with a message naming the rank that stopped and not blaming the plan. Before
# MPI_Abort, the ranks that timed out reported a missing send and then waited in MPI_Finalize forever
# for the stopped rank: here that is the TIMEOUT below. A rank that stops after its instructions, before
# its verification result or its row statistics, was waited for 2 hours (issue 38); now as long as it
# answers pings, so it is named within about two receive timeouts too. A rank that is only slow there
# (it answers pings while it takes three timeouts) is waited for, and the job ends 0.
# Variables: DRIVER, MPIEXEC, MPIEXEC_FLAGS (a ;-list), STUCK (the rank that stops), FAULT (layer, result,
# statistics or slow-result; default layer).
if(NOT DEFINED FAULT)
  set(FAULT layer)
endif()
string(TIMESTAMP started "%s")
execute_process(COMMAND "${MPIEXEC}" ${MPIEXEC_FLAGS} -np 4 "${DRIVER}" ${STUCK} ${FAULT}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
string(TIMESTAMP ended "%s")
math(EXPR seconds "${ended} - ${started}")
set(log "${out}${err}")
if(rc MATCHES "timeout|Process terminated")
  message(FATAL_ERROR "the job did not end within 60 s (${rc}): the ranks that timed out hang\n${log}")
endif()
if(FAULT STREQUAL "slow-result")
  string(REGEX MATCHALL "rank [0-9]: finished its layer" finished "${log}")
  list(LENGTH finished count)
  if(NOT rc EQUAL 0 OR NOT count EQUAL 4)
    message(FATAL_ERROR "a rank that was only slow (answering pings) ended the job: exit ${rc}, ${count} of 4 "
                        "ranks finished\n${log}")
  endif()
  message(STATUS "all 4 ranks waited for the slow rank ${STUCK} and finished (${seconds} s)")
  return()
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "the job exited 0 although rank ${STUCK} stopped\n${log}")
endif()
if(FAULT STREQUAL "layer")
  set(wait "rank [0-9]+: waited [0-9]+ ms and nothing arrived; it still waits for: [^\n]*from rank")
else()
  set(wait "rank [0-9]+: waited for result record from rank ${STUCK}, which stopped answering after it finished its instructions")
endif()
if(NOT log MATCHES "${wait}")
  message(FATAL_ERROR "no rank reported what it waited for ('${wait}')\n${log}")
endif()
if(NOT log MATCHES "rank ${STUCK} did not answer")
  message(FATAL_ERROR "the message does not name rank ${STUCK} as the one that stopped\n${log}")
endif()
if(log MATCHES "missing send|wrong peer")
  message(FATAL_ERROR "the message blames the plan for a rank that stopped\n${log}")
endif()
message(STATUS "the job ended with exit ${rc} in ${seconds} s, naming rank ${STUCK}")
