# Runs COMMAND (a ;-list) and fails unless it exits with EXPECTED and, when EXPECTED_STDERR is set, its
# standard error contains that text. Usage: cmake -DCOMMAND=... -DEXPECTED=2 [-DEXPECTED_STDERR=...] -P this
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL "${EXPECTED}")
  message(FATAL_ERROR "expected exit code ${EXPECTED}, got ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED EXPECTED_STDERR AND NOT err MATCHES "${EXPECTED_STDERR}")
  message(FATAL_ERROR "stderr does not mention '${EXPECTED_STDERR}':\n${err}")
endif()
