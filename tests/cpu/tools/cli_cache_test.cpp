// The CLI's cache: compile hits, --no-cache, --serialize + inspect, and `cudacore cache`.
#include "cli_cache_fixture.hpp"
#include "test_support.hpp"

#include "cudacore/disk_program_cache.hpp"
#include "cudacore/object_code.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <set>

namespace {

using cudacore::test::cli_path;
using cudacore::test::read_file;
using cudacore::test::run_process;
using cudacore::test::CliCache;
using cudacore::test::TempDir;

TEST_F(CliCache, SecondCompileIsACacheHitWithIdenticalOutput) {
    const auto first = compile((dir.path() / "1.cubin").string());
    ASSERT_EQ(first.exit_code, 0) << first.err;
    EXPECT_EQ(first.err.find("cache hit"), std::string::npos) << first.err;
    const auto second = compile((dir.path() / "2.cubin").string());
    ASSERT_EQ(second.exit_code, 0) << second.err;
    EXPECT_NE(second.err.find("cache hit"), std::string::npos) << second.err;
    EXPECT_EQ(read_file(dir.path() / "1.cubin"), read_file(dir.path() / "2.cubin"));
    EXPECT_EQ(second.out, first.out);  // the symbol map, from the cache too
    struct stat info {};
    ASSERT_EQ(stat((dir.path() / "cache").c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0700u);
}

TEST_F(CliCache, NoCacheFlagAndEnvironmentSkipTheCache) {
    ASSERT_EQ(compile((dir.path() / "1.cubin").string(), {"--no-cache"}).exit_code, 0);
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "cache"));
    env["CUDACORE_DISABLE_CACHE"] = "1";
    ASSERT_EQ(compile((dir.path() / "2.cubin").string()).exit_code, 0);
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "cache"));
}

// What NVRTC reads from the environment and changes its code by is in the key: NV_NVVM_VERSION
// gives other PTX, and processes with and without it never serve each other's entries.
TEST_F(CliCache, AVariableThatChangesNvrtcsCodeIsInTheKey) {
    const std::string kernel = (dir.path() / "one.cu").string();
    cudacore::test::write_file(kernel, "extern \"C\" __global__ void k(int* o) { *o = 1; }\n");
    auto ptx = [&](const std::string& output, bool latest) {
        if (latest) env["NV_NVVM_VERSION"] = "nvvm-latest";
        else env.erase("NV_NVVM_VERSION");
        return cli({"compile", kernel, "-o", (dir.path() / output).string(), "--arch", "sm_90", "--target", "ptx"});
    };
    for (const auto& [first, second] : {std::pair{true, false}, std::pair{false, true}}) {
        std::filesystem::remove_all(dir.path() / "cache");
        const auto made = ptx("made.ptx", first);
        ASSERT_EQ(made.exit_code, 0) << made.err;
        const auto other = ptx("other.ptx", second);
        ASSERT_EQ(other.exit_code, 0) << other.err;
        EXPECT_EQ(other.err.find("cache hit"), std::string::npos)
            << "an entry made with NV_NVVM_VERSION " << (first ? "set" : "unset") << " served a process without";
        EXPECT_NE(read_file(dir.path() / "made.ptx"), read_file(dir.path() / "other.ptx"))
            << "NV_NVVM_VERSION=nvvm-latest no longer changes NVRTC's PTX: pick another variable";
        const auto again = ptx("again.ptx", first);
        EXPECT_NE(again.err.find("cache hit"), std::string::npos) << again.err;
        EXPECT_EQ(read_file(dir.path() / "again.ptx"), read_file(dir.path() / "made.ptx"));
    }
}

