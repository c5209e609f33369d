// The builds of NVRTC and nvJitLink this process compiles and links with, as cache keys name
// them ("13.0.88", or "none" where the library cannot be opened), known without opening the
// library where its file tells them: a cache hit needs the compilers' identity, not the compilers
// (opening both costs a fresh process tens of milliseconds). ccache's compiler_check in spirit.
//
// The file is the one the loader would open (loader/compiler_apis.hpp: the first candidate path
// that is a file). Its build comes from its real name (libnvrtc.so.13 links to libnvrtc.so.13.0.88
// in some installs), else from what a process that opened that same file remembered in a disk
// cache's folder ("compiler-builds": path, device, inode, size, modification and change times,
// build; only in the folders of disk caches this process opened, which checked them private).
// Where neither tells, or the loader's own search by soname would find it, the library is opened
// and asked (compiler_build.hpp: its output names its build), and the answer remembered for the
// next process. Where the library names no build, keys name its release ("13.0"). Internal.
#pragma once

#include <filesystem>
#include <string>

namespace cudacore::detail {

enum class Compiler { nvrtc, nvjitlink };

// The version in keys, worked out once per process, then read (and taken from the library once
// it is open). Thread-safe; throws only std::bad_alloc.
std::string compiler_version_in_keys(Compiler compiler);

// Moves on each time a library opened after a key was made is not the build keys named (another
// release than its file said, or another file): code compiled then is not stored under keys of an
// earlier generation. A read, never throws.
unsigned compiler_identity_generation() noexcept;

// The generation after comparing each opened library with the build keys use (correcting it
// where they differ), and remembering the build of an opened file whose name carries none.
// Thread-safe; never throws.
unsigned confirm_compiler_identity() noexcept;

// Reads and writes the builds of library files whose names carry none in `cache_folder` (a disk
// cache's folder, checked private by the cache), from now on. Thread-safe; throws only
// std::bad_alloc.
void keep_compiler_versions_in(const std::filesystem::path& cache_folder);

// The build a library's real file name gives ("libnvrtc.so.13.0.88" gives "13.0.88"), or "" where
// the name carries no major.minor.patch after ".so." ("libnvrtc.so.13", "libnvJitLink.so.13.1").
std::string version_from_library_name(const std::string& file_name);

}  // namespace cudacore::detail
