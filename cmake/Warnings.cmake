# One INTERFACE target carries the warning flags; every project target links it.
add_library(zb_warnings INTERFACE)
target_compile_options(zb_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
                            -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough>)
if(ZEPPELIN_WERROR)
  target_compile_options(zb_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()

if(ZEPPELIN_SANITIZE)
  string(REPLACE "," ";" _zb_sanitizers "${ZEPPELIN_SANITIZE}")
  foreach(s IN LISTS _zb_sanitizers)
    if(NOT s MATCHES "^(address|undefined|leak|thread)$")
      message(FATAL_ERROR "ZEPPELIN_SANITIZE: unknown sanitizer '${s}' (use address, undefined, leak or thread)")
    endif()
  endforeach()
  target_compile_options(zb_warnings INTERFACE -fsanitize=${ZEPPELIN_SANITIZE} -fno-omit-frame-pointer
                                               -fno-sanitize-recover=all)
  target_link_options(zb_warnings INTERFACE -fsanitize=${ZEPPELIN_SANITIZE})
endif()
