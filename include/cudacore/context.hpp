/// @file
/// Contexts: a device's primary context, and contexts cudacore creates (Context::create).
///
///     Context mine = Context::create(Device(0), {.scheduling = ContextScheduling::blocking_sync});
///     Stream stream = mine.create_stream();          // the stream holds `mine`
///     launch(stream, config, kernel, data);          // runs in `mine`
///
/// Ownership of a primary context: copies share one retained primary context. Once cudacore has retained a device's
/// primary context it keeps it retained until the process exits, as the CUDA runtime does (the
/// driver releases it at exit; docs/design/release.md says why). Only a context
/// someone reset (cuDevicePrimaryCtxReset) is released, once the last object that holds it is
/// destroyed; the next use retains the new one. Release errors (the driver shutting down, the
/// device reset by someone else) are ignored: destruction never throws or prints.
///
/// A created context (Context::create) is owned: copies share it, and so does every object made
/// in it (streams, events, memory resources, graphs, and code loaded while it was current:
/// library_context), so the context outlives them and they may
/// be released in any order. cuCtxDestroy runs when the last share goes (the last copy destroyed
/// or closed, the last object made in it released), on that thread; when that happens at exit
/// after the driver shut down, the driver has destroyed it already and nothing is called. Calls
/// that take a Device (Device::create_stream, Device::create_event, Graph::create(device),
/// SynchronousMemoryResource(device), ...) keep using the primary context whatever is current:
/// make objects in a created context through the Context (create_stream, create_event) or the
/// calls that take one. Device::allocate on a stream of a created context works (the device's
/// memory pool serves every context of the device).
///
/// Threads: a Context may be used from any thread (the driver synchronizes calls into a context).
/// A context is current per thread: set_current() or CurrentContextScope (current_context_scope.hpp).
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
    /// Execution affinity: limit the context's kernels to this many SMs (CUexecAffinitySmCount;
    /// the driver rounds it up to what the hardware supports, Context::sm_count() says what it
    /// got). Only where the driver supports it (Volta+ under MPS); elsewhere Context::create
    /// throws InvalidArgumentError. Unset: no limit.
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
    /// Creates a context on `device` with `options` (cuCtxCreate), owned by the Context returned
    /// and its copies (see the file comment). The calling thread's current context is unchanged.
    /// Throws InvalidArgumentError for options the driver would refuse (unknown scheduling value,
    /// sm_count 0, an execution affinity the device does not support), checked before the
    /// context is created; DriverError when the driver refuses; NoDriverError without a driver.
    /// Thread-safe.
    static Context create(const Device& device, const ContextOptions& options = {});
    /// The context current on the calling thread (cuCtxGetCurrent): its primary context
    /// retained, the owning Context of one Context::create made (so objects made through it hold
    /// it), or one wrapped as from_handle() does. Throws InvalidArgumentError when none is
    /// current, DriverError when the driver fails.
    static Context current();
    /// As current(), but answers std::nullopt when no context is current on the calling thread
    /// instead of throwing. DriverError when the driver fails; NoDriverError without a driver.
    /// Thread-safe.
    static std::optional<Context> current_if_any();

    /// Wraps a context the caller has (cuCtxCreate, cuCtxGetCurrent, another library's). A
    /// device's primary context is retained like Device::context() (so it stays alive while the
    /// Context lives), and a context Context::create made gives its owning Context. Any other
    /// context is never destroyed or released, unless `options.take_ownership`: then it is
    /// cudacore's from then on, as one Context::create made (destroyed with its last holder, the
    /// streams and events made in it included; later wraps of its handle give this owner).
    /// Without ownership the caller keeps it alive while the Context, and streams or events made
    /// through it, are used. Throws InvalidArgumentError for a null handle and for taking
    /// ownership of a primary context (cudacore retains and releases those), DriverError for an
    /// invalid handle. Thread-safe.
    static Context from_handle(CUcontext context, const ContextFromHandleOptions& options = {});

    /// The device the context belongs to.
    Device device() const;
    /// Makes this context current on the calling thread (cuCtxSetCurrent). It does not keep the
    /// context alive: keep this Context (or a copy) while the context is current somewhere, or
    /// use CurrentContextScope, which holds it. To push and pop (cuCtxPushCurrent /
    /// cuCtxPopCurrent), use CurrentContextScope: there is no bare push or pop, and
    /// current_context_scope.hpp says why.
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
    /// The legacy default stream (CU_STREAM_LEGACY) of this context, which the Stream holds. The
    /// driver reads a default stream as the calling thread's current context's, so every call
    /// cudacore makes on this Stream (launch, copies, record, wait, sync, ...) makes this context
    /// current for that call when another, or none, is current, and restores it after: the Stream
    /// always means this context's stream, from any thread, and the calling thread's current
    /// context is not changed (neither here nor by those calls). Its raw handle() is
    /// CU_STREAM_LEGACY, which means this context's stream only where it is current: make it
    /// current (CurrentContextScope) around your own driver calls with it. InvalidArgumentError
    /// for a closed Context. Never destroyed.
    Stream default_stream() const;
    /// As default_stream(), the per-thread default stream (CU_STREAM_PER_THREAD) of this context,
    /// of the thread making each call.
    Stream per_thread_stream() const;
    /// Waits for all work in this context (cuCtxSynchronize).
    void sync() const;

    /// Ends the context for every holder, copies included (docs/errors-and-lifetime.md,
    /// "Closing and resetting"): a created context is destroyed once the objects made in it are
    /// released; a primary context stays retained until exit, as always. DriverError when the
    /// release it makes fails (closed all the same).
    void close();
};

}  // namespace cudacore
