# hiredis (Debian libhiredis-dev) as the imported target cudacore::hiredis: hiredis ships no CMake
# targets (only hiredis.pc, whose -I<include>/hiredis would put its headers, read.h and the like,
# on every include path). Used by cudacore's build and, installed, by cudacoreConfig.cmake, so
# that the exported targets name the same dependency. Sets cudacore_hiredis_FOUND.
if(NOT TARGET cudacore::hiredis)
  find_path(CUDACORE_HIREDIS_INCLUDE_DIR hiredis/hiredis.h)
  find_library(CUDACORE_HIREDIS_LIBRARY hiredis)
  if(CUDACORE_HIREDIS_INCLUDE_DIR AND CUDACORE_HIREDIS_LIBRARY)
    add_library(cudacore::hiredis UNKNOWN IMPORTED GLOBAL)
    set_target_properties(cudacore::hiredis PROPERTIES
      IMPORTED_LOCATION "${CUDACORE_HIREDIS_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${CUDACORE_HIREDIS_INCLUDE_DIR}")
  endif()
endif()
if(TARGET cudacore::hiredis)
  set(cudacore_hiredis_FOUND TRUE)
else()
  set(cudacore_hiredis_FOUND FALSE)
endif()
