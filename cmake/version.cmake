# Writes gf_version.hpp with the version and the git commit; rewrites it only
# when its text changes so that builds stay incremental.
execute_process(COMMAND git -C ${SRC} rev-parse --short=12 HEAD
  OUTPUT_VARIABLE GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR GIT_COMMIT STREQUAL "")
  set(GIT_COMMIT "unknown")
endif()
execute_process(COMMAND git -C ${SRC} status --porcelain --untracked-files=no
  OUTPUT_VARIABLE DIRTY OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT DIRTY STREQUAL "")
  set(GIT_COMMIT "${GIT_COMMIT}-dirty")
endif()
set(text "#pragma once
#define GF_VERSION \"${VERSION}\"
#define GF_GIT_COMMIT \"${GIT_COMMIT}\"
#define GF_BUILD_TYPE \"${BUILD_TYPE}\"
#define GF_COMPILER \"${COMPILER}\"
")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
else()
  set(old "")
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
