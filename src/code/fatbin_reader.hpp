// The entries of a fatbin (NVIDIA's container of cubins, PTX and LTO-IR for several archs).
//
// Layout: a header (u32 magic, u16 version, u16 header size, u64 size of the entries), then the
// entries, each a header (u16 kind, u16 version, u32 header size, u64 payload size, u32
// compressed size, u32, u16 minor, u16 major, u32 sm, u32 name offset, u32 name size, u64 flags,
// u64, u64 uncompressed size: 64 bytes as the toolkit writes it) and its payload.
#pragma once

#include "code/bounded_read.hpp"
#include "code/code_magic.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace cudacore::detail {

// One image of a fatbin, its payload a view into the fatbin's bytes.
struct FatbinImage {
    std::uint16_t kind = 0;  // 1 PTX, 2 ELF, 8 LTO-IR
    std::uint32_t sm = 0;
    bool compressed = false;
    std::size_t offset = 0;  // of the entry header
    std::string_view payload;
};

constexpr std::uint16_t kFatbinPtx = 1;
constexpr std::uint16_t kFatbinElf = 2;
constexpr std::uint16_t kFatbinLtoIr = 8;

// Calls `visit(image, where)` for each entry in order, `where` naming it ("entry 0 at offset
// 16"). Throws MalformedBytes when the header or an entry is out of place, or there is none.
// The walk's work is proportional to the fatbin's size; payloads are not looked into.
template <typename Visit>
void for_each_fatbin_image(std::string_view code, Visit&& visit) {
    constexpr std::uint64_t kCompressed = 0x2000 | 0x8000;  // LZ4, Zstandard
    constexpr std::size_t kFlagsOffset = 40;
    constexpr std::size_t kHeaderSize = 16;       // magic, version, header size, entries size
    constexpr std::size_t kEntryMinHeader = 48;   // up to and including the flags
    if (read_at<std::uint32_t>(code, 0, "fatbin header") != kFatbinMagic) fail_malformed("no fatbin magic");
    const auto header_size = read_at<std::uint16_t>(code, 6, "fatbin header");
    const auto entries_size = read_at<std::uint64_t>(code, 8, "fatbin header");
    if (header_size < kHeaderSize || header_size > code.size())
        fail_malformed("fatbin header size " + num(header_size) + " out of range");
    if (entries_size > code.size() - header_size)
        fail_malformed("entries (" + num(entries_size) + " bytes after a " + num(header_size) +
                       "-byte header) run past the end");
    const std::size_t end = header_size + entries_size;
    std::size_t count = 0;
    // Every entry moves the walk forward by at least its minimal header, so the walk ends.
    std::size_t offset = header_size;
    while (end - offset >= kEntryMinHeader) {
        const std::string where = "entry " + num(count) + " at offset " + num(offset);
        const auto entry_header = read_at<std::uint32_t>(code, offset + 4, "fatbin entry");
        const auto payload = read_at<std::uint64_t>(code, offset + 8, "fatbin entry");
        if (entry_header < kEntryMinHeader || entry_header > end - offset)
            fail_malformed(where + ": header size " + num(entry_header) + " out of range");
        if (payload > end - offset - entry_header)
            fail_malformed(where + ": payload of " + num(payload) + " bytes runs past the end of the entries");
        FatbinImage image;
        image.kind = read_at<std::uint16_t>(code, offset, "fatbin entry");
        image.sm = read_at<std::uint32_t>(code, offset + 28, "fatbin entry");
        image.compressed =
            (read_at<std::uint64_t>(code, offset + kFlagsOffset, "fatbin entry") & kCompressed) != 0;
        if (image.compressed && read_at<std::uint32_t>(code, offset + 16, "fatbin entry") > payload)
            fail_malformed(where + ": compressed size exceeds the payload of " + num(payload) + " bytes");
        image.offset = offset;
        image.payload = code.substr(offset + entry_header, payload);
        visit(static_cast<const FatbinImage&>(image), where);
        ++count;
        offset += entry_header + payload;
    }
    if (count == 0) fail_malformed("no entries");
}

}  // namespace cudacore::detail
