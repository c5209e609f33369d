// ObjectCode serialization: round trips, the wire layout, and rejection of every malformed input.
#include "test_support.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/object_code.hpp"
#include "code/object_code_state.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>  // inlined (XXH_INLINE_ALL, from cudacore_internals)

#include <chrono>
#include <cstring>
#include <future>

namespace {

using cudacore::CodeType;
using cudacore::ObjectCode;
using cudacore::SerializationError;
using cudacore::test::TempDir;

constexpr CodeType all_types[] = {CodeType::cubin, CodeType::ptx,    CodeType::ltoir,
                                  CodeType::fatbin, CodeType::object, CodeType::library};

std::string every_byte_value() {
    std::string bytes;
    for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
    return bytes;
}

// Small, so that trying every corruption stays fast.
ObjectCode small_object() {
    return ObjectCode::from_cubin(std::string("\x7f" "ELF\0\1\2\3", 8), "k",
                                  {{"f<int>", "_Z1fIiEvv"}});
}

void put_u32(std::string& bytes, std::size_t offset, std::uint32_t value) {
    for (int i = 0; i < 4; ++i) bytes[offset + i] = static_cast<char>(value >> (8 * i));
}
void put_u64(std::string& bytes, std::size_t offset, std::uint64_t value) {
    for (int i = 0; i < 8; ++i) bytes[offset + i] = static_cast<char>(value >> (8 * i));
}
// Rewrites the trailing checksum so a test reaches the checks behind it.
void reseal(std::string& bytes) {
    put_u64(bytes, 16, bytes.size());
    put_u64(bytes, bytes.size() - 8, XXH3_64bits(bytes.data(), bytes.size() - 8));
}

TEST(Serialization, RoundTripsEveryCodeType) {
    for (CodeType type : all_types) {
        SCOPED_TRACE(std::string(cudacore::to_string(type)));
        const ObjectCode original = ObjectCode::from_bytes(
            type, every_byte_value() + "tail", "name with spaces \xc3\xa9",
            {{"scale<float>", "_Z5scaleIfEvPT_"}, {"add", "add"}, {"", "empty expression"}});
        const std::string bytes = original.serialize();
        const ObjectCode copy = ObjectCode::deserialize(bytes);
        EXPECT_EQ(copy, original);
        EXPECT_EQ(copy.code_type(), type);
        EXPECT_EQ(copy.code(), original.code());
        EXPECT_EQ(copy.symbol_map(), original.symbol_map());
        EXPECT_NE(cudacore::detail::ObjectCodeAccess::state(copy),
                  cudacore::detail::ObjectCodeAccess::state(original));  // a new value, not a shared one
        EXPECT_EQ(copy.serialize(), bytes);          // deterministic
    }
}

TEST(Serialization, RoundTripsWithoutNameOrSymbols) {
    const ObjectCode original = ObjectCode::from_ptx(".version 8.0\n");
    EXPECT_EQ(ObjectCode::deserialize(original.serialize()), original);
}

TEST(Serialization, DifferentObjectsSerializeDifferently) {
    const ObjectCode a = ObjectCode::from_cubin("abc", "x");
    EXPECT_NE(a.serialize(), ObjectCode::from_fatbin("abc", "x").serialize());
    EXPECT_NE(a.serialize(), ObjectCode::from_cubin("abd", "x").serialize());
    EXPECT_NE(a.serialize(), ObjectCode::from_cubin("abc", "y").serialize());
    EXPECT_NE(a.serialize(), ObjectCode::from_cubin("abc", "x", {{"a", "b"}}).serialize());
}

TEST(Serialization, LayoutIsLittleEndianWithMagicAndVersion) {
    const std::string bytes = small_object().serialize();
    ASSERT_GE(bytes.size(), 24u);
    EXPECT_EQ(bytes.substr(0, 8), std::string("\x89" "CCOBJ\r\n"));
    EXPECT_EQ(bytes.substr(8, 4), std::string("\x01\x00\x00\x00", 4));   // version 1
    EXPECT_EQ(bytes.substr(12, 4), std::string("\x04\x03\x02\x01", 4));  // byte-order mark
    std::uint64_t total = 0;
    for (int i = 0; i < 8; ++i) total |= std::uint64_t{static_cast<unsigned char>(bytes[16 + i])} << (8 * i);
    EXPECT_EQ(total, bytes.size());
    std::uint64_t checksum = 0;
    for (int i = 0; i < 8; ++i) {
        checksum |= std::uint64_t{static_cast<unsigned char>(bytes[bytes.size() - 8 + i])} << (8 * i);
    }
    EXPECT_EQ(checksum, XXH3_64bits(bytes.data(), bytes.size() - 8));
}

TEST(Serialization, EverySingleByteCorruptionIsRejected) {
    const std::string good = small_object().serialize();
    ASSERT_LT(good.size(), 100u);
    for (std::size_t position = 0; position < good.size(); ++position) {
        for (int delta = 1; delta < 256; ++delta) {
            std::string bad = good;
            bad[position] = static_cast<char>(static_cast<unsigned char>(bad[position]) ^ delta);
            EXPECT_THROW(ObjectCode::deserialize(bad), SerializationError)
                << "byte " << position << " xor " << delta;
        }
    }
}

TEST(Serialization, EveryTruncationIsRejected) {
    const std::string good = small_object().serialize();
    for (std::size_t length = 0; length < good.size(); ++length) {
        // A copy of exactly `length` bytes, so that AddressSanitizer would catch an overread.
        const std::string prefix = good.substr(0, length);
        EXPECT_THROW(ObjectCode::deserialize(prefix), SerializationError) << "length " << length;
    }
}

TEST(Serialization, TrailingBytesAreRejected) {
    EXPECT_THROW(ObjectCode::deserialize(small_object().serialize() + "x"), SerializationError);
}

TEST(Serialization, FutureVersionIsRejectedAsSuch) {
    std::string bytes = small_object().serialize();
    put_u32(bytes, 8, ObjectCode::serialization_format_version + 1);
    reseal(bytes);
    try {
        ObjectCode::deserialize(bytes);
        FAIL() << "a future version was accepted";
    } catch (const SerializationError& e) {
        EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
    }
}

TEST(Serialization, OversizedLengthsAreRejectedEvenWithAValidChecksum) {
    const std::string good = small_object().serialize();
    // Offsets in small_object(): code type 24, name length 28, name "k" 32, symbol count 33.
    const std::size_t name_length = 28, symbol_count = 33;
    const std::size_t code_length = good.size() - 8 - 8 - 8;  // code is 8 bytes, then checksum
    struct Case {
        const char* what;
        std::size_t offset;
        std::uint64_t value;
        bool wide;
    } cases[] = {
        {"name length beyond input", name_length, 0xffffffffu, false},
        {"name length one too many", name_length, 2, false},
        {"symbol count beyond input", symbol_count, 0xffffffffu, false},
        {"symbol count one too many", symbol_count, 2, false},
        {"code length beyond input", code_length, ~std::uint64_t{0}, true},
        {"code length one too many", code_length, 9, true},
        {"code length zero", code_length, 0, true},
        {"unknown code type", 24, 7, false},
    };
    for (const auto& c : cases) {
        std::string bad = good;
        if (c.wide) put_u64(bad, c.offset, c.value);
        else put_u32(bad, c.offset, static_cast<std::uint32_t>(c.value));
        reseal(bad);
        EXPECT_THROW(ObjectCode::deserialize(bad), SerializationError) << c.what;
    }
    std::string huge = good;
    put_u64(huge, 16, ObjectCode::max_serialized_size + 1);
    EXPECT_THROW(ObjectCode::deserialize(huge), SerializationError);
}

TEST(Serialization, UnorderedOrDuplicatedSymbolsAreRejected) {
    // Two symbols "a" and "b"; swap their order in place and reseal.
    const ObjectCode two = ObjectCode::from_cubin("code", "", {{"a", "1"}, {"b", "2"}});
    std::string bytes = two.serialize();
    const std::size_t first = bytes.find(std::string("\x01\x00\x00\x00" "a", 5));
    ASSERT_NE(first, std::string::npos);
    bytes[first + 4] = 'b';
    reseal(bytes);
    EXPECT_THROW(ObjectCode::deserialize(bytes), SerializationError);  // duplicate "b"
    bytes[first + 4] = 'c';
    reseal(bytes);
    EXPECT_THROW(ObjectCode::deserialize(bytes), SerializationError);  // "c" before "b"
}

TEST(Serialization, GarbageIsRejectedWithAClearMessage) {
    try {
        ObjectCode::deserialize("\x7f" "ELF and then some bytes of a raw cubin");
        FAIL();
    } catch (const SerializationError& e) {
        EXPECT_NE(std::string(e.what()).find("magic"), std::string::npos) << e.what();
    }
    EXPECT_THROW(ObjectCode::deserialize(""), SerializationError);
}

TEST(Serialization, SaveAndLoadRoundTrip) {
    TempDir dir;
    const auto path = dir.path() / "kernel.ccobj";
    const ObjectCode original = ObjectCode::from_ltoir(every_byte_value(), "lto", {{"k", "_Z1kv"}});
    original.save(path);
    EXPECT_EQ(ObjectCode::from_saved(path), original);
    // Saving again replaces the file; no temporary file is left beside it.
    const ObjectCode second = ObjectCode::from_cubin("other", "second");
    second.save(path);
    EXPECT_EQ(ObjectCode::from_saved(path), second);
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) ++files;
    EXPECT_EQ(files, 1u);
}

