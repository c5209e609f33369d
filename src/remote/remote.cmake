# The remote (Redis) tier, cudacore::remote (library cudacore_remote): a library of its own, so that
# only programs that use RemoteProgramCache load hiredis, uriparser and OpenSSL (its TLS).
# Included by the top-level CMakeLists.txt after the core library.
add_library(cudacore_remote
  src/remote/remote_cache_options.cpp
  src/remote/redis_connection.cpp
  src/remote/redis_stream.cpp
  src/remote/remote_program_cache_entry.cpp
  src/remote/server_backoff.cpp
  src/remote/failure_reports.cpp
  src/remote/connection_pool.cpp
  src/remote/remote_program_cache_compile_lock.cpp
  src/remote/remote_program_cache.cpp)
add_library(cudacore::remote ALIAS cudacore_remote)
# Installed, it finds libcudacore beside itself (the run path of a library is not inherited).
set_target_properties(cudacore_remote PROPERTIES EXPORT_NAME remote
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR} INSTALL_RPATH "$ORIGIN")
target_include_directories(cudacore_remote PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src ${XXHASH_INCLUDE_DIR})
target_compile_definitions(cudacore_remote PRIVATE XXH_INLINE_ALL)
target_link_libraries(cudacore_remote PUBLIC cudacore::cudacore
  PRIVATE OpenSSL::SSL OpenSSL::Crypto cudacore::hiredis uriparser::uriparser cudacore::nettle)
target_compile_options(cudacore_remote PRIVATE -Wall -Wextra)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(cudacore_remote PRIVATE -fno-semantic-interposition)
endif()

# The remote component (the libcudacore-remote0 package): the library and its CMake target file,
# which cudacoreConfig.cmake loads for find_package(cudacore COMPONENTS remote).
install(TARGETS cudacore_remote EXPORT cudacoreRemoteTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT remote
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT remote
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT remote)
install(EXPORT cudacoreRemoteTargets NAMESPACE cudacore::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cudacore COMPONENT remote)
