# Precompiled headers (ZEPPELIN_PCH): most of a translation unit's compile time here is the same heavy
# headers parsed again (nlohmann/json, fmt and the standard library in almost every file; CLI11, over 6 s
# alone, in every file of cli/). Each library and the CLI precompile them once per target: the demo's
# simulator-only CLI build drops from about 1040 to about 850 CPU-seconds (and to about 600 without debug
# information). `make demo` turns it on. The default stays OFF: the full build (CUDA, tests, WERROR)
# compiles with it (19 min on 2 cores) but gains little, as the test files it leaves alone dominate, and a
# precompiled header hides a missing include from the builds that use it.
option(ZEPPELIN_PCH "Precompile the heavy common headers of each library" OFF)

function(zb_precompile_common_headers directory)
  if(NOT ZEPPELIN_PCH)
    return()
  endif()
  get_property(targets DIRECTORY ${directory} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(NOT type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
      continue()
    endif()
    get_target_property(sources ${target} SOURCES)
    list(FILTER sources INCLUDE REGEX "\\.cpp$")
    list(LENGTH sources count)
    if(count LESS 3)  # a precompiled header costs about one file's compile: worth it from three files on
      continue()
    endif()
    target_precompile_headers(${target} PRIVATE
      "$<$<COMPILE_LANGUAGE:CXX>:<nlohmann/json.hpp$<ANGLE-R>>"
      "$<$<COMPILE_LANGUAGE:CXX>:<fmt/format.h$<ANGLE-R>>"
      "$<$<COMPILE_LANGUAGE:CXX>:<algorithm$<ANGLE-R>>"
      "$<$<COMPILE_LANGUAGE:CXX>:<filesystem$<ANGLE-R>>"
      "$<$<COMPILE_LANGUAGE:CXX>:<functional$<ANGLE-R>>"
      "$<$<COMPILE_LANGUAGE:CXX>:<map$<ANGLE-R>>"
      "$<$<COMPILE_LANGUAGE:CXX>:<memory$<ANGLE-R>>"
      "$<$<COMPILE_LANGUAGE:CXX>:<optional$<ANGLE-R>>"
      "$<$<COMPILE_LANGUAGE:CXX>:<string$<ANGLE-R>>"
      "$<$<COMPILE_LANGUAGE:CXX>:<unordered_map$<ANGLE-R>>"
      "$<$<COMPILE_LANGUAGE:CXX>:<vector$<ANGLE-R>>")
  endforeach()
  get_property(children DIRECTORY ${directory} PROPERTY SUBDIRECTORIES)
  foreach(child IN LISTS children)
    zb_precompile_common_headers(${child})
  endforeach()
endfunction()
