#include "cudacore/green_context.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <algorithm>
#include <cstdio>

namespace cudacore {

namespace detail {

// A green context is a Context kind of its own: a ContextBox (handle: the cuCtxFromGreenCtx
// form, so streams, events and launches treat it like any context) that destroys the green
// context instead of releasing a primary context. Made with make_shared, so this destructor runs
// even through a shared_ptr<ContextBox>.
struct GreenContextBox : ContextBox {
    CUgreenCtx green = nullptr;
    unsigned sm_count = 0;
    // The device's primary context, retained while the green context lives (the driver retains
    // it too; holding its box keeps cudacore's registry entry, and the device's memory, alive).
    std::shared_ptr<ContextBox> primary;

    GreenContextBox() { retained = false; }
    ~GreenContextBox() {
        if (!green) return;
        if (const DriverApi* api = driver_if_loaded()) {
            if (host_function_relay) api->cuStreamDestroy(host_function_relay);
            api->cuGreenCtxDestroy(green);
        }
    }
};

}  // namespace detail

namespace {

std::string on_device(int ordinal) { return "device " + std::to_string(ordinal); }

std::string describe_box(const detail::GreenContextBox& box) {
    char handle[32];
    std::snprintf(handle, sizeof handle, "%p", static_cast<void*>(box.green));
    return std::string("green context ") + handle + " (" + std::to_string(box.sm_count) +
           " SMs) on device " + std::to_string(box.ordinal);
}

[[noreturn]] void split_error(int ordinal, const std::string& problem) {
    throw InvalidArgumentError("SmResource::split on device " + std::to_string(ordinal) + ": " +
                               problem);
}

// What can be refused without the driver (and without a resource).
void check_options(const SmSplitOptions& options, int ordinal) {
    if (options.min_sm_count == 0)
        split_error(ordinal, "SmSplitOptions::min_sm_count is 0; it must be at least 1");
}

}  // namespace

unsigned SmResource::sm_count() const noexcept { return data_ ? data_->sm.smCount : 0; }
unsigned SmResource::min_partition_size() const noexcept {
    return data_ ? data_->sm.minSmPartitionSize : 0;
}
unsigned SmResource::coscheduled_alignment() const noexcept {
    return data_ ? data_->sm.smCoscheduledAlignment : 0;
}

std::string SmSplit::describe() const {
    std::string out;
    const int ordinal = !groups.empty() ? groups.front().device_ordinal() : -1;
    unsigned total = 0;
    for (const auto& group : groups) total += group.sm_count();
    if (!remainder.empty()) total += remainder.front().sm_count();
    out = "device " + std::to_string(ordinal) + ": " + std::to_string(total) + " SMs -> " +
          std::to_string(groups.size()) + " group(s) of ";
    for (std::size_t i = 0; i < groups.size(); ++i)
        out += (i ? ", " : "") + std::to_string(groups[i].sm_count());
    out += " SMs; remainder " +
           std::to_string(remainder.empty() ? 0u : remainder.front().sm_count()) + " SMs";
    return out;
}

SmResource sm_resource(const Device& device) {
    auto data = std::make_shared<CUdevResource>();
    detail::check(detail::driver().cuDeviceGetDevResource(device.handle(), data.get(),
                                                          CU_DEV_RESOURCE_TYPE_SM),
                  "cuDeviceGetDevResource", [&] { return on_device(device.ordinal()); });
    return SmResource(std::move(data), device.ordinal(), false);
}

SmSplit SmResource::split(const SmSplitOptions& options) const {
    check_options(options, ordinal_);
    if (!data_) split_error(ordinal_, "the SmResource is empty");
    if (from_split_)
        split_error(ordinal_, "the SmResource is a group or remainder of an earlier split; the "
                              "driver cannot split it again (make a GreenContext from it)");
    const unsigned total = sm_count();
    if (options.min_sm_count > total)
        split_error(ordinal_, "SmSplitOptions::min_sm_count is " +
                                  std::to_string(options.min_sm_count) + " but the resource has " +
                                  std::to_string(total) + " SMs");
    if (options.count > 0 &&
        static_cast<unsigned long long>(options.count) * options.min_sm_count > total)
        split_error(ordinal_, "SmSplitOptions::count " + std::to_string(options.count) +
                                  " groups of at least " + std::to_string(options.min_sm_count) +
                                  " SMs need more than the resource's " + std::to_string(total) +
                                  " SMs");

    // CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING and _MAX_POTENTIAL_CLUSTER_SIZE, by value:
    // older cuda.h headers lack the names, and the driver's values do not change.
    unsigned flags = 0;
    if (options.ignore_sm_coscheduling) flags |= 0x1u;
    if (options.max_cluster_size) flags |= 0x2u;
    const auto& api = detail::driver();
    auto object = [&] {
        return on_device(ordinal_) + " (" + std::to_string(total) + " SMs, groups of at least " +
               std::to_string(options.min_sm_count) + ")";
    };

    unsigned wanted = options.count;
    if (wanted == 0) {
        detail::check(api.cuDevSmResourceSplitByCount(nullptr, &wanted, data_.get(), nullptr,
                                                      flags, options.min_sm_count),
                      "cuDevSmResourceSplitByCount", object);
        if (wanted == 0)
            split_error(ordinal_, "no group of at least " + std::to_string(options.min_sm_count) +
                                      " SMs fits in " + std::to_string(total) + " SMs");
    }
    std::vector<CUdevResource> results(wanted);
    auto remaining = std::make_shared<CUdevResource>();
    unsigned made = wanted;
    detail::check(api.cuDevSmResourceSplitByCount(results.data(), &made, data_.get(),
                                                  remaining.get(), flags, options.min_sm_count),
                  "cuDevSmResourceSplitByCount", object);
    if (made < wanted)
        split_error(ordinal_, "only " + std::to_string(made) + " group(s) of at least " +
                                  std::to_string(options.min_sm_count) + " SMs fit in " +
                                  std::to_string(total) + " SMs (granularity " +
                                  std::to_string(coscheduled_alignment()) + ", smallest group " +
                                  std::to_string(min_partition_size()) + "), " +
                                  std::to_string(wanted) + " asked (SmSplitOptions::count)");
    SmSplit split;
    for (unsigned i = 0; i < made; ++i)
        split.groups.emplace_back(std::make_shared<CUdevResource>(results[i]), ordinal_, true);
    if (remaining->type == CU_DEV_RESOURCE_TYPE_SM && remaining->sm.smCount > 0)
        split.remainder.emplace_back(std::move(remaining), ordinal_, true);
    return split;
}

GreenContext GreenContext::create(const SmResource& resources) {
    if (resources.empty())
        throw InvalidArgumentError("GreenContext::create: the SmResource is empty (take one from "
                                   "sm_resource(device) or SmResource::split)");
    const int ordinal = resources.device_ordinal();
    const Device device(ordinal);
    const auto& api = detail::driver();
    auto object = [&] {
        return on_device(ordinal) + ", " + std::to_string(resources.sm_count()) + " SMs";
    };
    // The driver advises an active primary context (else each green context initialises it).
    auto primary = detail::primary_context(ordinal);

    CUdevResource resource = *resources.handle();
    CUdevResourceDesc description = nullptr;
    detail::check(api.cuDevResourceGenerateDesc(&description, &resource, 1),
                  "cuDevResourceGenerateDesc", object);
    CUgreenCtx green = nullptr;
    detail::check(api.cuGreenCtxCreate(&green, description, device.handle(),
                                       CU_GREEN_CTX_DEFAULT_STREAM),
                  "cuGreenCtxCreate", object);
    auto box = std::make_shared<detail::GreenContextBox>();  // owns `green` from here on
    box->green = green;
    box->sm_count = resources.sm_count();
    box->device = device.handle();
    box->ordinal = ordinal;
    box->primary = std::move(primary);
    detail::check(api.cuCtxFromGreenCtx(&box->handle, green), "cuCtxFromGreenCtx",
                  [&] { return describe_box(*box); });
    detail::check(detail::note_context_id(*box, api), "cuCtxGetId",
                  [&] { return describe_box(*box); });
    // cudacore's host functions for this green context's streams run on a primary-context stream
    // (ContextBox::host_function_relay).
    detail::check(api.cuCtxPushCurrent(box->primary->handle), "cuCtxPushCurrent", object);
    const CUresult made =
        api.cuStreamCreateWithPriority(&box->host_function_relay, CU_STREAM_NON_BLOCKING, 0);
    CUcontext popped = nullptr;
    api.cuCtxPopCurrent(&popped);
    detail::check(made, "cuStreamCreateWithPriority",
                  [&] { return "host-function relay of " + describe_box(*box); });
    return detail::BoxAccess::make<GreenContext>(std::move(box));
}

CUgreenCtx GreenContext::handle() const noexcept { return box_ ? box_->green : nullptr; }

Context GreenContext::context() const {
    return detail::BoxAccess::make<Context>(std::shared_ptr<detail::ContextBox>(box_));
}

Device GreenContext::device() const {
    if (!box_) throw InvalidArgumentError("GreenContext::device: an empty GreenContext");
    return Device(box_->ordinal);
}

unsigned GreenContext::sm_count() const noexcept { return box_ ? box_->sm_count : 0; }

Stream GreenContext::create_stream(const StreamOptions& options) const {
    if (!box_) throw InvalidArgumentError("GreenContext::create_stream: an empty GreenContext");
    if (!options.non_blocking)
        throw InvalidArgumentError("GreenContext::create_stream on " + describe_box(*box_) +
                                   ": StreamOptions::non_blocking must be true (the driver "
                                   "makes only non-blocking streams on green contexts)");
    const auto& api = detail::driver();
    int priority = 0;
    if (options.priority) {
        detail::ContextScope scope(*box_);
        int least = 0, greatest = 0;
        detail::check(api.cuCtxGetStreamPriorityRange(&least, &greatest),
                      "cuCtxGetStreamPriorityRange", [&] { return describe_box(*box_); });
        priority = std::clamp(*options.priority, greatest, least);
    }
    CUstream handle = nullptr;
    detail::check(api.cuGreenCtxStreamCreate(&handle, box_->green, CU_STREAM_NON_BLOCKING, priority),
                  "cuGreenCtxStreamCreate", [&] { return describe_box(*box_); });
    auto stream = std::make_shared<detail::StreamBox>();
    stream->handle = handle;
    stream->context = box_;  // the stream holds its green context
    return detail::BoxAccess::make<Stream>(std::move(stream));
}

Event GreenContext::create_event(const EventOptions& options) const {
    if (!box_) throw InvalidArgumentError("GreenContext::create_event: an empty GreenContext");
    return detail::BoxAccess::make<Event>(detail::create_event_box(box_, options));
}

void GreenContext::sync() const {
    if (!box_) throw InvalidArgumentError("GreenContext::sync: an empty GreenContext");
    detail::ContextScope scope(*box_);
    detail::check(detail::driver().cuCtxSynchronize(), "cuCtxSynchronize",
                  [&] { return describe_box(*box_); });
}

}  // namespace cudacore
