#include "cudacore/cached_compile.hpp"
#include "cudacore/program_options.hpp"
#include "support/cudacore_trace.hpp"
#include "support/temporary_directory.hpp"

#include "cache/activity_counters.hpp"
#include "cache/cancellable_wait.hpp"
#include "cache/cached_entry.hpp"
#include "code/code_keys.hpp"
#include "code/object_code_state.hpp"
#include "code/project_search.hpp"
#include "code/compile_request.hpp"
#include "code/checked_compile.hpp"
#include "code/compiler_identity.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/program.hpp"
#include "cudacore/warnings.hpp"

#include <sys/resource.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <utility>

namespace cudacore {
namespace {

using detail::extend_key;

// Compiles in flight in this process, by cache and key; an entry lives while its compile runs.
// `finished` counts the compiles that have left the table: a caller that looked a key up before
// a count, and takes the key's turn at the same count, knows no compile of this process stored
// anything meanwhile, and need not look again (which a cache would count as a second miss).
struct InFlight {
    std::mutex mutex;
    std::map<std::pair<const ProgramCache*, CacheKey>, std::shared_future<ObjectCode>> compiles;
    std::atomic<std::uint64_t> finished{0};
};

InFlight& in_flight() {
    static auto* table = new InFlight;  // never destroyed: usable from static destructors
    return *table;
}

// Code returned without being stored: counted in cache_stats().not_cached, and said why.
void not_cached(const std::string& message) {
    detail::count_not_cached();
    warn(WarningKind::not_cached, message);
}

void report(const CacheWarningHandler& on_cache_error, const CacheError& error) {
    if (!on_cache_error) return;
    try {
        on_cache_error(error);
    } catch (...) {
        // A warning must not turn a successful compile into a failure.
    }
}

// The cached code, or nullopt on a miss or when the cache cannot be read (reported).
std::optional<ObjectCode> lookup(ProgramCache& cache, const CacheKey& key,
                                 const CacheWarningHandler& on_cache_error) {
    try {
        return cache.get(key);
    } catch (const CacheError& e) {
        report(on_cache_error, e);
        return std::nullopt;
    }
}

// What a key made from the compilers' identity was made under (compiler_identity_generation),
// or a key the caller made.
constexpr unsigned callers_key = ~0u;

// Stores `code`; false when the cache could not (reported: the code is good, only keeping it
// failed), or when the key named another NVRTC or nvJitLink than the one opened since it was
// made (compiler_identity.hpp: its file said another version than the library).
bool store(ProgramCache& cache, const CacheKey& key, const ObjectCode& code,
           const CacheWarningHandler& on_cache_error, unsigned key_generation) {
    if (key_generation != callers_key && key_generation != detail::confirm_compiler_identity()) {
        not_cached("compile_cached: code '" + code.name() +
                   "' compiled but not cached: the NVRTC or nvJitLink opened is not the version its "
                   "file named when the key was made");
        return false;
    }
    try {
        cache.put(key, code);
        return true;
    } catch (const CacheError& e) {
        report(on_cache_error, e);
        return false;
    }
}

// Runs a compile made on a miss, counting it and its time in cache_stats() (a failed one too).
template <class Compile>
auto counted_compile(Compile&& compile) {
    struct Count {
        std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
        ~Count() {
            detail::count_compile(std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::steady_clock::now() - start));
        }
    } count;
    return compile();
}

// A compile's cancellation: its token, and what giving up throws (CompileCancelled naming the
// program). get_or_compile's token is never cancelled.
struct Cancellation {
    CancellationToken token;
    std::function<void()> throw_cancelled;

