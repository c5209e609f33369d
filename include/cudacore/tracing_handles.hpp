/// @file
/// Tracing by handle: a range started in one place and ended in another (another thread, or
/// overlapping others), and names for OS threads. tracing.hpp has the scoped Range and mark().
///
///     tracing::RangeId request = tracing::start_range(domain, "request 42");  // one thread
///     tracing::end_range(request);                        // the same or another, any time later
///     tracing::name_current_thread("io worker");
#pragma once

#include "cudacore/tracing.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace cudacore::tracing {

class RangeId;

namespace detail {
RangeId start(const Domain& domain, std::string_view message, const EventOptions& options) noexcept;
}  // namespace detail

/// A range start_range started: a plain value (end it once); empty by default and without a
/// tool. Nothing here throws; any thread, but one RangeId is not ended from two at once.
class RangeId {
public:
    /// No range.
    constexpr RangeId() noexcept = default;
    /// Whether it names a started range that was not ended through this object.
    constexpr bool is_set() const noexcept { return domain_ != nullptr; }
    /// NVTX's id (nvtxRangeId_t), 0 when empty.
    constexpr std::uint64_t value() const noexcept { return id_; }

private:
    friend RangeId detail::start(const Domain&, std::string_view, const EventOptions&) noexcept;
    friend void end_range(RangeId& range) noexcept;
    constexpr RangeId(const detail::DomainState* domain, std::uint64_t id) noexcept
        : domain_(domain), id_(id) {}
    const detail::DomainState* domain_ = nullptr;
    std::uint64_t id_ = 0;
};

/// Starts a range named `message` in `domain`, not tied to a scope or a thread.
inline RangeId start_range(const Domain& domain, std::string_view message,
                           const EventOptions& options = detail::no_options) noexcept {
    if (tool_attached()) [[unlikely]] return detail::start(domain, message, options);
    return {};
}

/// A range named by what `make_message()` returns, called only when a tool is attached.
template <MessageMaker F>
RangeId start_range(const Domain& domain, F&& make_message,
                    const EventOptions& options = detail::no_options) noexcept {
    if (tool_attached()) [[unlikely]] {
        try {
            return detail::start(domain, make_message(), options);
        } catch (...) {
            // No message, no range.
        }
    }
    return {};
}

/// Ends `range`, from any thread, and empties it; an empty RangeId does nothing.
void end_range(RangeId& range) noexcept;

/// Names the calling OS thread `name` on the tool's timeline.
void name_current_thread(std::string_view name) noexcept;

/// Names OS thread `thread_id` (a Linux thread id, as gettid returns) `name`.
void name_os_thread(std::uint32_t thread_id, std::string_view name) noexcept;

}  // namespace cudacore::tracing
