// ObjectCode's globals (object_code.hpp: get_global, get_managed, read/write_global), defined in the
// memory layer because a loaded library's variables are handed out as Buffers.
//
// __device__ / __constant__ / __managed__ variables of a loaded library become non-owning Buffer
// views that hold the library (cuLibraryGetGlobal / GetManaged).
#include "cudacore/code_inspection.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/object_code.hpp"
#include "code/cxx_global_names.hpp"
#include "memory/buffer_box.hpp"
#include "runtime/library_box.hpp"

#include <mutex>
#include <optional>
#include <shared_mutex>

namespace cudacore {
namespace {

// What a global view holds besides its memory: the library (so it stays loaded) and the
// context the address belongs to.
struct GlobalOwner {
    std::shared_ptr<detail::LibraryBox> library;
    std::shared_ptr<detail::ContextBox> context;
};

std::string global_list(const detail::ObjectCodeState& state) {
    if (state.type != CodeType::cubin || state.code.empty())
        return "(globals are listed for cubin code only)";
    try {
        std::string out;
        for (const auto& name : cubin_global_names(state.code)) {
            std::string entry = name;
            for (const auto& [expression, lowered] : state.symbols)
                if (lowered == name) entry = expression + " = " + name;
            out += out.empty() ? entry : ", " + entry;
        }
        return out.empty() ? "no globals" : out;
    } catch (const Error&) {
        return "(unknown)";
    }
}

// The name the driver knows: a name expression's lowered name ("&x" too), else `name`.
std::string lowered_global_name(const detail::ObjectCodeState& state, std::string_view name) {
    if (auto it = state.symbols.find(std::string(name)); it != state.symbols.end())
        return it->second;
    if (auto it = state.symbols.find("&" + std::string(name)); it != state.symbols.end())
        return it->second;
    return std::string(name);
}

// The lowered name of the cubin's global whose C++ name is `name` ("x::a"), or nullopt (not
// cubin code, or no global demangles to it).
std::optional<std::string> lowered_of_cxx_name(const detail::ObjectCodeState& state, std::string_view name) {
    if (state.type != CodeType::cubin || state.code.empty()) return std::nullopt;
    try {
        return detail::lowered_global_of_cxx_name(name, cubin_global_names(state.code));
    } catch (const Error&) {
        return std::nullopt;  // a cubin the driver loaded but the ELF reader refuses: the plain error
    }
}

// cuLibraryGetGlobal (or GetManaged) of `lowered` in `library`, with `context` current.
CUresult look_up_global(const detail::LibraryBox& library, const detail::ContextBox& context, const std::string& lowered,
                        bool managed, CUdeviceptr& address, std::size_t& size) {
    detail::ContextScope scope(context);
    const auto& api = detail::driver();
    return managed ? api.cuLibraryGetManaged(&address, &size, library.handle, lowered.c_str())
                   : api.cuLibraryGetGlobal(&address, &size, library.handle, lowered.c_str());
}

// Looks `name` up in `library`: by `lowered` (its lowered name, or the name itself), or, for a
// C++ name the driver does not know, by the cubin's global that demangles to it (`lowered` is then
// set to that global's name). A qualified C++ name ("x::a") is no symbol's name: it is looked up
// by demangling first, and one that names none is not asked of the driver (no driver call fails
// on the way: compute-sanitizer reports each one).
CUresult find_global(const detail::ObjectCodeState& state, const detail::LibraryBox& library,
                     const detail::ContextBox& context, std::string_view name, bool managed, std::string& lowered,
                     CUdeviceptr& address, std::size_t& size) {
    const bool qualified = lowered == name && name.find("::") != std::string_view::npos;
    if (qualified) {
        std::optional<std::string> by_cxx_name = lowered_of_cxx_name(state, name);
        if (!by_cxx_name) return CUDA_ERROR_NOT_FOUND;
        lowered = std::move(*by_cxx_name);
        return look_up_global(library, context, lowered, managed, address, size);
    }
    CUresult status = look_up_global(library, context, lowered, managed, address, size);
    if (status == CUDA_ERROR_NOT_FOUND && lowered == name) {
        if (std::optional<std::string> by_cxx_name = lowered_of_cxx_name(state, name)) {
            lowered = std::move(*by_cxx_name);
            status = look_up_global(library, context, lowered, managed, address, size);
        }
    }
    return status;
}

Buffer global_view(const std::shared_ptr<detail::ObjectCodeState>& state_ptr,
                   std::string_view name, bool managed) {
    detail::ObjectCodeState& state = *state_ptr;
    detail::LazyLibrary& lazy = detail::lazy_library(state);
    auto& views = managed ? lazy.managed_globals : lazy.globals;
    {
        std::shared_lock lock(lazy.globals_mutex);
        if (auto found = views.find(name); found != views.end()) {
            Buffer view = *static_cast<const Buffer*>(found->second.get());
            if (!view.is_closed()) [[likely]] return view;
        }
    }
    const std::shared_ptr<detail::LibraryBox>& library = detail::loaded_library(state, name);
    std::shared_ptr<detail::ContextBox> context = library->loaded_context;
    if (!context) context = detail::primary_context(Device::current().ordinal());

    const char* call = managed ? "cuLibraryGetManaged" : "cuLibraryGetGlobal";
    std::string lowered = lowered_global_name(state, name);
    CUdeviceptr address = 0;
    std::size_t size = 0;
    const CUresult status = find_global(state, *library, *context, name, managed, lowered, address, size);
    if (status == CUDA_ERROR_NOT_FOUND) {
        throw InvalidArgumentError(
            std::string(managed ? "get_managed" : "get_global") + ": no " +
            (managed ? "managed variable '" : "global variable '") + std::string(name) + "'" +
            (lowered != name ? " (lowered: '" + lowered + "')" : std::string()) + " in " +
            detail::describe_code(state) + "; it holds: " + global_list(state));
    }
    detail::check(status, call, [&] {
        return "global '" + std::string(name) + "' of " + detail::describe_code(state);
    });

    detail::BufferBoxPtr box;
    box->handle = address;
    box->size = size;
    box->owned = false;
    box->device_ordinal = context->ordinal;
    box->device_accessible = true;
    box->host_accessible = managed;
    box->foreign = std::make_unique<detail::BufferBox::Foreign>();
    box->foreign->anchor = std::make_shared<GlobalOwner>(GlobalOwner{library, context});
    Buffer made = detail::make_buffer(box);
    auto stored = std::make_shared<Buffer>(made);
    std::unique_lock lock(lazy.globals_mutex);
    auto& slot = views[std::string(name)];
    Buffer existing = slot ? *static_cast<const Buffer*>(slot.get()) : Buffer();
    if (!existing.is_closed()) return existing;  // another thread made it meanwhile
    slot = std::move(stored);  // a Buffer, so the cast back from void above is exact
    return made;
}

}  // namespace

Buffer ObjectCode::get_global(std::string_view name) const {
    detail::check_open(*state(), "ObjectCode::get_global");
    return global_view(state(), name, false);
}

Buffer ObjectCode::get_managed(std::string_view name) const {
    detail::check_open(*state(), "ObjectCode::get_managed");
    return global_view(state(), name, true);
}

Buffer ObjectCode::sized_global(std::string_view name, std::size_t size, const char* operation) const {
    Buffer view = get_global(name);
    if (view.size() != size) {
        throw InvalidArgumentError(std::string(operation) + ": global '" + std::string(name) +
                                   "' of " + detail::describe_code(*state()) + " is " +
                                   std::to_string(view.size()) + " bytes, the type given is " +
                                   std::to_string(size) + " bytes");
    }
    return view;
}

void ObjectCode::write_global_bytes(std::string_view name, const void* value, std::size_t size,
                                    const Stream& stream) const {
    const Buffer view = sized_global(name, size, "write_global");
    view.copy_from(value, size, stream);
}

void ObjectCode::read_global_bytes(std::string_view name, void* value, std::size_t size,
                                   const Stream& stream) const {
    const Buffer view = sized_global(name, size, "read_global");
    view.copy_to(value, size, stream);
    stream.sync();
}

}  // namespace cudacore
