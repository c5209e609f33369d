// ObjectCode: compiled or linked GPU code as an immutable value.
//
// It holds the code bytes, the code type, a name and a symbol map (name expression -> lowered
// name), and nothing else: no JIT options, no driver state. Creating or copying one makes no
// driver call and needs no GPU. Copies share the same bytes.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace cudacore {

enum class CodeType { cubin, ptx, ltoir, fatbin, object, library };

// "cubin", "ptx", "ltoir", "fatbin", "object", "library".
std::string_view to_string(CodeType type) noexcept;
// The inverse of to_string; throws InvalidArgumentError listing the valid names.
CodeType code_type_from_string(std::string_view name);

// Name expression (as given to Program::compile, e.g. "scale<float>") -> lowered (mangled) name.
using SymbolMap = std::map<std::string, std::string>;

namespace detail {
struct ObjectCodeState;
}

class ObjectCode {
public:
    // Takes the code bytes as they are. Throws InvalidArgumentError when `code` is empty.
    static ObjectCode from_bytes(CodeType type, std::string code, std::string name = {},
                                 SymbolMap symbols = {});
    static ObjectCode from_cubin(std::string code, std::string name = {}, SymbolMap symbols = {});
    static ObjectCode from_ptx(std::string code, std::string name = {}, SymbolMap symbols = {});
    static ObjectCode from_ltoir(std::string code, std::string name = {}, SymbolMap symbols = {});
    static ObjectCode from_fatbin(std::string code, std::string name = {}, SymbolMap symbols = {});
    static ObjectCode from_object(std::string code, std::string name = {}, SymbolMap symbols = {});
    static ObjectCode from_library(std::string code, std::string name = {}, SymbolMap symbols = {});
    // Reads the whole file; the name defaults to the file name. Throws InvalidArgumentError
    // naming the path when it cannot be read or is empty.
    static ObjectCode from_file(CodeType type, const std::filesystem::path& path,
                                std::string name = {});

    CodeType code_type() const noexcept;
    const std::string& name() const noexcept;
    // The raw code bytes (PTX is text; the others are binary).
    std::string_view code() const noexcept;
    std::size_t size() const noexcept { return code().size(); }
    const SymbolMap& symbol_map() const noexcept;
    // The lowered name of a name expression, or `name` itself when it is not in the map.
    std::string lowered_name(std::string_view name) const;

    // Equal when code type, name, bytes and symbol map are all equal.
    bool operator==(const ObjectCode& other) const noexcept;

    const std::shared_ptr<detail::ObjectCodeState>& state() const noexcept { return state_; }

private:
    explicit ObjectCode(std::shared_ptr<detail::ObjectCodeState> state) : state_(std::move(state)) {}
    std::shared_ptr<detail::ObjectCodeState> state_;
};

}  // namespace cudacore
