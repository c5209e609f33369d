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

    /// Adds an image, kept alive (shared) until the builder goes. `arch` is the architecture it
    /// is for: "sm_90", "compute_90", "lto_90", "sm_90a" or a bare "90" (nvFatbin records the
    /// number and suffix; the prefix only documents). Empty: read from the bytes, the ELF header
    /// of a cubin or the .target of PTX; LTO-IR does not record it, so it must be given. Throws
    /// InvalidArgumentError when the code is not a cubin, PTX or LTO-IR (a fatbin, an object or
    /// a library), is empty, or the arch is malformed or not given for LTO-IR. Whether the arch
    /// matches the bytes is nvFatbin's to say, in build().
    FatbinBuilder& add(const ObjectCode& code, std::string_view arch = {});

    /// The number of images added.
    std::size_t image_count() const noexcept { return images_.size(); }

    /// Builds the fatbin: an ObjectCode of CodeType::fatbin named `name` (empty: the first
    /// image's name), whose symbol map joins the images' maps (the same name expressions in
    /// every image, compiled from one source). Throws InvalidArgumentError when no image was
    /// added or two images map one name expression to different lowered names; LoaderError when
    /// nvFatbin cannot be loaded (naming every path searched); CompilerApiError naming the
    /// nvFatbin call, its status and text (nvFatbinGetErrorString) and the image when nvFatbin
    /// refuses an image (an arch that does not match a cubin, PTX without .version, ...).
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
