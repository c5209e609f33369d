#include "cudacore/cached_compile.hpp"
#include "cudacore/compiler_flags.hpp"
#include "support/cudacore_trace.hpp"
#include "support/temporary_directory.hpp"

#include "cache/activity_counters.hpp"
#include "cache/cancellable_wait.hpp"
#include "cache/cached_entry.hpp"
#include "cache/header_key.hpp"
#include "cache/path_key.hpp"
#include "headers/include_lookups.hpp"
#include "cache/program_key_memo.hpp"
#include "cache/project_search.hpp"
#include "code/compile_request.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/program.hpp"
#include "cudacore/warnings.hpp"

#include <sys/resource.h>
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

// Stores `code`; false when the cache could not (reported: the code is good, only keeping it
// failed).
bool store(ProgramCache& cache, const CacheKey& key, const ObjectCode& code,
           const CacheWarningHandler& on_cache_error) {
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

// What a C++ compile's key covers beyond cache_key: the headers it read (by contents) and every
// place its preprocessor looked for one (by what a lookup finds there: a header created in a
// folder searched earlier, or one a __has_include test now finds, changes the key). Stored as
// the "header list" entry under the source key, so that other processes find it too.
struct HeaderRecord {
    std::vector<std::string> headers;  // absolute paths, as Program::compile lists them
    std::vector<std::string> lookups;  // include_lookups(): every path tried, found or not
};

// Where this compile searches: the folder quoted includes of the source are resolved against
// and the search folders, relative to the project folder (path_key.hpp). In the code key, so
// that a list made in one project never keys a lookup in another laid out otherwise.
std::vector<std::pair<std::string, std::string>> search_fields(const detail::IncludeSearch& search,
                                                               const detail::ProjectRoot& root) {
    std::vector<std::pair<std::string, std::string>> fields{
        {"main-folder", root.key_text(search.main_directory)}};
    for (const auto& dir : search.directories) fields.emplace_back("search-folder", root.key_text(dir));
    for (const auto& name : search.pre_includes)
        fields.emplace_back("pre-include", name.starts_with('/') ? root.key_text(name) : name);
    return fields;
}

// From the NVRTC flags of the options (the include folders do not depend on the target).
std::shared_ptr<const detail::ProjectSearch> search_of(const Program& program) {
    return detail::project_search(program.options().name, nvrtc_flags(program.options()));
}

// A compile's include search, its project folder, and the fields its code key names it by.
struct KeyedSearch {
    KeyedSearch(const detail::IncludeSearch& searched, const detail::ProjectRoot& project_root)
        : search(searched), root(project_root), fields(search_fields(search, root)) {}
    const detail::IncludeSearch& search;
    const detail::ProjectRoot& root;
    std::vector<std::pair<std::string, std::string>> fields;
};

// The working directory, where `record` depends on it: a path it lists lies in a folder of the
// search resolved there, or a pre-include is looked for there. Else empty (another working
// directory would give the same lookups, so the same code).
std::string working_directory_of(const detail::IncludeSearch& search, const HeaderRecord& record) {
    if (search.working_directory.empty() || !search.pre_includes.empty())
        return search.working_directory;
    for (const auto* paths : {&record.headers, &record.lookups}) {
        for (const auto& path : *paths) {
            for (const auto& folder : search.relative_folders) {
                // By text, ".." and all: "main/../x.h" was looked for from the folder "main".
                if (path.size() > folder.size() && path.compare(0, folder.size(), folder) == 0 &&
                    (path[folder.size()] == '/' || folder == "/"))
                    return search.working_directory;
            }
        }
    }
    return {};
}

// The code key that adds to `source_key` the search, every header's path and digest and every
// lookup's path and state, as `view` has them (paths relative to the project folder, and the
// folder itself where the code may name a path of it), with what re-checks it. Remembered by this
// process, and by the Program (`memo`, when not null).
std::shared_ptr<const detail::HeaderKey> key_with_headers(const Program& program,
                                                          const CacheKey& source_key,
                                                          const KeyedSearch& search,
                                                          const HeaderRecord& record,
                                                          const detail::FileView& view,
                                                          const ObjectCode& list,
                                                          detail::ProgramKeyMemo* memo) {
    const bool names_paths = detail::code_may_name_paths(program, nvrtc_flags(program.options()),
                                                         view, search.root);
    // Keyed by the project folder, the key depends on the working directory wherever the folder
    // was found from it.
    std::string working_directory = working_directory_of(search.search, record);
    if (names_paths && working_directory.empty()) working_directory = search.search.working_directory;
    auto made = std::make_shared<detail::HeaderKey>(
        detail::HeaderKey{source_key, detail::header_key_generation(), list, CacheKey{},
                          std::move(working_directory), search.root.folder, {}, {}});
    std::vector<std::pair<std::string, std::string>> fields = search.fields;
    fields.reserve(search.fields.size() + view.headers.size() + view.lookups.size() + 2);
    if (names_paths) {
        fields.emplace_back("project-folder", search.root.folder);
        fields.emplace_back("standard-headers-folder", search.root.standard_headers);
    }
    const std::vector<std::string> toolkit_dirs = toolkit_include_dirs();
    for (const auto& [header, digest] : view.headers) {
        fields.emplace_back("header:" + search.root.key_text(header), digest.digest);
        if (!detail::inside_any(header, toolkit_dirs))
            made->headers_outside_toolkit.emplace_back(header, digest);
    }
    for (const auto& [path, state] : view.lookups) {
        if (!detail::inside_any(path, toolkit_dirs))
            made->lookups_outside_toolkit.emplace_back(path, state);
        fields.emplace_back("lookup:" + search.root.key_text(path), state);
    }
    made->key = extend_key(source_key, "cudacore-headers-v4", fields);
    detail::remember_header_key(made);
    if (memo) memo->remember_header_key(source_key, made);
    return made;
}

// The header record is stored in the cache as an ObjectCode under the program's source key:
// after the magic, one line per path, "h <path>" for a header read, "l <path>" for a lookup, each
// path relative to the project folder (ProjectRoot::key_text), so that the same project at another
// path reads the same record.
constexpr std::string_view header_list_name = "cudacore header list";
constexpr std::string_view header_list_magic = "cudacore-header-list-v3\n";

// nullopt when a path cannot be written as a line (it holds a newline).
std::optional<ObjectCode> header_list_entry(const HeaderRecord& record, const detail::ProjectRoot& root) {
    std::string text(header_list_magic);
    for (const auto& [tag, paths] : {std::pair{"h ", &record.headers}, {"l ", &record.lookups}}) {
        for (const auto& path : *paths) {
            if (path.find('\n') != std::string::npos) return std::nullopt;
            text += tag + root.key_text(path) + '\n';
        }
    }
    return ObjectCode::from_bytes(CodeType::object, std::move(text), std::string(header_list_name));
}

std::optional<HeaderRecord> read_header_list(const ObjectCode& entry, const detail::ProjectRoot& root) {
    const std::string_view text = entry.code();
    if (entry.name() != header_list_name || text.substr(0, header_list_magic.size()) !=
                                                header_list_magic) {
        return std::nullopt;
    }
    HeaderRecord record;
    std::istringstream lines(std::string(text.substr(header_list_magic.size())));
    for (std::string line; std::getline(lines, line);) {
        if (line.starts_with("h ") && line.size() > 2) {
            record.headers.push_back(root.path_of(line.substr(2)));
        } else if (line.starts_with("l ") && line.size() > 2) {
            record.lookups.push_back(root.path_of(line.substr(2)));
        } else {
            return std::nullopt;  // not a list this version wrote
        }
    }
    return record;
}

// Why NVRTC's time trace (the header record) cannot be written now, or empty. NVRTC crashes
// when that write fails, so a file-size limit or a nearly full temporary directory is found
// first; the compile then goes on without the cache.
std::string trace_unwritable_reason() {
    constexpr std::uint64_t needed = 64ull << 20;  // far above any trace
    // A missing or relative TMPDIR, or no room there: compiled, not cached.
    const detail::TemporaryDirectory temp = detail::temporary_directory();
    if (!temp.problem.empty()) return temp.problem;
    return detail::room_problem(temp.path, needed, "the header trace");
}

// get_or_compile for a compile `cancellation` gives up (a waiter whose own token is not
// cancelled never shares another's cancellation).
ObjectCode get_or_compile_cancellable(ProgramCache& cache, const CacheKey& key,
                                      const std::function<ObjectCode()>& compile,
                                      const CacheWarningHandler& on_cache_error,
                                      const Cancellation& cancellation) {
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
        store(cache, key, code, on_cache_error);
        return code;
    }, cancellation);
}

}  // namespace

