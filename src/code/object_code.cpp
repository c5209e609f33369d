#include "cudacore/object_code.hpp"

#include "cudacore/errors.hpp"
#include "code/object_code_state.hpp"
#include "support/thread_block_pool.hpp"

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

ObjectCode ObjectCode::from_bytes(CodeType type, std::string code, std::string name,
                                  SymbolMap symbols) {
    if (code.empty()) {
        throw InvalidArgumentError("ObjectCode::from_bytes: empty " +
                                   std::string(to_string(type)) + " code" +
                                   (name.empty() ? "" : " for '" + name + "'"));
    }
    // Pooled per thread: a value made and dropped in a loop costs no malloc for its state.
    auto state = std::allocate_shared<detail::ObjectCodeState>(
        detail::ThreadBlockPool<detail::ObjectCodeState>());
    state->type = type;
    state->name = std::move(name);
    state->code = std::move(code);
    state->symbols = std::move(symbols);
    return ObjectCode(std::move(state));
}

ObjectCode ObjectCode::from_cubin(std::string code, std::string name, SymbolMap symbols) {
    return from_bytes(CodeType::cubin, std::move(code), std::move(name), std::move(symbols));
}
ObjectCode ObjectCode::from_ptx(std::string code, std::string name, SymbolMap symbols) {
    return from_bytes(CodeType::ptx, std::move(code), std::move(name), std::move(symbols));
}
ObjectCode ObjectCode::from_ltoir(std::string code, std::string name, SymbolMap symbols) {
    return from_bytes(CodeType::ltoir, std::move(code), std::move(name), std::move(symbols));
}
ObjectCode ObjectCode::from_fatbin(std::string code, std::string name, SymbolMap symbols) {
    return from_bytes(CodeType::fatbin, std::move(code), std::move(name), std::move(symbols));
}
ObjectCode ObjectCode::from_object(std::string code, std::string name, SymbolMap symbols) {
    return from_bytes(CodeType::object, std::move(code), std::move(name), std::move(symbols));
}
ObjectCode ObjectCode::from_library(std::string code, std::string name, SymbolMap symbols) {
    return from_bytes(CodeType::library, std::move(code), std::move(name), std::move(symbols));
}

ObjectCode ObjectCode::from_file(CodeType type, const std::filesystem::path& path,
                                 std::string name) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw InvalidArgumentError("ObjectCode::from_file: cannot open '" + path.string() +
                                   "' as " + std::string(to_string(type)));
    }
    std::string code((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) {
        throw InvalidArgumentError("ObjectCode::from_file: error reading '" + path.string() + "'");
    }
    if (code.empty()) {
        throw InvalidArgumentError("ObjectCode::from_file: '" + path.string() + "' is empty");
    }
    if (name.empty()) name = path.filename().string();
    return from_bytes(type, std::move(code), std::move(name));
}

CodeType ObjectCode::code_type() const noexcept { return state_->type; }
const std::string& ObjectCode::name() const noexcept { return state_->name; }
std::string_view ObjectCode::code() const noexcept { return state_->code; }
const SymbolMap& ObjectCode::symbol_map() const noexcept { return state_->symbols; }

std::string ObjectCode::lowered_name(std::string_view name) const {
    auto it = state_->symbols.find(std::string(name));
    return it == state_->symbols.end() ? std::string(name) : it->second;
}

bool ObjectCode::operator==(const ObjectCode& other) const noexcept {
    if (state_ == other.state_) return true;
    return state_->type == other.state_->type && state_->name == other.state_->name &&
           state_->code == other.state_->code && state_->symbols == other.state_->symbols;
}

}  // namespace cudacore
