// Stream attributes (stream_attributes.hpp): one cuStreamGetAttribute / cuStreamSetAttribute
// each, checked before the driver where the driver's own answer would not say why.
#include "cudacore/stream_attributes.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "runtime/default_stream_scope.hpp"
#include "runtime/runtime_handles.hpp"
#include "runtime/stream_description.hpp"
#include "support/box_access.hpp"
#include "support/enum_text.hpp"

#include <cstdio>
#include <string>

namespace cudacore {

namespace {

CUstreamAttrValue get_attribute(const Stream& stream, CUstreamAttrID id, const char* attribute,
                      const char* operation) {
    const detail::StreamBox& box = *detail::open_box_of(stream, operation);
    CUstreamAttrValue value{};
    const detail::DefaultStreamScope in_context(box);
    detail::check(detail::driver().cuStreamGetAttribute(box.handle, id, &value),
                  "cuStreamGetAttribute", [&] { return std::string(attribute) + " of " + detail::describe_stream(box); });
    return value;
}

void set_attribute(const Stream& stream, CUstreamAttrID id, const CUstreamAttrValue& value,
         const char* attribute, const char* operation) {
    const detail::StreamBox& box = *detail::open_box_of(stream, operation);
    const detail::DefaultStreamScope in_context(box);
    detail::check(detail::driver().cuStreamSetAttribute(box.handle, id, &value),
                  "cuStreamSetAttribute", [&] { return std::string(attribute) + " of " + detail::describe_stream(box); });
}

int device_attribute(const detail::ContextBox& context, CUdevice_attribute attribute,
                     const char* name) {
    int value = 0;
    detail::check(detail::driver().cuDeviceGetAttribute(&value, attribute, context.device),
                  "cuDeviceGetAttribute", [&] {
                      return std::string(name) + " of device " + std::to_string(context.ordinal);
                  });
    return value;
}

// Why `window` cannot be set on `box`'s stream, or empty.
std::string window_problem(const detail::StreamBox& box, const CUaccessPolicyWindow& window) {
    const detail::ContextBox& context = *box.context;
    if (device_attribute(context, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE,
                         "MAX_PERSISTING_L2_CACHE_SIZE") == 0)
        return "device " + std::to_string(context.ordinal) + " has no persisting L2 cache";
    if (window.base_ptr == nullptr || window.num_bytes == 0)
        return "the window's base_ptr is null or its num_bytes is 0 (clear a window with "
               "clear_access_policy_window)";
    const int most = device_attribute(context, CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE,
                                      "MAX_ACCESS_POLICY_WINDOW_SIZE");
    if (window.num_bytes > static_cast<std::size_t>(most))
        return "the window's " + std::to_string(window.num_bytes) +
               " bytes are over the device's largest window of " + std::to_string(most) +
               " bytes (CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE)";
    if (!(window.hitRatio >= 0.0f && window.hitRatio <= 1.0f))
        return "the window's hitRatio " + std::to_string(window.hitRatio) +
               " is not within [0, 1]";
    return {};
}

}  // namespace

std::string to_string(SynchronizationPolicy policy) {
    static constexpr detail::EnumText<SynchronizationPolicy> names[] = {
        {SynchronizationPolicy::automatic, "automatic"},
        {SynchronizationPolicy::spin, "spin"},
        {SynchronizationPolicy::yield, "yield"},
        {SynchronizationPolicy::blocking_sync, "blocking_sync"},
    };
    return detail::enum_text(policy, names, "SynchronizationPolicy");
}

namespace {

// The policy a stream of `context` waits under when none was set on it: the context's
// CU_CTX_SCHED_* flag.
SynchronizationPolicy context_policy(const detail::ContextBox& context) {
    detail::ContextScope scope(context);
    unsigned flags = 0;
    detail::check(detail::driver().cuCtxGetFlags(&flags), "cuCtxGetFlags",
                  [&] { return "the scheduling flag of " + detail::describe_context(context); });
    switch (flags & CU_CTX_SCHED_MASK) {
        case CU_CTX_SCHED_SPIN: return SynchronizationPolicy::spin;
        case CU_CTX_SCHED_YIELD: return SynchronizationPolicy::yield;
        case CU_CTX_SCHED_BLOCKING_SYNC: return SynchronizationPolicy::blocking_sync;
        default: return SynchronizationPolicy::automatic;
    }
}

}  // namespace

SynchronizationPolicy synchronization_policy(const Stream& stream) {
    const CUsynchronizationPolicy raw =
        get_attribute(stream, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, "synchronization policy",
            "synchronization_policy")
            .syncPolicy;
    switch (raw) {
        case CU_SYNC_POLICY_AUTO:
        case CU_SYNC_POLICY_SPIN:
        case CU_SYNC_POLICY_YIELD:
        case CU_SYNC_POLICY_BLOCKING_SYNC: return static_cast<SynchronizationPolicy>(raw);
    }
    // Never set on this stream (the driver answers -1): it waits as its context says.
    return context_policy(*detail::open_box_of(stream, "synchronization_policy")->context);
}

void set_synchronization_policy(const Stream& stream, SynchronizationPolicy policy) {
    const detail::StreamBox& box = *detail::open_box_of(stream, "set_synchronization_policy");
    if (policy != SynchronizationPolicy::automatic && policy != SynchronizationPolicy::spin &&
        policy != SynchronizationPolicy::yield && policy != SynchronizationPolicy::blocking_sync)
        throw InvalidArgumentError("set_synchronization_policy: " +
                                   std::to_string(static_cast<int>(policy)) +
                                   " is not a SynchronizationPolicy (for " + detail::describe_stream(box) + ")");
    CUstreamAttrValue value{};
    value.syncPolicy = static_cast<CUsynchronizationPolicy>(policy);
    set_attribute(stream, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, value, "synchronization policy",
        "set_synchronization_policy");
}

std::optional<CUaccessPolicyWindow> access_policy_window(const Stream& stream) {
    const CUaccessPolicyWindow window =
        get_attribute(stream, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, "access policy window",
            "access_policy_window")
            .accessPolicyWindow;
    if (window.num_bytes == 0) return std::nullopt;
    return window;
}

void set_access_policy_window(const Stream& stream, const CUaccessPolicyWindow& window) {
    const detail::StreamBox& box = *detail::open_box_of(stream, "set_access_policy_window");
    if (const std::string problem = window_problem(box, window); !problem.empty())
        throw InvalidArgumentError("set_access_policy_window: " + detail::describe_stream(box) + ": " + problem);
    CUstreamAttrValue value{};
    value.accessPolicyWindow = window;
    set_attribute(stream, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, value, "access policy window",
        "set_access_policy_window");
}

void clear_access_policy_window(const Stream& stream) {
    CUstreamAttrValue value{};  // num_bytes 0: no window
    value.accessPolicyWindow.hitProp = CU_ACCESS_PROPERTY_NORMAL;
    value.accessPolicyWindow.missProp = CU_ACCESS_PROPERTY_NORMAL;
    set_attribute(stream, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, value, "access policy window",
        "clear_access_policy_window");
}

int priority_attribute(const Stream& stream) {
    return get_attribute(stream, CU_STREAM_ATTRIBUTE_PRIORITY, "priority", "priority_attribute").priority;
}

void copy_attributes(const Stream& destination, const Stream& source) {
    const detail::StreamBox& to = *detail::open_box_of(destination, "copy_attributes (destination)");
    const detail::StreamBox& from = *detail::open_box_of(source, "copy_attributes (source)");
    if (to.context->handle != from.context->handle)
        throw InvalidArgumentError("copy_attributes: " + detail::describe_stream(to) + " and " + detail::describe_stream(from) +
                                   " belong to different contexts; the driver copies attributes "
                                   "only between streams of one context");
    const detail::DefaultStreamScope in_context(detail::is_default_stream(to.handle) ? to : from);
    detail::check(detail::driver().cuStreamCopyAttributes(to.handle, from.handle),
                  "cuStreamCopyAttributes",
                  [&] { return "from " + detail::describe_stream(from) + " to " + detail::describe_stream(to); });
}

}  // namespace cudacore
