# Debug information kept small: line tables (-g1) are what backtraces, the sanitizers' reports,
# perf and callgrind read, and they are compressed (-gz) when the toolchain can. Full -g made a
# build tree 3.3 GB and the sanitizer tree 4.7 GB (CI ran out of disk in its first build once);
# with -g1 -gz an object is about an eighth of that. GPUGUARD_FULL_DEBUG_INFO=ON keeps the build
# type's -g for a debugger session that needs locals and types.
option(GPUGUARD_FULL_DEBUG_INFO "Keep full -g debug information (default: line tables only)" OFF)

include(CheckCXXCompilerFlag)
include(CheckLinkerFlag)

if(NOT GPUGUARD_FULL_DEBUG_INFO)
  # After CMAKE_CXX_FLAGS_<CONFIG> on the command line, so this -g1 is the level that holds.
  add_compile_options($<$<CONFIG:Debug,RelWithDebInfo>:-g1>)
endif()

check_cxx_compiler_flag(-gz GPUGUARD_COMPILER_HAS_GZ)
check_linker_flag(CXX -gz GPUGUARD_LINKER_HAS_GZ)
if(GPUGUARD_COMPILER_HAS_GZ AND GPUGUARD_LINKER_HAS_GZ)
  add_compile_options($<$<CONFIG:Debug,RelWithDebInfo>:-gz>)
  add_link_options($<$<CONFIG:Debug,RelWithDebInfo>:-gz>)
endif()
