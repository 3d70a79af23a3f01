# Runs COMMAND (a ;-list) and fails unless it exits with EXPECTED and, when EXPECTED_STDERR (EXPECTED_STDOUT)
# is set, its standard error (output) matches that regular expression.
# Usage: cmake -DCOMMAND=... -DEXPECTED=2 [-DEXPECTED_STDERR=...] [-DEXPECTED_STDOUT=...] -P this
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL "${EXPECTED}")
  message(FATAL_ERROR "expected exit code ${EXPECTED}, got ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED EXPECTED_STDERR AND NOT err MATCHES "${EXPECTED_STDERR}")
  message(FATAL_ERROR "stderr does not mention '${EXPECTED_STDERR}':\n${err}")
endif()
if(DEFINED EXPECTED_STDOUT AND NOT out MATCHES "${EXPECTED_STDOUT}")
  message(FATAL_ERROR "stdout does not mention '${EXPECTED_STDOUT}':\n${out}")
endif()
