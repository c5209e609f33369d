// cudacore's own events, through the public tracing API (cudacore/tracing.hpp): each in the
// "cudacore" domain, in its category, with that category's colour, so one kind of work looks the
// same wherever it shows on a timeline.
#pragma once

#include "cudacore/tracing.hpp"

#include <cstdint>
#include <iterator>
#include <optional>
#include <utility>

namespace cudacore::detail {

// How an event of `category` shows.
inline tracing::EventOptions cudacore_event(tracing::CudacoreCategory category,
                                            tracing::Payload payload = {}) noexcept {
    // Compile blue, link purple, cache green, load orange, graph teal, memory grey.
    static constexpr std::uint32_t colors[] = {0xFF808080, 0xFF2F6FD0, 0xFF8A4FC0, 0xFF3A9A3A,
                                               0xFFE08A1E, 0xFF1E9A9A, 0xFF707070};
    const auto index = static_cast<std::uint32_t>(category);
    return {.color = tracing::Color{colors[index < std::size(colors) ? index : 0]},
            .category = index,
            .payload = payload};
}

// A range of cudacore's own work. `message` is a string literal or a callable that makes the
// message (called only when a tool is attached). Without a tool, nothing but the flag is read
// (not even the domain).
class CudacoreRange {
public:
    template <class Message>
    CudacoreRange(tracing::CudacoreCategory category, Message&& message,
                  tracing::Payload payload = {}) noexcept {
        if (tracing::tool_attached()) [[unlikely]]
            range_.emplace(tracing::Domain::cudacore(), std::forward<Message>(message),
                           cudacore_event(category, payload));
    }

private:
    std::optional<tracing::Range> range_;
};

// A mark of cudacore's own (an outcome: a cache hit, what PCH did).
template <class Message>
void cudacore_mark(tracing::CudacoreCategory category, Message&& message,
                   tracing::Payload payload = {}) noexcept {
    if (!tracing::tool_attached()) return;
    tracing::mark(tracing::Domain::cudacore(), std::forward<Message>(message),
                  cudacore_event(category, payload));
}

}  // namespace cudacore::detail
