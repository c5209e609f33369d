#include "code/project_search.hpp"

#include "code/cuda_home.hpp"
#include "cudacore/program_options.hpp"
#include "headers/standard_headers.hpp"

#include <functional>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace cudacore::detail {
namespace {

// The search worked out now, from nothing remembered.
std::shared_ptr<const ProjectSearch> work_out(const std::string& program_name,
                                              const std::vector<std::string>& flags) {
    auto made = std::make_shared<ProjectSearch>();
    made->search = include_search(program_name, flags);
    made->root = project_root(made->search, toolkit_include_dirs());
    made->key_fields.reserve(flags.size() + 1);
    for (const auto& flag : flags) {
        std::string keyed = standard_headers_key_flag(flag);
        made->key_fields.push_back(keyed == flag ? key_flag(made->root, flag) : std::move(keyed));
    }
    made->key_fields.push_back(program_name.starts_with('/') ? made->root.key_text(program_name)
                                                             : program_name);
    return made;
}

std::size_t hash_of(const std::string& program_name, const std::vector<std::string>& flags,
                    std::string_view cuda_home) {
    const std::hash<std::string_view> hash;
    std::size_t value = hash(program_name) ^ (hash(cuda_home) * 31);
    for (const auto& flag : flags) value = value * 1099511628211ull ^ hash(flag);
    return value;
}

// The searches of this process, by name, flags and $CUDA_HOME; one entry per working directory
// for a search that depends on it. Never destroyed, like the toolkit's folders.
class ProjectSearchMemo {
public:
    std::shared_ptr<const ProjectSearch> find(const std::string& program_name,
                                              const std::vector<std::string>& flags) {
        const std::string* home = cuda_home_value();
        const std::string_view cuda_home = home ? std::string_view(*home) : std::string_view();
        const std::size_t hash = hash_of(program_name, flags, cuda_home);
        std::optional<std::string> working_directory;  // read once, when an entry depends on it
        {
            std::lock_guard lock(mutex_);
            auto [it, end] = entries_.equal_range(hash);
            for (; it != end; ++it) {
                const Entry& entry = it->second;
                if (entry.program_name != program_name || entry.cuda_home != cuda_home ||
                    entry.flags != flags)
                    continue;
                const std::string& resolved_in = entry.search->search.working_directory;
                if (resolved_in.empty()) return entry.search;
                if (!working_directory) working_directory = current_working_directory();
                if (resolved_in == *working_directory) return entry.search;
            }
        }
        std::shared_ptr<const ProjectSearch> made = work_out(program_name, flags);
        const IncludeSearch& search = made->search;
        if (search.working_directory.empty() &&
            (!search.relative_folders.empty() || !search.pre_includes.empty()))
            return made;  // resolved without a readable working directory: not kept
        std::lock_guard lock(mutex_);
        if (entries_.size() >= kept) entries_.clear();  // many programs: start over
        entries_.emplace(hash, Entry{program_name, flags, std::string(cuda_home), made});
        return made;
    }

private:
    static constexpr std::size_t kept = 256;
    struct Entry {
        std::string program_name;
        std::vector<std::string> flags;
        std::string cuda_home;
        std::shared_ptr<const ProjectSearch> search;
    };
    std::mutex mutex_;
    std::unordered_multimap<std::size_t, Entry> entries_;
};

}  // namespace

std::shared_ptr<const ProjectSearch> project_search(const std::string& program_name,
                                                    const std::vector<std::string>& flags) {
    static auto* memo = new ProjectSearchMemo;
    return memo->find(program_name, flags);
}

}  // namespace cudacore::detail
