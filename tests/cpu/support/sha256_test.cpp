// SHA-256 and HMAC-SHA-256 (support/sha256.hpp) against the published test vectors: FIPS 180-2's
// examples and RFC 4231's first cases. Every key and seal cudacore makes comes from these calls,
// so a key computed before the hashing library changed is the key computed after.
#include "support/hex.hpp"
#include "support/sha256.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using cudacore::detail::Sha256;
using cudacore::detail::Sha256Digest;

std::string hex(const Sha256Digest& digest) { return cudacore::detail::hex_of(digest.data(), digest.size()); }

TEST(Sha256, GivesTheFips180Digests) {
    EXPECT_EQ(hex(cudacore::detail::sha256("abc")),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(hex(cudacore::detail::sha256("")),
              "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(hex(cudacore::detail::sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, PiecesGiveTheDigestOfTheWhole) {
    // A million 'a', given in pieces of every size from 1 to 999 bytes.
    const std::string block(999, 'a');
    Sha256 hash;
    std::size_t given = 0;
    for (std::size_t piece = 1; given < 1000000; piece = piece % 999 + 1) {
        const std::size_t size = std::min(piece, 1000000 - given);
        hash.update(block.data(), size);
        given += size;
    }
    EXPECT_EQ(hex(hash.finish()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, StartsOverAfterFinish) {
    Sha256 hash;
    hash.update("something else");
    hash.finish();
    hash.update("abc");
    EXPECT_EQ(hex(hash.finish()), hex(cudacore::detail::sha256("abc")));
}

TEST(Sha256, GivesTheRfc4231Hmacs) {
    EXPECT_EQ(hex(cudacore::detail::hmac_sha256(std::string(20, '\x0b'), "Hi There")),
              "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    EXPECT_EQ(hex(cudacore::detail::hmac_sha256("Jefe", "what do ya want for nothing?")),
              "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    // A key longer than SHA-256's block (RFC 4231 case 6) is hashed first.
    EXPECT_EQ(hex(cudacore::detail::hmac_sha256(std::string(131, '\xaa'),
                                                "Test Using Larger Than Block-Size Key - Hash Key First")),
              "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(Sha256, ComparesWholeDigests) {
    const Sha256Digest a = cudacore::detail::sha256("abc");
    Sha256Digest b = a;
    EXPECT_TRUE(cudacore::detail::equal_in_constant_time(a.data(), b.data(), a.size()));
    for (std::size_t i : {std::size_t{0}, std::size_t{17}, std::size_t{31}}) {
        b = a;
        b[i] ^= 1;
        EXPECT_FALSE(cudacore::detail::equal_in_constant_time(a.data(), b.data(), a.size())) << "byte " << i;
    }
    EXPECT_TRUE(cudacore::detail::equal_in_constant_time(a.data(), b.data(), 0));
}

}  // namespace