    // Throws CompileCancelled when the token is cancelled.
    void give_up_if_cancelled() const {
        if (token.is_cancelled()) throw_cancelled();
    }
};

Cancellation cancellation_of(const detail::ProgramKeys& keys, const CancellationToken& token) {
    return {token, [&keys] { throw CompileCancelled(keys.name, keys.flags, keys.backend); }};
}

// The result of another thread's compile of the same key, waited for while reading the token:
// a cancelled caller gives up within detail::cancellation_poll (the other compile goes on).
ObjectCode await_other_thread(const std::shared_future<ObjectCode>& pending,
                              const Cancellation& cancellation) {
    while (pending.wait_for(detail::cancellation_poll) != std::future_status::ready)
        cancellation.give_up_if_cancelled();
    // Each waiter its own owner: one's close() leaves the others' values open.
    return detail::ObjectCodeAccess::another_owner(pending.get(), "compile_cached");
}

// What single_flight's `looked_up_at` is when the caller has not looked the key up yet.
constexpr std::uint64_t not_looked_up = ~std::uint64_t{0};

// The count of finished compiles (InFlight::finished), read before a lookup.
std::uint64_t finished_compiles() { return in_flight().finished.load(std::memory_order_acquire); }

// Runs `produce` for (cache, key) at most once at a time in this process: callers arriving
// while it runs wait for and share its result or its exception. `produce` is told whether a
// compile of this process may have stored an entry since the caller looked the key up (at
// finished_compiles() count `looked_up_at`).
// A caller whose own token is not cancelled does not share another's cancellation: it tries again
// (and produces itself when no other caller is producing).
ObjectCode single_flight(ProgramCache& cache, const CacheKey& key,
                         const std::function<ObjectCode(bool stored_since)>& produce,
                         const Cancellation& cancellation, std::uint64_t looked_up_at) {
    auto& table = in_flight();
    const auto slot = std::make_pair(static_cast<const ProgramCache*>(&cache), key);
    std::promise<ObjectCode> promise;
    bool stored_since = true;
    for (;;) {
        std::unique_lock lock(table.mutex);
        auto it = table.compiles.find(slot);
        if (it == table.compiles.end()) {
            table.compiles.emplace(slot, promise.get_future().share());
            stored_since = table.finished.load(std::memory_order_relaxed) != looked_up_at;
            break;
        }
        std::shared_future<ObjectCode> pending = it->second;
        lock.unlock();
        try {
            return await_other_thread(pending, cancellation);
        } catch (const CompileCancelled&) {
            if (cancellation.token.is_cancelled()) throw;
        }
    }
    // We are the one producer of this key; whatever happens, publish it and leave the table.
    auto finish = [&] {
        std::lock_guard lock(table.mutex);
        table.compiles.erase(slot);
        table.finished.fetch_add(1, std::memory_order_release);
    };
    try {
        ObjectCode code = produce(stored_since);
        promise.set_value(detail::ObjectCodeAccess::another_owner(code, "compile_cached"));
        finish();
        return code;
    } catch (...) {
        promise.set_exception(std::current_exception());
        finish();
        throw;
    }
}

// get_or_compile for a compile `cancellation` gives up (a waiter whose own token is not
// cancelled never shares another's cancellation).
ObjectCode get_or_compile_cancellable(ProgramCache& cache, const CacheKey& key,
                                      const std::function<ObjectCode()>& compile,
                                      const CacheWarningHandler& on_cache_error,
                                      const Cancellation& cancellation, unsigned key_generation) {
    // One lookup per call, so that the caches' counters count the caller's lookups: the call is
    // in flight before it looks (a call that finds another in flight for the key shares its
    // outcome and looks up nothing), so no entry can be stored between its lookup and its turn.
    return single_flight(cache, key, [&](bool) {
        if (auto hit = lookup(cache, key, on_cache_error)) return *hit;
        // Another process may be compiling it: wait for its entry, or hold the lease.
        CompileTurn turn = cache.await_compile_turn(
            key, [&] { return lookup(cache, key, on_cache_error); }, cancellation.token);
        if (turn.cancelled) cancellation.throw_cancelled();
        if (turn.found) return *turn.found;
        ObjectCode code = counted_compile(compile);
        store(cache, key, code, on_cache_error, key_generation);
        return code;
    }, cancellation, not_looked_up);
}

}  // namespace

ObjectCode get_or_compile(ProgramCache& cache, const CacheKey& key,
                          const std::function<ObjectCode()>& compile,
                          const CacheWarningHandler& on_cache_error) {
    return get_or_compile_cancellable(cache, key, compile, on_cache_error,
                                      {CancellationToken{}, [] {}}, callers_key);
}

