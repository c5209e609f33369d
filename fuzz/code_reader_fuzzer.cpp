// The shared reader of GPU code files (code/elf_view.hpp, fatbin_reader.hpp, nv_info_records.hpp)
// as its lenient users drive it, on arbitrary bytes: the ELF view opened on unvalidated bytes,
// every section and symbol looked up, the parameter count of every kernel that has .nv.info
// records, and the arch fit of the bytes as a cubin and as a fatbin. None may crash, throw past
// its noexcept, or hand out a view outside the input; and what validation accepts, the view opens.
#include "code/bounded_read.hpp"
#include "code/code_validation.hpp"
#include "code/elf_view.hpp"
#include "code/kernel_parameter_count.hpp"
#include "cudacore/errors.hpp"
#include "runtime/code_arch_fit.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace cudacore;
using namespace cudacore::detail;

// `part` lies inside `whole` (or is empty).
void expect_inside(std::string_view part, std::string_view whole) {
    if (part.empty()) return;
    if (part.data() < whole.data() || part.size() > whole.size() ||
        static_cast<std::size_t>(part.data() - whole.data()) > whole.size() - part.size())
        std::abort();
}

// The kernels that have an attribute section (".nv.info.<kernel>"), at most a few.
std::vector<std::string> read_elf(std::string_view bytes) {
    std::vector<std::string> kernels;
    const ElfView<Elf64Types> elf(bytes);
    for (std::size_t index = 0; index < elf.sections().size(); ++index) {
        const std::string_view name = elf.section_name(index);
        expect_inside(name, bytes);
        expect_inside(elf.contents(elf.sections()[index]), bytes);
        constexpr std::string_view kInfo = ".nv.info.";
        if (name.substr(0, kInfo.size()) == kInfo && kernels.size() < 8)
            kernels.emplace_back(name.substr(kInfo.size()));
        if (elf.sections()[index].sh_type == SHT_SYMTAB)
            elf.for_each_symbol(elf.sections()[index], [&](const Elf64_Sym&, const auto& name_of) {
                if (const std::optional<std::string_view> name = name_of()) expect_inside(*name, bytes);
            });
    }
    return kernels;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    bool valid_cubin = true;
    try {
        validate_code(CodeType::cubin, bytes);
    } catch (const InvalidArgumentError&) {
        valid_cubin = false;
    }
    std::vector<std::string> kernels;
    try {
        if (elf_class(bytes) == ELFCLASS64) kernels = read_elf(bytes);
    } catch (const MalformedBytes&) {
        if (valid_cubin) std::abort();  // validation accepted what the view refuses
    }
    kernels.push_back("k");
    for (const std::string& kernel : kernels) {
        (void)cubin_kernel_parameter_count(bytes, kernel);
        (void)fatbin_kernel_parameter_count(bytes, kernel);
    }
    (void)cubin_arch_fit(bytes, 9, 0);
    (void)fatbin_arch_fit(bytes, 9, 0);
    return 0;
}
