// The owning-object contract (tests/support/owning_contract.hpp) over the owning types that can be
// made without a GPU: a Stream over a made-up handle that nothing destroys (fake_stream). The GPU
// suite runs it over every owning type (tests/gpu/runtime/owning_contract_test.cpp).
#include "empty_stream.hpp"
#include "owning_contract.hpp"

#include "cudacore/stream.hpp"

#include <cstdint>
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

}  // namespace

namespace cudacore::test {
INSTANTIATE_TYPED_TEST_SUITE_P(Cpu, OwningContract, ::testing::Types<FakeStreamTraits>);
}  // namespace cudacore::test