namespace detail {

namespace {

// The code under `keys` (following a path-bound marker), with the key it was found under.
std::optional<CachedEntry> entry_of_keys(ProgramCache& cache, const CodeKeys& keys,
                                         const CacheWarningHandler& on_cache_error) {
    std::optional<ObjectCode> entry = lookup(cache, keys.first, on_cache_error);
    if (!entry) return std::nullopt;
    if (!is_path_bound_marker(*entry)) return CachedEntry{std::move(*entry), keys.first, std::nullopt};
    const CacheKey& bound = keys.path_bound;
    std::optional<ObjectCode> code = lookup(cache, bound, on_cache_error);
    if (!code || is_path_bound_marker(*code)) return std::nullopt;
    return CachedEntry{std::move(*code), bound, keys.first};
}

}  // namespace

std::optional<CachedEntry> find_cached_entry(ProgramCache& cache, const Program& program, CodeType target,
                                             const CacheKey& source_key, const CompileOptions& options,
                                             std::shared_ptr<const ProjectSearch> search) {
    const ProgramKeys keys = program_keys(program, target, SourceKey{source_key, std::move(search)}, options.extra_digest);
    if (keys.code) {
        if (!keys.code->snapshot.refusal.empty()) return std::nullopt;  // compiled from the files, never cached
        return entry_of_keys(cache, *keys.code, options.on_cache_error);
    }
    std::optional<ObjectCode> code = lookup(cache, keys.lookup, options.on_cache_error);
    if (!code) return std::nullopt;
    return CachedEntry{std::move(*code), keys.lookup, std::nullopt};
}

bool leads_to_other_entry(const ObjectCode& entry) { return is_path_bound_marker(entry); }

}  // namespace detail

namespace {

std::optional<ObjectCode> find_code(ProgramCache& cache, const Program& program, CodeType target,
                                    const detail::SourceKey& source_key, const CompileOptions& options) {
    std::optional<detail::CachedEntry> entry =
        detail::find_cached_entry(cache, program, target, source_key.key, options, source_key.search);
    if (!entry) return std::nullopt;
    return std::move(entry->code);
}

// Compiles a C++ program from its snapshot while this process holds its compile turn
// (detail::compile_checked: beside the check compiles), and stores it under the key the checks
// allow, or warns why it is not cached.
ObjectCode compile_and_store(ProgramCache& cache, Program& program, CodeType target,
                             const std::vector<std::string>& name_expressions, const detail::ProgramKeys& keys,
                             const CompileOptions& options) {
    const CacheWarningHandler& on_cache_error = options.on_cache_error;
    const unsigned generation = keys.source.compiler_generation;
    detail::CheckedCompile checked = counted_compile([&] {
        return detail::compile_checked(program, target, name_expressions, *keys.code,
                                       options.paths_and_clock_do_not_matter, options.cancellation);
    });
    switch (checked.stored_under) {
        case detail::StoredUnder::first_key:
            store(cache, keys.code->first, checked.code, on_cache_error, generation);
            break;
        case detail::StoredUnder::path_bound:
            if (store(cache, keys.code->path_bound, checked.code, on_cache_error, generation))
                store(cache, keys.code->first, detail::path_bound_marker(), on_cache_error, generation);
            break;
        case detail::StoredUnder::nowhere:
            not_cached("compile_cached: program '" + keys.name + "' compiled but not cached: " +
                       checked.why);
            break;
    }
    return std::move(checked.code);
}

// What compile_cached found under the first key the Program remembers (remembered_lookup_key),
// before working out the source key: nothing looked up, a miss, or a path-bound marker.
struct RememberedLookup {
    std::optional<CacheKey> key;  // looked up, where remembered
    bool missed = false;
    std::uint64_t finished_before = 0;  // finished_compiles() before it
};

// compile_cached of a C++ program without extra_digest, from its keys: a lookup, and on a miss
// the compile from its snapshot (compile_and_store); `compile`, the plain compile, for a program
// that cannot be given from memory.
ObjectCode compile_cached_cxx(ProgramCache& cache, Program& program, CodeType target,
                              const std::vector<std::string>& name_expressions, const detail::ProgramKeys& keys,
                              const CompileOptions& options, const RememberedLookup& looked_up,
                              const Cancellation& cancellation, const std::function<ObjectCode()>& compile) {
    const detail::CodeKeys& code_keys = *keys.code;
    const CacheWarningHandler& on_cache_error = options.on_cache_error;
    if (!code_keys.snapshot.refusal.empty()) {
        ObjectCode code = counted_compile(compile);
        not_cached("compile_cached: program '" + keys.name + "' compiled but not cached: " +
                   code_keys.snapshot.refusal + "; pass CompileOptions::extra_digest to cache it");
        return code;
    }
    if (!(looked_up.missed && code_keys.first == *looked_up.key)) {  // else looked up just now
        if (auto hit = detail::entry_of_keys(cache, code_keys, on_cache_error)) return std::move(hit->code);
    }
    auto lookup_code = [&]() -> std::optional<ObjectCode> {
        std::optional<detail::CachedEntry> entry = detail::entry_of_keys(cache, code_keys, on_cache_error);
        if (!entry) return std::nullopt;
        return std::move(entry->code);
    };
    // Looked up once per call: again in its turn only where a compile here may have stored since.
    return single_flight(cache, code_keys.first, [&](bool stored_since) -> ObjectCode {
        if (stored_since)
            if (auto hit = lookup_code()) return *hit;
        // Another process may be compiling it: wait for its entry, or hold the lease (released
        // when this returns, after the stores below).
        // The lease is the program's (its source key), as other processes of any version ask it.
        CompileTurn turn = cache.await_compile_turn(keys.source.key, lookup_code, options.cancellation);
        if (turn.cancelled) cancellation.throw_cancelled();
        if (turn.found) return *turn.found;
        return compile_and_store(cache, program, target, name_expressions, keys, options);
    }, cancellation, looked_up.finished_before);
}

}  // namespace

