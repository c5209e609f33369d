/// @file
/// Contexts: a device's primary context (retained until exit once retained), and contexts
/// cudacore creates, shared by their copies and every object made in them. The guide:
/// docs/loading-and-launching.md, "Contexts you create".
///
///     Context mine = Context::create(Device(0), {.scheduling = ContextScheduling::blocking_sync});
///     Stream stream = mine.create_stream();          // the stream holds `mine`
///     launch(stream, config, kernel, data);          // runs in `mine`
#pragma once

#include "cudacore/owning_handle.hpp"

#include <cuda.h>

#include <memory>
#include <optional>
#include <string>

namespace cudacore {

class Device;
class Event;
class Stream;
struct EventOptions;
struct StreamOptions;

/// How a thread waits for a context's work: the CU_CTX_SCHED_* flags.
enum class ContextScheduling {
    automatic,      ///< CU_CTX_SCHED_AUTO: the driver picks spin or yield by load
    spin,           ///< CU_CTX_SCHED_SPIN: spin on the CPU (lowest latency)
    yield,          ///< CU_CTX_SCHED_YIELD: yield the thread while waiting
    blocking_sync,  ///< CU_CTX_SCHED_BLOCKING_SYNC: block on a synchronization primitive
};

/// "automatic", "spin", "yield", "blocking_sync"; "ContextScheduling(N)" for other values.
std::string to_string(ContextScheduling scheduling);

/// How Context::create makes a context; `{}` is a plain context.
struct ContextOptions {
    /// How threads wait for the context's work.
    ContextScheduling scheduling = ContextScheduling::automatic;
    bool map_host = false;  ///< CU_CTX_MAP_HOST (always on since CUDA 11)
    /// CU_CTX_LMEM_RESIZE_TO_MAX: keep local memory at its largest size after a launch.
    bool lmem_resize_to_max = false;
    /// CU_CTX_SYNC_MEMOPS: synchronous memory operations always synchronize.
    bool sync_memops = false;
    /// Limit the context's kernels to this many SMs (Volta+ under MPS only). Unset: no limit.
    std::optional<unsigned> sm_count{};

    /// The options a cuCtxCreate `flags` value stands for; InvalidArgumentError for unknown bits.
    static ContextOptions from_flags(unsigned flags);
    unsigned flags() const;  ///< the cuCtxCreate flags of these options
};

/// How Context::from_handle wraps a context.
struct ContextFromHandleOptions {
    /// Destroy the context when its last holder goes; false: the caller does.
    bool take_ownership = false;
};

/// A CUDA context (primary, green, created or wrapped); copies share it. Thread-safe; destruction
/// never throws. Members that use the context throw InvalidArgumentError when it is closed, and
/// DriverError when the driver refuses.
class Context : public OwningHandle<Context, detail::ContextBox, CUcontext> {
public:
    /// Creates a context on `device`; InvalidArgumentError for options the driver would refuse.
    static Context create(const Device& device, const ContextOptions& options = {});
    /// The calling thread's current context; InvalidArgumentError when none is.
    static Context current();
    /// As current(), but std::nullopt when no context is current.
    static std::optional<Context> current_if_any();

    /// Wraps a context: a primary one is retained; any other the caller keeps alive unless
    /// `options.take_ownership`. InvalidArgumentError for null or owning a primary context.
    static Context from_handle(CUcontext context, const ContextFromHandleOptions& options = {});

    Device device() const;  ///< the device the context belongs to
    /// Makes this context current on the calling thread, without holding it.
    void set_current() const;

    /// Whether cudacore created the context (Context::create) and destroys it.
    bool is_created() const noexcept;
    /// Whether this is a device's primary context; false when closed or empty.
    bool is_primary() const noexcept;
    unsigned flags() const;  ///< the context's cuCtxCreate flags
    /// flags() decoded, with sm_count set for an execution affinity limit.
    ContextOptions options() const;
    unsigned sm_count() const;  ///< the SMs the context's kernels may use
    unsigned api_version() const;  ///< the context's API version (cuCtxGetApiVersion)

    /// A new stream in this context, which it holds; InvalidArgumentError for a bad priority.
    Stream create_stream() const;
    /// As create_stream(), with `options`.
    Stream create_stream(const StreamOptions& options) const;
    Event create_event() const;  ///< a new event in this context, which it holds
    Event create_event(const EventOptions& options) const;  ///< as create_event(), with `options`
    Stream default_stream() const;  ///< the legacy default stream of this context, holding it
    /// As default_stream(), the per-thread default stream of the calling thread.
    Stream per_thread_stream() const;
    void sync() const;  ///< waits for all work in this context (cuCtxSynchronize)

    /// Ends the context for every copy (a created one is destroyed once its objects go; a primary
    /// one stays retained). DriverError when the release fails (closed all the same).
    void close();
};

}  // namespace cudacore
