#include "errors/driver_log.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace cudacore::detail {

namespace {

// Plain data, zero-initialised, trivially destructible: usable from the callback at any time,
// thread exit included, and nothing is allocated until a failure reads it.
struct DriverLogRing {
    char lines[kDriverLogLines][kDriverLogLineBytes];
    std::size_t sizes[kDriverLogLines];
    std::size_t count;    // lines written since the last take (may exceed kDriverLogLines)
};

thread_local DriverLogRing ring{};

}  // namespace

void driver_log_callback(void*, CUlogLevel level, char* message, std::size_t length) noexcept {
    // Warnings come with calls that succeed too, and nothing reads the ring on success: kept,
    // they would reach the next unrelated failure.
    if (!message || level != CU_LOG_LEVEL_ERROR) return;
    length = std::min(length, std::strlen(message));
    while (length > 0 && (message[length - 1] == '\n' || message[length - 1] == '\r' ||
                          message[length - 1] == ' '))
        --length;
    if (length == 0) return;
    const std::size_t slot = ring.count % kDriverLogLines;
    const std::size_t kept = std::min(length, kDriverLogLineBytes);
    std::memcpy(ring.lines[slot], message, kept);
    ring.sizes[slot] = kept;
    ++ring.count;
}

std::vector<std::string> take_driver_log() {
    const std::size_t count = ring.count;
    ring.count = 0;
    std::vector<std::string> out;
    if (count == 0) return out;
    const std::size_t held = std::min(count, kDriverLogLines);
    out.reserve(held + 1);
    if (count > held) {
        std::string dropped = std::to_string(count - held);  // appended, not '"(" + ...': GCC 12
        dropped.insert(0, 1, '(');                           // warns falsely (-Wrestrict) there
        out.push_back(std::move(dropped) + " earlier lines dropped)");
    }
    for (std::size_t i = count - held; i < count; ++i) {
        const std::size_t slot = i % kDriverLogLines;
        std::string line(ring.lines[slot], ring.sizes[slot]);
        if (ring.sizes[slot] == kDriverLogLineBytes) line += "...";
        out.push_back(std::move(line));
    }
    return out;
}

void discard_driver_log() noexcept { ring.count = 0; }

std::string describe_driver_log(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& line : lines) {
        out += out.empty() ? "; driver log: " : " | ";
        out += line;
    }
    return out;
}

}  // namespace cudacore::detail