TEST(Serialization, LoadRejectsMissingAndCorruptFilesNamingThePath) {
    TempDir dir;
    const auto missing = dir.path() / "missing.ccobj";
    try {
        ObjectCode::from_saved(missing);
        FAIL();
    } catch (const SerializationError& e) {
        EXPECT_NE(std::string(e.what()).find(missing.string()), std::string::npos) << e.what();
    }
    const auto corrupt = dir.path() / "corrupt.ccobj";
    std::string bytes = small_object().serialize();
    bytes[bytes.size() / 2] ^= 1;
    cudacore::test::write_file(corrupt, bytes);
    try {
        ObjectCode::from_saved(corrupt);
        FAIL();
    } catch (const SerializationError& e) {
        EXPECT_NE(std::string(e.what()).find(corrupt.string()), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
    }
}

// A saved file's first bytes are checked before the rest is read: a large file that is no saved
// ObjectCode, or a saved one padded past the size it states, is refused without being read (the
// process's peak memory does not grow by the file), and a FIFO is refused without waiting.
TEST(Serialization, LoadChecksTheFirstBytesBeforeReadingTheRest) {
    TempDir dir;
    const std::uint64_t big = std::uint64_t{3} << 30;
    const auto junk = dir.path() / "junk.ccobj";
    cudacore::test::write_file(junk, "not a saved ObjectCode, and large");
    std::filesystem::resize_file(junk, big);  // sparse: costs no disk
    const auto padded = dir.path() / "padded.ccobj";
    small_object().save(padded);
    std::filesystem::resize_file(padded, big);
    const auto fifo = dir.path() / "fifo.ccobj";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    struct rusage before {};
    ::getrusage(RUSAGE_SELF, &before);
    for (const auto& [path, part] : {std::pair{junk, "magic number does not match"}, std::pair{padded, "trailing data"},
                                     std::pair{fifo, "not a regular file"}}) {
        try {
            ObjectCode::from_saved(path);
            FAIL() << path;
        } catch (const SerializationError& e) {
            EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
        }
    }
    struct rusage after {};
    ::getrusage(RUSAGE_SELF, &after);
    EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 256 * 1024) << "KiB";
}

