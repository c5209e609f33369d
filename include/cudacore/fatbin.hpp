/// @file
/// FatbinBuilder: one fatbin (CodeType::fatbin) from cubins, PTX and LTO-IR for several
/// architectures, assembled with NVIDIA's nvFatbin library (opened at run time: docs/deployment.md;
/// no GPU needed), so one ObjectCode runs on every GPU of a fleet. inspect_code() lists what a
/// fatbin holds; compile_fatbin() (fatbin_compile.hpp) compiles and builds in one call.
#pragma once

#include "cudacore/compile_errors.hpp"
#include "cudacore/object_code.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cudacore {

/// How nvFatbin writes the fatbin.
struct FatbinOptions {
    /// Let nvFatbin compress images it finds large enough (the driver decompresses at load).
    bool compress = true;
    /// Compress every image, however small; ignored when compress is off.
    bool compress_all = false;
};

/// Collects images (cubin, PTX, LTO-IR, each with its architecture) and builds one fatbin. A value:
/// copies share the images' bytes. One thread at a time per builder.
class FatbinBuilder {
public:
    /// An empty builder writing with `options`.
    explicit FatbinBuilder(FatbinOptions options = {}) : options_(options) {}

    /// Adds an image, held until the builder goes. `arch`: "sm_90", "compute_90", "lto_90" or "90";
    /// empty reads it from a cubin or PTX. InvalidArgumentError for other or empty code or arch.
    FatbinBuilder& add(const ObjectCode& code, std::string_view arch = {});

    /// The number of images added.
    std::size_t image_count() const noexcept { return images_.size(); }

    /// Builds the fatbin named `name` (empty: the first image's). InvalidArgumentError for no image
    /// or conflicting symbol maps; LoaderError without nvFatbin; CompilerApiError naming the call.
    ObjectCode build(std::string name = {}) const;

private:
    struct Image {
        ObjectCode code;
        std::string arch{};  // what nvFatbin takes: "90", "90a"
    };
    FatbinOptions options_;
    std::vector<Image> images_;
};

/// The number and suffix nvFatbin takes ("sm_90a" -> "90a"); InvalidArgumentError if malformed.
std::string fatbin_arch_number(std::string_view arch);

}  // namespace cudacore
