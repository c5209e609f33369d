// What reading outside bytes costs is bounded before it is spent, in every reader of ObjectCodes
// of the core library: a cache artefact that announces gigabytes of zeros, an entry of hundreds of
// thousands of tiny symbols (8 bytes each in the file, a tree node each in memory) in an artefact
// or a disk entry, and an artefact whose entries would pass the importer's memory limit are each
// refused with the numbers, while the memory this process allocates stays far below what the old
// readers took (every operator new of this program is counted: see AllocationMeter). The remote
// tier's reader: tests/cpu/remote/remote_decode_cost_test.cpp.
#include "allocation_meter.hpp"
#include "test_support.hpp"

#include "cudacore/cache_artefact.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/memory_program_cache.hpp"

#include "cache/sha256_seal.hpp"
#include "support/little_endian.hpp"

#include <zstd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

namespace {

using namespace cudacore;
using namespace cudacore::test;

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
    detail::put_little_endian(out, 1, 4);
    detail::put_little_endian(out, 0, 4);  // unsigned
    detail::put_little_endian(out, count, 8);
    detail::put_little_endian(out, payload_size, 8);
    detail::put_little_endian(out, frame.size(), 8);
    out += frame;
    out += detail::sha256_seal(out, {});
    return out;
}

// The payload's start: the three origin versions this process's keys hold.
std::string origin_fields() {
    std::string out;
    const CacheArtefactOrigin origin = CacheArtefact::current_origin();
    for (const std::string* text : {&origin.cudacore_version, &origin.nvrtc_version, &origin.nvjitlink_version}) {
        detail::put_little_endian(out, text->size(), 4);
        out += *text;
    }
    return out;
}

// An artefact of one entry (key 0x11..., `code` serialized).
std::string artefact_of_one(const std::string& serialized) {
    std::string payload = origin_fields();
    payload += std::string(32, '\x11');
    detail::put_little_endian(payload, serialized.size(), 8);
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

}  // namespace
