// CacheArtefact's file form (described in include/cudacore/cache_artefact.hpp): the layout of a
// header bundle file (a fixed header, one zstd frame) sealed as a remote cache entry is (SHA-256,
// and HMAC-SHA-256 under a secret). Reading checks, in order: the magic, the header's size, the
// version, the stated sizes against the input, the checksum, the signature, the frame, then every
// entry; trailing bytes are an error. The payload is decompressed as it is read, and each entry's
// serialized head is checked before its bytes are: what reading costs (bytes decompressed, memory
// the entries take) is counted before it is spent, never taken on the word of a header.
#include "cudacore/cache_artefact.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/version.hpp"

#include "cache/sha256_seal.hpp"
#include "code/decode_cost.hpp"
#include "code/key_versions.hpp"
#include "code/serialized_parts.hpp"
#include "support/little_endian.hpp"
#include "support/payload_codec.hpp"
#include "support/sha256.hpp"

#include <zstd.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace cudacore {
namespace {

using detail::put_little_endian;
using detail::read_little_endian;
using detail::ZstdPayloadReader;

constexpr std::array<unsigned char, 8> artefact_magic = {0x89, 'C', 'C', 'A', 'R', 'T', '\r', '\n'};
constexpr std::uint32_t format_version = 1;
constexpr std::size_t fixed_header_size = 8 + 4 + 4 + 8 + 8 + 8;
constexpr std::size_t seal_size = detail::sha256_seal_size;
constexpr std::uint32_t signed_flag = 1;
// Made once per release of an application, read at every install: a middle level packs cubins
// well without making an export of thousands of entries slow; decompression speed hardly depends
// on it.
constexpr int compression_level = 9;

[[noreturn]] void refuse(const std::string& why) {
    throw SerializationError("CacheArtefact::deserialize: " + why);
}

// What the fixed header states.
struct Header {
    bool is_signed = false;
    std::uint64_t count = 0;
    std::uint64_t payload_size = 0;
    std::uint64_t compressed_size = 0;
};

// Checks the fixed header at the start of `bytes` (magic, length, version, flags, payload size).
Header checked_header(std::string_view bytes, std::uint64_t input_size) {
    const std::size_t compare = std::min(bytes.size(), artefact_magic.size());
    if (bytes.empty() || std::memcmp(bytes.data(), artefact_magic.data(), compare) != 0) {
        refuse("not a cache artefact (" + std::to_string(input_size) +
               " bytes; the magic number does not match)");
    }
    if (bytes.size() < fixed_header_size) {
        refuse("truncated: " + std::to_string(bytes.size()) + " bytes, shorter than the " +
               std::to_string(fixed_header_size) + "-byte header");
    }
    const auto version = static_cast<std::uint32_t>(read_little_endian(bytes, 8, 4));
    if (version == 0) refuse("invalid format version 0");
    if (version > format_version) {
        refuse("format version " + std::to_string(version) + " is newer than this build reads (" +
               std::to_string(format_version) + "); upgrade cudacore");
    }
    const auto flags = static_cast<std::uint32_t>(read_little_endian(bytes, 12, 4));
    if ((flags & ~signed_flag) != 0) refuse("unknown flags " + std::to_string(flags));
    Header header;
    header.is_signed = (flags & signed_flag) != 0;
    header.count = read_little_endian(bytes, 16, 8);
    header.payload_size = read_little_endian(bytes, 24, 8);
    header.compressed_size = read_little_endian(bytes, 32, 8);
    if (header.payload_size > CacheArtefact::max_payload_size) {
        refuse("the header claims " + std::to_string(header.payload_size) +
               " bytes of entries, more than the limit of " +
               std::to_string(CacheArtefact::max_payload_size));
    }
    if (header.compressed_size > ZSTD_compressBound(CacheArtefact::max_payload_size))
        refuse("the header claims " + std::to_string(header.compressed_size) + " compressed bytes, more than " +
               std::to_string(CacheArtefact::max_payload_size) + " bytes of entries can take");
    return header;
}

// Checks the header and the seals of `bytes`; returns the compressed payload and sets `count`
// and `payload_size`.
std::string_view checked_payload(std::string_view bytes, std::string_view secret,
                                 std::uint64_t& count, std::uint64_t& payload_size) {
    const Header header = checked_header(bytes, bytes.size());
    const bool is_signed = header.is_signed;
    count = header.count;
    payload_size = header.payload_size;
    const std::uint64_t compressed_size = header.compressed_size;
    const std::uint64_t seals = seal_size * (is_signed ? 2 : 1);
    const std::uint64_t present = bytes.size() - fixed_header_size;
    if (compressed_size > present || present - compressed_size != seals) {
        const bool short_of = compressed_size > present || present - compressed_size < seals;
        refuse(std::string(short_of ? "truncated" : "trailing data") + ": the header says " +
               std::to_string(compressed_size) + " compressed bytes and " + std::to_string(seals) +
               " bytes of checksum" + (is_signed ? " and signature" : "") +
               " follow it, the input has " + std::to_string(present));
    }
    const std::size_t checksum_at = fixed_header_size + static_cast<std::size_t>(compressed_size);
    const std::string checksum = detail::sha256_seal(bytes.substr(0, checksum_at), {});
    if (!detail::equal_in_constant_time(checksum.data(), bytes.data() + checksum_at, seal_size))
        refuse("checksum mismatch (SHA-256): the artefact is damaged or was changed");
    if (!is_signed && !secret.empty())
        refuse("not signed, and a secret is required: refused (export it with the secret)");
    if (is_signed && secret.empty())
        refuse("signed with a secret, and none was given: refused (import it with the secret)");
    if (is_signed) {
        const std::string signature = detail::sha256_seal(bytes.substr(0, checksum_at + seal_size), secret);
        if (!detail::equal_in_constant_time(signature.data(), bytes.data() + checksum_at + seal_size,
                                            seal_size))
            refuse("the signature (HMAC-SHA-256) fails: signed with another secret, or changed by "
                   "someone without it");
    }
    return bytes.substr(fixed_header_size, static_cast<std::size_t>(compressed_size));
}

}  // namespace

