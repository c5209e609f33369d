#include "cudacore/cached_compile.hpp"

#include "cudacore/program.hpp"
#include "cudacore/warnings.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
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

// Runs `produce` for (cache, key) at most once at a time in this process: callers arriving
// while it runs wait for and share its result or its exception.
ObjectCode single_flight(ProgramCache& cache, const CacheKey& key,
                         const std::function<ObjectCode()>& produce) {
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

// Length-prefixed fields, so that no two inputs run together.
void add_field(std::string& out, std::string_view field) {
    out += std::to_string(field.size());
    out += ':';
    out += field;
}

CacheKey extend_key(const CacheKey& base, std::string_view tag,
                    const std::vector<std::pair<std::string, std::string>>& fields) {
    std::string bytes;
    add_field(bytes, tag);
    add_field(bytes, base.hex());
    for (const auto& [name, value] : fields) {
        add_field(bytes, name);
        add_field(bytes, value);
    }
    return CacheKey::of_bytes(bytes);
}

// SHA-256 of a file's contents, remembered by (size, mtime, inode, ctime) so that repeated
// lookups of unchanged toolkit headers cost one stat each. Files changed in the last seconds are
// always read again (a timestamp's granularity could hide a second edit).
class HeaderDigests {
public:
    std::optional<std::string> digest(const std::string& path) {
        struct ::stat info {};
        if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
        const Stamp stamp{static_cast<std::uint64_t>(info.st_size),
                          static_cast<std::uint64_t>(info.st_ino),
                          static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 +
                              info.st_mtim.tv_nsec,
                          static_cast<std::int64_t>(info.st_ctim.tv_sec) * 1'000'000'000 +
                              info.st_ctim.tv_nsec};
        {
            std::lock_guard lock(mutex_);
            if (auto it = known_.find(path); it != known_.end() && it->second.first == stamp) {
                return it->second.second;
            }
        }
        std::ifstream in(path, std::ios::binary);
        if (!in) return std::nullopt;
        std::string contents((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (in.bad()) return std::nullopt;
        std::string value = CacheKey::of_bytes(contents).hex();
        const std::int64_t now_ns = static_cast<std::int64_t>(std::time(nullptr)) * 1'000'000'000;
        const bool settled = now_ns - std::max(stamp.mtime_ns, stamp.ctime_ns) > 2'000'000'000;
        if (settled) {
            std::lock_guard lock(mutex_);
            known_[path] = {stamp, value};
        }
        return value;
    }

private:
    struct Stamp {
        std::uint64_t size;
        std::uint64_t inode;
        std::int64_t mtime_ns;
        std::int64_t ctime_ns;
        bool operator==(const Stamp&) const = default;
    };
    std::mutex mutex_;
    std::map<std::string, std::pair<Stamp, std::string>> known_;
};

HeaderDigests& header_digests() {
    static auto* digests = new HeaderDigests;  // never destroyed, like the in-flight table
    return *digests;
}

// The key that adds every header's path and digest to `base`; a header that cannot be read
// gives nullopt and its path in `unreadable`.
std::optional<CacheKey> key_with_headers(const CacheKey& base,
                                         const std::vector<std::string>& headers,
                                         std::string* unreadable = nullptr) {
    std::vector<std::pair<std::string, std::string>> fields;
    fields.reserve(headers.size());
    for (const auto& header : headers) {
        std::optional<std::string> digest = header_digests().digest(header);
        if (!digest) {
            if (unreadable) *unreadable = header;
            return std::nullopt;
        }
        fields.emplace_back(header, std::move(*digest));
    }
    return extend_key(base, "cudacore-headers-v1", fields);
}

// The header list is stored in the cache as an ObjectCode under the program's source key, so
// that other processes sharing a disk cache find it too.
constexpr std::string_view header_list_name = "cudacore header list";
constexpr std::string_view header_list_magic = "cudacore-header-list-v1\n";

ObjectCode header_list_entry(const std::vector<std::string>& headers) {
    std::string text(header_list_magic);
    for (const auto& header : headers) text += header + '\n';
    return ObjectCode::from_bytes(CodeType::object, std::move(text), std::string(header_list_name));
}

std::optional<std::vector<std::string>> read_header_list(const ObjectCode& entry) {
    const std::string_view text = entry.code();
    if (entry.name() != header_list_name || text.substr(0, header_list_magic.size()) !=
                                                header_list_magic) {
        return std::nullopt;
    }
    std::vector<std::string> headers;
    std::istringstream lines(std::string(text.substr(header_list_magic.size())));
    for (std::string line; std::getline(lines, line);) {
        if (!line.empty()) headers.push_back(line);
    }
    return headers;
}

}  // namespace

ObjectCode get_or_compile(ProgramCache& cache, const CacheKey& key,
                          const std::function<ObjectCode()>& compile) {
    if (auto hit = cache.get(key)) return *hit;
    return single_flight(cache, key, [&] {
        // Another thread may have stored it between our miss and our registration.
        if (auto code = cache.get(key)) return *code;
        ObjectCode code = compile();
        cache.put(key, code);
        return code;
    });
}

ObjectCode compile_cached(ProgramCache& cache, Program& program, CodeType target,
                          const std::vector<std::string>& name_expressions,
                          const CachedCompileOptions& options) {
    const CacheKey source_key = cache_key(program, target, name_expressions);
    auto compile = [&] { return program.compile(target, name_expressions); };
    if (!options.extra_digest.empty()) {
        return get_or_compile(
            cache, extend_key(source_key, "cudacore-extra-digest-v1", {{"", options.extra_digest}}),
            compile);
    }
    if (program.source_type() == SourceType::ptx) return get_or_compile(cache, source_key, compile);

    auto lookup = [&]() -> std::optional<ObjectCode> {
        std::optional<ObjectCode> list_entry = cache.get(source_key);
        if (!list_entry) return std::nullopt;
        std::optional<std::vector<std::string>> headers = read_header_list(*list_entry);
        if (!headers) return std::nullopt;
        std::optional<CacheKey> key = key_with_headers(source_key, *headers);
        if (!key) return std::nullopt;  // a header is gone: compile again
        return cache.get(*key);
    };
    if (auto hit = lookup()) return *hit;

    return single_flight(cache, source_key, [&]() -> ObjectCode {
        if (auto hit = lookup()) return *hit;
        const std::string program_name = "program '" + program.options().name + "'";
        if (program.options().fdevice_time_trace) {
            ObjectCode code = compile();
            warn(WarningKind::not_cached,
                 "compile_cached: " + program_name + " compiled but not cached: with "
                 "fdevice_time_trace set the headers it reads cannot be recorded; pass "
                 "CachedCompileOptions::extra_digest to cache it");
            return code;
        }
        std::vector<std::string> headers;
        ObjectCode code = program.compile(target, name_expressions, headers);
        std::string unreadable;
        std::optional<CacheKey> key = key_with_headers(source_key, headers, &unreadable);
        if (!key) {
            warn(WarningKind::not_cached,
                 "compile_cached: " + program_name + " compiled but not cached: the header '" +
                     unreadable + "' it read cannot be read back to key the cache; pass "
                     "CachedCompileOptions::extra_digest to cache it");
            return code;
        }
        cache.put(*key, code);
        cache.put(source_key, header_list_entry(headers));
        return code;
    });
}

}  // namespace cudacore