TEST(Serialization, SaveIntoMissingDirectoryFailsNamingThePath) {
    TempDir dir;
    const auto path = dir.path() / "no" / "such" / "dir" / "x.ccobj";
    try {
        small_object().save(path);
        FAIL();
    } catch (const SerializationError& e) {
        EXPECT_NE(std::string(e.what()).find("no/such/dir"), std::string::npos) << e.what();
    }
}

// Saving never destroys something else: a FIFO or a directory at the path is refused, naming
// it and what it is, and left as it was (a FIFO was replaced by a regular file before). A
// symlink, dangling or not, is followed; its target is written and the link kept; the target's
// mode is kept. An empty path is refused.
TEST(Serialization, SaveRefusesWhatIsNotAFileAndFollowsSymlinks) {
    TempDir dir;
    const auto fifo = dir.path() / "fifo.ccobj";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    std::filesystem::create_directory(dir.path() / "folder.ccobj");
    for (const auto& [path, kind] : {std::pair{fifo, "a FIFO"}, std::pair{dir.path() / "folder.ccobj", "a directory"}}) {
        try {
            small_object().save(path);
            FAIL() << "saved onto " << kind;
        } catch (const SerializationError& e) {
            EXPECT_NE(std::string(e.what()).find("cannot write '" + path.string() + "': it is " + kind +
                                                 ", not a regular file: refused, and left as it is"),
                      std::string::npos) << e.what();
        }
    }
    EXPECT_TRUE(std::filesystem::is_fifo(fifo));
    EXPECT_TRUE(std::filesystem::is_empty(dir.path() / "folder.ccobj"));
    EXPECT_THROW(small_object().save(""), SerializationError);

    const auto target = dir.path() / "target.ccobj";
    std::filesystem::create_symlink("target.ccobj", dir.path() / "dangling.ccobj");
    small_object().save(dir.path() / "dangling.ccobj");
    EXPECT_TRUE(std::filesystem::is_symlink(dir.path() / "dangling.ccobj"));
    EXPECT_EQ(ObjectCode::from_saved(target), small_object());
    ASSERT_EQ(::chmod(target.c_str(), 0640), 0);
    const ObjectCode other = ObjectCode::from_cubin("other", "other");
    other.save(dir.path() / "dangling.ccobj");
    EXPECT_EQ(ObjectCode::from_saved(target), other);
    EXPECT_EQ(std::filesystem::status(target).permissions(),
              std::filesystem::perms(0640));
}

