// support/owned_folder: a folder of this process's own in a shared folder, locked while it is
// used and reclaimed by others only once its lock is free. The races it closes are shown with
// real processes in headers/pch_test.cpp; these are its rules, one at a time.
#include "after_mkdtemp.hpp"
#include "test_support.hpp"

#include "support/owned_folder.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace {

using cudacore::detail::OwnedFolder;
using cudacore::detail::reclaim_abandoned_folders;

// Whether another open file description can take the folder's lock now (what a reclaimer does).
bool lock_is_free(const std::filesystem::path& folder) {
    const int fd = ::open((folder / "owner.lock").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
    ::close(fd);
    return free;
}

TEST(OwnedFolder, IsMadeLockedUnderItsPublicName) {
    cudacore::test::TempDir parent;
    OwnedFolder folder = OwnedFolder::make(parent.path(), "cudacore-x-");
    const std::string name = folder.path().filename().string();
    EXPECT_EQ(folder.path().parent_path(), parent.path());
    ASSERT_EQ(name.size(), std::string("cudacore-x-").size() + 6) << name;
    EXPECT_TRUE(name.starts_with("cudacore-x-"));
    EXPECT_FALSE(lock_is_free(folder.path()));
    // Nothing else is left: the private name is gone.
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(parent.path()), {}), 1);
}

TEST(OwnedFolder, ALiveFolderIsKeptAndAnAbandonedOneRemovedWithEverythingInIt) {
    cudacore::test::TempDir parent;
    OwnedFolder live = OwnedFolder::make(parent.path(), "cudacore-x-");
    OwnedFolder abandoned = OwnedFolder::make(parent.path(), "cudacore-x-");
    const std::filesystem::path abandoned_path = abandoned.path();
    std::filesystem::create_directories(abandoned_path / "inner" / "deeper");
    cudacore::test::write_file(abandoned_path / "inner" / "deeper" / "file", "x");
    cudacore::test::write_file(live.path() / "file", "x");
    abandoned.release();  // its lock is given back, the folder stays: as a killed owner leaves it
    ASSERT_TRUE(lock_is_free(abandoned_path));

    reclaim_abandoned_folders(parent.path(), "cudacore-x-");
    EXPECT_FALSE(std::filesystem::exists(abandoned_path));
    EXPECT_TRUE(std::filesystem::exists(live.path() / "file"));
    EXPECT_FALSE(lock_is_free(live.path()));
}

// A folder under its private name whose lock is free or not made: its maker may be about to
// lock it, so it goes only once kUnfinishedFolderAge old; one whose lock is held never.
TEST(OwnedFolder, UnfinishedFoldersGoOnlyOnceOldAndUnlocked) {
    cudacore::test::TempDir parent;
    const auto aged = [](const std::filesystem::path& path, std::chrono::seconds age) {
        std::filesystem::last_write_time(path, std::filesystem::file_time_type::clock::now() - age);
    };
    const std::filesystem::path fresh = parent.path() / "cudacore-x-new-fresh0";
    const std::filesystem::path stale = parent.path() / "cudacore-x-new-stale0";
    const std::filesystem::path no_lock = parent.path() / "cudacore-x-new-nolock";
    const std::filesystem::path held = parent.path() / "cudacore-x-new-held00";
    for (const auto& folder : {fresh, stale, held}) {
        std::filesystem::create_directory(folder);
        cudacore::test::write_file(folder / "owner.lock", "");
    }
    std::filesystem::create_directory(no_lock);
    const int lock = ::open((held / "owner.lock").c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(lock, 0);
    ASSERT_EQ(::flock(lock, LOCK_EX), 0);
    aged(fresh, std::chrono::seconds(-300));  // young for minutes, however slow this machine
    for (const auto& folder : {stale, no_lock, held}) aged(folder, std::chrono::seconds(60));

    reclaim_abandoned_folders(parent.path(), "cudacore-x-");
    EXPECT_TRUE(std::filesystem::exists(fresh / "owner.lock"));
    EXPECT_FALSE(std::filesystem::exists(stale));
    EXPECT_FALSE(std::filesystem::exists(no_lock));
    EXPECT_TRUE(std::filesystem::exists(held / "owner.lock"));
    ::close(lock);
}

// A maker stalled between mkdtemp and its next call for longer than kUnfinishedFolderAge (as
// SIGSTOP holds it) finds its folder reclaimed by another process meanwhile: it makes another,
// as the header says, instead of failing with open's ENOENT.
TEST(OwnedFolder, AMakerWhoseFolderWasReclaimedWhileItStalledStartsAgain) {
    cudacore::test::TempDir parent;
    std::vector<std::filesystem::path> reclaimed;
    const cudacore::test::AfterMkdtemp stall("cudacore-x-new-", [&](const std::filesystem::path& made) {
        if (!reclaimed.empty()) return;  // the first folder only
        cudacore::test::age_folder(made, std::chrono::seconds(60));
        reclaim_abandoned_folders(parent.path(), "cudacore-x-");  // another process's reclaim
        if (!std::filesystem::exists(made)) reclaimed.push_back(made);
    });
    OwnedFolder folder = OwnedFolder::make(parent.path(), "cudacore-x-");
    ASSERT_EQ(reclaimed.size(), 1u) << "the reclaimer left the stalled folder";
    EXPECT_EQ(stall.runs(), 2);
    EXPECT_FALSE(lock_is_free(folder.path()));
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(parent.path()), {}), 1);
}

