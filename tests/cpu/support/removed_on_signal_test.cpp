// The registry of temporaries removed on the signals the CLI takes (SIGINT, SIGTERM, SIGHUP...): what is registered is removed
// (folders with everything in them, links not followed), what was unregistered is not, and a
// program that takes the signals as the CLI does removes its temporaries and ends by the signal.
#include "support/removed_on_signal.hpp"
#include "signal_test_process.hpp"
#include "test_support.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

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
    // A removal is for a process that is ending (nothing is registered after it): in a child.
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        const bool removed_all = remove_registered_paths() == before;
        // Taken by the removal: not registered any more; and nothing more is registered.
        const bool none_left = cudacore::detail::registered_path_count() == 0;
        const bool ended = !RemovedOnSignal(dir.path() / "after").registered();
        ::_exit(removed_all && none_left && ended ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    EXPECT_FALSE(fs::exists(registered));
    EXPECT_FALSE(fs::exists(dir.path() / "file"));
    EXPECT_TRUE(fs::exists(unregistered / "a" / "b" / "g"));
    EXPECT_TRUE(fs::exists(kept));
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
    for (const int signal : {SIGTERM, SIGINT, SIGHUP, SIGALRM, SIGUSR1, SIGUSR2}) {
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
    EXPECT_EQ(runs, 30);
}

// Runs helper_owned_folders_on_signal_probe (with `mode`, "" or "files") in a folder of its own
// until it is ready, sends `signal`, and returns the names left in the folder it worked in.
std::vector<std::string> left_after_signal(int signal, const std::string& mode) {
    TempDir dir;
    const fs::path made = dir.path() / "made";
    fs::create_directory(made);
    std::vector<std::string> command{cudacore::test::helper_path("owned_folders_on_signal_probe").string(),
                                     made.string(), (dir.path() / "ready").string()};
    if (!mode.empty()) command.push_back(mode);
    auto process = cudacore::test::start_signal_test_process(command, {}, (dir.path() / "output").string());
    EXPECT_GT(process.pid, 0);
    if (process.pid <= 0) return {};
    EXPECT_TRUE(cudacore::test::wait_until([&] { return fs::exists(dir.path() / "ready"); }, std::chrono::seconds(60)));
    ::kill(process.pid, signal);
    EXPECT_EQ(cudacore::test::finish_signal_test_process(process), -signal) << strsignal(signal);
    std::vector<std::string> left;
    for (const auto& entry : fs::directory_iterator(made)) left.push_back(entry.path().filename());
    return left;
}

// Folders being made on other threads when the signal comes are removed too: each is registered
// in one step with its making, and none is made once the removal has begun. Many times, since
// the moment the signal meets is different each time.
TEST(RemovedOnSignal, FoldersBeingMadeWhenTheSignalComesAreRemovedToo) {
    int runs = 0;
    for (const int signal : {SIGTERM, SIGINT, SIGHUP}) {
        for (int round = 0; round < 10; ++round) {
            const std::vector<std::string> left = left_after_signal(signal, "");
            EXPECT_TRUE(left.empty()) << strsignal(signal) << ", round " << round << ": " << left.size()
                                      << " left, the first " << left.front();
            ++runs;
        }
    }
    EXPECT_EQ(runs, 30);
}

// Files being written atomically (a temporary file renamed into place, as the CLI writes its
// output) when the signal comes leave no temporary file: each is made inside its registration.
TEST(RemovedOnSignal, FilesBeingWrittenWhenTheSignalComesLeaveNoTemporaryFile) {
    int runs = 0;
    for (const int signal : {SIGTERM, SIGINT, SIGHUP}) {
        for (int round = 0; round < 20; ++round) {
            const std::vector<std::string> left = left_after_signal(signal, "files");
            std::vector<std::string> temporaries;
            for (const std::string& name : left)
                if (name.find(".tmp-") != std::string::npos) temporaries.push_back(name);
            EXPECT_TRUE(temporaries.empty()) << strsignal(signal) << ", round " << round << ": "
                                             << temporaries.size() << " left, the first " << temporaries.front();
            EXPECT_NE(std::find(left.begin(), left.end(), "file0"), left.end());
            ++runs;
        }
    }
    EXPECT_EQ(runs, 60);
}

}  // namespace