ObjectCode get_or_compile(ProgramCache& cache, const CacheKey& key,
                          const std::function<ObjectCode()>& compile,
                          const CacheWarningHandler& on_cache_error) {
    return get_or_compile_cancellable(cache, key, compile, on_cache_error,
                                      {CancellationToken{}, [] {}});
}

namespace detail {

// The keys compile_cached uses for `program`: the source key, and how the code's key follows
// from it (extra digest, header list, or the source key itself).
std::optional<CachedEntry> find_cached_entry(ProgramCache& cache, const Program& program,
                                             const CacheKey& source_key,
                                             const CompileOptions& options,
                                             std::shared_ptr<const ProjectSearch> search) {
    const CacheWarningHandler& on_cache_error = options.on_cache_error;
    auto entry_at = [&](const CacheKey& key,
                        std::optional<ObjectCode> header_list) -> std::optional<CachedEntry> {
        std::optional<ObjectCode> code = lookup(cache, key, on_cache_error);
        if (!code) return std::nullopt;
        return CachedEntry{std::move(*code), key, std::move(header_list)};
    };
    if (!options.extra_digest.empty()) {
        return entry_at(
            extend_key(source_key, "cudacore-extra-digest-v1", {{"", options.extra_digest}}),
            std::nullopt);
    }
    if (program.source_type() != SourceType::cxx) return entry_at(source_key, std::nullopt);
    std::optional<ObjectCode> list_entry = lookup(cache, source_key, on_cache_error);
    if (!list_entry) return std::nullopt;
    // The code key, from the first that still holds: the one this Program made last, the one this
    // process made, or one made now from the record.
    ProgramKeyMemo* memo = program_key_memo(program);
    if (memo) {
        const std::shared_ptr<const HeaderKey> known = memo->header_key(source_key);
        if (known && header_key_holds(*known, *list_entry))
            return entry_at(known->key, std::move(list_entry));
    }
    // Programs of one project at two paths share a source key: a code key made for one names its
    // files, so it is used only for a program of the same project folder.
    if (!search) search = search_of(program);
    if (std::shared_ptr<const HeaderKey> known =
            find_header_key(source_key, *list_entry, search->root.folder, search->search.working_directory)) {
        if (memo) memo->remember_header_key(source_key, known);
        return entry_at(known->key, std::move(list_entry));
    }
    std::optional<HeaderRecord> record = read_header_list(*list_entry, search->root);
    if (!record) return std::nullopt;
    const FileView view = view_of_record(record->headers, record->lookups, toolkit_include_dirs());
    if (!view.refusal.empty()) return std::nullopt;  // a header is gone: compile again
    const std::shared_ptr<const HeaderKey> key = key_with_headers(
        program, source_key, KeyedSearch(search->search, search->root), *record, view, *list_entry, memo);
    return entry_at(key->key, std::move(list_entry));
}

void forget_remembered_header_keys() { forget_header_keys(); }

bool is_header_list(const ObjectCode& entry) {
    return entry.name() == header_list_name &&
           entry.code().substr(0, header_list_magic.size()) == header_list_magic;
}

}  // namespace detail

