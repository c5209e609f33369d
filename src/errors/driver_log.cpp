#include "errors/driver_log.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

namespace cudacore::detail {

namespace {

// Plain data, trivially destructible: usable from the callback at any time, thread exit
// included.
struct DriverLogRing {
    char lines[kDriverLogLines][kDriverLogLineBytes];
    std::size_t sizes[kDriverLogLines];
    std::size_t count;    // lines written since the last take (may exceed kDriverLogLines)
};

// This thread's ring, made at its first error line (4 KB that a thread whose calls all succeed
// never takes, and no more than a pointer of TLS: the library loads with dlopen), freed at thread
// exit by an owner that only that first line builds. After that, lines are dropped: the thread
// is exiting, and nothing reports a failure then.
struct RingSlot {
    DriverLogRing* ring = nullptr;
    bool gone = false;
};
thread_local RingSlot ring_slot;

struct RingOwner {
    ~RingOwner() {
        delete ring_slot.ring;
        ring_slot.ring = nullptr;
        ring_slot.gone = true;
    }
};

// The calling thread's ring, made if need be; null when it cannot be (out of memory, exiting).
DriverLogRing* ring_for_writing() noexcept {
    if (ring_slot.ring || ring_slot.gone) return ring_slot.ring;
    static thread_local RingOwner owner;  // registered before the ring exists: never leaked
    (void)owner;
    ring_slot.ring = new (std::nothrow) DriverLogRing{};
    return ring_slot.ring;
}

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
    DriverLogRing* const held = ring_for_writing();
    if (!held) return;
    DriverLogRing& ring = *held;
    const std::size_t slot = ring.count % kDriverLogLines;
    const std::size_t kept = std::min(length, kDriverLogLineBytes);
    std::memcpy(ring.lines[slot], message, kept);
    ring.sizes[slot] = kept;
    ++ring.count;
}

namespace {

constexpr std::string_view kReturnLine = "Returning ";
constexpr std::string_view kFrom = ") from ";

// The entry point a "Returning N (NAME) from ENTRY_POINT" line names, or "" for other lines.
std::string_view returned_from(std::string_view line) {
    if (!line.starts_with(kReturnLine)) return {};
    const std::size_t from = line.rfind(kFrom);
    return from == std::string_view::npos ? std::string_view{} : line.substr(from + kFrom.size());
}

// Whether the driver's entry point is `call`, perhaps versioned or per-thread ("_v2", "_ptsz").
bool names_call(std::string_view entry_point, std::string_view call) {
    return entry_point.starts_with(call) &&
           (entry_point.size() == call.size() || entry_point[call.size()] == '_');
}

}  // namespace

std::vector<std::string> take_driver_log(std::string_view call) {
    if (!ring_slot.ring) return {};
    DriverLogRing& ring = *ring_slot.ring;
    const std::size_t count = ring.count;
    ring.count = 0;
    std::vector<std::string> out;
    if (count == 0) return out;
    const std::size_t held = std::min(count, kDriverLogLines);
    // Which of the held lines are this failure's: after the last "Returning" line that ends
    // another call's failure.
    std::size_t first = count - held;
    std::size_t last = count;  // one past
    if (!call.empty()) {
        std::size_t ends = count;  // the last return line, if any
        for (std::size_t i = count; i-- > count - held;) {
            const std::size_t slot = i % kDriverLogLines;
            if (!returned_from({ring.lines[slot], ring.sizes[slot]}).empty()) {
                ends = i;
                break;
            }
        }
        if (ends != count) {
            const std::size_t slot = ends % kDriverLogLines;
            if (ends + 1 < count || !names_call(returned_from({ring.lines[slot], ring.sizes[slot]}), call)) {
                first = ends + 1;  // that group is another failure's; keep what came after it
            } else {
                for (std::size_t i = ends; i-- > first;) {  // this failure's group starts after the
                    const std::size_t earlier = i % kDriverLogLines;  // return line before it
                    if (!returned_from({ring.lines[earlier], ring.sizes[earlier]}).empty()) {
                        first = i + 1;
                        break;
                    }
                }
                last = ends + 1;
            }
        }
    }
    out.reserve(last - first + 1);
    if (first == count - held && count > held) {
        std::string dropped = std::to_string(count - held);  // appended, not '"(" + ...': GCC 12
        dropped.insert(0, 1, '(');                           // warns falsely (-Wrestrict) there
        out.push_back(std::move(dropped) + " earlier lines dropped)");
    }
    for (std::size_t i = first; i < last; ++i) {
        const std::size_t slot = i % kDriverLogLines;
        std::string line(ring.lines[slot], ring.sizes[slot]);
        if (ring.sizes[slot] == kDriverLogLineBytes) line += "...";
        out.push_back(std::move(line));
    }
    return out;
}

void discard_driver_log() noexcept {
    if (ring_slot.ring) ring_slot.ring->count = 0;
}

std::string describe_driver_log(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& line : lines) {
        out += out.empty() ? "; driver log: " : " | ";
        out += line;
    }
    return out;
}

}  // namespace cudacore::detail
