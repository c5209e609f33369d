// Takes SIGINT, SIGTERM and SIGHUP as the CLI does (end_by_signal_after_removing_temporaries),
// and makes and removes folders in DIR on four threads without end (support/owned_folder.hpp,
// a file written in each), as compiles make their header trace and PCH folders. Writes READY
// once each thread has made twenty, and goes on until signalled: whatever moment the signal
// comes, DIR must be left empty. With `files`, each thread writes a file of its own in DIR
// atomically (support/atomic_file.hpp, as the CLI writes its output) instead: DIR must then hold
// those files and no temporary file.
//
//   helper_owned_folders_on_signal_probe DIR READY [files]
#include "support/atomic_file.hpp"
#include "support/owned_folder.hpp"
#include "support/termination_signals.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
    if (argc != 3 && argc != 4) {
        std::fprintf(stderr, "usage: helper_owned_folders_on_signal_probe DIR READY [files]\n");
        return 2;
    }
    namespace fs = std::filesystem;
    if (!cudacore::detail::end_by_signal_after_removing_temporaries()) {
        std::fprintf(stderr, "no signal thread\n");
        return 3;
    }
    const fs::path dir = argv[1];
    const bool files = argc == 4 && std::string(argv[3]) == "files";
    constexpr int kThreads = 4;
    std::atomic<int> warmed_up{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int made = 0;; ++made) {
                try {
                    if (files) {
                        cudacore::detail::write_file_atomically(dir / ("file" + std::to_string(t)), "written", 0600);
                    } else {
                        const auto folder = cudacore::detail::OwnedFolder::make(dir, "cudacore-probe-");
                        std::ofstream(folder.path() / "trace.json") << "{}";
                    }
                } catch (const std::exception& e) {
                    std::fprintf(stderr, "%s\n", e.what());
                }
                if (made == 20) ++warmed_up;
            }
        });
    }
    while (warmed_up.load() < kThreads) std::this_thread::yield();
    std::ofstream(argv[2]) << "ready";
    for (auto& thread : threads) thread.join();  // never: the signal ends the process
}
