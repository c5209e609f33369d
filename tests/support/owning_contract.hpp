// The contract every owning object keeps (cudacore/owning_handle.hpp, docs/errors-and-lifetime.md
// "Closing and resetting"), written once as a typed test over a traits struct per type:
//   using Object = ...;                         the owning type
//   static bool available(std::string& why);    false (and why) when it cannot be made here
//   static Object make();                       a new, open object
//   static void use(const Object& object);      a call that needs the resource open
//   static bool holds(const Object& object);    optional: whether it holds its resource
//                                               (default: handle() is not the empty value)
// Each test file instantiates it for its types:
//   INSTANTIATE_TYPED_TEST_SUITE_P(Gpu, OwningContract, ::testing::Types<StreamTraits, ...>);
#pragma once

#include "test_support.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/owning_handle.hpp"

#include <concepts>
#include <functional>
#include <string>
#include <utility>

namespace cudacore::test {

template <class Traits>
class OwningContract : public ::testing::Test {
protected:
    using Object = typename Traits::Object;

    void SetUp() override {
        std::string why;
        if (!Traits::available(why)) GTEST_SKIP() << why;
    }

    // The message use() throws: InvalidArgumentError, or a failure naming what happened.
    static std::string use_error(const Object& object) {
        try {
            Traits::use(object);
        } catch (const InvalidArgumentError& error) {
            return error.what();
        } catch (const std::exception& error) {
            return std::string("another exception: ") + error.what();
        }
        return "nothing thrown";
    }
    static std::string closed_words() {
        return std::string(" is closed (") + owning_names<Object>.type + "::close was called on it or on a copy)";
    }
    static std::string empty_words() {
        return std::string("the ") + owning_names<Object>.type + " object is empty (moved from or reset";
    }
    static bool holds(const Object& object) {
        if constexpr (requires { Traits::holds(object); })
            return Traits::holds(object);
        else
            return object.handle() != decltype(object.handle()){};
    }
};

TYPED_TEST_SUITE_P(OwningContract);

// close() ends the resource: the object reads as closed and its calls name it as closed.
TYPED_TEST_P(OwningContract, CloseEndsItAndLaterCallsSaySo) {
    using Traits = TypeParam;
    auto object = Traits::make();
    EXPECT_FALSE(object.is_closed());
    EXPECT_TRUE(this->holds(object));
    EXPECT_NO_THROW(Traits::use(object));
    object.close();
    EXPECT_TRUE(object.is_closed());
    EXPECT_FALSE(this->holds(object));
    EXPECT_NE(this->use_error(object).find(this->closed_words()), std::string::npos)
        << this->use_error(object);
    EXPECT_NO_THROW(object.close());  // closing again does nothing
    EXPECT_TRUE(object.is_closed());
}

// Every copy, made before or after, sees the close.
TYPED_TEST_P(OwningContract, EveryCopySeesTheClose) {
    using Traits = TypeParam;
    auto object = Traits::make();
    auto before = object;
    object.close();
    auto after = object;
    for (const auto* copy : {&before, &after}) {
        EXPECT_TRUE(copy->is_closed());
        EXPECT_FALSE(this->holds(*copy));
        EXPECT_NE(this->use_error(*copy).find(this->closed_words()), std::string::npos)
            << this->use_error(*copy);
    }
    before.close();  // through a copy: nothing more
    EXPECT_TRUE(object.is_closed());
}

// reset() drops one share: this object is empty, the copies keep the resource.
TYPED_TEST_P(OwningContract, ResetDropsOneShare) {
    using Traits = TypeParam;
    auto object = Traits::make();
    auto copy = object;
    const auto handle = object.handle();
    object.reset();
    EXPECT_FALSE(object.is_closed());
    EXPECT_FALSE(this->holds(object));
    EXPECT_NE(this->use_error(object).find(this->empty_words()), std::string::npos)
        << this->use_error(object);
    EXPECT_FALSE(copy.is_closed());
    EXPECT_TRUE(this->holds(copy));
    EXPECT_EQ(copy.handle(), handle);
    EXPECT_NO_THROW(Traits::use(copy));
    object.close();  // an empty object: nothing to close
    EXPECT_FALSE(object.is_closed());
    EXPECT_FALSE(copy.is_closed());
}

// A moved-from object is empty; assigning an open object makes it that object, closed or not.
TYPED_TEST_P(OwningContract, MovedFromIsEmptyAndAssignmentReopens) {
    using Traits = TypeParam;
    auto object = Traits::make();
    auto moved = std::move(object);
    EXPECT_FALSE(object.is_closed());  // NOLINT(bugprone-use-after-move): what it reads as
    EXPECT_FALSE(this->holds(object));
    EXPECT_NE(this->use_error(object).find(this->empty_words()), std::string::npos)
        << this->use_error(object);
    EXPECT_NO_THROW(Traits::use(moved));
    moved.close();
    object = Traits::make();
    moved = object;
    EXPECT_FALSE(moved.is_closed());
    EXPECT_NO_THROW(Traits::use(moved));
}

REGISTER_TYPED_TEST_SUITE_P(OwningContract, CloseEndsItAndLaterCallsSaySo, EveryCopySeesTheClose,
                            ResetDropsOneShare, MovedFromIsEmptyAndAssignmentReopens);

// The types with operator== (Program and Linker have none) are instantiated for this one too:
//   INSTANTIATE_TYPED_TEST_SUITE_P(Gpu, OwningEquality, ::testing::Types<StreamTraits, ...>);
template <class Traits>
using OwningEquality = OwningContract<Traits>;

TYPED_TEST_SUITE_P(OwningEquality);

// Copies are the same object for equality and hashing; another object is not.
TYPED_TEST_P(OwningEquality, CopiesCompareAndHashEqual) {
    using Traits = TypeParam;
    using Object = typename Traits::Object;
    static_assert(std::equality_comparable<Object>, "instantiate OwningEquality only for types with operator==");
    auto object = Traits::make();
    auto copy = object;
    auto other = Traits::make();
    EXPECT_TRUE(object == copy);
    EXPECT_EQ(std::hash<Object>{}(object), std::hash<Object>{}(copy));
    EXPECT_FALSE(object == other);
}

REGISTER_TYPED_TEST_SUITE_P(OwningEquality, CopiesCompareAndHashEqual);

}  // namespace cudacore::test
