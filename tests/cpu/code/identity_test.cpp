// Identity without a GPU: ObjectCode as a key of unordered containers and its printing,
// ObjectCode::from_file (type from the extension, symbol map, refused files), an empty Buffer,
// and the public handle types not being constructible from internal boxes.
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/identity.hpp"

#include <sys/stat.h>

#include <chrono>
#include <future>
#include <memory>
#include <sstream>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

namespace cudacore::detail {
struct KernelBox;
struct StreamBox;
struct EventBox;
struct ContextBox;
struct BufferBoxCount;
}  // namespace cudacore::detail

namespace {

using namespace cudacore;
using cudacore::test::TempDir;
using cudacore::test::write_file;

// Internal boxes make no public object: only cudacore's factories do.
static_assert(!std::is_constructible_v<Kernel, std::shared_ptr<detail::KernelBox>>);
static_assert(!std::is_constructible_v<Stream, std::shared_ptr<detail::StreamBox>>);
static_assert(!std::is_constructible_v<Event, std::shared_ptr<detail::EventBox>>);
static_assert(!std::is_constructible_v<Context, std::shared_ptr<detail::ContextBox>>);
static_assert(!std::is_constructible_v<Buffer, detail::BufferBoxCount*>);

TEST(ObjectCodeIdentity, EqualValuesAreOneKeyAndDifferentOnesAreNot) {
    const SymbolMap symbols = {{"scale<float>", "_Z5scaleIfEvPT_S0_"}};
    ObjectCode code = ObjectCode::from_cubin("cubin bytes", "saxpy", symbols);
    ObjectCode copy = code;
    ObjectCode same_value = ObjectCode::from_cubin("cubin bytes", "saxpy", symbols);
    std::hash<ObjectCode> hash;
    EXPECT_EQ(hash(code), hash(copy));
    EXPECT_EQ(hash(code), hash(same_value));

    std::unordered_set<ObjectCode> set = {code};
    EXPECT_TRUE(set.contains(copy));
    EXPECT_TRUE(set.contains(same_value));
    // Each part of the value makes another key.
    const ObjectCode others[] = {
        ObjectCode::from_cubin("cubin bytez", "saxpy", symbols),
        ObjectCode::from_cubin("cubin bytes", "saxpy2", symbols),
        ObjectCode::from_ptx("cubin bytes", "saxpy", symbols),
        ObjectCode::from_cubin("cubin bytes", "saxpy"),
        ObjectCode::from_cubin("cubin bytes", "saxpy", {{"scale<float>", "other"}}),
    };
    for (const ObjectCode& other : others) {
        EXPECT_NE(other, code);
        EXPECT_FALSE(set.contains(other)) << to_string(other);
        set.insert(other);
    }
    EXPECT_EQ(set.size(), 6u);

    std::unordered_map<ObjectCode, int> counts;
    ++counts[code];
    ++counts[copy];
    ++counts[same_value];
    EXPECT_EQ(counts.at(code), 3);
}

TEST(ObjectCodeIdentity, HashIsTheSameFromManyThreads) {
    ObjectCode code = ObjectCode::from_ptx(std::string(1 << 20, 'x'), "big");
    const std::size_t expected = std::hash<ObjectCode>{}(ObjectCode::from_ptx(std::string(code.code()), "big"));
    std::vector<std::future<std::size_t>> hashes;
    for (int i = 0; i < 8; ++i)
        hashes.push_back(std::async(std::launch::async, [code] { return std::hash<ObjectCode>{}(code); }));
    for (auto& h : hashes) EXPECT_EQ(h.get(), expected);
}

TEST(ObjectCodeIdentity, PrintsTypeNameSizeAndSymbols) {
    ObjectCode code = ObjectCode::from_cubin(std::string(5120, 'c'), "saxpy",
                                             {{"a<int>", "_Z1aIiEvv"}, {"b", "b"}});
    EXPECT_EQ(to_string(code), "cubin 'saxpy' (5120 bytes, 2 symbols)");
    std::ostringstream out;
    out << ObjectCode::from_ptx("x") << " | " << ObjectCode::from_ltoir("ab", "one", {{"k", "k"}});
    EXPECT_EQ(out.str(), "ptx (1 bytes) | ltoir 'one' (2 bytes, 1 symbol)");
}

TEST(BufferIdentity, EmptyBuffersAreDistinctKeysAndPrint) {
    Buffer empty;
    std::ostringstream out;
    out << empty;
    EXPECT_EQ(out.str(), "empty buffer");
    EXPECT_EQ(to_string(empty), empty.description());
    Buffer copy = empty;
    EXPECT_EQ(std::hash<Buffer>{}(copy), std::hash<Buffer>{}(empty));
    std::unordered_set<Buffer> set = {empty};
    EXPECT_TRUE(set.contains(copy));
}

// ---- ObjectCode::from_file ------------------------------------------------------------------

TEST(ObjectCodeFromFile, TypeFromTheExtensionAndTheSymbolMapKept) {
    TempDir dir;
    const SymbolMap symbols = {{"scale<float>", "_Z5scaleIfEvPfS_"}};
    const struct {
        const char* file;
        CodeType type;
    } cases[] = {{"k.cubin", CodeType::cubin},   {"k.ptx", CodeType::ptx},
                 {"k.ltoir", CodeType::ltoir},   {"k.lto", CodeType::ltoir},
                 {"k.fatbin", CodeType::fatbin}, {"k.o", CodeType::object},
                 {"k.a", CodeType::library}};
    for (const auto& c : cases) {
        write_file(dir.path() / c.file, std::string("bytes of ") + c.file);
        ObjectCode code = ObjectCode::from_file(dir.path() / c.file, std::nullopt, symbols);
        EXPECT_EQ(code.code_type(), c.type) << c.file;
        EXPECT_EQ(code.code(), std::string("bytes of ") + c.file);
        EXPECT_EQ(code.name(), c.file);
        EXPECT_EQ(code.symbol_map(), symbols);
        EXPECT_EQ(code.lowered_name("scale<float>"), "_Z5scaleIfEvPfS_");
    }
    // A given type wins over the extension; a given name over the file name.
    ObjectCode forced = ObjectCode::from_file(dir.path() / "k.o", CodeType::cubin, {}, "named");
    EXPECT_EQ(forced.code_type(), CodeType::cubin);
    EXPECT_EQ(forced.name(), "named");
    EXPECT_TRUE(forced.symbol_map().empty());
}

TEST(ObjectCodeFromFile, UnknownExtensionEmptyMissingAndOddFilesAreRefused) {
    TempDir dir;
    write_file(dir.path() / "kernel.bin", "bytes");
    write_file(dir.path() / "empty.cubin", "");
    auto refused = [](const std::filesystem::path& path, std::optional<CodeType> type,
                      const std::string& expected) {
        try {
            ObjectCode::from_file(path, type);
            ADD_FAILURE() << "no exception for " << path;
        } catch (const InvalidArgumentError& e) {
            EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(path.filename().string()), std::string::npos)
                << e.what();
        }
    };
    refused(dir.path() / "kernel.bin", std::nullopt, "from its extension");
    refused(dir.path() / "empty.cubin", std::nullopt, "is empty");
    refused(dir.path() / "missing.cubin", std::nullopt, "missing.cubin");
    std::filesystem::create_directory(dir.path() / "dir.cubin");
    refused(dir.path() / "dir.cubin", std::nullopt, "dir.cubin");
    // A FIFO with no writer: refused at once, never waited on.
    const auto fifo = dir.path() / "pipe.ptx";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    auto done = std::async(std::launch::async, [&] { refused(fifo, std::nullopt, "pipe.ptx"); });
    ASSERT_EQ(done.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    // The older overload reads the same way.
    EXPECT_THROW(ObjectCode::from_file(CodeType::ptx, fifo), InvalidArgumentError);
    EXPECT_EQ(ObjectCode::from_file(CodeType::cubin, dir.path() / "kernel.bin").code(), "bytes");
}

}  // namespace
