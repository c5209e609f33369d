// What reading outside bytes costs is bounded before it is spent, in every reader of ObjectCodes:
// a cache artefact that announces gigabytes of zeros, an entry of hundreds of thousands of tiny
// symbols (8 bytes each in the file, a tree node each in memory) in an artefact, a disk entry or
// a Redis value, and an artefact whose entries would pass the importer's memory limit are each
// refused with the numbers, while the memory this process allocates stays far below what the old
// readers took (every operator new of this program is counted: see AllocationMeter). A Redis value
// refused for its cost starts the back-off, as other failures do.
#include "fake_redis_server.hpp"
#include "test_support.hpp"

#include "cudacore/cache_artefact.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/remote_program_cache.hpp"

#include "cache/sha256_seal.hpp"
#include "code/serialized_parts.hpp"

#include <malloc.h>
#include <zstd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <sstream>
#include <string>

// Every allocation through operator new (std::string, std::map, std::vector: where a decoded
// value lives) is counted, live and at its peak; zstd's own buffers (malloc) are bounded by its
// window limit and not counted.
namespace {
std::atomic<long long> live_bytes{0};
std::atomic<long long> peak_bytes{0};

void* counted(std::size_t size) {
    void* memory = std::malloc(size == 0 ? 1 : size);
    if (memory == nullptr) throw std::bad_alloc();
    const long long now = live_bytes += static_cast<long long>(malloc_usable_size(memory));
    long long peak = peak_bytes.load();
    while (now > peak && !peak_bytes.compare_exchange_weak(peak, now)) {
    }
    return memory;
}

void uncounted(void* memory) noexcept {
    if (memory == nullptr) return;
    live_bytes -= static_cast<long long>(malloc_usable_size(memory));
    std::free(memory);
}
}  // namespace

