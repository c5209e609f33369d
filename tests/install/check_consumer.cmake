# Configures, builds and runs the consumer project (tests/install/consumer) against cudacore found
# one way, and checks what each of its programs prints. Run with cmake -P; scripts/packages.sh
# runs it three ways. Variables:
#   CONSUMER_DIR, WORK_DIR (emptied first)   the project, and where to build it
#   PREFIX        find_package(cudacore) from this prefix (an install tree, or the usr/ folder of
#                 Debian packages unpacked with dpkg -x); the pkg-config file is checked too
#   FETCH_SOURCE  instead of PREFIX: FetchContent of the cudacore source tree in this folder,
#                 building only the targets the consumer needs
#   FAST_BUILD    ON: build type Debug with -O0 alone (no debug information), a unity build: the
#                 quickest compile
#   GENERATOR, BUILD_TYPE, LAUNCHER (a compiler launcher such as ccache), CXX (the compiler,
#   for the pkg-config build), LIBDIR (the prefix's library folder), WITH_MPI (ON: cudacore::mpi),
#   WITH_REMOTE (OFF: no cudacore::remote; fetched, cudacore is built without it, and its CLI
#   must refuse a remote cache, saying why)
file(REMOVE_RECURSE ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()
function(expect program regex)
  if(NOT last_output MATCHES "${regex}")
    message(FATAL_ERROR "unexpected output of ${program}:\n${last_output}")
  endif()
  string(STRIP "${last_output}" shown)
  message(STATUS "${program}: ${shown}")
endfunction()
if(NOT DEFINED WITH_MPI)
  set(WITH_MPI OFF)
endif()
if(NOT DEFINED WITH_REMOTE)
  set(WITH_REMOTE ON)
endif()

set(configure_args -S ${CONSUMER_DIR} -B ${WORK_DIR}/consumer -DWITH_MPI=${WITH_MPI}
    -DWITH_REMOTE=${WITH_REMOTE})
if(GENERATOR)
  list(APPEND configure_args -G ${GENERATOR})
endif()
if(FAST_BUILD)
  list(APPEND configure_args -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DCMAKE_UNITY_BUILD=ON)
elseif(BUILD_TYPE)
  list(APPEND configure_args -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
endif()
if(LAUNCHER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
if(CXX)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER=${CXX})
endif()
if(FETCH_SOURCE)
  list(APPEND configure_args -DCUDACORE_FETCH=ON -DFETCHCONTENT_SOURCE_DIR_CUDACORE=${FETCH_SOURCE})
else()
  list(APPEND configure_args -DCMAKE_PREFIX_PATH=${PREFIX})
endif()
run(${CMAKE_COMMAND} ${configure_args})
# The package came from the prefix given, not from anywhere else on the machine.
if(PREFIX)
  string(FIND "${last_output}" " found in ${PREFIX}/" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "cudacore was not found in ${PREFIX}:\n${last_output}")
  endif()
endif()
# Only the consumer's programs (and what they need), not cudacore's examples when fetched.
set(targets consumer consumer_bundle)
if(WITH_REMOTE)
  list(APPEND targets consumer_remote)
endif()
if(WITH_MPI)
  list(APPEND targets consumer_mpi)
endif()
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer --target ${targets})

run(${WORK_DIR}/consumer/consumer)
expect(consumer "^cudacore [0-9]+\\.[0-9]+\\.[0-9]+, driver (present|absent), kernel scale in PTX: [0-9]+ bytes\n$")
# cudacore_add_header_bundle in the consumer's build, through the cudacore CLI.
run(${WORK_DIR}/consumer/consumer_bundle)
expect(consumer_bundle "^bundle consumer_headers: 2 headers, consumer/api.h present\nkernel fill from the bundle in PTX: [0-9]+ bytes\n$")
# The optional components: find_package(cudacore COMPONENTS remote|mpi) and a program linking
# cudacore::remote or cudacore::mpi.
if(WITH_REMOTE)
  run(${WORK_DIR}/consumer/consumer_remote)
  expect(consumer_remote "^cudacore::remote redis://127\\.0\\.0\\.1:6399/2, prefix consumer\n$")
elseif(FETCH_SOURCE)
  # Built without the remote tier: no libcudacore_remote, and a CLI that refuses a remote cache.
  file(GLOB_RECURSE remote_libraries ${WORK_DIR}/consumer/_deps/libcudacore_remote*)
  if(remote_libraries)
    message(FATAL_ERROR "built without the remote tier, yet: ${remote_libraries}")
  endif()
  file(GLOB_RECURSE cli ${WORK_DIR}/consumer/_deps/*/tools/cudacore)
  execute_process(COMMAND ${cli} cache stats --remote redis://127.0.0.1:6399/2
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT err MATCHES "--remote names a remote cache, but this cudacore was built without its remote tier")
    message(FATAL_ERROR "the CLI built without the remote tier took --remote (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "cudacore built without cudacore::remote: its CLI refuses --remote")
endif()
if(WITH_MPI)
  run(${WORK_DIR}/consumer/consumer_mpi)
  expect(consumer_mpi "^cudacore::mpi rank 0 of 1")
endif()

if(PREFIX)
  # The installed CLI finds the installed library (its run path is relative to bin/).
  run(${PREFIX}/bin/cudacore --version)
  expect("cudacore --version" "cudacore [0-9]+\\.[0-9]+\\.[0-9]+")
  # pkg-config: the consumer's main.cpp built with the flags cudacore.pc gives, without CMake.
  find_program(PKG_CONFIG pkg-config REQUIRED)
  set(ENV{PKG_CONFIG_PATH} "${PREFIX}/${LIBDIR}/pkgconfig")
  run(${PKG_CONFIG} --cflags --libs cudacore)
  string(STRIP "${last_output}" pc_flags)
  separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
  run(${CXX} -std=c++20 ${CONSUMER_DIR}/main.cpp ${pc_flags}
      -Wl,-rpath,${PREFIX}/${LIBDIR} -o ${WORK_DIR}/consumer_pkg_config)
  run(${WORK_DIR}/consumer_pkg_config)
  expect(consumer_pkg_config "^cudacore [0-9]+\\.[0-9]+\\.[0-9]+, driver (present|absent), kernel scale in PTX: [0-9]+ bytes\n$")
  # A component the package lacks is refused, naming it (a missing remote or mpi package says
  # how to get it the same way).
  file(WRITE ${WORK_DIR}/missing/CMakeLists.txt
       "cmake_minimum_required(VERSION 3.24)\nproject(missing LANGUAGES CXX)\n"
       "find_package(cudacore REQUIRED COMPONENTS no_such_part)\n")
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/missing -B ${WORK_DIR}/missing/build
                          -DCMAKE_PREFIX_PATH=${PREFIX}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX REPLACE "[ \n]+" " " err "${err}")
  if(rc EQUAL 0 OR NOT err MATCHES "cudacore has no component 'no_such_part' \\(its components: remote, mpi\\)")
    message(FATAL_ERROR "find_package(cudacore COMPONENTS no_such_part) was not refused by name (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "find_package(cudacore COMPONENTS no_such_part): refused, naming it")
endif()
