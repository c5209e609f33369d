// Authenticated entries of RemoteProgramCache against a real redis-server: with a secret (from a
// file or an environment variable) entries are sealed by HMAC-SHA-256 and only entries the same
// secret sealed are hits; whatever a writer without the secret puts on the server (an unsealed
// entry, one sealed by another secret, another key's entry copied whole or with its key field
// rewritten, a changed byte) is a miss and a warning, and never reaches the tiers above. The secret
// file is read under the rules of every input file, and what the tiers above took from the server
// under one trust is never served under another.
#include "redis_server.hpp"
#include "test_support.hpp"

#include "cudacore/cache_artefact.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/remote_program_cache.hpp"
#include "cudacore/tiered_program_cache.hpp"
#include "cudacore/warnings.hpp"

#include "remote/redis_connection.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <future>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace cudacore;
using test::RedisServer;

const std::string secret = "f3b1c0de-correct-horse-battery-staple";

CacheKey key_of(int n) { return CacheKey::of_bytes("secret key " + std::to_string(n)); }

ObjectCode code_of(int n) {
    std::string bytes(300, '\0');
    for (std::size_t at = 0; at < bytes.size(); ++at) bytes[at] = static_cast<char>((n * 37 + at) % 253);
    return ObjectCode::from_cubin(std::move(bytes), "code-" + std::to_string(n));
}

int remote_warnings(const test::WarningLog& log) {
    int count = 0;
    for (const auto& warning : log.seen) count += warning.kind == WarningKind::remote_cache_failed;
    return count;
}

struct SecretCache : ::testing::Test {
    test::TempDir dir;
    std::string secret_file = (dir.path() / "secret").string();
    void SetUp() override {
        test::write_file(secret_file, secret + "\n");  // as `echo` writes it
        std::filesystem::permissions(secret_file, std::filesystem::perms::owner_read |
                                                      std::filesystem::perms::owner_write);
    }

    RemoteCacheOptions options(const RedisServer& server, const std::string& query = "") {
        return RemoteCacheOptions::from_url(server.url("", query));
    }
    RemoteCacheOptions with_secret(const RedisServer& server) {
        RemoteCacheOptions sealed = options(server);
        sealed.secret_file = secret_file;
        return sealed;
    }
    // Stores `value` under `key`'s Redis name, as anyone who can write to the server could.
    static void plant(const RedisServer& server, const std::string& name, const std::string& value) {
        RemoteCacheOptions raw;
        raw.port = server.port();
        detail::RedisConnection connection(raw);
        auto reply = connection.command({"SET", name, value});
        ASSERT_EQ(detail::reply_text(*reply), "OK");
    }
};

TEST_F(SecretCache, EntriesSealedByTheSecretAreHitsAndCarryTheTag) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    RemoteProgramCache writer(with_secret(server));
    EXPECT_TRUE(writer.authenticated());
    writer.put(key_of(1), code_of(1));

    // The value is the entry sealed by HMAC-SHA-256 under the secret (the trailing newline of
    // the file is not part of it).
    RemoteCacheOptions raw;
    raw.port = server.port();
    detail::RedisConnection connection(raw);
    const std::string stored(
        detail::reply_text(*connection.command({"GET", writer.redis_key(key_of(1))})));
    EXPECT_EQ(stored, RemoteProgramCache::encode_entry(key_of(1), code_of(1), secret));
    EXPECT_EQ(stored[8], 1) << "the seal kind: HMAC-SHA-256";

    // Another process with the same secret, from an environment variable: a hit.
    ::setenv("CUDACORE_TEST_REMOTE_SECRET", secret.c_str(), 1);
    RemoteProgramCache reader(options(server, "secret_env=CUDACORE_TEST_REMOTE_SECRET"));
    EXPECT_TRUE(reader.authenticated());
    EXPECT_EQ(reader.get(key_of(1)), code_of(1));
    ::unsetenv("CUDACORE_TEST_REMOTE_SECRET");

    // A client without the secret cannot check the tag: a miss, warned about (a configuration to fix).
    test::WarningLog warnings;
    RemoteProgramCache plain(options(server));
    EXPECT_FALSE(plain.get(key_of(1)));
    ASSERT_EQ(remote_warnings(warnings), 1);
    EXPECT_NE(warnings.seen.back().message.find("secret"), std::string::npos)
        << warnings.seen.back().message;
}

