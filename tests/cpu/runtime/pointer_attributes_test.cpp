// pointer_attributes without a GPU: a null address is answered as unregistered without asking the
// driver; the names and descriptions of the answers.
#include "cudacore/pointer_attributes.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace cudacore;

TEST(PointerAttributes, ANullAddressIsUnregisteredWithoutADriver) {
    const PointerAttributes a = pointer_attributes(static_cast<const void*>(nullptr));
    EXPECT_EQ(a.memory_type, MemoryType::unregistered);
    EXPECT_FALSE(a.is_known());
    EXPECT_EQ(a.device_ordinal, -1);
    EXPECT_EQ(a.context, nullptr);
    EXPECT_EQ(a.pool, nullptr);
    EXPECT_NE(a.description().find("unregistered"), std::string::npos);
}

TEST(PointerAttributes, NamesAndOffsets) {
    EXPECT_STREQ(to_string(MemoryType::unregistered), "unregistered");
    EXPECT_STREQ(to_string(MemoryType::host), "host");
    EXPECT_STREQ(to_string(MemoryType::device), "device");
    EXPECT_STREQ(to_string(MemoryType::managed), "managed");
    PointerAttributes a;
    a.memory_type = MemoryType::device;
    a.device_ordinal = 1;
    a.range_start = 0x10000;
    a.range_size = 4096;
    EXPECT_EQ(a.offset_of(0x10100), 0x100u);
    EXPECT_EQ(a.offset_of(0x100), 0u) << "below the range: 0";
    const std::string text = a.description();
    EXPECT_NE(text.find("device memory of device 1"), std::string::npos) << text;
    EXPECT_NE(text.find("0x10000+4096"), std::string::npos) << text;
}

}  // namespace
