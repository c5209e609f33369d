// Loads mutated copies of a cubin with get_kernel, one after another, and reports each outcome
// on stdout, flushed, so that the parent can tell which mutant a crash happened on:
//   "<index> start" before the load, then "<index> <outcome>" after it, where outcome is
//   loaded | refused (InvalidArgumentError from validation) | no-kernel (InvalidArgumentError
//   from the lookup) | driver-error <STATUS_NAME> | other-error <what>.
// Usage: helper_mutated_cubin_loads CUBIN_FILE FIRST_INDEX END_INDEX KERNEL
// The mutants are test::mutated_elf(cubin, index): the same for the parent and every child.
#include "crafted_code.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/kernel.hpp"
#include "cudacore/object_code.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s CUBIN_FILE FIRST_INDEX END_INDEX KERNEL\n", argv[0]);
        return 2;
    }
    std::ifstream in(argv[1], std::ios::binary);
    const std::string original((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (original.empty()) {
        std::fprintf(stderr, "cannot read %s\n", argv[1]);
        return 2;
    }
    const unsigned first = static_cast<unsigned>(std::strtoul(argv[2], nullptr, 10));
    const unsigned end = static_cast<unsigned>(std::strtoul(argv[3], nullptr, 10));
    const std::string kernel = argv[4];
    for (unsigned index = first; index < end; ++index) {
        std::printf("%u start\n", index);
        std::fflush(stdout);
        std::string outcome;
        try {
            const auto code = cudacore::ObjectCode::from_cubin(cudacore::test::mutated_elf(original, index),
                                                               "mutant_" + std::to_string(index));
            code.get_kernel(kernel);
            outcome = "loaded";
        } catch (const cudacore::InvalidArgumentError& e) {
            outcome = std::string(e.what()).find("malformed") != std::string::npos ? "refused" : "no-kernel";
        } catch (const cudacore::DriverError& e) {
            outcome = "driver-error " + e.status_name();
        } catch (const std::exception& e) {
            outcome = std::string("other-error ") + e.what();
            for (char& c : outcome)
                if (c == '\n') c = ' ';
        }
        std::printf("%u %s\n", index, outcome.c_str());
        std::fflush(stdout);
    }
    return 0;
}