std::uint64_t CacheArtefact::stated_size(std::string_view head, std::uint64_t input_size) {
    static_assert(header_size == fixed_header_size);
    const Header header = checked_header(head.substr(0, std::min(head.size(), fixed_header_size)),
                                         input_size ? input_size : head.size());
    return fixed_header_size + header.compressed_size + seal_size * (header.is_signed ? 2 : 1);
}

namespace {

// Bytes of an ObjectCode's serialized form before its fields (magic, version, byte order, total).
constexpr std::uint64_t serialized_envelope_size = 24;
// Each entry takes at least its key, its length and the smallest serialized ObjectCode.
constexpr std::uint64_t smallest_artefact_entry = 32 + 8 + 57;
// Origin strings are version numbers: a few bytes each.
constexpr std::uint64_t longest_origin_field = 4096;

[[noreturn]] void refuse_cost(const std::string& why) {
    throw detail::DecodeCostExceeded("CacheArtefact::deserialize: " + why);
}

CacheArtefactOrigin read_origin(ZstdPayloadReader& in) {
    CacheArtefactOrigin origin;
    for (auto [field, what] : {std::pair{&origin.cudacore_version, "cudacore version"},
                               {&origin.nvrtc_version, "NVRTC version"},
                               {&origin.nvjitlink_version, "nvJitLink version"}}) {
        const std::uint64_t length = in.integer(4, std::string(what) + " length");
        if (length > longest_origin_field) {
            refuse(std::string(what) + " of " + std::to_string(length) + " bytes is longer than " +
                   std::to_string(longest_origin_field));
        }
        *field = in.text(length, what);
    }
    return origin;
}

// The memory read_entries may still spend, charged before each allocation.
class MemoryBudget {
public:
    explicit MemoryBudget(std::uint64_t limit) : limit_(limit) {}
    void charge(std::uint64_t bytes, const std::string& what) {
        if (bytes > limit_ - used_) {
            refuse_cost(what + " would bring the memory the entries take to more than " +
                        std::to_string(used_) + " + " + std::to_string(bytes) +
                        " bytes, past the limit of " + std::to_string(limit_) +
                        " (CacheArtefactImportOptions::max_memory)");
        }
        used_ += bytes;
    }
    void release(std::uint64_t bytes) noexcept { used_ -= std::min(used_, bytes); }

private:
    std::uint64_t limit_;
    std::uint64_t used_ = 0;
};

// Entry `at`'s code, read from `in`: the serialized head checked before the rest is decompressed,
// and its bytes charged to `budget` (twice while both the serialized form and the value exist).
ObjectCode read_entry_code(ZstdPayloadReader& in, const std::string& at, MemoryBudget& budget) {
    const std::uint64_t length = in.integer(8, at + "'s length");
    if (length > in.remaining()) {
        refuse(at + "'s code needs " + std::to_string(length) + " bytes but only " +
               std::to_string(in.remaining()) + " remain");
    }
    std::string serialized = in.text(std::min(length, serialized_envelope_size), at + "'s code");
    detail::check_serialized_envelope(serialized, length);
    budget.charge(length, at + " (" + std::to_string(length) + " serialized bytes)");
    in.append(serialized, length - serialized.size(), at + "'s code");
    budget.charge(length, at + "'s decoded value");
    ObjectCode code = ObjectCode::deserialize(serialized);
    budget.release(2 * length);
    budget.charge(detail::object_code_memory(code), at + "'s decoded value");
    return code;
}

std::vector<CacheArtefact::Entry> read_entries(ZstdPayloadReader& in, std::uint64_t count,
                                               std::uint64_t max_memory) {
    // Refuse impossible counts before looping over them.
    if (count > in.remaining() / smallest_artefact_entry) {
        refuse("entry count " + std::to_string(count) + " exceeds what the " +
               std::to_string(in.remaining()) + " payload bytes left can hold");
    }
    MemoryBudget budget(max_memory);
    budget.charge(count * sizeof(CacheArtefact::Entry), std::to_string(count) + " entries");
    std::vector<CacheArtefact::Entry> entries;
    entries.reserve(static_cast<std::size_t>(count));
    for (std::uint64_t i = 0; i < count; ++i) {
        const std::string at = "entry " + std::to_string(i);
        CacheKey key;
        const std::string digest = in.text(key.digest.size(), at + "'s key");
        std::memcpy(key.digest.data(), digest.data(), key.digest.size());
        if (!entries.empty() && !(entries.back().first < key))
            refuse(at + " (" + key.hex() + ") is out of order or repeated");
        try {
            entries.emplace_back(key, read_entry_code(in, at, budget));
        } catch (const SerializationError& e) {
            if (std::string_view(e.what()).starts_with("CacheArtefact::deserialize: ")) throw;
            const std::string where = at + " (" + key.hex() + ")";
            if (dynamic_cast<const detail::DecodeCostExceeded*>(&e) != nullptr)
                refuse_cost(where + ": " + e.what());
            refuse(where + " holds no valid code: " + e.what());
        }
    }
    return entries;
}

}  // namespace

