# cmake/git_info.cmake names the commit and says whether tracked files differ from it (issue 17, item 3):
# in a scratch repository, a clean tree is not dirty, an edited tracked file is, an untracked file is not,
# and outside git the revision is "unknown".
#   cmake -DSCRIPT=cmake/git_info.cmake -DTEMPLATE=cmake/git_info.hpp.in -DWORK_DIR=<scratch> -P git_info_test.cmake
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/repo ${WORK_DIR}/not-git)
set(header ${WORK_DIR}/git_info.hpp)
# The scratch folder may sit inside another checkout (the build tree): git must not find that one.
set(ENV{GIT_CEILING_DIRECTORIES} ${WORK_DIR})

function(git)
  execute_process(COMMAND git -c user.name=test -c user.email=test@example.com ${ARGN} WORKING_DIRECTORY ${WORK_DIR}/repo
                  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "git ${ARGN} failed: ${err}")
  endif()
  set(git_out "${out}" PARENT_SCOPE)
endfunction()

function(expect_header source_dir sha dirty)
  execute_process(COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${source_dir} -DOUTPUT=${header} -DTEMPLATE=${TEMPLATE}
                          -P ${SCRIPT} RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "git_info.cmake failed in ${source_dir}")
  endif()
  file(READ ${header} text)
  if(NOT text MATCHES "git_sha = \"${sha}\"" OR NOT text MATCHES "git_dirty = ${dirty};")
    message(FATAL_ERROR "expected sha ${sha}, dirty ${dirty}; got:\n${text}")
  endif()
endfunction()

git(init -q)
file(WRITE ${WORK_DIR}/repo/tracked.txt "one\n")
git(add tracked.txt)
git(commit -q -m first)
git(rev-parse --short=12 HEAD)
set(sha ${git_out})

expect_header(${WORK_DIR}/repo ${sha} false)
file(WRITE ${WORK_DIR}/repo/untracked.txt "not part of any commit\n")
expect_header(${WORK_DIR}/repo ${sha} false)
file(WRITE ${WORK_DIR}/repo/tracked.txt "two\n")
expect_header(${WORK_DIR}/repo ${sha} true)
expect_header(${WORK_DIR}/not-git unknown false)
message(STATUS "git_info.cmake: clean, untracked, dirty and non-git trees all named correctly")
