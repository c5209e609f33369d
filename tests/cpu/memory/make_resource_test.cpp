// detail::make_resource: one allocation, as std::make_shared's, of a cache-line-aligned type on a
// line boundary, destroyed and freed once, also through weak references and
// enable_shared_from_this (what memory resources use).
#include "memory/make_resource.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

int alive = 0;

struct alignas(64) Lined : std::enable_shared_from_this<Lined> {
    explicit Lined(std::string name) : name(std::move(name)) { ++alive; }
    ~Lined() { --alive; }
    std::string name;
    char payload[100] = {};
};

TEST(MakeResource, EveryObjectStartsOnACacheLineAndIsDestroyedOnce) {
    std::vector<std::shared_ptr<Lined>> made;
    for (int i = 0; i < 1000; ++i) {
        made.push_back(cudacore::detail::make_resource<Lined>("resource " + std::to_string(i)));
        ASSERT_EQ(reinterpret_cast<std::uintptr_t>(made.back().get()) % 64, 0u) << i;
        EXPECT_EQ(made.back()->name, "resource " + std::to_string(i));
        EXPECT_EQ(made.back()->shared_from_this(), made.back());
    }
    EXPECT_EQ(alive, 1000);
    std::weak_ptr<Lined> watched = made.front();
    made.erase(made.begin() + 1, made.end());
    EXPECT_EQ(alive, 1);
    made.clear();  // destroyed; the block lives on for the weak reference, then goes with it
    EXPECT_EQ(alive, 0);
    EXPECT_TRUE(watched.expired());
}

TEST(MakeResource, AConstructorThatThrowsLeavesNothingBehind) {
    struct alignas(64) Refusing {
        Refusing() { throw std::runtime_error("refused"); }
    };
    EXPECT_THROW(cudacore::detail::make_resource<Refusing>(), std::runtime_error);
}

}  // namespace