// The temporary name beside the file is kept within the file system's limit on a name, so a
// name of the limit's length saves.
TEST(Serialization, SaveTakesNamesUpToTheFileSystemLimit) {
    TempDir dir;
    const long limit = ::pathconf(dir.path().c_str(), _PC_NAME_MAX);
    ASSERT_GT(limit, 10);
    const auto path = dir.path() / std::string(static_cast<std::size_t>(limit), 'x');
    small_object().save(path);
    EXPECT_EQ(ObjectCode::from_saved(path), small_object());
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) ++files;
    EXPECT_EQ(files, 1u);
}

// A FIFO where a saved ObjectCode belongs is refused at once (opened non-blocking, its type
// checked before any read), like a directory; both errors name the path and what it is.
TEST(Serialization, LoadRefusesAFifoWithoutBlockingAndADirectory) {
    TempDir dir;
    const auto fifo = dir.path() / "planted.ccobj";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    auto loading = std::async(std::launch::async, [&] { return ObjectCode::from_saved(fifo); });
    if (loading.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
        const int unblock = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // free the reader
        loading.wait();
        if (unblock >= 0) ::close(unblock);
        FAIL() << "ObjectCode::from_file blocked on a FIFO";
    }
    try {
        loading.get();
        FAIL() << "a FIFO was loaded";
    } catch (const SerializationError& e) {
        EXPECT_NE(std::string(e.what()).find(fifo.string()), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("a FIFO, not a regular file"), std::string::npos) << e.what();
    }
    try {
        ObjectCode::from_saved(dir.path());
        FAIL() << "a directory was loaded";
    } catch (const SerializationError& e) {
        EXPECT_NE(std::string(e.what()).find("a directory, not a regular file"), std::string::npos)
            << e.what();
    }
}

}  // namespace

namespace {

// serialize_parts / deserialize_parts: the same form in three pieces, the code not copied.
TEST(SerializationParts, ConcatenateToSerializeAndRoundTrip) {
    for (CodeType type : all_types) {
        const ObjectCode code = ObjectCode::from_bytes(type, every_byte_value(), "name", {{"f<int>", "_Z1fIiEvv"}});
        const ObjectCode::SerializedParts parts = code.serialize_parts();
        EXPECT_EQ(parts.head + std::string(code.code()) + parts.tail, code.serialize());
        EXPECT_EQ(ObjectCode::deserialize_parts(parts.head, std::string(code.code()), parts.tail), code);
    }
}

TEST(SerializationParts, EverySingleByteCorruptionAndWrongSplitIsRejected) {
    const ObjectCode code = small_object();
    const auto parts = code.serialize_parts();
    const std::string body(code.code());
    const std::string whole = parts.head + body + parts.tail;
    for (std::size_t position = 0; position < whole.size(); ++position) {
        std::string bad = whole;
        bad[position] ^= 0x10;
        const std::size_t head = parts.head.size(), tail = whole.size() - parts.tail.size();
        EXPECT_THROW(ObjectCode::deserialize_parts(std::string_view(bad).substr(0, head),
                                                   bad.substr(head, tail - head), std::string_view(bad).substr(tail)),
                     SerializationError)
            << "byte " << position;
    }
    // The same bytes split elsewhere are refused, as are a short checksum and short code.
    EXPECT_THROW(ObjectCode::deserialize_parts(parts.head + body.substr(0, 1), body.substr(1), parts.tail),
                 SerializationError);
    EXPECT_THROW(ObjectCode::deserialize_parts(parts.head, body, std::string_view(parts.tail).substr(1)),
                 SerializationError);
    EXPECT_THROW(ObjectCode::deserialize_parts(parts.head, body.substr(1), parts.tail), SerializationError);
    EXPECT_THROW(ObjectCode::deserialize_parts(std::string_view(parts.head).substr(0, 10), body, parts.tail),
                 SerializationError);
}

}  // namespace
