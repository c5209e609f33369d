#include "code/compiler_build.hpp"

#include "loader/compiler_calls_at_exit.hpp"

#include "code/compiler_environment.hpp"
#include "code/compiler_identity.hpp"
#include "code/elf_view.hpp"
#include "cudacore/errors.hpp"
#include "loader/driver_api.hpp"

#include <dlfcn.h>

#include <cctype>
#include <filesystem>
#include <vector>

namespace cudacore::detail {
namespace {

// The digits at the start of `text`, or "".
std::string_view leading_digits(std::string_view text) {
    std::size_t end = 0;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    return text.substr(0, end);
}

// Runs `release` when it leaves its scope: each compiler's handle below is destroyed on every way out.
template <typename Release>
struct OnExit {
    Release release;
    ~OnExit() { release(); }
};
template <typename Release>
OnExit(Release) -> OnExit<Release>;

// An empty PTX module: what the link needs to write a cubin, and so its note. sm_90's PTX ISA
// (7.8) is one every nvJitLink 13 links.
constexpr std::string_view empty_ptx_module = ".version 7.8\n.target sm_90\n.address_size 64\n";

}  // namespace

std::string_view build_at_start(std::string_view text) {
    std::size_t at = 0;
    for (int part = 0; part < 3; ++part) {
        if (part > 0 && (at >= text.size() || text[at++] != '.')) return {};
        const std::size_t digits = leading_digits(text.substr(at)).size();
        if (digits == 0) return {};
        at += digits;
    }
    return text.substr(0, at);
}

std::optional<std::string> build_named_in(std::string_view text) {
    constexpr std::string_view marker = "Cuda compilation tools, release ";
    const std::size_t at = text.find(marker);
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view rest = text.substr(at + marker.size());
    const std::string_view major = leading_digits(rest);
    if (major.empty() || rest.size() == major.size() || rest[major.size()] != '.') return std::nullopt;
    rest.remove_prefix(major.size() + 1);
    const std::string_view minor = leading_digits(rest);
    const std::string release = std::string(major) + "." + std::string(minor);
    const std::string_view build_marker = ", V";
    if (minor.empty() || rest.substr(minor.size(), build_marker.size()) != build_marker) return std::nullopt;
    rest.remove_prefix(minor.size() + build_marker.size());
    // "VM.m.p": the release again, then the patch.
    const std::string_view build = build_at_start(rest);
    if (build.empty() || !build.starts_with(release + ".")) return std::nullopt;
    return std::string(build);
}

std::optional<std::string> nvrtc_build(const NvrtcApi& api) {
    // NVRTC reads some variables only at its first compile, which this may be: the keys' reading
    // of them comes first.
    nvrtc_environment_in_keys();
    // A compile like any other: the process's exit waits for it, and none begins during exit.
    const CompilerCallUnlessExiting under_way;
    if (!under_way.began()) return std::nullopt;
    nvrtcProgram program = nullptr;
    if (api.nvrtcCreateProgram(&program, "", "cudacore_build_probe", 0, nullptr, nullptr) != NVRTC_SUCCESS)
        return std::nullopt;
    const OnExit destroy{[&] { api.nvrtcDestroyProgram(&program); }};
    // The oldest virtual arch this NVRTC offers: PTX only, no assembler.
    int count = 0;
    if (api.nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0) return std::nullopt;
    std::vector<int> archs(static_cast<std::size_t>(count));
    if (api.nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) return std::nullopt;
    const std::string arch = "-arch=compute_" + std::to_string(archs.front());
    const char* options[] = {arch.c_str()};
    std::size_t size = 0;
    if (api.nvrtcCompileProgram(program, 1, options) != NVRTC_SUCCESS ||
        api.nvrtcGetPTXSize(program, &size) != NVRTC_SUCCESS)
        return std::nullopt;
    std::string ptx(size, '\0');
    if (api.nvrtcGetPTX(program, ptx.data()) != NVRTC_SUCCESS) return std::nullopt;
    return build_named_in(ptx);
}

std::optional<std::string> nvjitlink_build(const NvJitLinkApi& api) {
    nvJitLinkHandle handle = nullptr;
    const char* options[] = {"-arch=sm_90"};
    if (api.create(&handle, 1, options) != NVJITLINK_SUCCESS) return std::nullopt;
    const OnExit destroy{[&] { api.destroy(&handle); }};
    std::size_t size = 0;
    if (api.add_data(handle, NVJITLINK_INPUT_PTX, empty_ptx_module.data(), empty_ptx_module.size(),
                     "cudacore_build_probe") != NVJITLINK_SUCCESS ||
        api.complete(handle) != NVJITLINK_SUCCESS || api.get_linked_cubin_size(handle, &size) != NVJITLINK_SUCCESS)
        return std::nullopt;
    std::string cubin(size, '\0');
    if (api.get_linked_cubin(handle, cubin.data()) != NVJITLINK_SUCCESS) return std::nullopt;
    try {
        const ElfView<Elf64Types> elf(cubin);
        const auto* note = elf.find_section(".note.nv.tkinfo");
        return note ? build_named_in(elf.contents(*note)) : std::nullopt;
    } catch (const std::bad_alloc&) {
        throw;
    } catch (...) {
        return std::nullopt;  // not an ELF this reader takes: no build named
    }
}

std::string nvvm_build_in_keys() {
    static const std::string build = []() -> std::string {
        std::string release;
        try {
            release = nvvm_version();
        } catch (const Error&) {
            return "none";
        }
#ifdef CUDACORE_HAVE_NVVM
        const NvvmApi& api = nvvm();
        // An empty module of the NVVM IR version this libNVVM reads, for its default arch.
        const std::string module = "target datalayout = \"e-i64:64-i128:128-v16:16-v32:32-n16:32:64\"\n"
                                   "target triple = \"nvptx64-nvidia-cuda\"\n"
                                   "!nvvmir.version = !{!0}\n!0 = !{i32 " +
                                   std::to_string(api.ir_major) + ", i32 " + std::to_string(api.ir_minor) + "}\n";
        nvvmProgram program = nullptr;
        if (api.nvvmCreateProgram(&program) != NVVM_SUCCESS) return release;
        const OnExit destroy{[&] { api.nvvmDestroyProgram(&program); }};
        std::size_t size = 0;
        if (api.nvvmAddModuleToProgram(program, module.data(), module.size(), "cudacore_build_probe") !=
                NVVM_SUCCESS ||
            api.nvvmCompileProgram(program, 0, nullptr) != NVVM_SUCCESS ||
            api.nvvmGetCompiledResultSize(program, &size) != NVVM_SUCCESS)
            return release;
        std::string ptx(size, '\0');
        if (api.nvvmGetCompiledResult(program, ptx.data()) != NVVM_SUCCESS) return release;
        return build_named_in(ptx).value_or(release);
#else
        return release;
#endif
    }();
    return build;
}

std::string driver_build_in_keys() {
    static const std::string build = [] {
        const DriverApi& api = driver();
        std::string text = std::to_string(api.driver_version);
        // The file the driver's code lies in (the loader may have found it by soname).
        if (Dl_info info{}; dladdr(reinterpret_cast<void*>(api.cuInit), &info) && info.dli_fname) {
            std::error_code error;
            const std::filesystem::path real = std::filesystem::canonical(info.dli_fname, error);
            if (const std::string named = error ? "" : version_from_library_name(real.filename().string());
                !named.empty())
                text += " " + named;
        }
        return text;
    }();
    return build;
}

}  // namespace cudacore::detail
