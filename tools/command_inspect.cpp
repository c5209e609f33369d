// `cudacore inspect FILE`: what a code file is, told from its bytes: type, arch, size, kernels.
#include "commands.hpp"

#include "file_io.hpp"

#include "cudacore/code_inspection.hpp"
#include "cudacore/object_code.hpp"

#include <cstdio>
#include <memory>

namespace cudacore::cli {

namespace {

void print_code_info(const std::string& path, const CodeInfo& info) {
    std::printf("file     %s\n", path.c_str());
    std::printf("type     %s\n", std::string(to_string(info.type)).c_str());
    std::printf("arch     %s\n", !info.arch.empty()        ? info.arch.c_str()
                                 : !info.entries.empty() ? "(one per entry)"
                                                         : "(not recorded)");
    std::printf("size     %zu bytes\n", info.size);
    if (!info.ptx_version.empty()) std::printf("version  PTX %s\n", info.ptx_version.c_str());
    if (!info.entries.empty()) {
        std::printf("entries  %zu\n", info.entries.size());
        for (const auto& entry : info.entries)
            std::printf("  %-6s %-10s %zu bytes%s\n", entry.kind.c_str(), entry.arch.c_str(),
                        entry.size, entry.compressed ? " (compressed)" : "");
    }
    if (info.type == CodeType::cubin || info.type == CodeType::ptx || !info.kernels.empty()) {
        std::printf("kernels  %zu\n", info.kernels.size());
        for (const auto& kernel : info.kernels) std::printf("  %s\n", kernel.c_str());
    }
}

// A serialized ObjectCode (from `compile --serialize` or ObjectCode::save): its header, then the
// code it holds, inspected like a raw file.
void inspect_file(const std::string& path) {
    const std::string bytes = read_input_file(path);
    if (!ObjectCode::looks_serialized(bytes)) {
        print_code_info(path, inspect_code(bytes));
        return;
    }
    const ObjectCode code = ObjectCode::deserialize(bytes);
    std::printf("format   serialized ObjectCode v%u, %zu bytes, checksum ok\n",
                ObjectCode::serialization_format_version, bytes.size());
    std::printf("name     %s\n", code.name().c_str());
    std::printf("symbols  %zu\n", code.symbol_map().size());
    for (const auto& [expression, lowered] : code.symbol_map())
        std::printf("  %s -> %s\n", expression.c_str(), lowered.c_str());
    print_code_info(path, inspect_code(code));
}

}  // namespace

void add_inspect_command(CLI::App& app) {
    auto* command = app.add_subcommand(
        "inspect", "Tell a code file's type (cubin, fatbin, PTX, LTO-IR...), arch, size, kernels");
    auto path = std::make_shared<std::string>();
    command->add_option("file", *path, "The file to inspect")->required();
    command->callback([path] { inspect_file(*path); });
}

}  // namespace cudacore::cli
