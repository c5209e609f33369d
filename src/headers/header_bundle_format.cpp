// HeaderBundle's file form (the format is described in include/cudacore/header_bundle.hpp):
// a fixed header with the sizes and an XXH3-64 checksum, then one zstd frame holding the names
// and contents. Reading checks, in order: the magic, size of the fixed header, version, the stated
// sizes against the input and the limit, the checksum, the frame's own content size, the
// decompressed size, then every length against the bytes left; trailing bytes are an error.
#include "cudacore/errors.hpp"
#include "cudacore/header_bundle.hpp"

#include "support/atomic_file.hpp"
#include "support/little_endian.hpp"
#include "support/payload_codec.hpp"
#include "support/serialized_file.hpp"

#include <xxhash.h>  // inlined into the library (XXH_INLINE_ALL, set in CMakeLists.txt)
#include <zstd.h>

#include <array>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace cudacore {
namespace {

using detail::put_little_endian;
using detail::PayloadReader;
using detail::read_little_endian;

constexpr std::array<unsigned char, 8> bundle_magic = {0x89, 'C', 'C', 'H', 'D', 'R', '\r', '\n'};
constexpr std::size_t bundle_fixed_header_size = 8 + 4 + 4 + 8 + 8 + 8;
constexpr std::size_t checksum_offset = 32;
// zstd's level for bundles: made once at build time, read at every start, so a smaller file is
// worth a slower write; decompression speed hardly depends on the level.
constexpr int compression_level = 15;

[[noreturn]] void reject_bundle(const std::string& why) {
    throw SerializationError("HeaderBundle::deserialize: " + why);
}

// Refuses a file header that claims more than a bundle may hold, before anything is decompressed
// or reserved: each header takes 64 bytes of memory however few it takes in the payload.
void refuse_past_limits(std::uint32_t count, std::uint64_t payload_size) {
    if (payload_size > HeaderBundle::max_payload_size) {
        reject_bundle("the header claims " + std::to_string(payload_size) +
                      " bytes of headers, more than the limit of " + std::to_string(HeaderBundle::max_payload_size));
    }
    if (count > HeaderBundle::max_headers) {
        reject_bundle("the header claims " + std::to_string(count) + " headers, more than the limit of " +
                      std::to_string(HeaderBundle::max_headers));
    }
}

// `count` headers of the payload, each named (no NUL), in strict name order.
std::vector<BundledHeader> read_bundled_headers(PayloadReader& in, std::uint32_t count) {
    std::vector<BundledHeader> headers;
    headers.reserve(count);
    for (std::uint32_t i = 0; i < count; ++i) {
        BundledHeader header;
        header.name = in.text(in.integer(4, "header name length"), "header name");
        header.content = in.text(in.integer(8, "header content length"), "header content");
        if (header.name.empty()) reject_bundle("header " + std::to_string(i) + " has an empty name");
        if (header.name.find('\0') != std::string::npos)
            reject_bundle("header " + std::to_string(i) + "'s name holds a NUL byte");
        if (!headers.empty() && !(headers.back().name < header.name)) {
            reject_bundle("headers out of order or duplicated at '" + header.name + "'");
        }
        headers.push_back(std::move(header));
    }
    return headers;
}

}  // namespace

std::string HeaderBundle::serialize() const {
    std::string payload;
    payload.reserve(static_cast<std::size_t>(4 + name().size() + content_size() + 12 * size()));
    put_little_endian(payload, name().size(), 4);
    payload += name();
    for (const auto& header : headers()) {
        put_little_endian(payload, header.name.size(), 4);
        payload += header.name;
        put_little_endian(payload, header.content.size(), 8);
        payload += header.content;
    }
    const std::string compressed = detail::zstd_frame(
        payload, compression_level, "HeaderBundle::serialize of " + describe());

    std::string out(bundle_magic.begin(), bundle_magic.end());
    put_little_endian(out, format_version, 4);
    put_little_endian(out, size(), 4);
    put_little_endian(out, payload.size(), 8);
    put_little_endian(out, compressed.size(), 8);
    XXH3_state_t checksum;
    XXH3_64bits_reset(&checksum);
    XXH3_64bits_update(&checksum, out.data(), out.size());
    XXH3_64bits_update(&checksum, compressed.data(), compressed.size());
    put_little_endian(out, XXH3_64bits_digest(&checksum), 8);
    out += compressed;
    return out;
}