std::optional<ObjectCode> find_cached(const Program& program, CodeType target,
                                      const std::vector<std::string>& name_expressions,
                                      const CompileOptions& options) {
    if (options.cache == nullptr)
        throw InvalidArgumentError("find_cached: CompileOptions::cache is null for program '" +
                                   program.options().name + "' (find_cached only looks in a cache)");
    std::optional<ObjectCode> found = find_code(*options.cache, program, target,
                                                detail::source_key(program, target, name_expressions), options);
    if (!found) return std::nullopt;
    return detail::named_as(std::move(*found), program.options().name);
}

ObjectCode compile_cached(Program& program, CodeType target, const std::vector<std::string>& name_expressions,
                          const CompileOptions& options) {
    // What Program::compile is given: the cancellation alone.
    auto compile = [&] {
        CompileOptions cancellable;
        cancellable.cancellation = options.cancellation;
        return program.compile(target, name_expressions, cancellable);
    };
    if (options.cache == nullptr) return compile();
    ProgramCache& cache = *options.cache;
    const detail::CudacoreRange range(tracing::CudacoreCategory::compile,
                                      [&] { return "compile_cached " + program.options().name; });
    const CacheWarningHandler& on_cache_error = options.on_cache_error;
    // A hit on the key the Program remembers is one lookup: no hashing, no file read, no compiler.
    RememberedLookup looked_up;
    looked_up.finished_before = finished_compiles();
    if (options.extra_digest.empty()) {
        looked_up.key = detail::remembered_lookup_key(program, target, name_expressions);
        if (looked_up.key) {
            std::optional<ObjectCode> entry = lookup(cache, *looked_up.key, on_cache_error);
            if (entry && !detail::is_path_bound_marker(*entry))
                return detail::named_as(std::move(*entry), program.options().name);
            looked_up.missed = !entry;
        }
    }
    // The keys read the program's flags, which wait (with no token) for the standard headers'
    // folder that another process may be making: waited for first, where a cancel ends it.
    detail::await_standard_headers(program, &options.cancellation);
    // Every key, worked out once (the files read once): the cache asks the Program nothing else.
    const detail::ProgramKeys keys = detail::program_keys(program, target, name_expressions, options.extra_digest);
    const Cancellation cancellation = cancellation_of(keys, options.cancellation);
    // An entry keeps the name of the program that stored it: a hit is named as this program.
    const std::string& name = program.options().name;
    if (keys.code)
        return detail::named_as(compile_cached_cxx(cache, program, target, name_expressions, keys, options,
                                                   looked_up, cancellation, compile),
                                name);
    // PTX, NVVM IR and programs keyed by an extra digest: by their bytes alone.
    return detail::named_as(get_or_compile_cancellable(cache, keys.lookup, compile, on_cache_error, cancellation,
                                                       keys.source.compiler_generation),
                            name);
}

// The deprecated forms, with the cache first.
ObjectCode compile_cached(ProgramCache& cache, Program& program, CodeType target,
                          const std::vector<std::string>& name_expressions, CompileOptions options) {
    options.cache = &cache;
    return compile_cached(program, target, name_expressions, options);
}

ObjectCode compile_cached(ProgramCache& cache, Program& program, CodeType target,
                          const std::vector<std::string>& name_expressions,
                          const CacheWarningHandler& on_cache_error) {
    CompileOptions options;
    options.cache = &cache;
    options.on_cache_error = on_cache_error;
    return compile_cached(program, target, name_expressions, options);
}

std::optional<ObjectCode> find_cached(ProgramCache& cache, const Program& program, CodeType target,
                                      const std::vector<std::string>& name_expressions,
                                      CompileOptions options) {
    options.cache = &cache;
    return find_cached(program, target, name_expressions, options);
}

}  // namespace cudacore
