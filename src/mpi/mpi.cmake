# The optional cudacore::mpi component (library cudacore_mpi): included by the top-level
# CMakeLists.txt only when MPI was found. The core library never links MPI.
cudacore_add_component(mpi
  src/mpi/mpi_support.cpp
  src/mpi/mpi_transfer.cpp
  src/mpi/mpi_compile.cpp
  src/mpi/mpi_devices.cpp
  src/mpi/node_pool.cpp)
target_link_libraries(cudacore_mpi PUBLIC MPI::MPI_CXX)

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

