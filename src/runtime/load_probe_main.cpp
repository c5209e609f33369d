// cudacore-load-probe TYPE FILE DEVICE: loads the code in FILE (a code type name: cubin, ptx,
// fatbin) on device DEVICE, and exits 0 when it loads, or prints the error and exits 1. Run by
// probe_load() (checked_load.cpp) in a process of its own, so that a driver crash on hostile
// code ends this process and not the caller's.
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/object_code.hpp"
#include "support/parent_death.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iterator>
#include <string>

int main(int argc, char** argv) {
    cudacore::detail::die_with_parent_from_environment();  // an orphaned probe loads for nobody
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s TYPE FILE DEVICE\n", argv[0]);
        return 2;
    }
    try {
        std::ifstream in(argv[2], std::ios::binary);
        std::string code((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (!in.good() && !in.eof()) throw cudacore::Error(std::string("cannot read ") + argv[2]);
        const auto code_object = cudacore::ObjectCode::from_bytes(
            cudacore::code_type_from_string(argv[1]), std::move(code), "probed");
        cudacore::Device(std::atoi(argv[3])).set_current();
        code_object.load();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