TEST_F(SecretCache, WhatAWriterWithoutTheSecretPlantsIsAMissAndAWarning) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    RemoteProgramCache cache(with_secret(server));
    cache.put(key_of(2), code_of(2));  // a genuine entry of another key, to copy
    const std::string name = cache.redis_key(key_of(1));
    const std::string genuine_other = RemoteProgramCache::encode_entry(key_of(2), code_of(2), secret);

    std::string rewritten = genuine_other;  // key 2's code, its key field made key 1's
    const CacheKey planted = key_of(1);
    std::copy(planted.digest.begin(), planted.digest.end(), rewritten.begin() + 9);
    std::string flipped = RemoteProgramCache::encode_entry(key_of(1), code_of(1), secret);
    flipped[flipped.size() - 5] ^= 1;  // in the tag
    // Key 2's code sealed by SHA-256 for key 1, as a client without the secret can write it.
    const std::string resealed = RemoteProgramCache::encode_entry(key_of(1), code_of(2));

    struct Case {
        const char* what;
        std::string value;
        const char* warned;
    };
    const std::vector<Case> cases = {
        {"an unsealed entry (written without a secret)", resealed, "not authenticated"},
        {"an entry sealed by another secret",
         RemoteProgramCache::encode_entry(key_of(1), code_of(2), "another-secret-of-16-bytes"),
         "fails its authentication"},
        {"another key's entry with its key field rewritten", rewritten, "fails its authentication"},
        {"another key's entry copied whole", genuine_other, "another key"},
        {"a changed tag", flipped, "fails its authentication"},
        {"the disk cache's entry", DiskProgramCache::encode_entry(key_of(1), code_of(2)),
         "not a remote cache entry"},
    };
    std::uint64_t corrupt = 0;
    for (const Case& forged : cases) {
        SCOPED_TRACE(forged.what);
        plant(server, name, forged.value);
        test::WarningLog warnings;
        // Through the tiers of a machine: nothing reaches its memory or disk tier.
        auto memory = std::make_shared<MemoryProgramCache>();
        auto disk = std::make_shared<DiskProgramCache>(dir.path() / "disk");
        auto remote = std::make_shared<RemoteProgramCache>(with_secret(server));
        TieredProgramCache tiered({memory, disk, remote});
        EXPECT_FALSE(tiered.get(key_of(1)));
        EXPECT_FALSE(memory->get(key_of(1)));
        EXPECT_FALSE(disk->get(key_of(1)));
        EXPECT_EQ(remote->stats().corrupt_entries, 1u);
        ASSERT_EQ(remote_warnings(warnings), 1);
        EXPECT_NE(warnings.seen.back().message.find(forged.warned), std::string::npos)
            << warnings.seen.back().message;
        EXPECT_FALSE(cache.get(key_of(1)));
        EXPECT_EQ(cache.stats().corrupt_entries, ++corrupt);
    }
    EXPECT_EQ(cache.stats().hits, 0u);
    // The genuine entry of key 2 is still a hit; a put of key 1 replaces the forgery.
    EXPECT_EQ(cache.get(key_of(2)), code_of(2));
    cache.put(key_of(1), code_of(1));
    EXPECT_EQ(cache.get(key_of(1)), code_of(1));
}

TEST_F(SecretCache, TheSecretMustBeReadableAndLongEnough) {
    RemoteCacheOptions options;
    auto refused = [&](std::initializer_list<const char*> parts) {
        test::expect_invalid([&] { RemoteProgramCache cache(options); }, parts);
    };
    options.secret_file = (dir.path() / "absent").string();
    refused({"cannot read", "absent", "no such file"});
    test::write_file(dir.path() / "short", "tooshort\n");
    options.secret_file = (dir.path() / "short").string();
    refused({"holds 8 bytes", "at least 16"});
    options.secret_file.clear();
    options.secret_env = "CUDACORE_TEST_UNSET_SECRET";
    ::unsetenv("CUDACORE_TEST_UNSET_SECRET");
    refused({"CUDACORE_TEST_UNSET_SECRET", "unset or empty"});
    options.secret_file = secret_file;
    refused({"not both"});
    options.secret_env.clear();
    EXPECT_TRUE(RemoteProgramCache(options).authenticated());

    // The URL names them too; the secret itself never appears in a message.
    const auto parsed = RemoteCacheOptions::from_url("redis://h?secret_file=%2Fetc%2Fk&secret_env=K");
    EXPECT_EQ(parsed.secret_file, "/etc/k");
    EXPECT_EQ(parsed.secret_env, "K");
    test::expect_invalid([] { RemoteCacheOptions::from_url("redis://h?secret_file="); },
                         {"secret_file", "needs a value"});
}

