// The members of an ar archive (a library of host objects or cubins): each a 60-byte text header
// (name, dates, mode, decimal size, "`\n") and its bytes, padded to an even offset. The first
// member may be the symbol index ("/"): a big-endian count, that many big-endian member
// offsets, then names.
#pragma once

#include "code/bounded_read.hpp"

#include <ar.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace cudacore::detail {

struct ArchiveMember {
    std::string name;         // the header's name field, trailing spaces removed
    std::string_view bytes;   // a view into the archive
};

namespace archive_reading {

// A decimal field of an ar header (digits, then spaces).
inline std::uint64_t decimal_field(const char* field, std::size_t size, const std::string& where) {
    std::uint64_t value = 0;
    std::size_t i = 0;
    for (; i < size && field[i] >= '0' && field[i] <= '9'; ++i) value = value * 10 + (field[i] - '0');
    if (i == 0) fail_malformed(where + ": size field is not a number");
    for (; i < size; ++i)
        if (field[i] != ' ') fail_malformed(where + ": size field is not a number");
    return value;
}

inline std::uint64_t big_endian_u32(const unsigned char* p) {
    return (std::uint64_t{p[0]} << 24) | (p[1] << 16) | (p[2] << 8) | p[3];
}

}  // namespace archive_reading

// Calls `visit(member, where)` for each member other than the symbol index, `where` naming it
// ("member 1 at offset 68"). Throws MalformedBytes when the magic, a header or a size is wrong,
// a member runs past the end, or the symbol index points past the end.
template <typename Visit>
void for_each_archive_member(std::string_view code, Visit&& visit) {
    using namespace archive_reading;
    if (code.size() < SARMAG || code.substr(0, SARMAG) != ARMAG) fail_malformed("no archive magic");
    std::size_t offset = SARMAG;
    std::size_t members = 0;
    while (offset < code.size()) {
        // A final padding byte may close the archive.
        if (code.size() - offset == 1 && code[offset] == '\n') break;
        const std::string where = "member " + num(members) + " at offset " + num(offset);
        const auto header = read_at<ar_hdr>(code, offset, "archive member header");
        if (std::memcmp(header.ar_fmag, ARFMAG, 2) != 0) fail_malformed(where + ": bad header terminator");
        const std::uint64_t size = decimal_field(header.ar_size, sizeof header.ar_size, where);
        const std::size_t data = offset + sizeof(ar_hdr);
        if (size > code.size() - data) fail_malformed(where + ": " + num(size) + " bytes run past the end");
        ArchiveMember member;
        member.name.assign(header.ar_name, sizeof header.ar_name);
        while (!member.name.empty() && member.name.back() == ' ') member.name.pop_back();
        member.bytes = code.substr(data, size);
        if (member.name == "/") {
            if (size < 4) fail_malformed(where + ": truncated symbol index");
            const auto* p = reinterpret_cast<const unsigned char*>(member.bytes.data());
            const std::uint64_t count = big_endian_u32(p);
            if (count > (size - 4) / 4)
                fail_malformed(where + ": symbol index of " + num(count) + " entries runs past the member");
            for (std::uint64_t i = 0; i < count; ++i)
                if (!in_bounds(big_endian_u32(p + 4 + 4 * i), sizeof(ar_hdr), code.size()))
                    fail_malformed(where + ": symbol index entry " + num(i) + " points past the end");
        } else {
            visit(static_cast<const ArchiveMember&>(member), where);
        }
        ++members;
        offset = data + size + (size & 1);
    }
}

}  // namespace cudacore::detail
