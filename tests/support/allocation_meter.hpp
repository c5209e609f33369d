// What the decode-cost tests of each tier share: a meter of the memory the program allocates
// through operator new (allocation_meter.cpp replaces the global operator new and delete, so link
// it only into the programs that measure), and a valid serialized ObjectCode of many symbols.
#pragma once

#include <cstdint>
#include <string>

namespace cudacore::test {

constexpr long long MiB = 1 << 20;

// The most memory (bytes) allocated at once through operator new while it lives, above what was
// live when it began. One at a time.
class AllocationMeter {
public:
    AllocationMeter();
    long long peak() const;

private:
    long long start_;
};

// A valid serialized ObjectCode (PTX "x") of `symbols` symbols, each a 7-character name
// expression and an empty lowered name: 15 bytes each in the file.
std::string serialized_with_symbols(std::uint32_t symbols);

// 600,000 symbols: 9 MB in the file, about 75 MiB as a SymbolMap (past its 64 MiB bound). The
// issue's entries held 3.5 to 20 million.
constexpr std::uint32_t many_symbols = 600000;

}  // namespace cudacore::test
