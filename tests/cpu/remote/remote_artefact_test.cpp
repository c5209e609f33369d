// Cache artefacts and the remote tier: a cache that authenticates its entries with a secret (a
// remote cache with one, or a tiered cache over it) refuses an unsigned artefact unless told, and
// what an import brings keeps the trust it came with in every tier, against a real redis-server
// each test starts on a free loopback port.
#include "redis_server.hpp"
#include "sample_artefact.hpp"
#include "test_support.hpp"

#include "cudacore/cache_artefact.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/remote_program_cache.hpp"
#include "cudacore/tiered_program_cache.hpp"

#include <sstream>
#include <string>

namespace {

using namespace cudacore;
using cudacore::test::TempDir;

constexpr const char* secret = "0123456789abcdef0123456789abcdef";

// A library import into a cache that authenticates its entries with a secret (a remote cache with
// one, or a tiered cache over it) refuses an unsigned artefact unless the caller accepts it: the
// cache would otherwise seal what nobody signed, and a fresh machine of the fleet would run it.
TEST(CacheArtefact, ACacheWithASecretRefusesAnUnsignedArtefactUnlessTold) {
    CUDACORE_REQUIRE_REDIS();
    test::RedisServer server;
    const test::ScopedEnv fleet_secret("CUDACORE_TEST_ARTEFACT_SECRET", secret);
    auto remote = std::make_shared<RemoteProgramCache>(
        RemoteCacheOptions::from_url(server.url("", "secret_env=CUDACORE_TEST_ARTEFACT_SECRET")));
    TieredProgramCache tiered({std::make_shared<MemoryProgramCache>(), remote});
    const CacheKey one = CacheKey::of_bytes("one");
    for (ProgramCache* cache : {static_cast<ProgramCache*>(remote.get()), static_cast<ProgramCache*>(&tiered)}) {
        std::istringstream in(test::sample_artefact_bytes());
        try {
            import_cache_artefact(*cache, in);
            ADD_FAILURE() << "an unsigned artefact was imported into a cache with a secret";
        } catch (const SerializationError& e) {
            EXPECT_NE(std::string(e.what()).find("unsigned"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("accept_unsigned"), std::string::npos) << e.what();
        }
    }
    // A fresh machine of the fleet finds nothing.
    RemoteProgramCache fresh(RemoteCacheOptions::from_url(server.url("", "secret_env=CUDACORE_TEST_ARTEFACT_SECRET")));
    EXPECT_FALSE(fresh.get(one));
    // Signed with the fleet's secret: imported, and sealed with it.
    std::istringstream signed_in(test::sample_artefact_bytes(secret));
    EXPECT_EQ(import_cache_artefact(*remote, signed_in, {.secret = secret}).imported, 2u);
    EXPECT_TRUE(fresh.get(one));
    // Said otherwise by the caller: imported.
    remote->clear();
    std::istringstream accepted(test::sample_artefact_bytes());
    EXPECT_EQ(import_cache_artefact(*remote, accepted, {.accept_unsigned = true}).imported, 2u);
    // A cache without a secret vouches for nothing: unsigned artefacts go in as before.
    remote->clear();
    RemoteProgramCache open(RemoteCacheOptions::from_url(server.url()));
    std::istringstream plain(test::sample_artefact_bytes());
    EXPECT_EQ(import_cache_artefact(open, plain).imported, 2u);
}

// What an import brings keeps the trust it came with, in every tier: an unsigned artefact imported
// into a disk or memory cache is served by that cache alone and through a tiered cache whose
// shared tiers hold no secret, but no longer once the fleet turns its secret on (a tiered cache
// over a remote one with a secret); a signed one is served where its secret is, not under another.
// A compile here (a put of the key) stores it as compiled here.
TEST(CacheArtefact, AnImportKeepsTheTrustItCameWithInEveryTier) {
    CUDACORE_REQUIRE_REDIS();
    test::RedisServer server;
    TempDir dir;
    const test::ScopedEnv fleet_secret("CUDACORE_TEST_ARTEFACT_SECRET", secret);
    const test::ScopedEnv other_secret("CUDACORE_TEST_OTHER_SECRET", "another secret of 32 bytes......");
    auto remote = [&](const std::string& query) {
        return std::make_shared<RemoteProgramCache>(RemoteCacheOptions::from_url(server.url("", query)));
    };
    const auto open_remote = remote("");
    const auto fleet_remote = remote("secret_env=CUDACORE_TEST_ARTEFACT_SECRET");
    const auto other_remote = remote("secret_env=CUDACORE_TEST_OTHER_SECRET");
    const CacheKey one = CacheKey::of_bytes("one");

    auto disk = std::make_shared<DiskProgramCache>(dir.path() / "unsigned");
    std::istringstream unsigned_in(test::sample_artefact_bytes());
    EXPECT_EQ(import_cache_artefact(*disk, unsigned_in).imported, 2u);
    std::string trust;
    EXPECT_TRUE(disk->get_with_trust(one, trust));
    EXPECT_EQ(trust, "unsigned cache artefact");
    EXPECT_TRUE(disk->get(one)) << "used alone, a cache serves what was imported into it";
    EXPECT_TRUE(TieredProgramCache({disk, open_remote}).get(one));
    TieredProgramCache fleet({disk, fleet_remote});
    EXPECT_FALSE(fleet.get(one)) << "an unsigned import served as compiled here once the secret is on";
    auto memory = std::make_shared<MemoryProgramCache>();
    std::istringstream into_memory(test::sample_artefact_bytes());
    EXPECT_EQ(import_cache_artefact(*memory, into_memory).imported, 2u);
    EXPECT_TRUE(memory->get(one));
    EXPECT_FALSE(TieredProgramCache({memory, fleet_remote}).get(one));

    auto signed_disk = std::make_shared<DiskProgramCache>(dir.path() / "signed");
    std::istringstream signed_in(test::sample_artefact_bytes(secret));
    EXPECT_EQ(import_cache_artefact(*signed_disk, signed_in, {.secret = secret}).imported, 2u);
    EXPECT_TRUE(signed_disk->get(one));
    EXPECT_TRUE(TieredProgramCache({signed_disk, fleet_remote}).get(one));
    EXPECT_FALSE(TieredProgramCache({signed_disk, other_remote}).get(one));
    // Copied up into a memory tier, it keeps its trust there.
    auto above = std::make_shared<MemoryProgramCache>();
    EXPECT_TRUE(TieredProgramCache({above, signed_disk, fleet_remote}).get(one));
    EXPECT_TRUE(above->get_with_trust(one, trust));
    EXPECT_EQ(trust, fleet_remote->entry_trust());
    EXPECT_FALSE(TieredProgramCache({above, other_remote}).get(one));

    // The machine compiles the key itself: stored as compiled here, served again.
    const ObjectCode code = *disk->get(one);
    fleet.put(one, code);
    EXPECT_TRUE(disk->get_with_trust(one, trust));
    EXPECT_EQ(trust, "");
    EXPECT_EQ(TieredProgramCache({disk, other_remote}).get(one), code);

    // Imported through a tiered cache over the fleet's server: an artefact signed with another
    // secret stays in this machine's tier (under its trust, not served here) and never reaches
    // the server, where it would be sealed as the fleet's; one signed with the fleet's does.
    fleet_remote->clear();
    auto through = std::make_shared<DiskProgramCache>(dir.path() / "through");
    TieredProgramCache importer({through, fleet_remote});
    std::istringstream other_signed(test::sample_artefact_bytes("another secret of 32 bytes......"));
    EXPECT_EQ(import_cache_artefact(importer, other_signed, {.secret = "another secret of 32 bytes......"}).imported, 2u);
    EXPECT_FALSE(remote("secret_env=CUDACORE_TEST_ARTEFACT_SECRET")->get(one)) << "sealed as the fleet's";
    EXPECT_FALSE(importer.get(one));
    std::istringstream fleet_signed(test::sample_artefact_bytes(secret));
    EXPECT_EQ(import_cache_artefact(importer, fleet_signed, {.secret = secret}).imported, 2u);
    EXPECT_TRUE(remote("secret_env=CUDACORE_TEST_ARTEFACT_SECRET")->get(one));
}

}  // namespace