// The secret file is read as every file from outside is: a regular file only, no larger than a
// secret can be, opened without waiting for a writer; a refusal names the file and the option.
TEST_F(SecretCache, TheSecretFileIsARegularFileOfBoundedSize) {
    RemoteCacheOptions options;
    auto refused = [&](const std::filesystem::path& file, std::initializer_list<const char*> parts) {
        SCOPED_TRACE(file.string());
        options.secret_file = file.string();
        test::expect_invalid([&] { RemoteProgramCache cache(options); }, parts);
        test::expect_invalid([&] { RemoteProgramCache cache(options); },
                             {"(secret_file)", options.secret_file.c_str()});
    };
    refused(dir.path(), {"is a directory, not a regular file"});
    refused("/dev/zero", {"is a character device, not a regular file"});
    const std::filesystem::path large = dir.path() / "large";
    test::write_file(large, std::string(1 << 20, 'k'));
    refused(large, {"holds 1048576 bytes", "at most 4096"});

    // A FIFO without a writer: refused at once. (Read as a file, it would wait for a writer
    // for ever: the test then opens one so that the read ends, and fails.)
    const std::filesystem::path fifo = dir.path() / "fifo.key";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    options.secret_file = fifo.string();
    auto made = std::async(std::launch::async, [&]() -> std::string {
        try {
            RemoteProgramCache cache(options);
        } catch (const InvalidArgumentError& e) {
            return e.what();
        }
        return "nothing thrown";
    });
    if (made.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
        ADD_FAILURE() << "the secret file's FIFO was waited on";
        const int writer = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
        if (writer >= 0) ::close(writer);
    }
    const std::string error = made.get();
    EXPECT_NE(error.find("is a FIFO, not a regular file"), std::string::npos) << error;
    EXPECT_NE(error.find(fifo.string() + "' (secret_file)"), std::string::npos) << error;
}

// A secret file that users other than its owner can read (or change) is warned about, as ssh
// does for a key, and used all the same.
TEST_F(SecretCache, ASecretFileOthersCanReadIsWarnedAbout) {
    RemoteCacheOptions options;
    options.secret_file = secret_file;
    auto exposure_warnings = [](const test::WarningLog& log) {
        std::vector<std::string> messages;
        for (const auto& warning : log.seen)
            if (warning.kind == WarningKind::secret_file_exposed) messages.push_back(warning.message);
        return messages;
    };
    {
        test::WarningLog warnings;
        EXPECT_TRUE(RemoteProgramCache(options).authenticated());
        EXPECT_TRUE(exposure_warnings(warnings).empty()) << "mode 0600";
    }
    for (const auto mode : {std::filesystem::perms::group_read, std::filesystem::perms::others_read,
                            std::filesystem::perms::others_write}) {
        std::filesystem::permissions(secret_file, std::filesystem::perms::owner_read |
                                                      std::filesystem::perms::owner_write | mode);
        test::WarningLog warnings;
        EXPECT_TRUE(RemoteProgramCache(options).authenticated());
        const auto messages = exposure_warnings(warnings);
        ASSERT_EQ(messages.size(), 1u);
        for (const std::string part : {secret_file + "' (secret_file)", std::string("chmod 600")})
            EXPECT_NE(messages[0].find(part), std::string::npos) << messages[0];
    }
}

// Trust follows an entry between tiers: what a machine's disk tier took from the server before
// the fleet turned the secret on is not served once it is on (even after the server was flushed
// and rebuilt), nor what it took under another secret; what it took under the secret is, and so
// is what the machine compiled itself.
TEST_F(SecretCache, TrustFollowsAnEntryBetweenTiers) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    test::WarningLog quiet;  // the server's failures once it is gone
    auto disk = std::make_shared<DiskProgramCache>(dir.path() / "disk");
    auto tiered_with = [&](const RemoteCacheOptions& options) {
        return TieredProgramCache({disk, std::make_shared<RemoteProgramCache>(options)});
    };
    // Before the secret: anyone who can write to the server chooses the code; a machine takes it.
    RemoteProgramCache(options(server)).put(key_of(1), code_of(66));
    EXPECT_EQ(tiered_with(options(server)).get(key_of(1)), code_of(66));

    // The fleet turns the secret on: the server is flushed and rebuilt by holders of the secret.
    {
        RemoteCacheOptions raw;
        raw.port = server.port();
        detail::RedisConnection connection(raw);
        ASSERT_EQ(detail::reply_text(*connection.command({"FLUSHALL"})), "OK");
    }
    RemoteProgramCache(with_secret(server)).put(key_of(1), code_of(1));
    {
        TieredProgramCache tiered = tiered_with(with_secret(server));
        EXPECT_EQ(tiered.get(key_of(1)), code_of(1));
        EXPECT_EQ(tiered.tier_hits(), (std::vector<std::uint64_t>{0, 1})) << "not from the disk";
    }
    // What the disk took under the secret is a hit there, with the server gone.
    server.kill();
    {
        TieredProgramCache tiered = tiered_with(with_secret(server));
        EXPECT_EQ(tiered.get(key_of(1)), code_of(1));
        EXPECT_EQ(tiered.tier_hits(), (std::vector<std::uint64_t>{1, 0}));
    }
    // Under another secret it is not.
    const std::filesystem::path other = dir.path() / "other.key";
    test::write_file(other, "another-secret-of-the-fleet\n");
    std::filesystem::permissions(other, std::filesystem::perms::owner_read);
    RemoteCacheOptions other_secret = options(server);
    other_secret.secret_file = other.string();
    EXPECT_FALSE(tiered_with(other_secret).get(key_of(1)));
    // What this machine compiled (stored by its own processes) is a hit under any trust.
    disk->put(key_of(2), code_of(2));
    EXPECT_EQ(tiered_with(other_secret).get(key_of(2)), code_of(2));
    EXPECT_EQ(tiered_with(with_secret(server)).get(key_of(2)), code_of(2));
}

