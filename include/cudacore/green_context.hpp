/// @file
/// Green contexts: a device's SMs split into groups, each a context whose kernels run only on its
/// SMs. Guide: docs/loading-and-launching.md, "Green contexts".
///
///     SmResource sms = sm_resource(Device(0));                 // every SM of the device
///     SmSplit split = sms.split({.count = 2, .min_sm_count = sms.sm_count() / 2});
///     GreenContext left = GreenContext::create(split.groups[0]);
///     Stream stream = left.create_stream();
///     launch(stream, config, kernel, data);                    // runs on left's SMs only
#pragma once

#include "cudacore/owning_handle.hpp"
#include "cudacore/context.hpp"
#include "cudacore/event.hpp"
#include "cudacore/stream.hpp"

#include <cuda.h>

#include <memory>
#include <string>
#include <vector>

namespace cudacore {

class Device;
class SmResource;
struct SmSplit;

/// How SmResource::split() divides a device's SMs.
struct SmSplitOptions {
    /// How many groups to make (0: as many as fit); fewer fit: InvalidArgumentError.
    unsigned count = 2;
    /// The least number of SMs per group, rounded up to the driver's granularity.
    unsigned min_sm_count = 8;
    /// Treat each SM on its own (finer groups, but no large clusters on compute 9.0+).
    bool ignore_sm_coscheduling = false;
    /// Compute 9.0+: prefer groups that allow the largest thread clusters.
    bool max_cluster_size = false;
};

/// A set of SMs of one device: the whole device, a group of a split, or a remainder.
class SmResource {
public:
    SmResource() = default;

    unsigned sm_count() const noexcept;  ///< how many SMs it holds (0 when empty)
    unsigned min_partition_size() const noexcept;  ///< the smallest group the device allows
    /// Group sizes are multiples of this many SMs (0 when empty).
    unsigned coscheduled_alignment() const noexcept;
    /// The device the SMs belong to (-1 when empty).
    int device_ordinal() const noexcept { return ordinal_; }
    bool empty() const noexcept { return !data_; }  ///< no SMs, no device
    /// True for a group or a remainder, which cannot be split again.
    bool from_split() const noexcept { return from_split_; }
    /// The driver's description of the resource (null when empty).
    const CUdevResource* handle() const noexcept { return data_.get(); }

    /// Splits these SMs into groups. InvalidArgumentError for bad options, an empty or split
    /// resource, and when fewer groups than options.count fit.
    SmSplit split(const SmSplitOptions& options) const;

    /// Internal: used by sm_resource() and split().
    SmResource(std::shared_ptr<const CUdevResource> data, int ordinal, bool from_split) noexcept
        : data_(std::move(data)), ordinal_(ordinal), from_split_(from_split) {}

private:
    std::shared_ptr<const CUdevResource> data_;
    int ordinal_ = -1;
    bool from_split_ = false;
};

/// The groups SmResource::split() made, and the remainder.
struct SmSplit {
    std::vector<SmResource> groups{};  ///< the groups, each with at least min_sm_count SMs
    /// The SMs no group took (weaker guarantees than the groups).
    std::vector<SmResource> remainder{};  ///< empty or one element
    /// "device 0: 132 SMs -> 2 groups of 64, 64 SMs; remainder 4 SMs"
    std::string describe() const;
};

SmResource sm_resource(const Device& device);  ///< every SM of `device`

/// A context on a group of a device's SMs; its streams run on those SMs only. Copies share it; its
/// streams and events hold it; it holds the primary context. Use it and its streams from one
/// thread at a time. Members throw DriverError when the driver refuses, NoDriverError.
class GreenContext {
public:
    /// A green context on `resources`' SMs; InvalidArgumentError for an empty resource.
    static GreenContext create(const SmResource& resources);

    CUgreenCtx handle() const noexcept;  ///< the driver's green context; valid while any copy lives
    /// The context form of the green context, holding it (Stream::context() of its streams).
    Context context() const;
    Device device() const;  ///< the device whose SMs it runs on
    unsigned sm_count() const noexcept;  ///< how many SMs its kernels run on

    /// A stream on this green context's SMs; options.non_blocking must stay true.
    Stream create_stream(const StreamOptions& options = {}) const;
    /// A new event on this green context, which the event holds.
    Event create_event(const EventOptions& options = {}) const;
    void sync() const;  ///< waits for all work of this green context

    /// The same green context.
    bool operator==(const GreenContext& other) const noexcept { return handle() == other.handle(); }

private:
    friend struct detail::BoxAccess;
    explicit GreenContext(std::shared_ptr<detail::GreenContextBox> box) noexcept
        : box_(std::move(box)) {}

    std::shared_ptr<detail::GreenContextBox> box_;
};

}  // namespace cudacore
