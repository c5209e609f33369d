# Nettle (Debian nettle-dev) as the imported target cudacore::nettle: SHA-256 and HMAC-SHA-256 of
# keys and seals (src/support/sha256.hpp). Nettle ships no CMake targets, and its nettle.pc would
# need pkg-config. Used by cudacore's build and, installed, by cudacoreConfig.cmake, so that the
# exported targets name the same dependency. Sets cudacore_nettle_FOUND.
if(NOT TARGET cudacore::nettle)
  find_path(CUDACORE_NETTLE_INCLUDE_DIR nettle/sha2.h)
  find_library(CUDACORE_NETTLE_LIBRARY nettle)
  if(CUDACORE_NETTLE_INCLUDE_DIR AND CUDACORE_NETTLE_LIBRARY)
    add_library(cudacore::nettle UNKNOWN IMPORTED GLOBAL)
    set_target_properties(cudacore::nettle PROPERTIES
      IMPORTED_LOCATION "${CUDACORE_NETTLE_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${CUDACORE_NETTLE_INCLUDE_DIR}")
  endif()
endif()
if(TARGET cudacore::nettle)
  set(cudacore_nettle_FOUND TRUE)
else()
  set(cudacore_nettle_FOUND FALSE)
endif()
