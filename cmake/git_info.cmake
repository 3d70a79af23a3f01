# Script mode (cmake -P), run on every build by the zb_git_info target: writes the commit the binary is
# built from and whether tracked files differed from it, so a report names the source it came from even
# after commits since the last configure. configure_file rewrites the header only when it changes, so an
# unchanged tree recompiles nothing.
#   -DSOURCE_DIR=<repository> -DOUTPUT=<header> -DTEMPLATE=<git_info.hpp.in>
# --no-optional-locks: a build must never take the index lock from someone committing in the same tree.
execute_process(COMMAND git --no-optional-locks rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE ZB_GIT_SHA OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE sha_status ERROR_QUIET)
execute_process(COMMAND git --no-optional-locks status --porcelain --untracked-files=no WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE changes RESULT_VARIABLE status_status ERROR_QUIET)
if(NOT sha_status EQUAL 0 OR NOT ZB_GIT_SHA)
  # Not a git checkout (a source tarball): nothing to name, and nothing known to differ from.
  set(ZB_GIT_SHA "unknown")
  set(ZB_GIT_DIRTY_01 false)
  set(ZB_GIT_KNOWN_01 false)
else()
  set(ZB_GIT_KNOWN_01 true)
  if(status_status EQUAL 0 AND changes STREQUAL "")
    set(ZB_GIT_DIRTY_01 false)
  else()
    set(ZB_GIT_DIRTY_01 true)
  endif()
endif()
configure_file(${TEMPLATE} ${OUTPUT} @ONLY)
