#include "cudacore/cached_compile.hpp"
#include "cudacore/compiler_flags.hpp"
#include "support/cudacore_trace.hpp"
#include "support/temporary_directory.hpp"

#include "cache/activity_counters.hpp"
#include "cache/cancellable_wait.hpp"
#include "cache/cached_entry.hpp"
#include "cache/code_keys.hpp"
#include "cache/project_search.hpp"
#include "code/compile_request.hpp"
#include "code/snapshot_compile.hpp"
#include "code/compiler_identity.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/program.hpp"
#include "cudacore/warnings.hpp"

#include <sys/resource.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
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
struct InFlight {
    std::mutex mutex;
    std::map<std::pair<const ProgramCache*, CacheKey>, std::shared_future<ObjectCode>> compiles;
};

InFlight& in_flight() {
    static auto* table = new InFlight;  // never destroyed: usable from static destructors
    return *table;
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
        warn(WarningKind::not_cached, "compile_cached: code '" + code.name() +
                                          "' compiled but not cached: the NVRTC or nvJitLink opened "
                                          "is not the version its file named when the key was made");
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

Cancellation cancellation_of(const Program& program, CodeType target, const CancellationToken& token) {
    return {token, [&program, target] {
                throw CompileCancelled(program.options().name, program.flags(target), program.backend());
            }};
}

// The result of another thread's compile of the same key, waited for while reading the token:
// a cancelled caller gives up within detail::cancellation_poll (the other compile goes on).
ObjectCode await_other_thread(const std::shared_future<ObjectCode>& pending,
                              const Cancellation& cancellation) {
    while (pending.wait_for(detail::cancellation_poll) != std::future_status::ready)
        cancellation.give_up_if_cancelled();
    return pending.get();
}

// Runs `produce` for (cache, key) at most once at a time in this process: callers arriving
// while it runs wait for and share its result or its exception.
// A caller whose own token is not cancelled does not share another's cancellation: it tries again
// (and produces itself when no other caller is producing).
ObjectCode single_flight(ProgramCache& cache, const CacheKey& key,
                         const std::function<ObjectCode()>& produce,
                         const Cancellation& cancellation) {
    auto& table = in_flight();
    const auto slot = std::make_pair(static_cast<const ProgramCache*>(&cache), key);
    std::promise<ObjectCode> promise;
    for (;;) {
        std::unique_lock lock(table.mutex);
        auto it = table.compiles.find(slot);
        if (it == table.compiles.end()) {
            table.compiles.emplace(slot, promise.get_future().share());
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
    };
    try {
        ObjectCode code = produce();
        promise.set_value(code);
        finish();
        return code;
    } catch (...) {
        promise.set_exception(std::current_exception());
        finish();
        throw;
    }
}

// From the NVRTC flags of the options (the include folders do not depend on the target).
std::shared_ptr<const detail::ProjectSearch> search_of(const Program& program) {
    return detail::project_search(program.options().name, nvrtc_flags(program.options()));
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
    return single_flight(cache, key, [&] {
        if (auto hit = lookup(cache, key, on_cache_error)) return *hit;
        // Another process may be compiling it: wait for its entry, or hold the lease.
        CompileTurn turn = cache.await_compile_turn(
            key, [&] { return lookup(cache, key, on_cache_error); }, cancellation.token);
        if (turn.cancelled) cancellation.throw_cancelled();
        if (turn.found) return *turn.found;
        ObjectCode code = counted_compile(compile);
        store(cache, key, code, on_cache_error, key_generation);
        return code;
    }, cancellation);
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
    const CacheKey bound = path_bound_key(keys);
    std::optional<ObjectCode> code = lookup(cache, bound, on_cache_error);
    if (!code || is_path_bound_marker(*code)) return std::nullopt;
    return CachedEntry{std::move(*code), bound, keys.first};
}

}  // namespace

std::optional<CachedEntry> find_cached_entry(ProgramCache& cache, const Program& program, CodeType target,
                                             const CacheKey& source_key, const CompileOptions& options,
                                             std::shared_ptr<const ProjectSearch> search) {
    const CacheWarningHandler& on_cache_error = options.on_cache_error;
    auto entry_at = [&](const CacheKey& key) -> std::optional<CachedEntry> {
        std::optional<ObjectCode> code = lookup(cache, key, on_cache_error);
        if (!code) return std::nullopt;
        return CachedEntry{std::move(*code), key, std::nullopt};
    };
    if (!options.extra_digest.empty())
        return entry_at(extend_key(source_key, "cudacore-extra-digest-v1", {{"", options.extra_digest}}));
    if (program.source_type() != SourceType::cxx) return entry_at(source_key);
    // A program whose snapshot reads no file has its first key remembered with the Program.
    if (const std::optional<CacheKey> first = remembered_first_key(program, source_key)) {
        std::optional<ObjectCode> entry = lookup(cache, *first, on_cache_error);
        if (!entry) return std::nullopt;
        if (!is_path_bound_marker(*entry)) return CachedEntry{std::move(*entry), *first, std::nullopt};
    }
    if (!search) search = search_of(program);
    const CodeKeys keys = code_keys(program, target, source_key, *search);
    if (!keys.snapshot.refusal.empty()) return std::nullopt;  // compiled from the files, never cached
    return entry_of_keys(cache, keys, on_cache_error);
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

// The other spelling of `folder` a check compile uses: other bytes and another length, so that
// code that names the folder, its length or any part of it comes out otherwise.
std::string other_spelling(const std::string& folder, std::string_view tag) {
    std::string other = "/.cudacore-check-" + std::string(tag);
    while (other.size() <= folder.size() + 3) other += 'q';
    if (other.size() == folder.size()) other += 'q';
    return other;
}

// Whether `code` (made in this process) is what the check compile made, but for the process ids
// NVRTC writes into internal names.
bool same_code(const ObjectCode& code, const detail::CheckCompileResult& check) {
    return check.compiled && code.symbol_map() == check.symbols &&
           detail::same_code_but_unit_ids(code.code(), static_cast<long>(::getpid()), check.code,
                                             check.process_id);
}

// Compiles a C++ program from `keys.snapshot` while this process holds its compile turn, and
// stores it under the key the check compile allows: the first key (the same code under other
// spellings of the folders, in another working directory and at another time), the path-bound key
// (the same code at another time only), or none (the code depends on the clock), with a warning
// that says why.
// Long because: the compile, the check compile beside it, and the second check are one sequence.
// Only NVRTC's translation unit id (same_code_but_unit_ids) may differ between the code returned
// and a plain compile of the same inputs.
ObjectCode compile_and_store(ProgramCache& cache, Program& program, CodeType target,
                             const std::vector<std::string>& name_expressions, const detail::CodeKeys& keys,
                             const CompileOptions& options, unsigned key_generation) {
    const CacheWarningHandler& on_cache_error = options.on_cache_error;
    const std::vector<HeaderBundle>& bundles = program.options().header_bundles;
    const bool declared = options.paths_and_clock_do_not_matter;
    std::vector<detail::Respelling> moved_folders;
    for (const auto& folder : keys.folders)
        moved_folders.push_back({folder.from, other_spelling(folder.from, moved_folders.empty() ? "p" : "s")});
    const detail::CompileSnapshot moved = declared ? detail::CompileSnapshot{} : respelled(keys.snapshot, moved_folders);
    std::future<detail::CheckCompileResult> check;
    if (!declared) {
        check = std::async(std::launch::async, [&] {
            return detail::run_check_compile(
                {moved, bundles, name_expressions, target, true, true, &options.cancellation});
        });
    }
    // One file under two names: the compile from memory is kept only where the compile from the
    // files agrees (which of the names NVRTC meets first decides its __FILE__).
    std::future<std::optional<std::string>> from_files;
    if (!keys.snapshot.aliased.empty()) {
        from_files = std::async(std::launch::async, [copy = program, target, &name_expressions,
                                                     token = &options.cancellation]() mutable {
            try {
                return std::optional<std::string>(std::string(
                    detail::ProgramInternals::compile_cxx(copy, target, name_expressions, false, token).code()));
            } catch (const CompileError&) {
                return std::optional<std::string>();
            }
        });
    }
    std::optional<ObjectCode> compiled;
    try {
        compiled = counted_compile([&] {
            return detail::compile_from_snapshot(program, target, name_expressions, keys.snapshot,
                                                 &options.cancellation);
        });
    } catch (...) {
        if (check.valid()) check.wait();
        if (from_files.valid()) from_files.wait();
        throw;
    }
    const ObjectCode code = std::move(*compiled);
    auto not_cached = [&](const std::string& why) {
        warn(WarningKind::not_cached, "compile_cached: program '" + program.options().name +
                                          "' compiled but not cached: " + why);
        return code;
    };
    if (from_files.valid()) {
        const std::optional<std::string> plain = from_files.get();
        const long here = static_cast<long>(::getpid());
        if (!plain || !detail::same_code_but_unit_ids(*plain, here, code.code(), here)) {
            if (check.valid()) check.wait();
            return not_cached(keys.snapshot.aliased + " are one file, and the compile from memory "
                              "differs from the compile from the files");
        }
    }
    if (declared) {
        store(cache, keys.first, code, on_cache_error, key_generation);
        return code;
    }
    const detail::CheckCompileResult first = check.get();
    if (options.cancellation.is_cancelled())
        throw CompileCancelled(program.options().name, program.flags(target), program.backend());
    // A check is compared with this process's code, or, where it ran in a process whose id has
    // another number of digits (NVRTC writes the id into internal names, whose lengths then
    // differ), with the same inputs compiled unmoved in the compile worker, whose code is then the
    // one kept.
    std::optional<detail::CheckCompileResult> unmoved;
    auto digits = [](long id) { return std::to_string(id).size(); };
    auto agrees = [&](const detail::CheckCompileResult& check) {
        if (!check.compiled) return false;
        if (digits(check.process_id) == digits(static_cast<long>(::getpid()))) return same_code(code, check);
        if (!unmoved)
            unmoved = detail::run_check_compile(
                {keys.snapshot, bundles, name_expressions, target, false, false, &options.cancellation});
        return unmoved->compiled && unmoved->symbols == check.symbols &&
               digits(unmoved->process_id) == digits(check.process_id) &&
               detail::same_code_but_unit_ids(unmoved->code, unmoved->process_id, check.code, check.process_id);
    };
    auto kept = [&] {
        return unmoved ? ObjectCode::from_bytes(target, unmoved->code, program.options().name, unmoved->symbols)
                       : code;
    };
    if (agrees(first)) {
        const ObjectCode stored = kept();
        store(cache, keys.first, stored, on_cache_error, key_generation);
        return stored;
    }
    if (!first.compiled) return not_cached("its check compile could not be made (" + first.failure + ")");
    const detail::CheckCompileResult second = detail::run_check_compile(
        {keys.snapshot, bundles, name_expressions, target, true, false, &options.cancellation});
    if (agrees(second)) {
        const ObjectCode stored = kept();
        if (store(cache, detail::path_bound_key(keys), stored, on_cache_error, key_generation))
            store(cache, keys.first, detail::path_bound_marker(), on_cache_error, key_generation);
        return stored;
    }
    if (!second.compiled) return not_cached("its check compile could not be made (" + second.failure + ")");
    return not_cached("its code depends on the clock (__DATE__ or __TIME__): compiled with "
                      "the clock moved it came out otherwise; pass CompileOptions::extra_digest to cache it");
}

// What compile_cached found under the first key the Program remembers (remembered_lookup_key),
// before working out the source key: nothing looked up, a miss, or a path-bound marker.
struct RememberedLookup {
    std::optional<CacheKey> key;  // looked up, where remembered
    bool missed = false;
};

// compile_cached of a C++ program without extra_digest: the keys of its snapshot, a lookup, and
// on a miss the compile from that snapshot (compile_and_store).
ObjectCode compile_cached_cxx(ProgramCache& cache, Program& program, CodeType target,
                              const std::vector<std::string>& name_expressions, const detail::SourceKey& keyed,
                              const CompileOptions& options, const RememberedLookup& looked_up) {
    const CacheKey& source_key = keyed.key;
    const CacheWarningHandler& on_cache_error = options.on_cache_error;
    const Cancellation cancellation = cancellation_of(program, target, options.cancellation);
    // A program whose snapshot reads no file has its first key remembered with the Program.
    std::optional<CacheKey> remembered = looked_up.key;
    bool remembered_missed = looked_up.missed;
    if (!remembered) {
        remembered = detail::remembered_first_key(program, source_key);
        if (remembered) {
            std::optional<ObjectCode> entry = lookup(cache, *remembered, on_cache_error);
            if (entry && !detail::is_path_bound_marker(*entry)) return *entry;
            remembered_missed = !entry;
        }
    }
    // The files as they are now, each read once: the key and the compile are made of those bytes.
    const std::shared_ptr<const detail::ProjectSearch> search = keyed.search ? keyed.search : search_of(program);
    const detail::CodeKeys keys = detail::code_keys(program, target, source_key, *search);
    if (!keys.snapshot.refusal.empty()) {
        CompileOptions cancellable;
        cancellable.cancellation = options.cancellation;
        ObjectCode code = counted_compile([&] { return program.compile(target, name_expressions, cancellable); });
        warn(WarningKind::not_cached, "compile_cached: program '" + program.options().name +
                                          "' compiled but not cached: " + keys.snapshot.refusal +
                                          "; pass CompileOptions::extra_digest to cache it");
        return code;
    }
    if (!(remembered_missed && keys.first == *remembered)) {  // else looked up just now
        if (auto hit = detail::entry_of_keys(cache, keys, on_cache_error)) return std::move(hit->code);
    }
    auto lookup_code = [&]() -> std::optional<ObjectCode> {
        std::optional<detail::CachedEntry> entry = detail::entry_of_keys(cache, keys, on_cache_error);
        if (!entry) return std::nullopt;
        return std::move(entry->code);
    };
    return single_flight(cache, keys.first, [&]() -> ObjectCode {
        if (auto hit = lookup_code()) return *hit;
        // Another process may be compiling it: wait for its entry, or hold the lease (released
        // when this returns, after the stores below).
        // The lease is the program's (its source key), as other processes of any version ask it.
        CompileTurn turn = cache.await_compile_turn(source_key, lookup_code, options.cancellation);
        if (turn.cancelled) cancellation.throw_cancelled();
        if (turn.found) return *turn.found;
        return compile_and_store(cache, program, target, name_expressions, keys, options, keyed.compiler_generation);
    }, cancellation);
}

}  // namespace

std::optional<ObjectCode> find_cached(const Program& program, CodeType target,
                                      const std::vector<std::string>& name_expressions,
                                      const CompileOptions& options) {
    if (options.cache == nullptr)
        throw InvalidArgumentError("find_cached: CompileOptions::cache is null for program '" +
                                   program.options().name + "' (find_cached only looks in a cache)");
    return find_code(*options.cache, program, target, detail::source_key(program, target, name_expressions),
                     options);
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
    const bool cxx = program.source_type() == SourceType::cxx;
    // A hit on the key the Program remembers is one lookup: no hashing, no file read, no compiler.
    RememberedLookup looked_up;
    if (cxx && options.extra_digest.empty()) {
        looked_up.key = detail::remembered_lookup_key(program, target, name_expressions);
        if (looked_up.key) {
            std::optional<ObjectCode> entry = lookup(cache, *looked_up.key, on_cache_error);
            if (entry && !detail::is_path_bound_marker(*entry)) {
                program.write_debug_source();  // code from the cache names it (if any)
                return std::move(*entry);
            }
            looked_up.missed = !entry;
        }
    }
    const unsigned generation = detail::compiler_identity_generation();
    detail::SourceKey keyed = detail::source_key(program, target, name_expressions);
    keyed.compiler_generation = generation;
    const CacheKey& source_key = keyed.key;
    // Counted by get_or_compile, and below where it is called directly.
    // Code from the cache names its debug source file (if any): make sure it exists.
    program.write_debug_source();
    const Cancellation cancellation = cancellation_of(program, target, options.cancellation);
    if (!options.extra_digest.empty()) {
        return get_or_compile_cancellable(
            cache, extend_key(source_key, "cudacore-extra-digest-v1", {{"", options.extra_digest}}),
            compile, on_cache_error, cancellation, generation);
    }
    if (!cxx)  // PTX and NVVM IR include nothing
        return get_or_compile_cancellable(cache, source_key, compile, on_cache_error, cancellation, generation);
    return compile_cached_cxx(cache, program, target, name_expressions, keyed, options, looked_up);
}

}  // namespace cudacore
