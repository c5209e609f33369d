// Takes SIGINT, SIGTERM and SIGHUP as the CLI does (end_by_signal_after_removing_temporaries),
// makes DIR/tree (a folder with a sub-folder, files and a symbolic link to DIR/kept, which must
// survive), registers DIR/tree to be removed on those signals, writes DIR/ready, and waits to
// be signalled.
//
//   helper_removed_on_signal_probe DIR
#include "support/removed_on_signal.hpp"
#include "support/termination_signals.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: helper_removed_on_signal_probe DIR\n");
        return 2;
    }
    namespace fs = std::filesystem;
    if (!cudacore::detail::end_by_signal_after_removing_temporaries()) {
        std::fprintf(stderr, "no signal thread\n");
        return 3;
    }
    const fs::path dir = argv[1];
    const fs::path tree = dir / "tree";
    fs::create_directories(tree / "sub" / "deeper");
    for (const char* name : {"a", "sub/b", "sub/deeper/c"}) std::ofstream(tree / name) << "x";
    std::ofstream(dir / "kept") << "kept";
    fs::create_directory_symlink(dir, tree / "link-to-dir");
    const cudacore::detail::RemovedOnSignal registration(tree);
    if (!registration.registered()) return 4;
    std::ofstream(dir / "ready") << "ready";
    for (;;) ::pause();
}
