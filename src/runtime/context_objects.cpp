// What every Context offers beyond its handle: queries (flags, affinity, API version) and the
// objects made in it (streams, events). Shared by primary, green, created and wrapped contexts.
#include "cudacore/context.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/event.hpp"
#include "cudacore/stream.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <cstdio>

namespace cudacore {

namespace detail {

std::string describe_context(const ContextBox& context) {
    if (context.retained) return "primary context of device " + std::to_string(context.ordinal);
    char handle[32];
    std::snprintf(handle, sizeof handle, "%p", static_cast<void*>(context.handle));
    return std::string(context.created ? "created context " : "context ") + handle +
           " on device " + std::to_string(context.ordinal);
}

std::shared_ptr<StreamBox> create_stream_box(const std::shared_ptr<ContextBox>& context,
                                             const StreamOptions& options,
                                             const std::string& where) {
    ContextScope scope(*context);
    const auto& api = driver();
    int priority = 0;
    if (options.priority) {
        int least = 0, greatest = 0;
        check(api.cuCtxGetStreamPriorityRange(&least, &greatest), "cuCtxGetStreamPriorityRange",
              where);
        // Refused rather than clamped (cuda.core raises): a silent clamp hides a bug.
        if (*options.priority < greatest || *options.priority > least) {
            throw InvalidArgumentError("create_stream on " + where + ": priority " +
                                       std::to_string(*options.priority) +
                                       " is outside the context's valid range " +
                                       std::to_string(greatest) + " (highest) .. " +
                                       std::to_string(least) +
                                       " (lowest); lower numbers are higher priorities, and "
                                       "stream_priority_range(context) reads the range");
        }
        priority = *options.priority;
    }
    const unsigned flags = options.non_blocking ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT;
    CUstream handle = nullptr;
    check(api.cuStreamCreateWithPriority(&handle, flags, priority), "cuStreamCreateWithPriority",
          where);
    auto box = std::make_shared<StreamBox>();
    box->handle = handle;
    box->context = context;
    return box;
}

}  // namespace detail

namespace {

// The box of a Context that is not closed; `call` names the member in the error.
const detail::ContextBox& open_context(const Context& context, const char* call) {
    if (const auto& box = detail::box_of(context)) [[likely]] return *box;
    return *detail::open_box_of(context, (std::string("Context::") + call).c_str());  // throws
}

}  // namespace

bool Context::is_created() const noexcept { return box() && box()->created; }

bool Context::is_primary() const noexcept { return box() && box()->retained; }

unsigned Context::flags() const {
    const auto& box = open_context(*this, "flags");
    detail::ContextScope scope(box);
    unsigned flags = 0;
    detail::check(detail::driver().cuCtxGetFlags(&flags), "cuCtxGetFlags",
                  [&] { return detail::describe_context(box); });
    return flags;
}

ContextOptions Context::options() const {
    // Bits the options have no field for (coredump flags a tool set) are left out, not refused.
    const unsigned known =
        CU_CTX_SCHED_MASK | CU_CTX_MAP_HOST | CU_CTX_LMEM_RESIZE_TO_MAX | CU_CTX_SYNC_MEMOPS;
    ContextOptions options = ContextOptions::from_flags(flags() & known);
    const unsigned sms = sm_count();
    if (sms < static_cast<unsigned>(device().multiprocessor_count())) options.sm_count = sms;
    return options;
}

unsigned Context::sm_count() const {
    const auto& box = open_context(*this, "sm_count");
    const auto& api = detail::driver();
    auto all_sms = [&] { return static_cast<unsigned>(Device(box.ordinal).multiprocessor_count()); };
    // Without execution affinity support (no MPS) the context runs on every SM. Asked first, so
    // that the usual case provokes no failed call (which tools such as compute-sanitizer report).
    int supported = 0;
    detail::check(api.cuDeviceGetExecAffinitySupport(&supported, CU_EXEC_AFFINITY_TYPE_SM_COUNT,
                                                     box.device),
                  "cuDeviceGetExecAffinitySupport", [&] { return detail::describe_context(box); });
    if (!supported) return all_sms();
    CUexecAffinityParam affinity{};
    CUresult status = CUDA_SUCCESS;
    {
        detail::ContextScope scope(box);
        status = api.cuCtxGetExecAffinity(&affinity, CU_EXEC_AFFINITY_TYPE_SM_COUNT);
    }
    if (status == CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY || status == CUDA_ERROR_NOT_SUPPORTED)
        return all_sms();
    detail::check(status, "cuCtxGetExecAffinity", [&] { return detail::describe_context(box); });
    return affinity.param.smCount.val ? affinity.param.smCount.val : all_sms();
}

unsigned Context::api_version() const {
    const auto& box = open_context(*this, "api_version");
    unsigned version = 0;
    detail::check(detail::driver().cuCtxGetApiVersion(box.handle, &version), "cuCtxGetApiVersion",
                  [&] { return detail::describe_context(box); });
    return version;
}

Stream Context::create_stream() const { return create_stream(StreamOptions{}); }

Stream Context::create_stream(const StreamOptions& options) const {
    const auto& box = open_context(*this, "create_stream");
    if (box.host_function_relay && !box.created)
        throw InvalidArgumentError("Context::create_stream on " + detail::describe_context(box) +
                                   ": a green context's streams come from "
                                   "GreenContext::create_stream");
    return detail::BoxAccess::make<Stream>(
        detail::create_stream_box(this->box(), options, detail::describe_context(box)));
}

Event Context::create_event() const { return create_event(EventOptions{}); }

Event Context::create_event(const EventOptions& options) const {
    open_context(*this, "create_event");
    return detail::BoxAccess::make<Event>(detail::create_event_box(box(), options));
}

namespace {

// A default stream (CU_STREAM_LEGACY or CU_STREAM_PER_THREAD) of `context`. The driver reads a
// default stream as the current context's: every call on the Stream makes `context` current for
// itself (runtime/default_stream_scope.hpp), so the calling thread's current context is left alone.
Stream default_stream_of(const Context& context, CUstream which, const char* call) {
    open_context(context, call);
    auto stream = std::make_shared<detail::StreamBox>();
    stream->handle = which;
    stream->context = detail::box_of(context);
    stream->owned = false;
    return detail::BoxAccess::make<Stream>(std::move(stream));
}

}  // namespace

Stream Context::default_stream() const {
    return default_stream_of(*this, CU_STREAM_LEGACY, "default_stream");
}

Stream Context::per_thread_stream() const {
    return default_stream_of(*this, CU_STREAM_PER_THREAD, "per_thread_stream");
}

void Context::sync() const {
    const auto& box = open_context(*this, "sync");
    detail::ContextScope scope(box);
    detail::check(detail::driver().cuCtxSynchronize(), "cuCtxSynchronize",
                  [&] { return detail::describe_context(box); });
}

}  // namespace cudacore
