// Whether code can run on a device, told from its bytes (what lets a first get_kernel skip
// forcing the module into a context): exact arch runs, another major or a newer minor cannot
// run, everything uncertain asks the driver. No GPU needed.
#include "test_support.hpp"

#include "cudacore/program.hpp"
#include "runtime/code_arch_fit.hpp"

#include <elf.h>

#include <cstring>

namespace {

using namespace cudacore;
using detail::ArchFit;
using detail::cubin_arch_fit;
using detail::fatbin_arch_fit;

std::string cubin_for(const std::string& arch) {
    ProgramOptions options;
    options.name = "fit_" + arch;
    options.arch = arch;
    options.toolkit_include_path = false;
    return std::string(Program("extern \"C\" __global__ void k(int* p) { *p = 1; }", SourceType::cxx,
                               options)
                           .compile(CodeType::cubin)
                           .code());
}

TEST(CodeArchFit, CubinForExactlyThisArchRuns) {
    EXPECT_EQ(cubin_arch_fit(cubin_for("sm_90"), 9, 0), ArchFit::runs);
    EXPECT_EQ(cubin_arch_fit(cubin_for("sm_120"), 12, 0), ArchFit::runs);
}

TEST(CodeArchFit, CubinForAnotherMajorOrANewerMinorCannotRun) {
    const std::string sm90 = cubin_for("sm_90");
    EXPECT_EQ(cubin_arch_fit(sm90, 12, 0), ArchFit::cannot_run);
    EXPECT_EQ(cubin_arch_fit(sm90, 8, 9), ArchFit::cannot_run);
    const std::string sm86 = cubin_for("sm_86");
    EXPECT_EQ(cubin_arch_fit(sm86, 8, 0), ArchFit::cannot_run);  // newer minor
    EXPECT_EQ(cubin_arch_fit(sm86, 9, 0), ArchFit::cannot_run);
}

TEST(CodeArchFit, OlderMinorOfTheSameMajorAsksTheDriver) {
    EXPECT_EQ(cubin_arch_fit(cubin_for("sm_80"), 8, 6), ArchFit::ask_driver);
}

TEST(CodeArchFit, UnreadableBytesAskTheDriver) {
    const std::string sm90 = cubin_for("sm_90");
    EXPECT_EQ(cubin_arch_fit(sm90.substr(0, 20), 9, 0), ArchFit::ask_driver);
    EXPECT_EQ(cubin_arch_fit("", 9, 0), ArchFit::ask_driver);
    EXPECT_EQ(cubin_arch_fit(std::string(100, '\x7f'), 9, 0), ArchFit::ask_driver);
    std::string not_cuda = sm90;
    const Elf64_Half x86 = EM_X86_64;
    std::memcpy(not_cuda.data() + offsetof(Elf64_Ehdr, e_machine), &x86, sizeof x86);
    EXPECT_EQ(cubin_arch_fit(not_cuda, 9, 0), ArchFit::ask_driver);
    EXPECT_EQ(fatbin_arch_fit("not a fatbin", 9, 0), ArchFit::ask_driver);
    EXPECT_EQ(fatbin_arch_fit(sm90, 9, 0), ArchFit::ask_driver);  // a cubin is not a fatbin
}

}  // namespace