namespace {

std::optional<ObjectCode> find_code(ProgramCache& cache, const Program& program,
                                    const detail::SourceKey& source_key,
                                    const CompileOptions& options) {
    std::optional<detail::CachedEntry> entry =
        detail::find_cached_entry(cache, program, source_key.key, options, source_key.search);
    if (!entry) return std::nullopt;
    return std::move(entry->code);
}

// Stores `code`, compiled from the files `view` holds (found through `search`, where the compile
// looked them up), under the key of those files, and their list under `source_key`. Returns why
// it cannot be cached, or "" (stored, or a failed store that store() reported).
std::string store_under_view(ProgramCache& cache, const Program& program, const CacheKey& source_key,
                             const detail::IncludeSearch& search, const detail::FileView& view,
                             const ObjectCode& code, const CacheWarningHandler& on_cache_error) {
    if (!view.refusal.empty()) return view.refusal;
    if (!view.changed.empty()) return view.changed + ", so the code may not be what they hold now";
    HeaderRecord record;
    for (const auto& header : view.headers) record.headers.push_back(header.first);
    for (const auto& lookup : view.lookups) record.lookups.push_back(lookup.first);
    const detail::ProjectRoot root = detail::project_root(search, toolkit_include_dirs());
    const KeyedSearch keyed(search, root);
    std::optional<ObjectCode> list = header_list_entry(record, keyed.root);
    if (!list) return "a header's path holds a newline";
    // The same record as the one this Program keyed last (compiled for another cache): the
    // list shares its bytes, so a hit in either cache knows it by address, not by comparing
    // every path (header_key_holds).
    detail::ProgramKeyMemo* memo = detail::program_key_memo(program);
    if (memo) {
        const std::shared_ptr<const detail::HeaderKey> known = memo->header_key(source_key);
        if (known && known->list.code() == list->code()) list = known->list;
    }
    const std::shared_ptr<const detail::HeaderKey> key =
        key_with_headers(program, source_key, keyed, record, view, *list, memo);
    // The list goes in only beside stored code: a list without its code is a wasted lookup.
    if (store(cache, key->key, code, on_cache_error)) {
        store(cache, source_key, *list, on_cache_error);
    }
    return {};
}

// Compiles a C++ program while this process holds its compile turn, and stores the code under the
// key of the headers it read, their list under `source_key`. Code whose headers cannot be known
// is returned without being cached (with a warning that says why).
ObjectCode compile_and_store_with_headers(ProgramCache& cache, Program& program, CodeType target,
                                          const std::vector<std::string>& name_expressions,
                                          const CacheKey& source_key,
                                          const CacheWarningHandler& on_cache_error,
                                          const CompileOptions& cancellable) {
    const std::string program_name = "program '" + program.options().name + "'";
    if (program.options().fdevice_time_trace) {
        ObjectCode code = counted_compile([&] { return program.compile(target, name_expressions, cancellable); });
        warn(WarningKind::not_cached,
             "compile_cached: " + program_name + " compiled but not cached: with "
             "fdevice_time_trace set the headers it reads cannot be recorded; pass "
             "CompileOptions::extra_digest to cache it");
        return code;
    }
    if (const std::string reason = trace_unwritable_reason(); !reason.empty()) {
        ObjectCode code = counted_compile([&] { return program.compile(target, name_expressions, cancellable); });
        const std::string message = "compile_cached: " + program_name +
                                    " compiled but not cached: " + reason;
        if (on_cache_error) {
            report(on_cache_error, CacheError(message));
        } else {
            warn(WarningKind::not_cached, message);
        }
        return code;
    }
    // The code is what compile() makes, byte for byte, and the view is of the files it was
    // compiled from, or says what changed while it compiled (code/compile_request.hpp).
    detail::CompiledProgram compiled = counted_compile([&] {
        return detail::compile(program, {target, name_expressions, detail::CompileRequest::Needs::view,
                                         &cancellable.cancellation});
    });
    const ObjectCode code = std::move(compiled.code);
    auto not_cached = [&](const std::string& why) {
        warn(WarningKind::not_cached, "compile_cached: " + program_name +
                                          " compiled but not cached: " + why +
                                          "; pass CompileOptions::extra_digest to cache it");
        return code;
    };
    if (compiled.headers_error) {  // the code is good: only keeping it is given up
        try {
            std::rethrow_exception(compiled.headers_error);
        } catch (const std::exception& e) {
            return not_cached(std::string("the headers it reads could not be listed: ") +
                              e.what());
        }
    }
    const std::string why = store_under_view(cache, program, source_key, *compiled.search,
                                             *compiled.view, code, on_cache_error);
    if (!why.empty()) return not_cached(why);
    return code;
}

}  // namespace