// The key under which a machine's tier keeps a copy taken from the server is public (worked out
// from the server's trust and the key): an entry imported under it from an unsigned artefact
// keeps the artefact's trust and is not served as the server's. And the server's entries are
// whoever writes it's: a signed export vouches for those of a server without a secret for no one.
TEST_F(SecretCache, NeitherAnImportUnderACopysKeyNorAServersEntryIsVouchedForAsTrusted) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    test::WarningLog quiet;  // the server's failures once it is gone
    RemoteProgramCache(with_secret(server)).put(key_of(5), code_of(5));
    // The copy's key, as anyone sees it: the one key a machine's disk tier holds after a hit.
    auto seen = std::make_shared<DiskProgramCache>(dir.path() / "seen");
    ASSERT_EQ(TieredProgramCache({seen, std::make_shared<RemoteProgramCache>(with_secret(server))}).get(key_of(5)),
              code_of(5));
    const std::optional<std::vector<CacheKey>> copies = seen->entry_keys();
    ASSERT_TRUE(copies && copies->size() == 1u);
    ASSERT_NE(copies->front(), key_of(5));

    // Another machine's disk cache imports, alone (no secret there), an unsigned artefact that
    // holds other code under that key.
    auto victim = std::make_shared<DiskProgramCache>(dir.path() / "victim");
    std::stringstream artefact(CacheArtefact({{copies->front(), code_of(99)}}, CacheArtefact::current_origin()).serialize());
    ASSERT_EQ(import_cache_artefact(*victim, artefact, {}).imported, 1u);
    server.kill();
    TieredProgramCache tiered({victim, std::make_shared<RemoteProgramCache>(with_secret(server))});
    EXPECT_FALSE(tiered.get(key_of(5))) << "an unsigned import served as the server's";

    // A server without a secret: a signed export leaves its entries out; one with the secret
    // vouches for what it holds.
    RedisServer open_server;
    RemoteProgramCache open(options(open_server));
    open.put(key_of(6), code_of(6));
    std::string trust;
    ASSERT_TRUE(open.get_with_trust(key_of(6), trust));
    EXPECT_EQ(trust, open.entry_trust());
    std::stringstream refused;
    const CacheArtefactExport not_signed = export_cache_artefact(refused, open, {.keys = std::vector<CacheKey>{key_of(6)}, .secret = secret});
    EXPECT_EQ(not_signed.entries, 0u);
    EXPECT_EQ(not_signed.not_vouched, std::vector<CacheKey>{key_of(6)});
    RemoteProgramCache sealed(with_secret(open_server));
    sealed.put(key_of(7), code_of(7));
    std::stringstream vouched;
    EXPECT_EQ(export_cache_artefact(vouched, sealed, {.keys = std::vector<CacheKey>{key_of(7)}, .secret = secret}).entries, 1u);
}

TEST(RemoteEntry, DecodingChecksTheSealBeforeAnythingElse) {
    const std::string sealed = RemoteProgramCache::encode_entry(key_of(3), code_of(3), secret);
    EXPECT_EQ(RemoteProgramCache::decode_entry(sealed, key_of(3), secret), code_of(3));
    // Every single changed byte is refused, wherever it is.
    for (std::size_t at = 0; at < sealed.size(); at += 7) {
        std::string changed = sealed;
        changed[at] ^= 0x40;
        EXPECT_THROW(RemoteProgramCache::decode_entry(changed, key_of(3), secret), SerializationError)
            << "byte " << at;
    }
    // Every prefix too.
    for (std::size_t size = 0; size < sealed.size(); size += 13)
        EXPECT_THROW(RemoteProgramCache::decode_entry(sealed.substr(0, size), key_of(3), secret),
                     SerializationError);
    const std::string plain = RemoteProgramCache::encode_entry(key_of(3), code_of(3));
    EXPECT_EQ(RemoteProgramCache::decode_entry(plain, key_of(3)), code_of(3));
    EXPECT_THROW(RemoteProgramCache::decode_entry(plain, key_of(4)), SerializationError);
    EXPECT_THROW(RemoteProgramCache::decode_entry(plain, key_of(3), secret), SerializationError);
    EXPECT_THROW(RemoteProgramCache::decode_entry(sealed, key_of(3)), SerializationError);
}

}  // namespace
