#include "cudacore/fatbin.hpp"

#include "cudacore/code_inspection.hpp"
#include "cudacore/errors.hpp"
#include "loader/nvfatbin_api.hpp"

#include <memory>
#include <vector>

namespace cudacore {

namespace {

bool is_arch_digit(char c) { return c >= '0' && c <= '9'; }

std::string describe_fatbin_image(const ObjectCode& code, std::size_t index, const std::string& arch) {
    std::string out = "image " + std::to_string(index) + " (" + std::string(to_string(code.code_type()));
    if (!code.name().empty()) out += " '" + code.name() + "'";
    return out + " for " + arch + ", " + std::to_string(code.size()) + " bytes)";
}

#ifdef CUDACORE_HAVE_NVFATBIN
// Owns an nvFatbin handle; destroyed without a check (a destructor never throws).
struct FatbinHandle {
    nvFatbinHandle handle = nullptr;
    FatbinHandle() = default;
    FatbinHandle(const FatbinHandle&) = delete;
    FatbinHandle& operator=(const FatbinHandle&) = delete;
    ~FatbinHandle() {
        if (handle) detail::nvfatbin().nvFatbinDestroy(&handle);
    }
};
#endif

}  // namespace

std::string fatbin_arch_number(std::string_view arch) {
    std::string_view rest = arch;
    for (std::string_view prefix : {"sm_", "compute_", "lto_"}) {
        if (rest.substr(0, prefix.size()) == prefix) {
            rest.remove_prefix(prefix.size());
            break;
        }
    }
    std::size_t digits = 0;
    while (digits < rest.size() && is_arch_digit(rest[digits])) ++digits;
    const std::string_view suffix = rest.substr(digits);
    if (digits < 2 || digits > 3 || !(suffix.empty() || suffix == "a" || suffix == "f")) {
        throw InvalidArgumentError("fatbin: architecture '" + std::string(arch) +
                                   "' is not of the form sm_90, sm_90a, compute_90, lto_90 or 90");
    }
    return std::string(rest);
}

FatbinBuilder& FatbinBuilder::add(const ObjectCode& code, std::string_view arch) {
    const CodeType type = code.code_type();
    const std::string what = describe_fatbin_image(code, images_.size(), arch.empty() ? "its own arch" : std::string(arch));
    if (type != CodeType::cubin && type != CodeType::ptx && type != CodeType::ltoir) {
        throw InvalidArgumentError("FatbinBuilder::add: " + what +
                                   ": only cubin, PTX and LTO-IR go into a fatbin");
    }
    if (code.size() == 0) throw InvalidArgumentError("FatbinBuilder::add: " + what + " is empty");
    std::string named(arch);
    if (named.empty()) {
        if (type == CodeType::ltoir) {
            throw InvalidArgumentError("FatbinBuilder::add: " + what +
                                       ": LTO-IR does not record its arch; pass it (\"lto_90\")");
        }
        named = inspect_code(code).arch;
        if (named.empty()) {
            throw InvalidArgumentError("FatbinBuilder::add: " + what +
                                       ": the bytes do not say their arch; pass it");
        }
    }
    images_.push_back({code, fatbin_arch_number(named)});
    return *this;
}

#ifdef CUDACORE_HAVE_NVFATBIN
ObjectCode FatbinBuilder::build(std::string name) const {
    if (images_.empty()) throw InvalidArgumentError("FatbinBuilder::build: no images were added");
    if (name.empty()) name = images_.front().code.name();
    const std::string fatbin = "fatbin '" + name + "'";
    SymbolMap symbols;
    for (std::size_t i = 0; i < images_.size(); ++i) {
        for (const auto& [expression, lowered] : images_[i].code.symbol_map()) {
            auto [at, added] = symbols.emplace(expression, lowered);
            if (!added && at->second != lowered) {
                throw InvalidArgumentError("FatbinBuilder::build: " + fatbin + ": '" + expression +
                                           "' is '" + at->second + "' in one image and '" + lowered +
                                           "' in " + describe_fatbin_image(images_[i].code, i, images_[i].arch));
            }
        }
    }

    const detail::NvFatbinApi& api = detail::nvfatbin();
    std::vector<const char*> options{options_.compress ? "-compress=true" : "-compress=false"};
    if (options_.compress && options_.compress_all) options.push_back("-compress-all");
    FatbinHandle handle;
    detail::check_nvfatbin(api.nvFatbinCreate(&handle.handle, options.data(), options.size()),
                           "nvFatbinCreate", fatbin);
    for (std::size_t i = 0; i < images_.size(); ++i) {
        const Image& image = images_[i];
        const std::string_view bytes = image.code.code();
        const std::string identifier = image.code.name().empty() ? "image" + std::to_string(i) : image.code.name();
        const std::string what = fatbin + ", " + describe_fatbin_image(image.code, i, image.arch);
        switch (image.code.code_type()) {
            case CodeType::cubin:
                detail::check_nvfatbin(api.nvFatbinAddCubin(handle.handle, bytes.data(), bytes.size(),
                                                            image.arch.c_str(), identifier.c_str()),
                                       "nvFatbinAddCubin", what);
                break;
            case CodeType::ptx:
                detail::check_nvfatbin(api.nvFatbinAddPTX(handle.handle, bytes.data(), bytes.size(),
                                                          image.arch.c_str(), identifier.c_str(), ""),
                                       "nvFatbinAddPTX", what);
                break;
            default:  // add() lets only cubin, PTX and LTO-IR in
                detail::check_nvfatbin(api.nvFatbinAddLTOIR(handle.handle, bytes.data(), bytes.size(),
                                                            image.arch.c_str(), identifier.c_str(), ""),
                                       "nvFatbinAddLTOIR", what);
                break;
        }
    }
    std::size_t size = 0;
    detail::check_nvfatbin(api.nvFatbinSize(handle.handle, &size), "nvFatbinSize", fatbin);
    std::string out(size, '\0');
    detail::check_nvfatbin(api.nvFatbinGet(handle.handle, out.data()), "nvFatbinGet", fatbin);
    return ObjectCode::from_fatbin(std::move(out), std::move(name), std::move(symbols));
}
#else
ObjectCode FatbinBuilder::build(std::string) const {
    if (images_.empty()) throw InvalidArgumentError("FatbinBuilder::build: no images were added");
    detail::nvfatbin_version();  // throws LoaderError: built without nvFatbin.h
    throw Error("FatbinBuilder::build: nvFatbin is unavailable");
}
#endif

}  // namespace cudacore