namespace {

// What a bundle file's fixed header states, checked: the magic, the header's length, the version,
// the limits.
struct BundleHeader {
    std::uint32_t count = 0;
    std::uint64_t payload_size = 0;
    std::uint64_t compressed_size = 0;
};

BundleHeader checked_bundle_header(std::string_view bytes, std::uint64_t input_size) {
    const std::size_t compare = std::min(bytes.size(), bundle_magic.size());
    if (bytes.empty() || std::memcmp(bytes.data(), bundle_magic.data(), compare) != 0) {
        reject_bundle("not a header bundle (" + std::to_string(input_size) +
               " bytes; the bundle_magic number does not match)");
    }
    if (bytes.size() < bundle_fixed_header_size) {
        reject_bundle("truncated: " + std::to_string(bytes.size()) + " bytes, shorter than the " +
               std::to_string(bundle_fixed_header_size) + "-byte header");
    }
    const std::uint32_t version = static_cast<std::uint32_t>(read_little_endian(bytes, 8, 4));
    if (version == 0) reject_bundle("invalid format version 0");
    if (version > HeaderBundle::format_version) {
        reject_bundle("format version " + std::to_string(version) + " is newer than this build reads (" +
               std::to_string(HeaderBundle::format_version) + "); upgrade cudacore");
    }
    BundleHeader header;
    header.count = static_cast<std::uint32_t>(read_little_endian(bytes, 12, 4));
    header.payload_size = read_little_endian(bytes, 16, 8);
    header.compressed_size = read_little_endian(bytes, 24, 8);
    refuse_past_limits(header.count, header.payload_size);
    const std::uint64_t present = input_size - bundle_fixed_header_size;
    if (header.compressed_size != present) {
        reject_bundle(std::string(header.compressed_size > present ? "truncated" : "trailing data") +
               ": the header says " + std::to_string(header.compressed_size) +
               " compressed bytes follow it, the input has " + std::to_string(present));
    }
    return header;
}

}  // namespace

HeaderBundle HeaderBundle::deserialize(std::string_view bytes) {
    const BundleHeader header = checked_bundle_header(bytes, bytes.size());
    const std::uint32_t count = header.count;
    const std::uint64_t payload_size = header.payload_size;
    const std::string_view compressed = bytes.substr(bundle_fixed_header_size);
    XXH3_state_t checksum;
    XXH3_64bits_reset(&checksum);
    XXH3_64bits_update(&checksum, bytes.data(), checksum_offset);
    XXH3_64bits_update(&checksum, compressed.data(), compressed.size());
    const std::uint64_t computed = XXH3_64bits_digest(&checksum);
    const std::uint64_t stored = read_little_endian(bytes, checksum_offset, 8);
    if (computed != stored) {
        reject_bundle("checksum mismatch (stored " + std::to_string(stored) + ", computed " +
               std::to_string(computed) + "): the data is corrupted");
    }

    const std::string payload = detail::zstd_frame_payload(compressed, payload_size, reject_bundle);
    PayloadReader in(payload, reject_bundle);
    std::string name(in.text(in.integer(4, "bundle name length"), "bundle name"));
    // Each header takes at least 12 bytes: refuse impossible counts before looping over them.
    if (count > in.remaining() / 12) {
        reject_bundle("header count " + std::to_string(count) + " exceeds what the " +
               std::to_string(in.remaining()) + " payload bytes left can hold");
    }
    std::vector<BundledHeader> headers = read_bundled_headers(in, count);
    if (in.remaining() != 0) {
        reject_bundle(std::to_string(in.remaining()) + " unexpected bytes after the last of " +
               std::to_string(count) + " headers");
    }
    try {
        return exactly(std::move(headers), std::move(name));  // as saved, rewritten when made
    } catch (const InvalidArgumentError& e) {
        reject_bundle(e.what());
    }
}

void HeaderBundle::save(const std::filesystem::path& path) const {
    const std::string bytes = serialize();
    const std::string what = "HeaderBundle::save of " + describe() + " (" +
                             std::to_string(bytes.size()) + " bytes)";
    detail::save_serialized(path, bytes, what);
}

HeaderBundle HeaderBundle::load(const std::filesystem::path& path) {
    // The fixed header is checked (and the size it states against the file's) before the rest is
    // read: a large file that is no bundle costs no memory.
    std::string bytes;
    try {
        bytes = detail::read_serialized(path, bundle_fixed_header_size, [](std::string_view head, std::uint64_t size) {
            checked_bundle_header(head, size);
            return size;
        });
    } catch (const SerializationError& e) {
        throw SerializationError("HeaderBundle::load '" + path.string() + "': " + e.what());
    }
    try {
        return deserialize(bytes);
    } catch (const SerializationError& e) {
        throw SerializationError("HeaderBundle::load '" + path.string() + "': " + e.what());
    }
}

}  // namespace cudacore
