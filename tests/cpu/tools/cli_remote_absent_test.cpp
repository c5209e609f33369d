// The CLI's --remote options as a build without the remote tier has them (tools/remote_option.cpp
// with tools/remote_cache_absent.cpp, compiled into this program, which links no cudacore::remote):
// a remote cache named by the option or the environment is refused, saying why, rather than
// passed over; with none named nothing changes; secret options without a cache are refused as in
// every build; --remote-secret-file is still read (an artefact's default secret).
#include "test_support.hpp"

#include "remote_option.hpp"

#include "cudacore/errors.hpp"

#include <filesystem>
#include <string>

namespace {

using namespace cudacore;
using cudacore::cli::RemoteArguments;

TEST(CliWithoutRemoteTier, ARemoteCacheNamedIsRefusedSayingWhy) {
    const test::ScopedEnv unset("CUDACORE_REMOTE_CACHE", "");
    const RemoteArguments by_option{.url = "redis://127.0.0.1:6379/0"};
    EXPECT_TRUE(cli::remote_cache_named(by_option));
    const std::initializer_list<const char*> why = {
        "--remote names a remote cache", "built without its remote tier", "CUDACORE_BUILD_REMOTE"};
    test::expect_invalid([&] { cli::open_remote_cache(by_option); }, why);
    test::expect_invalid([&] { cli::remote_cache_secret(by_option); }, why);
    const test::ScopedEnv named("CUDACORE_REMOTE_CACHE", "redis://127.0.0.1:6379/0");
    test::expect_invalid([] { cli::open_remote_cache({}); },
                         {"$CUDACORE_REMOTE_CACHE names a remote cache"});
}

TEST(CliWithoutRemoteTier, WithNoCacheNamedNothingChanges) {
    const test::ScopedEnv unset("CUDACORE_REMOTE_CACHE", "");
    EXPECT_FALSE(cli::remote_cache_named({}));
    EXPECT_FALSE(cli::open_remote_cache({}));
    EXPECT_EQ(cli::remote_cache_secret({}), "");
    test::expect_invalid([] { cli::open_remote_cache({.secret_env = "SOME_SECRET"}); },
                         {"need a remote cache"});
}

TEST(CliWithoutRemoteTier, TheRemoteSecretFileIsStillRead) {
    const test::ScopedEnv unset("CUDACORE_REMOTE_CACHE", "");
    test::TempDir dir;
    const std::string file = (dir.path() / "fleet.key").string();
    test::write_file(file, "0123456789abcdef0123456789abcdef\n");
    std::filesystem::permissions(file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    EXPECT_EQ(cli::remote_cache_secret({.secret_file = file}), "0123456789abcdef0123456789abcdef");
    test::expect_invalid([&] { cli::remote_cache_secret({.secret_file = file + ".absent"}); },
                         {"fleet.key.absent' (--remote-secret-file)"});
}

}  // namespace
