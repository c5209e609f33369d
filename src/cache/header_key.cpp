#include "cache/header_key.hpp"

#include "headers/include_lookups.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <ctime>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <unordered_map>

namespace cudacore::detail {
namespace {

std::atomic<std::uint64_t> generation{0};

// Whether two header-list entries hold the same record: the same bytes, found without reading
// them when both share one copy (a memory cache hands out the entry it holds).
bool same_record(const ObjectCode& a, const ObjectCode& b) {
    const std::string_view x = a.code(), y = b.code();
    return (x.data() == y.data() && x.size() == y.size()) || x == y;
}

// The code keys of this process, by source key and project folder (one project at two paths
// shares its source keys); never destroyed, like the digests.
class HeaderKeyMemo {
public:
    std::shared_ptr<const HeaderKey> find(const CacheKey& source, const std::string& project_folder) {
        std::lock_guard lock(mutex_);
        auto it = entries_.find({source, project_folder});
        return it == entries_.end() ? nullptr : it->second;
    }
    void remember(std::shared_ptr<const HeaderKey> key) {
        std::lock_guard lock(mutex_);
        entries_[{key->source_key, key->project_folder}] = std::move(key);
    }
    void clear() {
        std::lock_guard lock(mutex_);
        entries_.clear();
    }

private:
    std::mutex mutex_;
    std::map<std::pair<CacheKey, std::string>, std::shared_ptr<const HeaderKey>> entries_;
};

HeaderKeyMemo& header_key_memo() {
    static auto* memo = new HeaderKeyMemo;
    return *memo;
}

}  // namespace

bool header_key_holds(const HeaderKey& known, const ObjectCode& list,
                      const std::string& working_directory_now) {
    if (known.generation != header_key_generation()) return false;  // forgotten since
    if (!same_record(known.list, list)) return false;                // another record: key it
    if (!known.working_directory.empty() &&
        known.working_directory != (working_directory_now.empty() ? current_working_directory()
                                                                  : working_directory_now))
        return false;  // its relative folders are other folders now
    for (const auto& [path, digest] : known.headers_outside_toolkit) {
        if (digest.settled && file_stamp(path) == digest.stamp) continue;
        const std::optional<FileDigest> now = file_digest(path);
        if (!now || now->digest != digest.digest) return false;  // edited or gone
    }
    LookupStates states;
    for (const auto& [path, state] : known.lookups_outside_toolkit)
        if (states.state(path) != state) return false;  // created or removed
    return true;
}

std::uint64_t header_key_generation() noexcept {
    return generation.load(std::memory_order_acquire);
}

std::shared_ptr<const HeaderKey> find_header_key(const CacheKey& source_key,
                                                 const ObjectCode& list,
                                                 const std::string& project_folder,
                                                 const std::string& working_directory_now) {
    std::shared_ptr<const HeaderKey> known = header_key_memo().find(source_key, project_folder);
    if (!known || !header_key_holds(*known, list, working_directory_now))
        return nullptr;
    return known;
}

void remember_header_key(std::shared_ptr<const HeaderKey> key) {
    header_key_memo().remember(std::move(key));
}

void forget_header_keys() {
    generation.fetch_add(1, std::memory_order_acq_rel);
    header_key_memo().clear();
    forget_toolkit_views();
}

}  // namespace cudacore::detail
