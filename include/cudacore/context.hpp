/// @file
/// Contexts: a device's primary context, and contexts cudacore creates (Context::create).
/// A primary context, once retained, stays retained until exit (docs/design/release.md). A
/// created context is shared by its copies and every object made in it, and destroyed when the
/// last share goes. Calls that take a Device keep using the primary context. Destruction never
/// throws. A Context may be used from any thread; a context is current per thread
/// (set_current(), CurrentContextScope). The guide: docs/loading-and-launching.md, "Contexts you
/// create".
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

/// How a thread waiting for a context's work (a sync) waits: the CU_CTX_SCHED_* flags.
enum class ContextScheduling {
    automatic,      ///< CU_CTX_SCHED_AUTO: the driver picks spin or yield by load
    spin,           ///< CU_CTX_SCHED_SPIN: spin on the CPU (lowest latency)
    yield,          ///< CU_CTX_SCHED_YIELD: yield the thread while waiting
    blocking_sync,  ///< CU_CTX_SCHED_BLOCKING_SYNC: block on a synchronization primitive
};

/// "automatic", "spin", "yield", "blocking_sync"; "ContextScheduling(N)" for a value outside the
/// enumeration. Never throws beyond std::bad_alloc.
std::string to_string(ContextScheduling scheduling);

/// How Context::create makes a context. Every field has a default: `{}` is a plain context.
struct ContextOptions {
    /// How threads wait for the context's work.
    ContextScheduling scheduling = ContextScheduling::automatic;
    /// CU_CTX_MAP_HOST: pinned host memory may be mapped (the driver does this always since CUDA
    /// 11; kept for code ported from older APIs).
    bool map_host = false;
    /// CU_CTX_LMEM_RESIZE_TO_MAX: keep local memory at its largest size after a launch (the
    /// driver's behaviour by default now).
    bool lmem_resize_to_max = false;
    /// CU_CTX_SYNC_MEMOPS: synchronous memory operations in this context always synchronize.
    bool sync_memops = false;
    /// Execution affinity: limit the context's kernels to this many SMs (CUexecAffinitySmCount,
    /// rounded up by the driver; Volta+ under MPS only, else create() throws
    /// InvalidArgumentError). Unset: no limit.
    std::optional<unsigned> sm_count{};

    /// The options a cuCtxCreate `flags` value stands for (sm_count unset). Throws
    /// InvalidArgumentError for bits it does not know or for more than one scheduling bit.
    static ContextOptions from_flags(unsigned flags);
    /// The cuCtxCreate flags of these options. Throws InvalidArgumentError for a scheduling value
    /// outside the enumeration.
    unsigned flags() const;
};

/// How Context::from_handle wraps a context (every from_handle takes one such struct,
/// `take_ownership` first: docs/api-conventions.md).
struct ContextFromHandleOptions {
    /// The context is destroyed (cuCtxDestroy) when its last holder goes, as one Context::create
    /// made; false: the caller keeps and destroys it.
    bool take_ownership = false;
};

/// A CUDA context (a device's primary context, a green context, one created, or one wrapped);
/// copies share it.
class Context : public OwningHandle<Context, detail::ContextBox, CUcontext> {
public:
    /// Creates a context on `device` (cuCtxCreate), owned by the Context returned and its copies;
    /// the thread's current context is unchanged. Throws InvalidArgumentError for options the
    /// driver would refuse (checked first), DriverError when it refuses, NoDriverError without a
    /// driver. Thread-safe.
    static Context create(const Device& device, const ContextOptions& options = {});
    /// The calling thread's current context (cuCtxGetCurrent); for a created one, its owning
    /// Context. Throws InvalidArgumentError when none is current, DriverError when the driver fails.
    static Context current();
    /// As current(), but answers std::nullopt when no context is current on the calling thread
    /// instead of throwing. DriverError when the driver fails; NoDriverError without a driver.
    /// Thread-safe.
    static std::optional<Context> current_if_any();

    /// Wraps a context the caller has. A primary context is retained; one Context::create made
    /// gives its owning Context; any other is never destroyed unless `options.take_ownership`
    /// (then it is cudacore's, destroyed with its last holder). Without ownership the caller keeps
    /// it alive while it is used. Throws InvalidArgumentError for a null handle or for taking
    /// ownership of a primary context, DriverError for an invalid handle. Thread-safe.
    static Context from_handle(CUcontext context, const ContextFromHandleOptions& options = {});

    /// The device the context belongs to.
    Device device() const;
    /// Makes this context current on the calling thread (cuCtxSetCurrent) without holding it: keep
    /// this Context meanwhile, or use CurrentContextScope (there is no bare push or pop).
    void set_current() const;

    /// Whether cudacore created the context (Context::create) and destroys it.
    bool is_created() const noexcept;
    /// Whether this is a device's primary context (Device::context()): false for a created, a
    /// green and a wrapped foreign context, and for a closed or empty Context. Never throws.
    bool is_primary() const noexcept;
    /// The context's cuCtxCreate flags (cuCtxGetFlags): scheduling and the other CU_CTX_* bits.
    unsigned flags() const;
    /// The context's flags decoded (ContextOptions::from_flags of flags()), with sm_count set
    /// when the context has an execution affinity limit.
    ContextOptions options() const;
    /// The SMs the context's kernels may use: its execution affinity (cuCtxGetExecAffinity) where
    /// the driver reports one, else every SM of the device.
    unsigned sm_count() const;
    /// The context's API version (cuCtxGetApiVersion), e.g. 3020 for every context since CUDA 3.2.
    unsigned api_version() const;

    /// A new stream in this context, which it holds (cuStreamCreateWithPriority). Throws
    /// InvalidArgumentError for a priority outside the device's range, DriverError when the
    /// driver refuses.
    Stream create_stream() const;
    /// As create_stream(), with `options`.
    Stream create_stream(const StreamOptions& options) const;
    /// A new event in this context, which it holds (not recorded yet). DriverError when the
    /// driver refuses.
    Event create_event() const;
    /// As create_event(), with `options`.
    Event create_event(const EventOptions& options) const;
    /// The legacy default stream (CU_STREAM_LEGACY) of this context, holding it. cudacore's calls
    /// on it make this context current for the call, from any thread; its raw handle() means this
    /// context's stream only where it is current. Throws InvalidArgumentError when closed.
    Stream default_stream() const;
    /// As default_stream(), the per-thread default stream (CU_STREAM_PER_THREAD) of this context,
    /// of the thread making each call.
    Stream per_thread_stream() const;
    /// Waits for all work in this context (cuCtxSynchronize).
    void sync() const;

    /// Ends the context for every copy (docs/errors-and-lifetime.md, "Closing and resetting"): a
    /// created one is destroyed once the objects made in it go; a primary one stays retained.
    /// Throws DriverError when the release fails (closed all the same).
    void close();
};

}  // namespace cudacore
