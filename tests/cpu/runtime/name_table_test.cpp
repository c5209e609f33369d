// The lock-free name table behind repeated get_kernel: finds what was inserted, the first insert
// wins, it grows past its first (inline) table and visits every value once, and readers racing
// writers see each name either missing or complete. No GPU needed.
#include "test_support.hpp"

#include "runtime/name_table.hpp"

#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using cudacore::detail::NameTable;

TEST(NameTable, FindsWhatWasInsertedAndTheFirstInsertWins) {
    NameTable<int> table;
    EXPECT_EQ(table.find("saxpy"), nullptr);
    EXPECT_EQ(table.insert("saxpy", 1), 1);
    EXPECT_EQ(table.insert("saxpy", 2), 1);
    ASSERT_NE(table.find("saxpy"), nullptr);
    EXPECT_EQ(*table.find("saxpy"), 1);
    EXPECT_EQ(table.find("saxp"), nullptr);
    EXPECT_EQ(table.find(""), nullptr);
}

TEST(NameTable, RepeatedAndAlternatingLookupsFindTheirOwnTablesValues) {
    // Lookups that switch names and tables must not return another name's or another table's
    // value.
    NameTable<int> one;
    NameTable<int> two;
    one.insert("a", 1);
    one.insert("b", 2);
    two.insert("a", 3);
    for (int round = 0; round < 3; ++round) {
        EXPECT_EQ(*one.find("a"), 1);
        EXPECT_EQ(*one.find("a"), 1);
        EXPECT_EQ(*two.find("a"), 3);
        EXPECT_EQ(*one.find("b"), 2);
        EXPECT_EQ(two.find("b"), nullptr);
        EXPECT_EQ(*two.find("a"), 3);
        EXPECT_EQ(one.find("ab"), nullptr);
        EXPECT_EQ(one.find(""), nullptr);
    }
}

TEST(NameTable, ATableMadeWhereAnotherWasDoesNotSeeItsEntries) {
    std::optional<NameTable<int>> table;
    table.emplace();
    table->insert("saxpy", 1);
    const void* address = &*table;
    ASSERT_NE(table->find("saxpy"), nullptr);
    table.reset();
    table.emplace();  // same storage
    ASSERT_EQ(static_cast<const void*>(&*table), address);
    EXPECT_EQ(table->find("saxpy"), nullptr);
    table->insert("saxpy", 2);
    ASSERT_NE(table->find("saxpy"), nullptr);
    EXPECT_EQ(*table->find("saxpy"), 2);
}

TEST(NameTable, GrowsAndKeepsEveryName) {
    NameTable<int> table;
    const int* first = &table.insert("kernel_0", 0);
    for (int i = 1; i < 1000; ++i) table.insert("kernel_" + std::to_string(i), i);
    for (int i = 0; i < 1000; ++i) {
        const int* found = table.find("kernel_" + std::to_string(i));
        ASSERT_NE(found, nullptr) << i;
        EXPECT_EQ(*found, i);
    }
    EXPECT_EQ(table.find("kernel_0"), first);  // values never move
    EXPECT_EQ(table.find("kernel_1000"), nullptr);
}

TEST(NameTable, ForEachVisitsEveryValueOnceAcrossGrowth) {
    NameTable<int> table;
    // 4 names fill the first table to half; the 5th grows it, the 9th grows it again.
    for (int count : {1, 4, 5, 9, 40}) {
        while (true) {
            int stored = 0;
            table.for_each([&](int) { ++stored; });
            if (stored >= count) break;
            table.insert("k" + std::to_string(stored), stored);
        }
        std::vector<int> seen(count, 0);
        table.for_each([&](int value) {
            ASSERT_GE(value, 0);
            ASSERT_LT(value, count);
            ++seen[value];
        });
        for (int i = 0; i < count; ++i) {
            EXPECT_EQ(seen[i], 1) << "value " << i << " after " << count << " inserts";
            ASSERT_NE(table.find("k" + std::to_string(i)), nullptr);
            EXPECT_EQ(*table.find("k" + std::to_string(i)), i);
        }
    }
}

TEST(NameTable, ReadersRacingWritersSeeMissingOrComplete) {
    NameTable<std::string> table;
    constexpr int kNames = 2000;
    std::atomic<bool> done{false};
    std::atomic<int> bad{0};
    std::thread reader([&] {
        while (!done.load()) {
            for (int i = 0; i < kNames; i += 7) {
                const std::string name = "name_" + std::to_string(i);
                if (const std::string* value = table.find(name); value && *value != "value_" + name)
                    ++bad;
            }
        }
    });
    std::thread writer([&] {
        for (int i = kNames - 1; i >= 0; --i) {
            const std::string name = "name_" + std::to_string(i);
            table.insert(name, "value_" + name);
        }
    });
    for (int i = 0; i < kNames; ++i) {
        const std::string name = "name_" + std::to_string(i);
        table.insert(name, "value_" + name);
    }
    writer.join();
    done = true;
    reader.join();
    EXPECT_EQ(bad.load(), 0);
    for (int i = 0; i < kNames; ++i) ASSERT_NE(table.find("name_" + std::to_string(i)), nullptr);
}

}  // namespace