std::optional<ObjectCode> find_cached(const Program& program, CodeType target,
                                      const std::vector<std::string>& name_expressions,
                                      const CompileOptions& options) {
    if (options.cache == nullptr)
        throw InvalidArgumentError("find_cached: CompileOptions::cache is null for program '" +
                                   program.options().name + "' (find_cached only looks in a cache)");
    return find_code(*options.cache, program, detail::source_key(program, target, name_expressions), options);
}

ObjectCode compile_cached(Program& program, CodeType target, const std::vector<std::string>& name_expressions,
                          const CompileOptions& options) {
    // What Program::compile is given: the cancellation alone.
    CompileOptions cancellable;
    cancellable.cancellation = options.cancellation;
    if (options.cache == nullptr) return program.compile(target, name_expressions, cancellable);
    ProgramCache& cache = *options.cache;
    const detail::CudacoreRange range(tracing::CudacoreCategory::compile,
                                      [&] { return "compile_cached " + program.options().name; });
    const detail::SourceKey keyed = detail::source_key(program, target, name_expressions);
    const CacheKey& source_key = keyed.key;
    const CacheWarningHandler& on_cache_error = options.on_cache_error;
    // Counted by get_or_compile, and below where it is called directly.
    // Code from the cache names its debug source file (if any): make sure it exists.
    program.write_debug_source();
    auto compile = [&] { return program.compile(target, name_expressions, cancellable); };
    const Cancellation cancellation = cancellation_of(program, target, options.cancellation);
    if (!options.extra_digest.empty()) {
        return get_or_compile_cancellable(
            cache, extend_key(source_key, "cudacore-extra-digest-v1", {{"", options.extra_digest}}),
            compile, on_cache_error, cancellation);
    }
    if (program.source_type() != SourceType::cxx) {  // PTX and NVVM IR include nothing
        return get_or_compile_cancellable(cache, source_key, compile, on_cache_error, cancellation);
    }

    // The first lookup takes the search the key was made with in this call; a later one (after a
    // wait) works it out again, so that it reads the working directory of its own time.
    if (auto hit = find_code(cache, program, keyed, options)) return *hit;
    auto lookup_code = [&] { return find_code(cache, program, {source_key, nullptr}, options); };

    return single_flight(cache, source_key, [&]() -> ObjectCode {
        if (auto hit = lookup_code()) return *hit;
        // Another process may be compiling it: wait for its entry, or hold the lease (released
        // when this returns, after the stores below).
        CompileTurn turn = cache.await_compile_turn(source_key, lookup_code, options.cancellation);
        if (turn.cancelled) cancellation.throw_cancelled();
        if (turn.found) return *turn.found;
        return compile_and_store_with_headers(cache, program, target, name_expressions, source_key,
                                              on_cache_error, cancellable);
    }, cancellation);
}

}  // namespace cudacore
