// The registry of temporaries removed on SIGINT/SIGTERM/SIGHUP: what is registered is removed
// (folders with everything in them, links not followed), what was unregistered is not, and a
// program that takes the signals as the CLI does removes its temporaries and ends by the signal.
#include "support/removed_on_signal.hpp"
#include "signal_test_process.hpp"
#include "test_support.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

namespace {

namespace fs = std::filesystem;
using cudacore::detail::RemovedOnSignal;
using cudacore::detail::remove_registered_paths;
using cudacore::test::TempDir;

void make_tree(const fs::path& root) {
    fs::create_directories(root / "a" / "b");
    std::ofstream(root / "f") << "1";
    std::ofstream(root / "a" / "b" / "g") << "2";
}

TEST(RemovedOnSignal, RemovesWhatIsRegisteredAndNothingElse) {
    TempDir dir;
    const fs::path kept = dir.path() / "kept";
    std::ofstream(kept) << "kept";
    const fs::path registered = dir.path() / "registered";
    const fs::path unregistered = dir.path() / "unregistered";
    make_tree(registered);
    make_tree(unregistered);
    // A link inside a registered folder is removed, never followed.
    fs::create_directory_symlink(dir.path(), registered / "a" / "to-parent");
    std::ofstream(dir.path() / "file") << "a registered file";

    RemovedOnSignal folder(registered);
    RemovedOnSignal file(dir.path() / "file");
    ASSERT_TRUE(folder.registered());
    ASSERT_TRUE(file.registered());
    {
        RemovedOnSignal gone(unregistered);
        ASSERT_TRUE(gone.registered());
    }  // unregistered here
    const int before = cudacore::detail::registered_path_count();
    EXPECT_GE(before, 2);
    EXPECT_EQ(remove_registered_paths(), before);
    EXPECT_FALSE(fs::exists(registered));
    EXPECT_FALSE(fs::exists(dir.path() / "file"));
    EXPECT_TRUE(fs::exists(unregistered / "a" / "b" / "g"));
    EXPECT_TRUE(fs::exists(kept));
    // Taken by the removal: not registered any more, and unregistering them later is harmless.
    EXPECT_EQ(cudacore::detail::registered_path_count(), before - 2);
}

TEST(RemovedOnSignal, ManyThreadsRegisterAndUnregisterAtOnce) {
    TempDir dir;
    const int before = cudacore::detail::registered_path_count();
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 2000; ++i) {
                RemovedOnSignal a(dir.path() / ("t" + std::to_string(t)));
                RemovedOnSignal b(std::move(a));
                EXPECT_FALSE(a.registered());
                EXPECT_TRUE(b.registered());
            }
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(cudacore::detail::registered_path_count(), before);
}

TEST(RemovedOnSignal, APathTooLongOrAFullTableRegistersNothing) {
    EXPECT_FALSE(RemovedOnSignal(fs::path(std::string(5000, 'x'))).registered());
    std::vector<RemovedOnSignal> all;
    for (int i = 0; i < 300; ++i) all.emplace_back(fs::path("/nonexistent/" + std::to_string(i)));
    const auto held = std::count_if(all.begin(), all.end(), [](const auto& r) { return r.registered(); });
    EXPECT_LE(held, 256);
    EXPECT_GE(held, 200);
    all.clear();
    EXPECT_TRUE(RemovedOnSignal(fs::path("/nonexistent/again")).registered());
}

// A program taking the signals as the CLI does: the registered folder is gone, what its link
// pointed at is kept, and the program ended by the signal itself. Each signal, several times.
TEST(RemovedOnSignal, AProgramEndsByTheSignalAfterRemovingItsTemporaries) {
    int runs = 0;
    for (const int signal : {SIGTERM, SIGINT, SIGHUP}) {
        for (int round = 0; round < 5; ++round) {
            TempDir dir;
            auto process = cudacore::test::start_signal_test_process(
                {cudacore::test::helper_path("removed_on_signal_probe").string(), dir.path().string()},
                {}, (dir.path() / "output").string());
            const pid_t pid = process.pid;
            ASSERT_GT(pid, 0);
            ASSERT_TRUE(cudacore::test::wait_until([&] { return fs::exists(dir.path() / "ready"); },
                                                   std::chrono::seconds(30)));
            ASSERT_TRUE(fs::exists(dir.path() / "tree" / "sub" / "deeper" / "c"));
            ::kill(pid, signal);
            EXPECT_EQ(cudacore::test::finish_signal_test_process(process), -signal) << strsignal(signal);
            EXPECT_FALSE(fs::exists(dir.path() / "tree")) << strsignal(signal);
            EXPECT_TRUE(fs::exists(dir.path() / "kept"));
            ++runs;
        }
    }
    EXPECT_EQ(runs, 15);
}

}  // namespace
