# The optional cudacore::mpi component (library cudacore_mpi): included by the top-level
# CMakeLists.txt only when MPI was found. The core library never links MPI.
add_library(cudacore_mpi
  src/mpi/mpi_support.cpp
  src/mpi/mpi_transfer.cpp
  src/mpi/mpi_compile.cpp
  src/mpi/mpi_devices.cpp
  src/mpi/node_pool.cpp)
add_library(cudacore::mpi ALIAS cudacore_mpi)
# Installed, it finds libcudacore beside itself (the run path of a library is not inherited).
set_target_properties(cudacore_mpi PROPERTIES EXPORT_NAME mpi
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR} INSTALL_RPATH "$ORIGIN")
target_include_directories(cudacore_mpi PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
target_link_libraries(cudacore_mpi PUBLIC cudacore::cudacore MPI::MPI_CXX)
target_compile_options(cudacore_mpi PRIVATE -Wall -Wextra)

# The launcher line tests, examples and benchmarks use: `mpiexec -n N` plus, for Open MPI, what a
# single machine or container needs (more ranks than cores, shared memory only, no
# process_vm_readv, which containers often forbid) and --allow-run-as-root when built as root.
set(CUDACORE_MPIEXEC ${MPIEXEC_EXECUTABLE})
set(CUDACORE_MPIEXEC_FLAGS)
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _cudacore_mpiexec_version
                ERROR_QUIET RESULT_VARIABLE _cudacore_mpiexec_rc)
if(_cudacore_mpiexec_version MATCHES "Open MPI|OpenRTE")
  list(APPEND CUDACORE_MPIEXEC_FLAGS --oversubscribe --mca btl self,vader
       --mca btl_vader_single_copy_mechanism none)
  execute_process(COMMAND id -u OUTPUT_VARIABLE _cudacore_uid OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_cudacore_uid STREQUAL "0")
    list(APPEND CUDACORE_MPIEXEC_FLAGS --allow-run-as-root)
  endif()
endif()

# The mpi component (the libcudacore-mpi0 package): the library and its CMake target file, which
# cudacoreConfig.cmake loads for find_package(cudacore COMPONENTS mpi) where it is installed.
install(TARGETS cudacore_mpi EXPORT cudacoreMpiTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT mpi
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT mpi
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT mpi)
install(EXPORT cudacoreMpiTargets NAMESPACE cudacore::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cudacore COMPONENT mpi)
