#include "cudacore/cached_compile.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/program.hpp"

#include <future>
#include <map>
#include <mutex>
#include <utility>

namespace cudacore {
namespace {

// Compiles in flight in this process, by cache and key; an entry lives while its compile runs.
struct InFlight {
    std::mutex mutex;
    std::map<std::pair<const ProgramCache*, CacheKey>, std::shared_future<ObjectCode>> compiles;
};

InFlight& in_flight() {
    static auto* table = new InFlight;  // never destroyed: usable from static destructors
    return *table;
}

}  // namespace

namespace {

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

}  // namespace

ObjectCode get_or_compile(ProgramCache& cache, const CacheKey& key,
                          const std::function<ObjectCode()>& compile,
                          const CacheWarningHandler& on_cache_error) {
    if (auto hit = lookup(cache, key, on_cache_error)) return *hit;

    auto& table = in_flight();
    const auto slot = std::make_pair(static_cast<const ProgramCache*>(&cache), key);
    std::promise<ObjectCode> promise;
    {
        std::unique_lock lock(table.mutex);
        if (auto it = table.compiles.find(slot); it != table.compiles.end()) {
            std::shared_future<ObjectCode> pending = it->second;
            lock.unlock();
            return pending.get();
        }
        table.compiles.emplace(slot, promise.get_future().share());
    }
    // We are the one compiler of this key; whatever happens, publish it and leave the table.
    auto finish = [&] {
        std::lock_guard lock(table.mutex);
        table.compiles.erase(slot);
    };
    try {
        // Another thread may have stored it between our miss and our registration.
        std::optional<ObjectCode> code = lookup(cache, key, on_cache_error);
        if (!code) {
            code = compile();
            try {
                cache.put(key, *code);
            } catch (const CacheError& e) {
                report(on_cache_error, e);  // the code is good; only keeping it failed
            }
        }
        promise.set_value(*code);
        finish();
        return *code;
    } catch (...) {
        promise.set_exception(std::current_exception());
        finish();
        throw;
    }
}

ObjectCode compile_cached(ProgramCache& cache, Program& program, CodeType target,
                          const std::vector<std::string>& name_expressions,
                          const CacheWarningHandler& on_cache_error) {
    return get_or_compile(cache, cache_key(program, target, name_expressions),
                          [&] { return program.compile(target, name_expressions); },
                          on_cache_error);
}

}  // namespace cudacore