CacheArtefact::CacheArtefact(std::vector<Entry> entries, CacheArtefactOrigin origin)
    : entries_(std::move(entries)), origin_(std::move(origin)) {
    // Sorted by key, the last of a repeated key kept.
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const Entry& a, const Entry& b) { return a.first < b.first; });
    std::vector<Entry> unique;
    unique.reserve(entries_.size());
    for (auto& entry : entries_) {
        if (!unique.empty() && unique.back().first == entry.first) {
            unique.back() = std::move(entry);
        } else {
            unique.push_back(std::move(entry));
        }
    }
    entries_ = std::move(unique);
}

CacheArtefactOrigin CacheArtefact::current_origin() {
    return {version(), detail::nvrtc_version_in_keys(), detail::nvjitlink_version_in_keys()};
}

std::string CacheArtefact::serialize(std::string_view secret) const {
    if (!secret.empty() && secret.size() < detail::shortest_seal_secret) {
        throw InvalidArgumentError("CacheArtefact::serialize: the secret holds " +
                                   std::to_string(secret.size()) + " bytes; a secret needs at least " +
                                   std::to_string(detail::shortest_seal_secret));
    }
    std::string payload;
    for (const std::string* text :
         {&origin_.cudacore_version, &origin_.nvrtc_version, &origin_.nvjitlink_version}) {
        put_little_endian(payload, text->size(), 4);
        payload += *text;
    }
    for (const auto& [key, code] : entries_) {
        const std::string bytes = code.serialize();
        payload.append(reinterpret_cast<const char*>(key.digest.data()), key.digest.size());
        put_little_endian(payload, bytes.size(), 8);
        payload += bytes;
    }
    const std::string compressed =
        detail::zstd_frame(payload, compression_level, "CacheArtefact::serialize");
    std::string out(artefact_magic.begin(), artefact_magic.end());
    put_little_endian(out, format_version, 4);
    put_little_endian(out, secret.empty() ? 0 : signed_flag, 4);
    put_little_endian(out, entries_.size(), 8);
    put_little_endian(out, payload.size(), 8);
    put_little_endian(out, compressed.size(), 8);
    out += compressed;
    out += detail::sha256_seal(out, {});
    if (!secret.empty()) out += detail::sha256_seal(out, secret);
    return out;
}

CacheArtefact CacheArtefact::deserialize(std::string_view bytes, std::string_view secret,
                                         std::uint64_t max_memory) {
    std::uint64_t count = 0, payload_size = 0;
    const std::string_view compressed = checked_payload(bytes, secret, count, payload_size);
    ZstdPayloadReader in(compressed, payload_size, refuse);
    CacheArtefactOrigin origin = read_origin(in);
    std::vector<Entry> entries = read_entries(in, count, max_memory);
    if (in.remaining() != 0) {
        refuse(std::to_string(in.remaining()) + " unexpected bytes after the last of " +
               std::to_string(count) + " entries");
    }
    in.finish();
    return CacheArtefact(std::move(entries), std::move(origin));
}

}  // namespace cudacore
