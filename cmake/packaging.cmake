# CPack: Debian packages, one per install component, and a binary tarball of all of them.
#   cpack --config <build>/CPackConfig.cmake -B <folder>
# libcudacore0      runtime: libcudacore.so.0 and the helpers in libexec/cudacore
# libcudacore-dev   dev: headers, libcudacore.so, the CMake package, cudacore.pc and
#                   cudacore_add_header_bundle
# libcudacore-remote0  remote: libcudacore_remote, the Redis tier, and its CMake target
#                   (cudacore::remote)
# cudacore-tools    tools: the cudacore CLI and its CMake target (cudacore::cli)
# libcudacore-mpi0  mpi, where MPI was found: libcudacore_mpi and its CMake target (cudacore::mpi)
# Binaries get their library dependencies from dpkg-shlibdeps; the CUDA driver, NVRTC and
# nvJitLink are opened at run time, so they are recommended, not required. The install prefix of
# the packages is /usr; the folders below it are the build's (GNUInstallDirs).
set(CPACK_PACKAGE_NAME cudacore)
set(CPACK_PACKAGE_VENDOR cudacore)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "C++20 model of cuda.core: run-time compile and link, ObjectCode, streams, memory, graphs")
set(CUDACORE_PACKAGE_MAINTAINER "cudacore developers" CACHE STRING
    "The Maintainer field of the Debian packages (Name <address>, given by whoever publishes them)")
set(CPACK_PACKAGE_CONTACT "${CUDACORE_PACKAGE_MAINTAINER}")
set(CPACK_GENERATOR DEB TGZ)
set(CPACK_STRIP_FILES OFF)
# The tarball: every component in one tree, rooted at its top folder (relocatable like any install).
set(CPACK_ARCHIVE_COMPONENT_INSTALL OFF)
set(CPACK_INCLUDE_TOPLEVEL_DIRECTORY ON)

set(CPACK_COMPONENTS_ALL runtime dev tools)
if(TARGET cudacore_remote)
  list(APPEND CPACK_COMPONENTS_ALL remote)
endif()
if(TARGET cudacore_mpi)
  list(APPEND CPACK_COMPONENTS_ALL mpi)
endif()
if(NOT TARGET cudacore_cli)
  list(REMOVE_ITEM CPACK_COMPONENTS_ALL tools)
endif()
set(CPACK_COMPONENT_DEV_DEPENDS runtime)
set(CPACK_COMPONENT_REMOTE_DEPENDS runtime)
set(CPACK_COMPONENT_TOOLS_DEPENDS runtime)
if(TARGET cudacore_remote)
  list(APPEND CPACK_COMPONENT_TOOLS_DEPENDS remote)
endif()
set(CPACK_COMPONENT_MPI_DEPENDS runtime)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
# Each package depends on the exact version of libcudacore0 it was built with.
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# dpkg-shlibdeps finds libcudacore.so.0 and libcudacore_remote.so.0 (needed by the CLI and the
# other libraries, packaged elsewhere) in the build folder; the dependency on their packages comes
# from the components above.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR})

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libcudacore0)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "The shared library and the helper programs it starts (libexec/cudacore).
Nothing links against the CUDA driver, NVRTC or nvJitLink: they are opened at run time.")
# NVIDIA's repository names; NVRTC and nvJitLink may also come from beside the application.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS "cuda-nvrtc-13-0, libnvjitlink-13-0")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libcudacore-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_DESCRIPTION
    "Headers, the CMake package (find_package(cudacore)), cudacore.pc and cudacore_add_header_bundle.")
# What cudacoreConfig.cmake finds (find_dependency) and cudacore.pc requires. The CUDA toolkit's
# headers (cuda.h, nvrtc.h) come from NVIDIA's repository or a toolkit installed by hand.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "libssl-dev, libzstd-dev, nettle-dev, libhiredis-dev, liburiparser-dev, libdlpack-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_RECOMMENDS "cuda-cudart-dev-13-0, cuda-nvrtc-dev-13-0, cudacore-tools")
set(CPACK_DEBIAN_DEV_PACKAGE_SUGGESTS "libcudacore-remote0, libcudacore-mpi0, libopenmpi-dev")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME cudacore-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_TOOLS_DESCRIPTION "The cudacore command line: compile, link, inspect and cache code, make
header bundles, list devices.")

set(CPACK_DEBIAN_REMOTE_PACKAGE_NAME libcudacore-remote0)
set(CPACK_DEBIAN_REMOTE_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_REMOTE_DESCRIPTION "cudacore::remote: RemoteProgramCache, the program cache a fleet shares on a Redis server
(hiredis, OpenSSL's TLS), with its CMake target (find_package(cudacore COMPONENTS remote)).")

set(CPACK_DEBIAN_MPI_PACKAGE_NAME libcudacore-mpi0)
set(CPACK_DEBIAN_MPI_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_MPI_DESCRIPTION "cudacore::mpi: compile in shards and ship ObjectCode between MPI ranks
(Open MPI), with its CMake target (find_package(cudacore COMPONENTS mpi)).")

include(CPack)
