# CTest script: a rank that stops in the middle of an MPI reference run must end the whole job, non-zero
# and in bounded time, with a message naming the rank that stopped and not blaming the plan. Before
# MPI_Abort, the ranks that timed out reported a missing send and then waited in MPI_Finalize forever
# for the stopped rank: here that is the TIMEOUT below. Variables: DRIVER, MPIEXEC, MPIEXEC_FLAGS (a
# ;-list), STUCK (the rank that stops).
execute_process(COMMAND "${MPIEXEC}" ${MPIEXEC_FLAGS} -np 4 "${DRIVER}" ${STUCK}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
set(log "${out}${err}")
if(rc MATCHES "timeout|Process terminated")
  message(FATAL_ERROR "the job did not end within 60 s (${rc}): the ranks that timed out hang\n${log}")
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "the job exited 0 although rank ${STUCK} stopped\n${log}")
endif()
if(NOT log MATCHES "rank [0-9]+: waited [0-9]+ ms and nothing arrived; it still waits for: [^\n]*from rank")
  message(FATAL_ERROR "no rank reported what it waited for\n${log}")
endif()
if(NOT log MATCHES "rank ${STUCK} did not answer")
  message(FATAL_ERROR "the message does not name rank ${STUCK} as the one that stopped\n${log}")
endif()
if(log MATCHES "missing send|wrong peer")
  message(FATAL_ERROR "the message blames the plan for a rank that stopped\n${log}")
endif()
message(STATUS "the job ended with exit ${rc}, naming rank ${STUCK}")
