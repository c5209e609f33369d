// Uses ObjectCode's loading side with whatever driver the environment gives, and reports on
// stdout. Mode "no-driver": create and copy an ObjectCode, then get_kernel twice and load();
// prints each outcome on its own line ("create: ok", "get_kernel 1: NoDriverError: ...").
// Mode "threads": 16 threads released at once each call get_kernel on their own copy of one
// ObjectCode (the first lookup of all of them); prints how many threw, and each distinct message.
#include "cudacore/errors.hpp"
#include "cudacore/object_code.hpp"
#include "crafted_code.hpp"
#include "runtime/library_box.hpp"

#include <cstdio>
#include <cstring>
#include <functional>
#include <latch>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

void report(const char* step, const std::function<void()>& call) {
    try {
        call();
        std::printf("%s: ok\n", step);
    } catch (const cudacore::NoDriverError& e) {
        std::printf("%s: NoDriverError: %s\n", step, e.what());
    } catch (const cudacore::Error& e) {
        std::printf("%s: Error: %s\n", step, e.what());
    }
}

}  // namespace

// Mode "threads" (see the file comment).
int many_threads() {
    const auto code = cudacore::ObjectCode::from_cubin(cudacore::test::minimal_cubin(), "probe_code");
    constexpr int count = 16;
    std::latch start(count);
    std::mutex mutex;
    std::set<std::string> messages;
    int failed = 0;
    std::vector<std::thread> threads;
    for (int t = 0; t < count; ++t) {
        threads.emplace_back([&] {
            const cudacore::ObjectCode copy = code;
            start.arrive_and_wait();
            try {
                copy.get_kernel("saxpy");
            } catch (const cudacore::Error& e) {
                const std::lock_guard lock(mutex);
                ++failed;
                messages.insert(e.what());
            }
        });
    }
    for (auto& thread : threads) thread.join();
    std::printf("threads failed: %d of %d\n", failed, count);
    for (const std::string& message : messages) std::printf("message: %s\n", message.c_str());
    std::printf("library loads: %llu\n",
                static_cast<unsigned long long>(cudacore::detail::library_load_count()));
    return 0;
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "no-driver";
    if (std::strcmp(mode, "threads") == 0) return many_threads();
    if (std::strcmp(mode, "no-driver") != 0) return 2;

    auto code = cudacore::ObjectCode::from_cubin(cudacore::test::minimal_cubin(), "probe_code");
    report("create", [&] {
        cudacore::ObjectCode copy = code;
        cudacore::ObjectCode assigned = cudacore::ObjectCode::from_ptx(".version 8.0", "other");
        assigned = copy;
        if (!(assigned == code) || copy.is_loaded() || code.is_loaded())
            throw cudacore::Error("copies differ or claim to be loaded");
    });
    report("get_kernel 1", [&] { code.get_kernel("saxpy"); });
    cudacore::ObjectCode copy = code;
    report("get_kernel 2", [&] { copy.get_kernel("saxpy"); });
    report("load", [&] { code.load(); });
    std::printf("is_loaded: %s\n", code.is_loaded() ? "true" : "false");
    std::printf("library loads: %llu\n",
                static_cast<unsigned long long>(cudacore::detail::library_load_count()));
    return 0;
}
