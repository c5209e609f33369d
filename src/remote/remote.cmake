# The remote (Redis) tier, cudacore::remote (library cudacore_remote): a library of its own, so that
# only programs that use RemoteProgramCache load hiredis, uriparser and OpenSSL (its TLS).
# Included by the top-level CMakeLists.txt after the core library.
cudacore_add_component(remote
  src/remote/remote_cache_options.cpp
  src/remote/redis_connection.cpp
  src/remote/redis_stream.cpp
  src/remote/remote_program_cache_entry.cpp
  src/remote/server_backoff.cpp
  src/remote/failure_reports.cpp
  src/remote/connection_pool.cpp
  src/remote/remote_program_cache_compile_lock.cpp
  src/remote/remote_program_cache.cpp)
target_include_directories(cudacore_remote PRIVATE ${XXHASH_INCLUDE_DIR})
target_compile_definitions(cudacore_remote PRIVATE XXH_INLINE_ALL)
target_link_libraries(cudacore_remote
  PRIVATE OpenSSL::SSL OpenSSL::Crypto cudacore::hiredis uriparser::uriparser cudacore::nettle)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(cudacore_remote PRIVATE -fno-semantic-interposition)
endif()