TEST_F(CliCache, SerializeWritesALoadableObjectCodeThatInspectReads) {
    const auto path = dir.path() / "k.ccobj";
    ASSERT_EQ(compile(path.string(), {"--serialize", "--no-cache"}).exit_code, 0);
    const auto code = cudacore::ObjectCode::from_saved(path);
    EXPECT_EQ(code.code_type(), cudacore::CodeType::cubin);
    EXPECT_EQ(code.name(), source);  // the source path, as given
    EXPECT_EQ(code.symbol_map().count("scale<float>"), 1u);
    const auto inspected = cli({"inspect", path.string()});
    ASSERT_EQ(inspected.exit_code, 0) << inspected.err;
    EXPECT_NE(inspected.out.find("serialized ObjectCode"), std::string::npos) << inspected.out;
    EXPECT_NE(inspected.out.find("scale<float> -> _Z5scaleIfEvPT_S0_i"), std::string::npos)
        << inspected.out;
    EXPECT_NE(inspected.out.find("sm_90"), std::string::npos) << inspected.out;

    std::string corrupt = read_file(path);
    corrupt[corrupt.size() / 2] ^= 1;
    cudacore::test::write_file(path, corrupt);
    const auto rejected = cli({"inspect", path.string()});
    EXPECT_NE(rejected.exit_code, 0);
    EXPECT_NE(rejected.err.find("checksum"), std::string::npos) << rejected.err;
}

TEST_F(CliCache, CacheStatsPruneAndClear) {
    ASSERT_EQ(compile((dir.path() / "1.cubin").string()).exit_code, 0);
    auto stats = cli({"cache", "stats"});
    ASSERT_EQ(stats.exit_code, 0) << stats.err;
    // One entry: the code, under the key of what NVRTC was given.
    EXPECT_NE(stats.out.find("entries    1"), std::string::npos) << stats.out;
    auto pruned = cli({"cache", "prune", "--max-bytes", "0"});
    ASSERT_EQ(pruned.exit_code, 0) << pruned.err;
    EXPECT_NE(pruned.out.find("removed 1 entries"), std::string::npos) << pruned.out;
    ASSERT_EQ(compile((dir.path() / "2.cubin").string()).exit_code, 0);
    auto cleared = cli({"cache", "clear"});
    ASSERT_EQ(cleared.exit_code, 0) << cleared.err;
    EXPECT_NE(cli({"cache", "stats"}).out.find("entries    0"), std::string::npos);
}

// Maintenance removes only what the cache wrote: a folder without cudacore's marker is refused
// (untouched, no .lock left), `/` too, and inside a cache only the cache's own names go.
TEST_F(CliCache, CacheClearRefusesAFolderThatIsNotACacheAndKeepsForeignFiles) {
    const auto notes = dir.path() / "notes";
    std::filesystem::create_directories(notes);
    std::filesystem::permissions(notes, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::replace);
    for (const char* name : {".notes.tmp-1", ".report.tmp-old"})
        cudacore::test::write_file(notes / name, "mine");
    auto listing = [](const std::filesystem::path& folder) {
        std::set<std::string> names;
        for (const auto& entry : std::filesystem::directory_iterator(folder))
            names.insert(entry.path().filename().string());
        return names;
    };
    const auto before = listing(notes);
    for (const char* command : {"clear", "prune", "stats"}) {
        std::vector<std::string> args{"cache", command, "--dir", notes.string()};
        if (std::string(command) == "prune") args.insert(args.end(), {"--max-bytes", "0"});
        const auto refused = cli(args);
        EXPECT_NE(refused.exit_code, 0) << command;
        EXPECT_NE(refused.err.find("not a cudacore cache"), std::string::npos) << refused.err;
        EXPECT_EQ(listing(notes), before) << command;
    }
    const auto root = cli({"cache", "clear", "--dir", "/"});
    EXPECT_NE(root.exit_code, 0);
    EXPECT_NE(root.err.find("refusing '/'"), std::string::npos) << root.err;

    ASSERT_EQ(compile((dir.path() / "1.cubin").string()).exit_code, 0);
    for (const char* name : {".notes.tmp-1", ".report.tmp-old"})
        cudacore::test::write_file(dir.path() / "cache" / name, "mine");
    const auto cleared = cli({"cache", "clear"});
    ASSERT_EQ(cleared.exit_code, 0) << cleared.err;
    EXPECT_NE(cleared.out.find("removed 1 entries"), std::string::npos) << cleared.out;
    for (const char* name : {".notes.tmp-1", ".report.tmp-old"})
        EXPECT_EQ(read_file(dir.path() / "cache" / name), "mine") << name;
}

