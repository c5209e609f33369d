// The versions of NVRTC and nvJitLink this process compiles and links with, as cache keys name
// them ("13.0", or "none" where the library cannot be opened), known without opening the library
// where its file tells them: a cache hit needs the compilers' identity, not the compilers (opening
// both costs a fresh process tens of milliseconds). ccache's compiler_check in spirit. Internal.
//
// The file is the one the loader would open (loader/compiler_apis.hpp: the first candidate path
// that is a file). Its version comes from its real name (the toolkit's libnvrtc.so.13 links to
// libnvrtc.so.13.0.88), else from what a process that opened that same file remembered in a disk
// cache's folder ("compiler-versions": path, device, inode, size, modification and change times,
// version; only in the folders of disk caches this process opened, which checked them private). Where neither tells, or the loader's own search by soname would find it, the library
// is opened and asked, and its answer remembered for the next process.
#pragma once

#include <filesystem>
#include <string>

namespace cudacore::detail {

enum class Compiler { nvrtc, nvjitlink };

// The version in keys, worked out once per process, then read (and taken from the library once
// it is open). Thread-safe; throws only std::bad_alloc.
std::string compiler_version_in_keys(Compiler compiler);

// Moves on each time a library opened after a key was made answers another version than its
// file said: code compiled then is not stored under keys of an earlier generation. A read, never
// throws.
unsigned compiler_identity_generation() noexcept;

// The generation after comparing each opened library with the version keys use (correcting it
// where they differ), and remembering the version of an opened file whose name carries none.
// Thread-safe; never throws.
unsigned confirm_compiler_identity() noexcept;

// Reads and writes the versions of library files whose names carry none in `cache_folder` (a disk
// cache's folder, checked private by the cache), from now on. Thread-safe; throws only
// std::bad_alloc.
void keep_compiler_versions_in(const std::filesystem::path& cache_folder);

// The version a library's real file name gives ("libnvrtc.so.13.0.88" gives "13.0"), or "" where
// the name carries no major.minor after ".so.".
std::string version_from_library_name(const std::string& file_name);

}  // namespace cudacore::detail
