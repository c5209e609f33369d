# cudacore_import_library(NAME HEADER LIBRARY): the imported target cudacore::NAME for a library
# that ships no CMake package (Nettle, hiredis: only a .pc file, which would need pkg-config, and
# hiredis's would put its own folder, with headers named read.h and the like, on every include
# path), found by one of its headers (HEADER, as included: nettle/sha2.h) and its library file.
# Sets cudacore_NAME_FOUND. Used by cudacore's build and, installed, by cudacoreConfig.cmake, so
# that the exported targets name the same dependency.
function(cudacore_import_library name header library)
  string(TOUPPER "${name}" upper)
  if(NOT TARGET cudacore::${name})
    find_path(CUDACORE_${upper}_INCLUDE_DIR ${header})
    find_library(CUDACORE_${upper}_LIBRARY ${library})
    if(CUDACORE_${upper}_INCLUDE_DIR AND CUDACORE_${upper}_LIBRARY)
      add_library(cudacore::${name} UNKNOWN IMPORTED GLOBAL)
      set_target_properties(cudacore::${name} PROPERTIES
        IMPORTED_LOCATION "${CUDACORE_${upper}_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${CUDACORE_${upper}_INCLUDE_DIR}")
    endif()
  endif()
  if(TARGET cudacore::${name})
    set(cudacore_${name}_FOUND TRUE PARENT_SCOPE)
  else()
    set(cudacore_${name}_FOUND FALSE PARENT_SCOPE)
  endif()
endfunction()