// Fills the cache with `count` entries of about 1 KB through the library, as compiles would.
void fill_cache(const std::filesystem::path& cache, int count) {
    cudacore::DiskProgramCache disk(cache);
    for (int i = 0; i < count; ++i)
        disk.put(cudacore::CacheKey::of_bytes("cli damage " + std::to_string(i)),
                 cudacore::ObjectCode::from_cubin(std::string(1000, 'x'), "filled"));
}

// A shard folder replaced by a file once made prune exit 1 at that shard, pruning nothing: it is
// replaced, named, and the rest is pruned; stats and clear go on too.
TEST_F(CliCache, PruneRepairsAShardFolderReplacedByAFileAndNamesIt) {
    const auto cache = dir.path() / "cache";
    fill_cache(cache, 30);
    const auto damaged = cache / cudacore::CacheKey::of_bytes("cli damage 0").hex().substr(0, 2);
    std::filesystem::remove_all(damaged);
    cudacore::test::write_file(damaged, "not a folder");
    auto stats = cli({"cache", "stats"});
    ASSERT_EQ(stats.exit_code, 0) << stats.err;
    EXPECT_NE(stats.out.find("entries    29"), std::string::npos) << stats.out;
    const std::uint64_t entry = cudacore::DiskProgramCache::encode_entry(
                                    cudacore::CacheKey::of_bytes("cli damage 0"),
                                    cudacore::ObjectCode::from_cubin(std::string(1000, 'x'), "filled"))
                                    .size();
    const auto pruned = cli({"cache", "prune", "--max-bytes", std::to_string(11 * entry)});
    ASSERT_EQ(pruned.exit_code, 0) << pruned.err;
    EXPECT_NE(pruned.err.find("repaired: '" + damaged.string() + "' is a regular file"),
              std::string::npos)
        << pruned.err;
    EXPECT_NE(pruned.out.find("removed 18 entries; 11 entries"), std::string::npos) << pruned.out;
    EXPECT_TRUE(std::filesystem::is_directory(std::filesystem::symlink_status(damaged)));
    stats = cli({"cache", "stats"});
    EXPECT_NE(stats.out.find("entries    11"), std::string::npos) << stats.out;
}

