// The owning-object contract (tests/support/owning_contract.hpp) over the owning types that can be
// made without a GPU: a Stream over a made-up handle that nothing destroys (fake_stream), an
// ObjectCode (its bytes stand for what it holds: loading needs a GPU), and a Program and a Linker
// after a compile and a link (NVRTC and nvJitLink need no GPU). The GPU suite runs it over every
// owning type (tests/gpu/runtime/owning_contract_test.cpp).
#include "empty_stream.hpp"
#include "owning_contract.hpp"

#include "cudacore/linker.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "cudacore/stream.hpp"

#include <cstdint>
#include <exception>
#include <string>

namespace {

using namespace cudacore;

struct FakeStreamTraits {
    using Object = Stream;
    static bool available(std::string&) { return true; }
    static Stream make() {
        static std::uintptr_t next = 0x1000;
        return test::fake_stream(next++);
    }
    static void use(const Stream& stream) { (void)stream.context(); }
};

struct ObjectCodeTraits {
    using Object = ObjectCode;
    static bool available(std::string&) { return true; }
    static ObjectCode make() {
        static int next = 0;
        return ObjectCode::from_ptx(std::string(".version 8.0\n.target sm_90\n"),
                                    "unit" + std::to_string(next++) + ".ptx");
    }
    static void use(const ObjectCode& code) { (void)code.serialize(); }
    static bool holds(const ObjectCode& code) { return !code.code().empty(); }
};

constexpr const char* kSource = R"(extern "C" __global__ void add_one(float* data) { data[threadIdx.x] += 1.0f; })";

Program compiled_program() {
    ProgramOptions options;
    options.name = "add_one.cu";
    options.arch = "sm_90";
    Program program(kSource, SourceType::cxx, options);
    (void)program.compile(CodeType::ptx);
    return program;
}

// Whether `make` works here (NVRTC or nvJitLink may be missing): false with the reason.
template <class Make>
bool can_make(Make make, std::string& why) {
    try {
        (void)make();
        return true;
    } catch (const std::exception& error) {
        why = std::string("cannot be made here: ") + error.what();
        return false;
    }
}

struct ProgramTraits {
    using Object = Program;
    static bool available(std::string& why) { return can_make(compiled_program, why); }
    static Program make() { return compiled_program(); }
    static void use(const Program& program) { (void)program.flags(CodeType::ptx); }
};

Linker linked_linker() {
    static const ObjectCode ptx = compiled_program().compile(CodeType::ptx);
    LinkerOptions options;
    options.name = "app";
    options.arch = "sm_90";
    Linker linker({ptx}, options);
    (void)linker.link();
    return linker;
}

struct LinkerTraits {
    using Object = Linker;
    static bool available(std::string& why) { return can_make(linked_linker, why); }
    static Linker make() { return linked_linker(); }
    static void use(const Linker& linker) { (void)linker.flags(); }
};

}  // namespace

// A typedef: the macro would split the list at its commas.
using CpuOwningTypes = ::testing::Types<FakeStreamTraits, ObjectCodeTraits, ProgramTraits, LinkerTraits>;
using CpuComparableTypes = ::testing::Types<FakeStreamTraits, ObjectCodeTraits>;  // Program, Linker: no ==

namespace cudacore::test {
INSTANTIATE_TYPED_TEST_SUITE_P(Cpu, OwningContract, CpuOwningTypes);
INSTANTIATE_TYPED_TEST_SUITE_P(Cpu, OwningEquality, CpuComparableTypes);
}  // namespace cudacore::test
