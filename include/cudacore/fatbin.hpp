/// @file
/// FatbinBuilder: one fatbin (CodeType::fatbin) from cubins, PTX and LTO-IR for several
/// architectures, assembled with NVIDIA's nvFatbin library, so one ObjectCode runs on every GPU of
/// a fleet: the driver picks the cubin built for the device, or JIT-compiles the PTX.
///
/// nvFatbin is opened at run time on the first build() (the toolkit's, the `nvidia-nvfatbin`
/// wheel's, or CUDACORE_NVFATBIN_PATH: docs/deployment.md); no GPU is needed. What a fatbin holds
/// is listed by inspect_code() (code_inspection.hpp): one FatbinEntry per image, with its kind,
/// arch, size and whether it is compressed. compile_fatbin() (fatbin_compile.hpp) compiles a
/// Program for a list of targets and builds the fatbin in one call.
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
    /// Let nvFatbin compress images (its -compress, on by default); it then compresses only
    /// those it finds large enough (a 16 KB cubin is left as it is). The driver decompresses them
    /// at load. Off: every image's bytes as given.
    bool compress = true;
    /// Compress every image, however small (nvFatbin's -compress-all); ignored when compress is
    /// off. A 16 KB cubin became 2.8 KB.
    bool compress_all = false;
};

/// Collects images (cubin, PTX, LTO-IR ObjectCode values, each with its architecture) and builds
/// them into one fatbin ObjectCode. A value: copying it copies the list (the images' bytes are
/// shared, ObjectCode being a shared immutable value). Not thread-safe for one object; different
/// builders may be used from different threads at once.
class FatbinBuilder {
public:
    /// An empty builder writing with `options`.
    explicit FatbinBuilder(FatbinOptions options = {}) : options_(options) {}

    /// Adds an image, held until the builder goes. `arch`: "sm_90", "compute_90", "lto_90" or "90";
    /// empty reads it from a cubin or PTX (LTO-IR must give it). Throws InvalidArgumentError for
    /// code that is not cubin, PTX or LTO-IR, empty code or a malformed or missing arch.
    FatbinBuilder& add(const ObjectCode& code, std::string_view arch = {});

    /// The number of images added.
    std::size_t image_count() const noexcept { return images_.size(); }

    /// Builds the fatbin ObjectCode named `name` (empty: the first image's), joining the images'
    /// symbol maps. Throws InvalidArgumentError for no image or conflicting symbol maps;
    /// LoaderError without nvFatbin; CompilerApiError naming the nvFatbin call, status and image.
    /// Thread-safe between different builders.
    ObjectCode build(std::string name = {}) const;

private:
    struct Image {
        ObjectCode code;
        std::string arch{};  // what nvFatbin takes: "90", "90a"
    };
    FatbinOptions options_;
    std::vector<Image> images_;
};

/// The number and suffix of an architecture name, as nvFatbin takes it: "sm_90a" -> "90a",
/// "compute_80" -> "80", "lto_90" -> "90", "90" -> "90". Throws InvalidArgumentError naming
/// `arch` when it is not a prefix (sm_, compute_, lto_ or none), two or three digits and an
/// optional suffix letter (a or f).
std::string fatbin_arch_number(std::string_view arch);

}  // namespace cudacore
