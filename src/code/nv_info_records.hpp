// The records of NVIDIA's attribute sections (.nv.info, .nv.info.<kernel>): u8 format,
// u8 attribute, u16 value; format 4 (a sized value) is followed by `value` bytes of payload.
// The driver walks them, so code_validation checks them, and the parameter count reads them.
#pragma once

#include "code/bounded_read.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace cudacore::detail {

constexpr std::uint8_t kNvInfoSizedValue = 4;  // the format followed by a payload

struct NvInfoRecord {
    std::uint8_t format = 0;
    std::uint8_t attribute = 0;
    std::uint16_t value = 0;         // the value, or the payload's size for a sized value
    std::string_view payload;        // sized values only
};

// Calls `visit(record)` for each record, in order. The records must tile the section exactly:
// throws MalformedBytes "attribute record at offset N of <label()> ..." for one that is
// truncated, of an unknown format or longer than the section. `label` is called only then.
template <typename Label, typename Visit>
void for_each_nv_info_record(std::string_view bytes, Label&& label, Visit&& visit) {
    std::size_t offset = 0;
    while (offset < bytes.size()) {
        if (bytes.size() - offset < 4)
            fail_malformed("attribute record at offset " + num(offset) + " of " + label() +
                           " is truncated");
        NvInfoRecord record;
        record.format = static_cast<std::uint8_t>(bytes[offset]);
        record.attribute = static_cast<std::uint8_t>(bytes[offset + 1]);
        std::memcpy(&record.value, bytes.data() + offset + 2, sizeof record.value);
        if (record.format < 1 || record.format > 4)
            fail_malformed("attribute record at offset " + num(offset) + " of " + label() +
                           " has unknown format " + num(record.format));
        const std::size_t payload = record.format == kNvInfoSizedValue ? record.value : 0;
        if (payload > bytes.size() - offset - 4)
            fail_malformed("attribute record at offset " + num(offset) + " of " + label() + " (" +
                           num(payload) + " bytes) runs past the section");
        record.payload = bytes.substr(offset + 4, payload);
        visit(record);
        offset += 4 + payload;
    }
}

}  // namespace cudacore::detail
