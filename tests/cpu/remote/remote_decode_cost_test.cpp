// What reading a Redis value costs is bounded before it is spent (the core library's readers:
// tests/cpu/cache/decode_cost_test.cpp): a value of hundreds of thousands of tiny symbols is
// refused from its count, with the numbers, while the memory this process allocates stays far
// below what the old reader took (every operator new of this program is counted:
// AllocationMeter); the refusal starts the back-off, as other failures do.
#include "allocation_meter.hpp"
#include "fake_redis_server.hpp"
#include "test_support.hpp"

#include "cudacore/remote_program_cache.hpp"
#include "cudacore/warnings.hpp"

#include "cache/sha256_seal.hpp"

#include <string>

namespace {

using namespace cudacore;
using namespace cudacore::test;

// The Redis value: valid, under max_entry_bytes, of millions of symbols. Each lookup
// of it once cost half a gigabyte; now the first is refused from its count and starts the
// back-off, so the next lookups do not ask the server.
TEST(DecodeCost, ARedisValuePastItsDecodeBoundIsAFailureThatBacksOff) {
    const CacheKey key = CacheKey::of_bytes("redis symbols");
    std::string value = "ccremote";
    value.push_back('\0');  // sealed by SHA-256
    value.append(reinterpret_cast<const char*>(key.digest.data()), key.digest.size());
    value += serialized_with_symbols(many_symbols);
    value += detail::sha256_seal(value, {});
    test::FakeRedisServer server(
        {test::FakeRedisServer::Behaviour::junk, "$" + std::to_string(value.size()) + "\r\n" + value + "\r\n"});
    test::WarningLog warnings;
    RemoteProgramCache cache(RemoteCacheOptions::from_url(server.url("retry_ms=60000")));
    {
        const AllocationMeter meter;
        EXPECT_FALSE(cache.get(key));
        EXPECT_LT(meter.peak(), 48 * MiB) << "the 9 MB reply, its copy, and no symbol map";
    }
    std::string said;
    for (const Warning& warning : warnings.seen) said += warning.message + "\n";
    EXPECT_NE(said.find("symbol map of 600000 symbols"), std::string::npos) << said;
    EXPECT_NE(said.find("back-off"), std::string::npos) << said;
    EXPECT_EQ(cache.stats().corrupt_entries, 1u);
    const std::uint64_t received = cache.counters().bytes_received;
    EXPECT_FALSE(cache.get(key));
    EXPECT_FALSE(cache.get(key));
    EXPECT_EQ(cache.counters().skipped, 2u);
    EXPECT_EQ(cache.counters().bytes_received, received) << "asked the server again";
}

}  // namespace