TEST(OwnedFolder, OtherNamesAndLinksAreNeverTouched) {
    cudacore::test::TempDir parent, elsewhere;
    OwnedFolder target = OwnedFolder::make(elsewhere.path(), "cudacore-x-");
    cudacore::test::write_file(target.path() / "keep", "x");
    const std::filesystem::path target_path = target.path();
    target.release();  // free lock: removable where it is, never through a link to it
    std::filesystem::create_directory_symlink(target_path, parent.path() / "cudacore-x-link00");
    std::filesystem::create_directory(parent.path() / "cudacore-y-abcdef");
    cudacore::test::write_file(parent.path() / "cudacore-y-abcdef" / "owner.lock", "");
    std::filesystem::create_directory(parent.path() / "cudacore-x-toolong");
    cudacore::test::write_file(parent.path() / "cudacore-x-toolong" / "owner.lock", "");

    reclaim_abandoned_folders(parent.path(), "cudacore-x-");
    EXPECT_TRUE(std::filesystem::exists(target_path / "keep"));
    EXPECT_TRUE(std::filesystem::is_symlink(parent.path() / "cudacore-x-link00"));
    EXPECT_TRUE(std::filesystem::exists(parent.path() / "cudacore-y-abcdef"));
    EXPECT_TRUE(std::filesystem::exists(parent.path() / "cudacore-x-toolong"));
}

TEST(OwnedFolder, RemoveTakesTheFolderAndGivesTheLockBack) {
    cudacore::test::TempDir parent;
    OwnedFolder folder = OwnedFolder::make(parent.path(), "cudacore-x-");
    std::filesystem::create_directory(folder.path() / "sub");
    cudacore::test::write_file(folder.path() / "sub" / "f", "x");
    const std::filesystem::path path = folder.path();
    folder.remove();
    EXPECT_TRUE(folder.empty());
    EXPECT_FALSE(std::filesystem::exists(path));
    folder.remove();  // idempotent
    {
        OwnedFolder scoped = OwnedFolder::make(parent.path(), "cudacore-x-");
        OwnedFolder moved = std::move(scoped);
        EXPECT_TRUE(scoped.empty());
        EXPECT_FALSE(moved.empty());
    }
    EXPECT_TRUE(std::filesystem::is_empty(parent.path())) << "the destructor removes it";
}

TEST(OwnedFolder, AMissingParentIsAnErrorNamingIt) {
    try {
        OwnedFolder::make("/nonexistent-cudacore-parent", "cudacore-x-");
        FAIL() << "no error";
    } catch (const std::system_error& e) {
        EXPECT_NE(std::string(e.what()).find("mkdtemp '/nonexistent-cudacore-parent/cudacore-x-new-"),
                  std::string::npos)
            << e.what();
        EXPECT_EQ(e.code().value(), ENOENT);
    }
}

}  // namespace
