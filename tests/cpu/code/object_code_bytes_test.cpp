// How an ObjectCode holds its bytes: copied from a string the caller keeps (into the value's
// own allocation, aligned as the source), taken as they are from a moved string, and refused
// when empty, whichever way they come.
#include "test_support.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/object_code.hpp"

#include <cstdint>
#include <string>
#include <utility>

namespace {

using namespace cudacore;

std::uintptr_t address(const char* pointer) { return reinterpret_cast<std::uintptr_t>(pointer); }

TEST(ObjectCodeBytes, ACopiedStringIsIndependentOfTheCallersAndEndsWithANul) {
    std::string source(5000, 'a');
    source[17] = 'b';
    const ObjectCode code = ObjectCode::from_ptx(source, "kept.ptx");
    source.assign(5000, 'z');  // the caller's string changes; the value does not
    ASSERT_EQ(code.size(), 5000u);
    EXPECT_EQ(code.code()[17], 'b');
    EXPECT_EQ(code.code().find('z'), std::string_view::npos);
    EXPECT_NE(code.code().data(), source.data());
    EXPECT_EQ(code.code().data()[code.size()], '\0');  // PTX is read as a C string
    EXPECT_EQ(code.name(), "kept.ptx");
}

TEST(ObjectCodeBytes, ACopyStartsAtTheSourcesOffsetWithinACacheLine) {
    // Sources at every offset within a line and of several sizes: memcpy runs aligned alike.
    const std::string backing(4096 + 64, 'q');
    for (std::size_t offset = 0; offset < 64; offset += 5) {
        for (std::size_t size : {1u, 63u, 100u, 4000u}) {
            const std::string source = backing.substr(offset, size);
            const ObjectCode code = ObjectCode::from_cubin(source);
            EXPECT_EQ((address(code.code().data()) - address(source.data())) % 64, 0u)
                << "size " << size << ", source at " << address(source.data()) % 64;
            EXPECT_EQ(code.code(), source);
        }
    }
}

TEST(ObjectCodeBytes, AMovedStringIsKeptAsItIs) {
    std::string source(5000, 'm');
    const char* bytes = source.data();
    const ObjectCode code = ObjectCode::from_fatbin(std::move(source), "moved");
    EXPECT_EQ(code.code().data(), bytes);  // no copy
    EXPECT_EQ(code.size(), 5000u);
    EXPECT_EQ(code.code_type(), CodeType::fatbin);
}

TEST(ObjectCodeBytes, CopiedAndMovedBytesMakeEqualValues) {
    const std::string source(300, 'e');
    const ObjectCode copied = ObjectCode::from_bytes(CodeType::ltoir, source, "same", {{"a", "b"}});
    const ObjectCode moved = ObjectCode::from_bytes(CodeType::ltoir, std::string(source), "same", {{"a", "b"}});
    EXPECT_EQ(copied, moved);
    EXPECT_EQ(copied.serialize(), moved.serialize());
    EXPECT_EQ(ObjectCode::deserialize(copied.serialize()), copied);
    EXPECT_EQ(copied.lowered_name("a"), "b");
}

TEST(ObjectCodeBytes, EmptyBytesAreRefusedEitherWayNamingTypeAndName) {
    const std::string empty;
    for (int moved = 0; moved < 2; ++moved) {
        try {
            if (moved) ObjectCode::from_object(std::string(), "nothing.o");
            else ObjectCode::from_object(empty, "nothing.o");
            ADD_FAILURE() << "empty bytes were accepted";
        } catch (const InvalidArgumentError& e) {
            EXPECT_NE(std::string(e.what()).find("empty object code for 'nothing.o'"), std::string::npos)
                << e.what();
        }
    }
}

TEST(ObjectCodeBytes, ALiteralIsTakenAsAString) {
    const ObjectCode code = ObjectCode::from_ptx(".version 8.0", "literal");
    EXPECT_EQ(code.code(), ".version 8.0");
    EXPECT_EQ(code.code_type(), CodeType::ptx);
}

}  // namespace
