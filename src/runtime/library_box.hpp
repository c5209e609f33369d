// The box behind a loaded library (CUlibrary), and the lazily loaded state an ObjectCode shares
// between its copies.
//
// Ownership: an ObjectCode's state and every Kernel taken from it hold the LibraryBox; the library
// is unloaded when the last of them goes. A library that kernels were launched from is not
// unloaded at once: the release thread (runtime/release/release.hpp) first waits for the streams
// those launches were made on (LaunchStreams), so a kernel still running after its last handle
// was dropped keeps its code. Release errors are ignored; libraries still waiting at exit
// are left to the driver, which frees them.
#pragma once

#include "cudacore/kernel.hpp"
#include "cudacore/object_code.hpp"
#include "code/object_code_state.hpp"
#include "loader/driver_api.hpp"
#include "runtime/release/release.hpp"
#include "runtime/name_table.hpp"
#include "runtime/runtime_handles.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

namespace cudacore {
struct LoadOptions;
struct LoadReport;
}  // namespace cudacore

namespace cudacore::detail {

struct LibraryBox {
    CUlibrary handle = nullptr;
    // False for ObjectCode::from_handle without ownership: never unloaded.
    bool owned = true;
    // The primary context the library was first loaded into (kept so it is not reloaded).
    std::shared_ptr<ContextBox> loaded_context;
    // What was loaded, for its kernels' descriptions. Kept as its parts and put into words only
    // when a message needs them: every first load would otherwise build a string it never shows.
    CodeType code_type = CodeType::cubin;
    bool from_handle = false;  // ObjectCode::from_handle: described by its handle
    std::string code_name;
    std::size_t code_size = 0;
    // "cubin 'saxpy' (5120 bytes)", or for a library handed in, "'name' (library 0x...)".
    std::string code_description() const;

    // Records that a kernel of this library was launched on `stream` (a few relaxed loads for a
    // stream seen before: it runs on every launch).
    void note_launch(const std::shared_ptr<StreamBox>& stream) { launch_streams.note(stream); }

    LibraryBox() {}  // user-provided: not zeroed first by make_shared (every member is initialised)
    LibraryBox(const LibraryBox&) = delete;
    LibraryBox& operator=(const LibraryBox&) = delete;
    ~LibraryBox();

private:
    LaunchStreams launch_streams;
};

// The per-ObjectCode loading state (the runtime's ObjectCodeLoading), made on first load: loaded
// once (under load_mutex), the outcome kept for every later use, and a name -> Kernel cache read
// without locks. Owned by the ObjectCode's state, which destroys it while the code bytes live.
struct LazyLibrary final : ObjectCodeLoading {
    LazyLibrary() = default;
    // Reads the parameter count of each kernel taken from here that was not asked yet, while the
    // ObjectCode's bytes they are read from still live (src/runtime/object_code_loading.cpp).
    ~LazyLibrary() override;

    std::mutex load_mutex;               // held by the one load (object_code_loading.cpp's load_once)
    std::atomic<bool> attempted{false};  // set (release) once `library` or `failure` is final
    std::shared_ptr<LibraryBox> library;
    std::exception_ptr failure;

    NameTable<Kernel> kernels;
    // Views of global variables (ObjectCode::get_global / get_managed), by name; under
    // globals_mutex. Values are Buffers, kept type-erased here (the memory layer owns Buffer).
    std::shared_mutex globals_mutex;
    std::map<std::string, std::shared_ptr<void>, std::less<>> globals;
    std::map<std::string, std::shared_ptr<void>, std::less<>> managed_globals;
};

// The loading state of `state` if it was made, else nullptr (never makes it).
inline LazyLibrary* lazy_library_if_made(const ObjectCodeState& state) noexcept {
    // Only LazyLibrary is ever installed (lazy_library below).
    return static_cast<LazyLibrary*>(state.loading_if_made());
}
// The loading state of `state`, made on first call (an ObjectCode never loaded does not pay for
// it). Thread-safe.
inline LazyLibrary& lazy_library(const ObjectCodeState& state) {
    if (LazyLibrary* made = lazy_library_if_made(state)) [[likely]] return *made;
    return static_cast<LazyLibrary&>(state.install_loading(std::make_unique<LazyLibrary>()));
}

// The loaded library of `state`, loading it on first call (src/runtime/object_code_loading.cpp);
// the first outcome is kept and repeated. `kernel_name` only names what asked, in errors.
const std::shared_ptr<LibraryBox>& loaded_library(ObjectCodeState& state,
                                                  std::string_view kernel_name);
// load_with_options: loads `state` with `options` when nothing loaded it (or tried) before,
// filling `report`, and returns true; false when it was loaded before. A failure is kept and
// thrown, as loaded_library does.
bool load_first_with(ObjectCodeState& state, const LoadOptions& options, LoadReport& report);
// "cubin 'saxpy' (5120 bytes)", or the library handle of a from_handle ObjectCode.
std::string describe_code(const ObjectCodeState& state);
// The same from its parts: `library` names code handed in as a library (from_handle).
std::string describe_code(CodeType type, std::string_view name, std::size_t size, bool from_handle,
                          CUlibrary library);
// "saxpy, reduce<float> = _Z6reduceIfEvPKfPfm, ...": the kernels `library` holds, by the name
// expressions of `state` where it has them, for errors that name an unknown kernel.
std::string kernel_list(const ObjectCodeState& state, CUlibrary library);

// Test hooks: how many times cuLibraryLoadData / cuLibraryUnload were called by this process.
std::uint64_t library_load_count() noexcept;
std::uint64_t library_unload_count() noexcept;

// Counted cuLibraryLoadData.
CUresult load_library_data(CUlibrary* library, const void* code, CUjit_option* options,
                           void** option_values, unsigned option_count);

}  // namespace cudacore::detail
