#include "cudacore/object_code.hpp"

#include "cudacore/errors.hpp"
#include "code/object_code_state.hpp"
#include "support/thread_block_pool.hpp"
#include "cudacore/owning_handle.hpp"
#include "errors/closed_object.hpp"
#include "support/input_file.hpp"
#include "support/shared_with_bytes.hpp"

#include <fstream>
#include <iterator>

namespace cudacore {

std::string_view to_string(CodeType type) noexcept {
    switch (type) {
        case CodeType::cubin: return "cubin";
        case CodeType::ptx: return "ptx";
        case CodeType::ltoir: return "ltoir";
        case CodeType::fatbin: return "fatbin";
        case CodeType::object: return "object";
        case CodeType::library: return "library";
    }
    return "unknown";
}

CodeType code_type_from_string(std::string_view name) {
    for (CodeType type : {CodeType::cubin, CodeType::ptx, CodeType::ltoir, CodeType::fatbin,
                          CodeType::object, CodeType::library}) {
        if (to_string(type) == name) return type;
    }
    throw InvalidArgumentError("unknown code type '" + std::string(name) +
                               "': expected cubin, ptx, ltoir, fatbin, object or library");
}

namespace {

void refuse_empty_code(CodeType type, const std::string& name) {
    throw InvalidArgumentError("ObjectCode::from_bytes: empty " + std::string(to_string(type)) +
                               " code" + (name.empty() ? "" : " for '" + name + "'"));
}

}  // namespace

ObjectCode ObjectCode::from_bytes(CodeType type, const std::string& code, std::string_view name,
                                  const SymbolMap& symbols) {
    if (code.empty()) refuse_empty_code(type, std::string(name));
    // The state and its copy of the bytes in one allocation: no string of its own to allocate.
    const char* copy = nullptr;
    auto state = detail::make_shared_with_bytes<detail::ObjectCodeState>(code, &copy, type, name, symbols);
    state->code.refer_to_owners(copy, code.size());
    return ObjectCode(std::move(state));
}

ObjectCode ObjectCode::from_bytes(CodeType type, std::string&& code, std::string name,
                                  SymbolMap symbols) {
    if (code.empty()) refuse_empty_code(type, name);
    auto state = std::make_shared<detail::ObjectCodeState>(type, std::move(name), std::move(symbols));
    state->code = detail::CodeBytes(std::move(code));
    return ObjectCode(std::move(state));
}

namespace {

std::string read_code_file(const std::filesystem::path& path, std::string_view as) {
    std::string code;
    try {
        code = detail::read_file_bounded(path, ObjectCode::max_serialized_size);
    } catch (const std::exception& e) {
        throw InvalidArgumentError("ObjectCode::from_file (" + std::string(as) + "): " + e.what());
    }
    if (code.empty()) {
        throw InvalidArgumentError("ObjectCode::from_file: '" + path.string() + "' is empty");
    }
    return code;
}

std::optional<CodeType> code_type_of_extension(const std::filesystem::path& path) {
    const std::string extension = path.extension().string();
    if (extension == ".cubin") return CodeType::cubin;
    if (extension == ".ptx") return CodeType::ptx;
    if (extension == ".ltoir" || extension == ".lto") return CodeType::ltoir;
    if (extension == ".fatbin") return CodeType::fatbin;
    if (extension == ".o") return CodeType::object;
    if (extension == ".a") return CodeType::library;
    return std::nullopt;
}

}  // namespace

ObjectCode ObjectCode::from_file(CodeType type, const std::filesystem::path& path,
                                 std::string name) {
    return from_file(path, type, {}, std::move(name));
}

ObjectCode ObjectCode::from_file(const std::filesystem::path& path, std::optional<CodeType> type,
                                 SymbolMap symbols, std::string name) {
    if (!type) type = code_type_of_extension(path);
    if (!type) {
        throw InvalidArgumentError("ObjectCode::from_file: cannot tell the code type of '" +
                                   path.string() + "' from its extension (known: .cubin, .ptx, "
                                   ".ltoir, .lto, .fatbin, .o, .a); pass the CodeType");
    }
    std::string code = read_code_file(path, to_string(*type));
    if (name.empty()) name = path.filename().string();
    return from_bytes(*type, std::move(code), std::move(name), std::move(symbols));
}

ObjectCode detail::object_code_from(CodeType type, CodeBytes code, std::string name, SymbolMap symbols) {
    if (code.empty()) return ObjectCode::from_bytes(type, {}, std::move(name));  // throws, as it would
    // from_bytes makes the state (its checks); its placeholder byte is replaced here,
    // before the value is shared with anyone.
    ObjectCode made = ObjectCode::from_bytes(type, std::string(1, '\0'), std::move(name), std::move(symbols));
    ObjectCodeAccess::state(made)->code = std::move(code);
    return made;
}

ObjectCode detail::named_as(ObjectCode code, const std::string& name) {
    const ObjectCodeState& state = *ObjectCodeAccess::state(code);
    if (state.name == name || state.closed || state.empty || state.from_handle) return code;
    return object_code_from(state.type, CodeBytes(std::string(state.code)), name, state.symbols);
}

CodeType ObjectCode::code_type() const noexcept { return state()->type; }
const std::string& ObjectCode::name() const noexcept { return state()->name; }
std::string_view ObjectCode::code() const noexcept { return state()->code; }
const SymbolMap& ObjectCode::symbol_map() const noexcept { return state()->symbols; }

std::string ObjectCode::lowered_name(std::string_view name) const {
    detail::check_open(*state(), "ObjectCode::lowered_name");
    auto it = state()->symbols.find(std::string(name));
    return it == state()->symbols.end() ? std::string(name) : it->second;
}

bool ObjectCode::operator==(const ObjectCode& other) const noexcept {
    if (state() == other.state()) return true;
    if (state()->closed || other.state()->closed) return false;  // closed: equal to itself only
    // Code wrapped from a handle has no bytes to compare: equal only to its own copies.
    if (state()->from_handle || other.state()->from_handle) return false;
    return state()->type == other.state()->type && state()->name == other.state()->name &&
           state()->code == other.state()->code && state()->symbols == other.state()->symbols;
}


ObjectCode::ObjectCode(std::shared_ptr<detail::ObjectCodeState> state)
    // Pooled: a memory-cache hit makes one holder per hit (another_owner).
    : holder_(detail::make_pooled<detail::ObjectCodeHolder>(detail::ObjectCodeHolder{std::move(state)})) {}

const std::shared_ptr<detail::ObjectCodeState>& detail::empty_object_code_state() noexcept {
    static const std::shared_ptr<ObjectCodeState> empty = [] {
        auto state = std::make_shared<ObjectCodeState>();
        state->empty = true;
        return state;
    }();
    return empty;
}

ObjectCode detail::ObjectCodeAccess::another_owner(const ObjectCode& code, const char* operation) {
    check_open(*code.state(), operation);
    return ObjectCode(code.state());
}

void ObjectCode::close() {
    if (!holder_ || holder_->state->closed) return;  // empty, or closed
    // Every copy keeps a stand-in that only says what it was; the value (bytes, loaded library,
    // kernels and global views taken from it) loses this holder's share.
    const detail::ObjectCodeState& open = *holder_->state;
    auto share = std::make_shared<detail::ObjectCodeState>(open.type, open.name, SymbolMap{});
    share->from_handle = open.from_handle;
    share->closed = true;
    holder_->state.swap(share);
    detail::release_share(share);
}

bool ObjectCode::is_closed() const noexcept { return state()->closed; }

void detail::check_open(const ObjectCodeState& state, const char* operation) {
    if (!state.closed && !state.empty) [[likely]] return;
    if (state.empty) throw_moved_from_error(operation, owning_names<ObjectCode>.type, owning_names<ObjectCode>.holds);
    const std::string what = state.from_handle
                                 ? "the ObjectCode '" + state.name + "' wrapping a CUlibrary"
                                 : std::string(to_string(state.type)) + " '" + state.name + "'";
    throw_closed_object_error(operation, what.c_str(), owning_names<ObjectCode>.type);
}

}  // namespace cudacore
