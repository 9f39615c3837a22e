# The version and the commit the binaries report (--version). The version lives in
# project(gpuguard VERSION ...); the commit comes from git at configure time, or from
# -DGPUGUARD_COMMIT=... for a build from a tarball or any tree without git. Never fails
# without git: the commit is then "unknown". Tags are not used (a clone may have none).
if(NOT DEFINED GPUGUARD_COMMIT OR GPUGUARD_COMMIT STREQUAL "")
  set(GPUGUARD_COMMIT unknown)
  find_package(Git QUIET)
  if(GIT_FOUND AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
    # --match with a pattern no tag has: always the abbreviated hash, "-dirty" when the
    # work tree has uncommitted changes, whatever tags the clone carries.
    execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --dirty --abbrev=12
                            --match=gpuguard-no-tag-matches-this
                    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                    OUTPUT_VARIABLE _gpuguard_commit OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE _gpuguard_git_rc ERROR_QUIET)
    if(_gpuguard_git_rc EQUAL 0 AND NOT _gpuguard_commit STREQUAL "")
      set(GPUGUARD_COMMIT ${_gpuguard_commit})
    endif()
  endif()
endif()
message(STATUS "gpuguard ${PROJECT_VERSION} (commit ${GPUGUARD_COMMIT})")

# Front ends include "gpuguard_version.h" (GPUGUARD_VERSION, GPUGUARD_VERSION_LONG) by
# linking gpuguard_version. configure_file leaves the header untouched when nothing changed,
# so a re-configure at the same commit rebuilds nothing.
configure_file(${PROJECT_SOURCE_DIR}/cmake/version.h.in ${PROJECT_BINARY_DIR}/generated/gpuguard_version.h @ONLY)
add_library(gpuguard_version INTERFACE)
target_include_directories(gpuguard_version INTERFACE ${PROJECT_BINARY_DIR}/generated)
