// For helper programs run without a driver: calls an entry point and prints how it ended,
// "NAME: NoDriverError: MESSAGE" as expected, else "NAME: UNEXPECTED ..." for the test to catch.
#pragma once

#include "cudacore/errors.hpp"

#include <cstdio>
#include <exception>
#include <functional>

namespace cudacore::test {

inline void expect_no_driver(const char* name, const std::function<void()>& call) {
    try {
        call();
        std::printf("%s: UNEXPECTED success\n", name);
    } catch (const NoDriverError& e) {
        std::printf("%s: NoDriverError: %s\n", name, e.what());
    } catch (const std::exception& e) {
        std::printf("%s: UNEXPECTED %s\n", name, e.what());
    }
}

}  // namespace cudacore::test