void* operator new(std::size_t size) { return counted(size); }
void* operator new[](std::size_t size) { return counted(size); }
void operator delete(void* memory) noexcept { uncounted(memory); }
void operator delete[](void* memory) noexcept { uncounted(memory); }
void operator delete(void* memory, std::size_t) noexcept { uncounted(memory); }
void operator delete[](void* memory, std::size_t) noexcept { uncounted(memory); }
// The nothrow forms too (std::stable_sort's buffer): every form allocates and frees alike.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
    try {
        return counted(size);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept { return operator new(size, tag); }
void operator delete(void* memory, const std::nothrow_t&) noexcept { uncounted(memory); }
void operator delete[](void* memory, const std::nothrow_t&) noexcept { uncounted(memory); }

namespace {

using namespace cudacore;
using cudacore::test::TempDir;

// The most memory (bytes) allocated at once while it lives, above what was live when it began.
class AllocationMeter {
public:
    AllocationMeter() : start_(live_bytes.load()) { peak_bytes = start_; }
    long long peak() const { return peak_bytes.load() - start_; }

private:
    long long start_;
};

constexpr long long MiB = 1 << 20;

void put_le(std::string& out, std::uint64_t value, int size) {
    for (int i = 0; i < size; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

// A valid serialized ObjectCode (PTX "x") of `symbols` symbols, each a 7-character name
// expression and an empty lowered name: 15 bytes each in the file.
std::string serialized_with_symbols(std::uint32_t symbols) {
    std::string out = "\x89" "CCOBJ\r\n";
    put_le(out, 1, 4);
    put_le(out, 0x01020304, 4);
    const std::uint64_t total = 24 + 4 + 4 + 4 + std::uint64_t{symbols} * 15 + 8 + 1 + 8;
    put_le(out, total, 8);
    put_le(out, 2, 4);  // PTX
    put_le(out, 0, 4);  // no name
    put_le(out, symbols, 4);
    char expression[16];
    for (std::uint32_t i = 0; i < symbols; ++i) {
        std::snprintf(expression, sizeof expression, "s%06u", i);
        put_le(out, 7, 4);
        out.append(expression, 7);
        put_le(out, 0, 4);
    }
    put_le(out, 1, 8);
    out += "x";
    detail::SerializedChecksum checksum;
    checksum.update(out);
    out += detail::checksum_bytes(checksum.digest());
    EXPECT_EQ(out.size(), total);
    return out;
}

// 600,000 symbols: 9 MB in the file, about 75 MiB as a SymbolMap (past its 64 MiB bound). The
// issue's entries held 3.5 to 20 million.
constexpr std::uint32_t many_symbols = 600000;

// An unsigned artefact around the payload that `write` streams into a zstd frame of
// `payload_size` bytes, holding `count` entries.
template <class Write>
std::string artefact_around(std::uint64_t payload_size, std::uint64_t count, Write&& write) {
    ZSTD_CCtx* context = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, 3);
    ZSTD_CCtx_setPledgedSrcSize(context, payload_size);
    std::string frame;
    auto feed = [&](std::string_view piece, bool last) {
        ZSTD_inBuffer input{piece.data(), piece.size(), 0};
        std::string buffer(ZSTD_CStreamOutSize(), '\0');
        for (;;) {
            ZSTD_outBuffer output{buffer.data(), buffer.size(), 0};
            const std::size_t left =
                ZSTD_compressStream2(context, &output, &input, last ? ZSTD_e_end : ZSTD_e_continue);
            EXPECT_FALSE(ZSTD_isError(left));
            frame.append(buffer.data(), output.pos);
            if (last ? left == 0 : input.pos == input.size) break;
        }
    };
    write([&](std::string_view piece) { feed(piece, false); });
    feed({}, true);
    ZSTD_freeCCtx(context);
    std::string out = "\x89" "CCART\r\n";
    put_le(out, 1, 4);
    put_le(out, 0, 4);  // unsigned
    put_le(out, count, 8);
    put_le(out, payload_size, 8);
    put_le(out, frame.size(), 8);
    out += frame;
    out += detail::sha256_seal(out, {});
    return out;
}

// The payload's start: the three origin versions this process's keys hold.
std::string origin_fields() {
    std::string out;
    const CacheArtefactOrigin origin = CacheArtefact::current_origin();
    for (const std::string* text : {&origin.cudacore_version, &origin.nvrtc_version, &origin.nvjitlink_version}) {
        put_le(out, text->size(), 4);
        out += *text;
    }
    return out;
}

// An artefact of one entry (key 0x11..., `code` serialized).
std::string artefact_of_one(const std::string& serialized) {
    std::string payload = origin_fields();
    payload += std::string(32, '\x11');
    put_le(payload, serialized.size(), 8);
    payload += serialized;
    return artefact_around(payload.size(), 1, [&](auto&& write) { write(payload); });
}

// What `read` throws, as text ("" when it does not throw SerializationError).
template <class Read>
std::string refusal(Read&& read) {
    try {
        read();
    } catch (const SerializationError& e) {
        return e.what();
    }
    return {};
}

// 256 MiB of zeros behind a valid header, frame and checksum (8 KB of file): refused at the first
// entry's bytes, without producing the rest.
TEST(DecodeCost, AnArtefactAnnouncingGigabytesOfZerosCostsWhatItsFieldsHold) {
    constexpr std::uint64_t zeros = std::uint64_t{256} << 20;
    const std::string artefact = artefact_around(zeros, 1, [&](auto&& write) {
        const std::string piece(1 << 20, '\0');
        for (std::uint64_t done = 0; done < zeros; done += piece.size()) write(piece);
    });
    EXPECT_LT(artefact.size(), 64u << 10);
    MemoryProgramCache cache;
    const AllocationMeter meter;
    std::istringstream in(artefact);
    const std::string why = refusal([&] { import_cache_artefact(cache, in); });
    EXPECT_LT(meter.peak(), 4 * MiB) << why;
    EXPECT_NE(why.find("entry 0"), std::string::npos) << why;
    EXPECT_EQ(cache.stats().entries, 0u);
}

TEST(DecodeCost, ASymbolMapPastItsBoundIsRefusedBeforeItIsBuilt) {
    const std::string serialized = serialized_with_symbols(many_symbols);
    {
        const AllocationMeter meter;
        const std::string why = refusal([&] { ObjectCode::deserialize(serialized); });
        EXPECT_NE(why.find("600000 symbols"), std::string::npos) << why;
        EXPECT_NE(why.find("67108864"), std::string::npos) << why;  // the limit, in bytes
        EXPECT_LT(meter.peak(), 1 * MiB);
    }
    // An entry of them in an artefact: the 2 MB artefact that imported at 649 MB.
    const std::string artefact = artefact_of_one(serialized);
    EXPECT_LT(artefact.size(), 4u << 20);
    MemoryProgramCache cache;
    const AllocationMeter meter;
    std::istringstream in(artefact);
    const std::string why = refusal([&] { import_cache_artefact(cache, in); });
    EXPECT_NE(why.find("symbol map of 600000 symbols"), std::string::npos) << why;
    EXPECT_LT(meter.peak(), 32 * MiB) << "the artefact's 9 MB entry, read once and copied once";
    EXPECT_EQ(cache.stats().entries, 0u);
}

TEST(DecodeCost, ASymbolMapWithinItsBoundStillReads) {
    const std::string serialized = serialized_with_symbols(1000);
    const ObjectCode code = ObjectCode::deserialize(serialized);
    EXPECT_EQ(code.symbol_map().size(), 1000u);
    EXPECT_EQ(code.serialize(), serialized);
}

// What deserialize() refuses, serialize() does not write.
TEST(DecodeCost, SerializeRefusesWhatDeserializeWould) {
    SymbolMap symbols;
    char expression[16];
    for (std::uint32_t i = 0; i < many_symbols; ++i) {
        std::snprintf(expression, sizeof expression, "s%06u", i);
        symbols.emplace_hint(symbols.end(), expression, "");
    }
    const ObjectCode code = ObjectCode::from_bytes(CodeType::ptx, std::string("x"), "many", std::move(symbols));
    const std::string why = refusal([&] { code.serialize(); });
    EXPECT_NE(why.find("ObjectCode::serialize: a symbol map of 600000 symbols"), std::string::npos) << why;
}

TEST(DecodeCost, AnArtefactPastTheImportersMemoryLimitIsRefusedWithTheNumbers) {
    // One 8 MiB entry of PTX.
    const ObjectCode big = ObjectCode::from_bytes(CodeType::ptx, std::string(8 << 20, 'p'), "big");
    const std::string artefact =
        CacheArtefact({{CacheKey::of_bytes("big"), big}}, CacheArtefact::current_origin()).serialize();
    MemoryProgramCache cache;
    {
        const AllocationMeter meter;
        std::istringstream in(artefact);
        const std::string why = refusal([&] { import_cache_artefact(cache, in, {.max_memory = 4 << 20}); });
        EXPECT_NE(why.find("past the limit of 4194304"), std::string::npos) << why;
        EXPECT_NE(why.find("entry 0"), std::string::npos) << why;
        EXPECT_LT(meter.peak(), 2 * MiB + static_cast<long long>(artefact.size())) << why;
    }
    std::istringstream in(artefact);
    EXPECT_EQ(import_cache_artefact(cache, in, {.max_memory = 32 << 20}).imported, 1u);
    EXPECT_EQ(cache.get(CacheKey::of_bytes("big")), big);
}

TEST(DecodeCost, ADiskEntryOfTooManySymbolsIsAMissThatCostsLittle) {
    TempDir dir;
    DiskProgramCache cache(dir.path() / "cache");
    const CacheKey key = CacheKey::of_bytes("many symbols");
    cache.put(key, ObjectCode::from_bytes(CodeType::ptx, std::string("x"), "few"));
    // The entry's file replaced by one that holds the hostile value under the same key.
    std::filesystem::path file;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path() / "cache"))
        if (entry.path().extension() == ".ccentry") file = entry.path();
    ASSERT_FALSE(file.empty());
    std::string bytes = DiskProgramCache::encode_entry(key, ObjectCode::from_bytes(CodeType::ptx, std::string("x")));
    bytes.resize(40);
    bytes += serialized_with_symbols(many_symbols);
    test::write_file(file, bytes);
    const AllocationMeter meter;
    EXPECT_FALSE(cache.get(key));
    EXPECT_LT(meter.peak(), 24 * MiB) << "the 9 MB file, and no symbol map";
}

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
