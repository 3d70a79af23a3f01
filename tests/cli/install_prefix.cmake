# `cmake --install` into a prefix gives a zeppelin-bench that runs from there (its libraries found, the
# CUDA toolkit's included) and lists the installed scenario library, not the source tree's.
# In: BUILD_DIR, WORK_DIR.
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc}):\n${err}")
endif()
execute_process(COMMAND ${WORK_DIR}/bin/zeppelin-bench -V RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^zeppelin-bench [0-9]")
  message(FATAL_ERROR "the installed zeppelin-bench does not run (${rc}):\n${out}\n${err}")
endif()
execute_process(COMMAND ${WORK_DIR}/bin/zeppelin-bench list scenarios WORKING_DIRECTORY ${WORK_DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT out MATCHES "share/zeppelin-bench/scenarios/quickstart.json")
  message(FATAL_ERROR "list scenarios does not show the installed library:\n${out}\n${err}")
endif()
if(NOT EXISTS ${WORK_DIR}/share/zeppelin-bench/docs/SCENARIOS.md)
  message(FATAL_ERROR "the docs were not installed")
endif()
# The man page and both shells' completions, written by the installed binary's own `man` and `completion`.
foreach(file man/man1/zeppelin-bench.1 bash-completion/completions/zeppelin-bench zsh/site-functions/_zeppelin-bench)
  if(NOT EXISTS ${WORK_DIR}/share/${file})
    message(FATAL_ERROR "cmake --install did not write share/${file}")
  endif()
endforeach()
file(READ ${WORK_DIR}/share/man/man1/zeppelin-bench.1 page)
if(NOT page MATCHES "^\\.TH ZEPPELIN")
  message(FATAL_ERROR "share/man/man1/zeppelin-bench.1 is not a man page:\n${page}")
endif()