// A read-only cache (a shared, mounted copy) with a dirty counter: stats counts without
// repairing, instead of exiting 1. As root, run as nobody so that the permissions bind.
TEST_F(CliCache, StatsOfAReadOnlyCacheWithADirtyCounterCountsWithoutRepairing) {
    const auto cache = dir.path() / "cache";
    fill_cache(cache, 30);
    std::string table = read_file(cache / ".shards");
    const std::size_t slot = std::stoul(cudacore::CacheKey::of_bytes("cli damage 0").hex().substr(0, 2),
                                        nullptr, 16) * 64;
    table.replace(slot + 3, 10, "1 1 0 d   ");  // a process killed while changing the shard
    cudacore::test::write_file(cache / ".shards", table);
    namespace fs = std::filesystem;
    fs::permissions(cache / ".shards", fs::perms::owner_read, fs::perm_options::replace);
    fs::permissions(cache, fs::perms::owner_read | fs::perms::owner_exec, fs::perm_options::replace);
    std::vector<std::string> args{cli_path().string(), "cache", "stats"};
    const bool root = geteuid() == 0;
    auto hand_to = [&](uid_t user) {
        ASSERT_EQ(lchown(dir.path().c_str(), user, user), 0);
        for (const auto& item : fs::recursive_directory_iterator(dir.path()))
            ASSERT_EQ(lchown(item.path().c_str(), user, user), 0);
    };
    if (root) {
        hand_to(65534);
        args.insert(args.begin(), {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
        args[0] = "/usr/bin/setpriv";
    }
    const auto stats = run_process(args, env);
    if (root) hand_to(0);
    fs::permissions(cache, fs::perms::owner_all, fs::perm_options::replace);
    ASSERT_EQ(stats.exit_code, 0) << stats.err;
    EXPECT_NE(stats.out.find("entries    30"), std::string::npos) << stats.out;
    EXPECT_EQ(read_file(cache / ".shards"), table);  // not repaired
}

// ---- Exact hits: the cache never returns code a fresh compile would not produce. ----

// A kernel that stores V, from the headers it includes; compiled to PTX, where V shows.
const char* const value_kernel = "#include \"v.h\"\nextern \"C\" __global__ void k(int* o) { *o = V; }\n";

struct CliExactCache : CliCache {
    // `cudacore compile` run in `folder` (the working directory): the exit status and the PTX.
    std::pair<cudacore::test::ProcessResult, std::string> compile_in(
        const std::filesystem::path& folder, std::vector<std::string> args) {
        const std::string out = (dir.path() / "out.ptx").string();
        std::filesystem::remove(out);
        std::vector<std::string> argv{"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", folder.string(),
                                      cli_path().string(), "compile"};
        argv.insert(argv.end(), args.begin(), args.end());
        for (const char* extra : {"-o", "", "--target", "ptx", "--arch", "sm_90"})
            argv.push_back(std::string(extra) == "" ? out : extra);
        auto result = run_process(argv, env);
        return {result, std::filesystem::exists(out) ? read_file(out) : std::string()};
    }
    // The value the compiled kernel stores, as the PTX says ("mov.u32 %r1, 222;").
    static std::string stored(const std::string& ptx) {
        const auto at = ptx.find("mov.u32");
        if (at == std::string::npos) return "no value in: " + ptx;
        const auto comma = ptx.find(',', at), end = ptx.find(';', at);
        return ptx.substr(comma + 2, end - comma - 2);
    }
    void write(const std::filesystem::path& path, const std::string& text) {
        std::filesystem::create_directories(path.parent_path());
        cudacore::test::write_file(path, text);
    }
    // Compiles through the cache, then with --no-cache: both must store `expected`.
    void expect_value(const std::filesystem::path& folder, const std::vector<std::string>& args,
                      const std::string& expected) {
        auto [cached, cached_ptx] = compile_in(folder, args);
        ASSERT_EQ(cached.exit_code, 0) << cached.err;
        EXPECT_EQ(stored(cached_ptx), expected) << "through the cache (" << cached.err << ")";
        std::vector<std::string> fresh_args = args;
        fresh_args.push_back("--no-cache");
        auto [fresh, fresh_ptx] = compile_in(folder, fresh_args);
        ASSERT_EQ(fresh.exit_code, 0) << fresh.err;
        EXPECT_EQ(stored(fresh_ptx), expected) << "with --no-cache";
    }
};

// Issue case 1: `-I d1 -I d2`, v.h first found in d2, then d1/v.h is created.
TEST_F(CliExactCache, AHeaderCreatedInAFolderSearchedEarlierIsUsed) {
    const auto project = dir.path() / "project";
    write(project / "k.cu", value_kernel);
    write(project / "d2" / "v.h", "#define V 111\n");
    std::filesystem::create_directories(project / "d1");
    expect_value(project, {"k.cu", "-I", "d1", "-I", "d2"}, "111");
    EXPECT_NE(compile_in(project, {"k.cu", "-I", "d1", "-I", "d2"}).first.err.find("cache hit"),
              std::string::npos);
    write(project / "d1" / "v.h", "#define V 222\n");
    expect_value(project, {"k.cu", "-I", "d1", "-I", "d2"}, "222");
}

// Issue case 2: the same source file name in another project folder, with another v.h beside it.
TEST_F(CliExactCache, TheSameFileNameInAnotherProjectUsesThatProjectsHeader) {
    write(dir.path() / "one" / "k.cu", value_kernel);
    write(dir.path() / "one" / "v.h", "#define V 111\n");
    write(dir.path() / "two" / "k.cu", value_kernel);
    write(dir.path() / "two" / "v.h", "#define V 222\n");
    expect_value(dir.path() / "one", {"k.cu"}, "111");
    expect_value(dir.path() / "two", {"k.cu"}, "222");
    expect_value(dir.path() / "one", {"k.cu"}, "111");
}

// Issue case 3: `#if __has_include("opt.h")`, and opt.h appears after the first compile.
TEST_F(CliExactCache, AHeaderThatHasIncludeNowFindsIsUsed) {
    const auto project = dir.path() / "project";
    write(project / "k.cu", "#if __has_include(\"opt.h\")\n#define V 222\n#else\n#define V 111\n#endif\n"
                            "extern \"C\" __global__ void k(int* o) { *o = V; }\n");
    expect_value(project, {"k.cu"}, "111");
    write(project / "opt.h", "\n");
    expect_value(project, {"k.cu"}, "222");
}

// Item 2: quoted includes are looked for beside the including file first, as nvcc does.
TEST_F(CliExactCache, QuotedIncludesOfTheSourceAreLookedForInItsOwnFolder) {
    const auto project = dir.path() / "project";
    write(project / "v.h", "#define V 111\n");
    write(project / "sub" / "s.cu", value_kernel);
    write(project / "sub" / "v.h", "#define V 222\n");
    expect_value(project, {"sub/s.cu"}, "222");
    expect_value(project / "sub", {"../sub/s.cu"}, "222");
}

// "cache hit" is said only of code that came from the cache: a missing or corrupt code entry
// (its header record still there) is compiled again, silently.
TEST_F(CliExactCache, ACacheHitIsReportedOnlyWhenTheCodeCameFromTheCache) {
    const auto project = dir.path() / "project";
    write(project / "k.cu", value_kernel);
    write(project / "v.h", "#define V 222\n");
    expect_value(project, {"k.cu"}, "222");
    auto code_entry = [&] {
        for (const auto& entry :
             std::filesystem::recursive_directory_iterator(dir.path() / "cache"))
            if (entry.path().extension() == ".ccentry" &&
                read_file(entry.path()).find("cudacore-header-list") == std::string::npos)
                return entry.path();
        return std::filesystem::path();
    };
    for (const char* damage : {"missing", "corrupt"}) {
        const auto entry = code_entry();
        ASSERT_FALSE(entry.empty()) << damage;
        if (std::string(damage) == "missing") {
            std::filesystem::remove(entry);
        } else {
            std::string bytes = read_file(entry);
            bytes[bytes.size() / 2] ^= 0x5a;
            cudacore::test::write_file(entry, bytes);
        }
        auto [again, ptx] = compile_in(project, {"k.cu"});
        ASSERT_EQ(again.exit_code, 0) << again.err;
        EXPECT_EQ(again.err.find("cache hit"), std::string::npos) << damage << ": " << again.err;
        EXPECT_EQ(stored(ptx), "222") << damage;
        auto [hit, hit_ptx] = compile_in(project, {"k.cu"});
        EXPECT_NE(hit.err.find("cache hit"), std::string::npos) << damage << ": " << hit.err;
        EXPECT_EQ(stored(hit_ptx), "222") << damage;
    }
}

TEST_F(CliCache, UnsafeCacheDirectoryIsReportedAndCompileStillWorks) {
    std::filesystem::create_directory(dir.path() / "cache");
    ASSERT_EQ(chmod((dir.path() / "cache").c_str(), 0777), 0);
    const auto result = compile((dir.path() / "1.cubin").string());
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.err.find("other users"), std::string::npos) << result.err;
    EXPECT_NE(cli({"cache", "stats"}).exit_code, 0);
}

}  // namespace
