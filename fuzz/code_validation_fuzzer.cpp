// The structural validator, and the Linker's input check, on arbitrary bytes. The first byte
// chooses the declared code type (as given to ObjectCode::from_bytes) or, past the last type,
// the type told from the bytes (as `cudacore link` classifies its inputs). Validation either
// passes or throws InvalidArgumentError; and what passes must then be inspectable without any
// other error (inspection reads the tables the validation vouched for).
#include "cudacore/code_inspection.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/object_code.hpp"
#include "code_input.hpp"
#include "code/code_validation.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto read = cudacore::fuzz::read_code_input(data, size);
    if (!read) return 0;
    const cudacore::CodeType type = read->type;
    std::string bytes = std::move(read->bytes);
    const cudacore::ObjectCode input = cudacore::ObjectCode::from_bytes(type, std::move(bytes), "fuzz");
    try {
        cudacore::detail::validate_link_input(input, 0, "fuzz");
    } catch (const cudacore::InvalidArgumentError&) {
        return 0;
    }
    // Sound structure: inspection of the bytes as what they look like may only refuse for
    // the work limit on names, or when the bytes look like another type than declared.
    if (cudacore::try_detect_code_type(input.code()) != type) return 0;
    try {
        cudacore::inspect_code(input.code());
    } catch (const cudacore::InvalidArgumentError& e) {
        if (std::string(e.what()).find("work limit") == std::string::npos) std::abort();
    }
    return 0;
}
