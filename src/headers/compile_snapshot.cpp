#include "headers/compile_snapshot.hpp"

#include "headers/include_directives.hpp"
#include "support/input_file.hpp"
#include "support/hex.hpp"
#include "support/sha256.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace cudacore::detail {
namespace {

// The folder prefix of every in-memory header: nothing can be created below /proc/self/, so a
// quoted include NVRTC looks for beside such a header finds nothing on disk.
constexpr std::string_view snapshot_memory_folder = "/proc/self/cudacore-snapshot/";
constexpr std::size_t max_snapshot_header_bytes = std::size_t{256} << 20;

// An include folder: as the flags spell it (NVRTC's __FILE__ is that spelling, a trailing slash
// dropped, then '/', then the name) and as an absolute path.
struct Folder {
    std::string spelled;
    std::string absolute;
    bool toolkit = false;
};

// NVRTC's spelling of `name` found in the folder spelled `folder` ("" for the working directory).
std::string spelled_in(const std::string& folder, const std::string& name) {
    if (folder.empty() || (!name.empty() && name.front() == '/')) return name;
    return folder == "/" ? folder + name : folder + "/" + name;
}

std::string spelled_parent(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    if (slash == std::string::npos) return {};
    return slash == 0 ? "/" : path.substr(0, slash);
}

// NVRTC drops one trailing slash of an include folder ("inc//" names inc//f.h).
std::string without_trailing_slash(std::string folder) {
    if (folder.size() > 1 && folder.back() == '/') folder.pop_back();
    return folder;
}

// The C++ standard `flag` asks for, as its year's last two digits (c++03: 3), or nullopt where it
// names none. NVRTC's default is C++17.
std::optional<int> standard_of(std::string_view flag) {
    for (const std::string_view option : {"--std=c++", "-std=c++"})
        if (flag.starts_with(option)) {
            const std::string_view year = flag.substr(option.size());
            for (const int known : {3, 11, 14, 17, 20})
                if (year == (known < 10 ? "0" : "") + std::to_string(known)) return known;
        }
    return std::nullopt;
}

// Whether `text` holds a trigraph (??= ??/ ??' ??( ??) ??! ??< ??> ??-).
bool has_trigraph(std::string_view text) {
    for (std::size_t at = text.find("??"); at != std::string_view::npos; at = text.find("??", at + 1))
        if (at + 2 < text.size() && std::string_view("=/'()!<>-").find(text[at + 2]) != std::string_view::npos)
            return true;
    return false;
}

// The header NVRTC serves from its own library under this name, whatever the include folders hold.
constexpr std::string_view nvrtc_builtin_header = "__nv_nvrtc_builtin_header.h";

bool in_fixed_folder(const std::string& path, const std::vector<std::string>& toolkit) {
    if (inside_any(path, toolkit)) return true;
    return std::find(toolkit.begin(), toolkit.end(), path) != toolkit.end();
}

// The file at `path`, opened once: its bytes and identity. Not a regular file, unreadable or over
// the bound: nullopt (open_input_file: a FIFO put in a header's place does not hang the compile).
struct ReadFile {
    std::string bytes;
    std::uint64_t device = 0;
    std::uint64_t inode = 0;
};
std::optional<ReadFile> read_regular_file(const std::string& path) {
    const OpenedInputFile opened = open_input_file(path);
    if (!opened.refused.empty() || opened.size > max_snapshot_header_bytes) return std::nullopt;
    const int fd = opened.file.fd;
    ReadFile file{{}, opened.device, opened.inode};
    file.bytes.resize(static_cast<std::size_t>(opened.size));
    std::size_t done = 0;
    for (;;) {
        if (done == file.bytes.size()) file.bytes.resize(done + 4096);  // it grew meanwhile
        const ssize_t got = ::read(fd, file.bytes.data() + done, file.bytes.size() - done);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return std::nullopt;
        if (got == 0) break;
        done += static_cast<std::size_t>(got);
        if (done > max_snapshot_header_bytes) return std::nullopt;
    }
    file.bytes.resize(done);
    return file;
}

std::string snapshot_sha256(std::string_view bytes) {
    const Sha256Digest digest = sha256(bytes);
    return hex_of(digest.data(), digest.size());
}

// ---- the toolkit's side: fixed while the process runs (as its headers are keyed) ------------

// What the toolkit's files reached from some entry files include: every toolkit file (for the
// key) and every name a toolkit file looks up in the include folders (a project folder holding
// that name would shadow the toolkit's file in a compile from the files).
struct ToolkitClosure {
    std::vector<std::string> files;               // sorted
    std::string digest;                           // SHA-256 (hex) of every file's path and bytes
    std::vector<std::string> searched_names;      // sorted, each once
    std::set<std::string> first_components;       // of searched_names
    std::vector<std::string> wrappers;            // macros of theirs that hand an operand to __has_include
};

class ToolkitCache {
public:
    static ToolkitCache& instance() {
        static auto* cache = new ToolkitCache;  // never destroyed: usable from static destructors
        return *cache;
    }

    // What a lookup of a path inside the toolkit finds (remembered).
    bool is_file(const std::string& path) {
        std::lock_guard lock(mutex_);
        return is_file_locked(path);
    }

    // Every wrapper macro found in the toolkit's files so far: a snapshot starts knowing them.
    std::set<std::string, std::less<>> known_wrappers() {
        std::lock_guard lock(mutex_);
        return known_wrappers_;
    }

    std::shared_ptr<const ToolkitClosure> closure(const std::vector<std::string>& entries,
                                                  const std::vector<Folder>& folders,
                                                  const std::vector<std::string>& toolkit) {
        std::string key;
        for (const auto& folder : folders)
            if (folder.toolkit) key += folder.absolute + '\n';
        key += '\n';
        for (const auto& entry : entries) key += entry + '\n';
        std::lock_guard lock(mutex_);
        if (auto it = closures_.find(key); it != closures_.end()) return it->second;
        auto made = std::make_shared<ToolkitClosure>(walk(entries, folders, toolkit));
        closures_.emplace(std::move(key), made);
        return made;
    }

private:
    bool is_file_locked(const std::string& path) {
        if (auto it = files_.find(path); it != files_.end()) return it->second;
        const bool found = lookup_state(path) == "file";
        files_.emplace(path, found);
        return found;
    }

    struct Scanned {
        IncludeDirectives scan;
        std::string bytes_digest;  // SHA-256 (hex), empty when the file cannot be read
        std::size_t wrappers_known = 0;  // how many wrapper macros the scan knew
        std::optional<std::string> bytes;  // while a walk runs (a scan again reads them once)
    };

    // The file's directives, scanned knowing every wrapper macro found so far (known_wrappers_,
    // which only grows: a scan knowing as many knows the same).
    const Scanned& scan_of(const std::string& path) {
        auto it = scans_.find(path);
        if (it != scans_.end() && it->second.wrappers_known == known_wrappers_.size()) return it->second;
        const bool fresh = it == scans_.end();
        if (fresh) {
            Scanned scanned;
            if (std::optional<ReadFile> file = read_regular_file(path)) {
                scanned.bytes_digest = snapshot_sha256(file->bytes);
                scanned.bytes = std::move(file->bytes);
            }
            it = scans_.emplace(path, std::move(scanned)).first;
        } else if (!it->second.bytes && !it->second.bytes_digest.empty()) {
            // Scanned by an earlier walk: its bytes, read again (the toolkit is fixed while the process runs).
            if (std::optional<ReadFile> file = read_regular_file(path)) it->second.bytes = std::move(file->bytes);
        }
        Scanned& scanned = it->second;
        // Scanned before: again only where a wrapper found since is named in it.
        const bool again = scanned.bytes && std::any_of(wrapper_order_.begin() + scanned.wrappers_known,
                                                       wrapper_order_.end(), [&](const std::string& wrapper) {
                                                           return scanned.bytes->find(wrapper) != std::string::npos;
                                                       });
        if (fresh || again)
            scanned.scan = scanned.bytes ? scan_include_directives(*scanned.bytes, known_wrappers_) : IncludeDirectives{};
        scanned.wrappers_known = known_wrappers_.size();
        return scanned;
    }

    // The closure, walked again while it finds wrapper macros not known before: a toolkit file
    // tests for a header through one defined in another (CCCL's _CCCL_HAS_INCLUDE(<cuda_fp16.h>)),
    // and NVRTC then looks that header up. Each file is read once per walk.
    ToolkitClosure walk(const std::vector<std::string>& entries, const std::vector<Folder>& folders,
                        const std::vector<std::string>& toolkit) {
        for (;;) {
            ToolkitClosure made = walk_once(entries, folders, toolkit);
            const std::size_t known = known_wrappers_.size();
            for (const std::string& wrapper : made.wrappers)
                if (known_wrappers_.insert(wrapper).second) wrapper_order_.push_back(wrapper);
            if (known_wrappers_.size() == known) {
                for (auto& [path, scanned] : scans_) scanned.bytes.reset();
                return made;
            }
        }
    }

    ToolkitClosure walk_once(const std::vector<std::string>& entries, const std::vector<Folder>& folders,
                             const std::vector<std::string>& toolkit) {
        std::set<std::string> seen(entries.begin(), entries.end());
        std::vector<std::string> pending(entries.begin(), entries.end());
        std::set<std::string> names, wrappers;
        while (!pending.empty()) {
            const std::string path = pending.back();
            pending.pop_back();
            const std::string folder = spelled_parent(path);
            const IncludeDirectives& scan = scan_of(path).scan;
            wrappers.insert(scan.has_include_wrappers.begin(), scan.has_include_wrappers.end());
            for (const IncludeOperand& operand : scan.operands) {
                std::vector<std::string> found;
                if (!operand.name.empty() && operand.name.front() == '/') {
                    if (in_fixed_folder(operand.name, toolkit) && is_file_locked(operand.name)) found.push_back(operand.name);
                } else {
                    if (operand.quoted && is_file_locked(folder + "/" + operand.name))
                        found.push_back(folder + "/" + operand.name);
                    else
                        names.insert(operand.name);  // looked for in the include folders
                    // Every toolkit folder that has it (a superset: #include_next goes on from one).
                    for (const Folder& dir : folders)
                        if (dir.toolkit && is_file_locked(dir.absolute + "/" + operand.name))
                            found.push_back(dir.absolute + "/" + operand.name);
                }
                for (auto& file : found)
                    if (seen.insert(file).second) pending.push_back(std::move(file));
            }
        }
        ToolkitClosure closure;
        closure.files.assign(seen.begin(), seen.end());
        closure.searched_names.assign(names.begin(), names.end());
        for (const auto& name : names) closure.first_components.insert(name.substr(0, name.find('/')));
        closure.wrappers.assign(wrappers.begin(), wrappers.end());
        std::string listing;
        for (const auto& file : closure.files) listing += file + '\n' + scan_of(file).bytes_digest + '\n';
        closure.digest = snapshot_sha256(listing);
        return closure;
    }

    std::mutex mutex_;
    std::unordered_map<std::string, bool> files_;
    std::unordered_map<std::string, Scanned> scans_;
    std::unordered_map<std::string, std::shared_ptr<const ToolkitClosure>> closures_;
    std::set<std::string, std::less<>> known_wrappers_;
    std::vector<std::string> wrapper_order_;  // known_wrappers_, in the order found
};

// ---- the project's side: read at every snapshot ---------------------------------------------

// One file whose directives are resolved: the source or a project header.
struct Includer {
    std::string spelled_folder;   // its folder as NVRTC spells it
    std::string absolute_folder;  // its folder, absolute
    std::string label;            // for messages
    bool command_line = false;    // the pre-includes, looked for in the working directory first
    bool header = false;          // a project header (not the source or the command line)
};

class SnapshotBuilder {
public:
    // `read`: the files read so far by this snapshot (a scan again reads none twice).
    SnapshotBuilder(const SnapshotRequest& request, std::set<std::string, std::less<>> wrappers,
                    std::map<std::string, std::optional<ReadFile>>& read, LookupStates& lookups)
        : request_(request), read_(read), lookups_(lookups), wrappers_(std::move(wrappers)) {
        snapshot_.nvrtc_name = request.nvrtc_name;
        folders_from_flags();
    }

    CompileSnapshot build() {
        attempt();
        if (!snapshot_.refusal.empty()) {
            snapshot_.headers.clear();
            snapshot_.source.clear();
        }
        return std::move(snapshot_);
    }

    // The macros known to hand their operand to __has_include, those given and those found.
    const std::set<std::string, std::less<>>& wrappers() const { return wrappers_; }

private:
    void attempt() {
        if (!flag_refusal_.empty()) return refuse(flag_refusal_);
        // NVRTC looks for the source's quoted includes beside the name it is given (a program
        // with debug information is given the path of a copy of its source).
        const std::string& name = request_.nvrtc_name;
        const Includer main{spelled_parent(name),
                            name.starts_with('/') ? spelled_parent(name) : request_.search.main_directory,
                            "the source '" + name + "'"};
        std::optional<std::string> source = rewritten(request_.source, main);
        if (source) snapshot_.source = std::move(*source);
        if (snapshot_.refusal.empty()) pre_includes();
        // Headers found in the course of rewriting are rewritten in turn (the list grows).
        for (std::size_t i = 0; snapshot_.refusal.empty() && i < pending_.size(); ++i) {
            std::optional<std::string> text = rewritten(pending_[i].bytes, pending_[i].includer);
            if (!text) break;
            snapshot_.headers[pending_[i].header].content += *text;
        }
        if (snapshot_.refusal.empty()) check_toolkit_shadows();
        if (snapshot_.refusal.empty()) note_project_include_folders();
    }

    // Where a compile from the files looks for an angled name before the toolkit's folders
    // (CompileSnapshot::project_include_folders).
    void note_project_include_folders() {
        std::vector<std::string>& out = snapshot_.project_include_folders;
        for (const Folder& folder : folders_)
            if (!folder.toolkit) out.push_back(folder.absolute);
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
    }

    struct Pending {
        std::size_t header;  // index in snapshot_.headers
        std::string bytes;
        Includer includer;
    };

    // The include folders and the flags NVRTC is given: every include folder of the project left
    // out (its headers come from memory), the toolkit's kept.
    void folders_from_flags() {
        const std::vector<std::string>& flags = request_.flags;
        std::size_t index = 0;
        auto folder = [&](const std::string& spelled) {
            Folder made{without_trailing_slash(spelled),
                        index < request_.search.directories.size() ? request_.search.directories[index] : spelled,
                        false};
            ++index;
            made.toolkit = in_fixed_folder(made.absolute, request_.toolkit_directories);
            folders_.push_back(made);
            return made.toolkit;
        };
        for (std::size_t i = 0; i < flags.size();) {
            IncludeFlag flag = include_flag(flags, i);
            // NVRTC trims white space around some operands and not others ("-I inc" is inc,
            // "--include-path= inc" is " inc"): a folder the scan would look in may not be NVRTC's.
            if (flag.kind != IncludeFlag::Kind::other && !flag.operand.empty() &&
                (std::isspace(static_cast<unsigned char>(flag.operand.front())) ||
                 std::isspace(static_cast<unsigned char>(flag.operand.back()))))
                flag_refusal_ = "the include operand '" + flag.operand + "' begins or ends with white space, which NVRTC "
                                "trims from some spellings of its flag and not from others";
            if (flag.kind == IncludeFlag::Kind::folder) {
                if (folder(flag.operand)) snapshot_.flags.insert(snapshot_.flags.end(), &flags[i], &flags[i] + flag.count);
            } else if (flag.kind == IncludeFlag::Kind::pre_include) {
                pre_include_flags_.push_back(snapshot_.flags.size());
                snapshot_.flags.push_back(std::move(flag.operand));
            } else {
                // A macro given the test's name makes an alias no scan can follow.
                if (flags[i].find("__has_include") != std::string::npos)
                    flag_refusal_ = "the flag '" + flags[i] + "' names __has_include";
                if (const std::optional<int> standard = standard_of(flags[i])) standard_ = *standard;
                snapshot_.flags.push_back(flags[i]);
            }
            i += flag.count;
        }
    }

    // Pre-includes: looked for in the working directory, then in the include folders.
    void pre_includes() {
        if (pre_include_flags_.empty()) return;
        snapshot_.reads_files = true;
        const std::string cwd = current_working_directory();
        const Includer working{"", cwd, "a pre-include", true};
        for (std::size_t index : pre_include_flags_) {
            IncludeOperand operand{.name = snapshot_.flags[index], .quoted = true};
            found_in_toolkit_ = false;
            std::optional<std::string> name = resolved_name(operand, working);
            if (!name) return;
            // A pre-include NVRTC finds in the toolkit keeps its name. One found nowhere is
            // refused: NVRTC would look for it on disk again, where it may be made meanwhile.
            const bool memory = name->front() == '"';
            if (!memory && !found_in_toolkit_) {
                refuse("the pre-include '" + snapshot_.flags[index] + "' is found nowhere");
                return;
            }
            snapshot_.flags[index] =
                "--pre-include=" + (memory ? name->substr(1, name->size() - 2) : snapshot_.flags[index]);
        }
    }

    // `text` with each operand rewritten; nullopt once refused.
    std::optional<std::string> rewritten(std::string_view text, const Includer& includer) {
        if (trigraphs() && has_trigraph(text)) {
            refuse(includer.label + " holds a trigraph, which --std before c++17 gives its meaning");
            return std::nullopt;
        }
        // Raw strings from C++11, digit separators from C++14. NVRTC reads a digit separator as one
        // only in a group it keeps: where reading it as a quote would find other operands, the scan
        // cannot tell which NVRTC sees.
        const ScanLexing lexing{.raw_strings = standard_ >= 11, .digit_separators = standard_ >= 14};
        IncludeDirectives scan = scan_include_directives(text, wrappers_, lexing);
        if (scan.digit_separators &&
            !same_scan(scan, scan_include_directives(text, wrappers_, {lexing.raw_strings, false}))) {
            refuse(includer.label + " holds a digit separator that, read as a quote as NVRTC reads it in a "
                                    "group it skips, hides or shows an include");
            return std::nullopt;
        }
        // A wrapper defined here: build() scans everything again with it known.
        wrappers_.insert(scan.has_include_wrappers.begin(), scan.has_include_wrappers.end());
        if (!scan.computed_includes.empty()) {
            refuse(includer.label + " includes a header named by a macro (" + scan.computed_includes.front() + ")");
            return std::nullopt;
        }
        if (!scan.computed_has_includes.empty()) {
            refuse(includer.label + " tests for a header named by a macro (" +
                   scan.computed_has_includes.front() + ")");
            return std::nullopt;
        }
        std::string out;
        out.reserve(text.size() + 64 * scan.operands.size());
        std::size_t copied = 0;
        for (const IncludeOperand& operand : scan.operands) {
            std::optional<std::string> name = resolved_name(operand, includer);
            if (!name) return std::nullopt;
            out.append(text.substr(copied, operand.begin - copied));
            out += *name;
            // A line splice inside the operand: the same number of lines, so that every line
            // after it keeps its number.
            const std::string_view replaced = text.substr(operand.begin, operand.end - operand.begin);
            for (char c : replaced)
                if (c == '\n') out += "\\\n";
            copied = operand.end;
        }
        out.append(text.substr(copied));
        return out;
    }

    // A path NVRTC may find an operand at, in the order it looks.
    struct Candidate {
        std::string absolute;
        std::string spelled;
        bool toolkit;
        bool beside_includer = false;
    };
    std::vector<Candidate> candidates_for(const IncludeOperand& operand, const Includer& includer) const {
        const std::string& name = operand.name;
        std::vector<Candidate> candidates;
        if (!name.empty() && name.front() == '/') {
            candidates.push_back({name, name, in_fixed_folder(name, request_.toolkit_directories)});
            return candidates;
        }
        if (operand.quoted && !(request_.search.no_source_include && !includer.command_line)) {
            const std::string absolute = includer.absolute_folder == "/" ? "/" + name
                                                                         : includer.absolute_folder + "/" + name;
            candidates.push_back({absolute, spelled_in(includer.spelled_folder, name),
                                  in_fixed_folder(includer.absolute_folder, request_.toolkit_directories), true});
        }
        for (const Folder& folder : folders_)
            candidates.push_back({folder.absolute == "/" ? "/" + name : folder.absolute + "/" + name,
                                  spelled_in(folder.spelled, name), folder.toolkit});
        return candidates;
    }

    // Whether an operand spelled `name` is refused (and refuses it) whatever it would find.
    bool refused_spelling(const std::string& name, const Includer& includer) {
        // cudacore's own names for the headers it gives from memory: no file is there, and an
        // include of one would find what memory holds, not what a compile from the files finds.
        if (name.find(snapshot_memory_folder.substr(std::string_view("/proc/self/").size())) != std::string::npos) {
            refuse(includer.label + " includes '" + name + "', a name of the headers a cached compile gives from memory");
            return true;
        }
        // A plain compile reads header bundles from their folders, where such a spelling may
        // find a bundled header that memory, matching names as they are, does not.
        if (!request_.bundled_names.empty() && folder_reads_otherwise(name)) {
            refuse(includer.label + " includes '" + name + "', which a header bundle's folder may read otherwise "
                                    "than memory");
            return true;
        }
        return false;
    }

    // The operand NVRTC is given for `operand` of `includer`, delimiters included; nullopt once
    // refused.
    std::optional<std::string> resolved_name(const IncludeOperand& operand, const Includer& includer) {
        const std::string& name = operand.name;
        // NVRTC may give its own source for the program's name (it does for the name as the
        // includer's folder spells it): which of the two it reads is not the scan's to guess.
        if (name == request_.nvrtc_name) {
            refuse(includer.label + " includes the program's own name '" + name + "', which NVRTC may read from "
                                    "memory (the source) rather than from disk");
            return std::nullopt;
        }
        if (refused_spelling(name, includer)) return std::nullopt;
        if (std::find(request_.bundled_names.begin(), request_.bundled_names.end(), name) !=
            request_.bundled_names.end()) {
            if (shadows_bundle(operand, includer)) return std::nullopt;
            return operand.quoted ? "\"" + name + "\"" : "<" + name + ">";  // NVRTC matches it first
        }
        // NVRTC serves this name itself, before any folder: a project file of the name is never read.
        if (name == nvrtc_builtin_header) return "<" + name + ">";
        if (operand.next) {
            refuse(includer.label + " uses " + (operand.test ? "__has_include_next" : "#include_next") + " <" +
                   name + ">");
            return std::nullopt;
        }
        const std::vector<Candidate> candidates = candidates_for(operand, includer);
        for (const Candidate& candidate : candidates) {
            if (candidate.toolkit) {
                if (!ToolkitCache::instance().is_file(candidate.absolute)) continue;
                if (candidate.beside_includer) {  // NVRTC would find it by the includer's folder only
                    refuse(includer.label + " includes \"" + name + "\" from beside it, inside the toolkit");
                    return std::nullopt;
                }
                toolkit_entries_.insert(candidate.absolute);
                found_in_toolkit_ = true;
                return "<" + name + ">";
            }
            snapshot_.reads_files = true;
            std::string absolute = candidate.absolute;
            std::string spelled = candidate.spelled;
            std::string state = lookups_.state(absolute);
            if ((state == "absent" || state == "directory") && tried_as_stdh(name)) {
                absolute += stdh_suffix;
                spelled += stdh_suffix;
                state = lookups_.state(absolute);
            }
            if (state == "absent" || state == "directory") continue;
            if (state != "file") {
                refuse("'" + absolute + "', which " + includer.label + " may include, is " +
                       (state == "other" ? "not a regular file" : "unreadable (" + state + ")"));
                return std::nullopt;
            }
            std::optional<std::string> memory_name = header_named(absolute, spelled);
            if (!memory_name) return std::nullopt;
            return "\"" + *memory_name + "\"";
        }
        // Nowhere on disk: NVRTC's built-in headers, or an error NVRTC reports.
        return "<" + name + ">";
    }

    // A compile that reads the bundles from their folders (code/program.cpp) looks for a quoted
    // include beside a project header before those folders: a file there would be read instead of
    // the bundle's copy, which memory gives first. Refuses, and says so, where one is there.
    bool shadows_bundle(const IncludeOperand& operand, const Includer& includer) {
        if (!operand.quoted || !includer.header || request_.search.no_source_include) return false;
        const std::string beside = spelled_in(includer.absolute_folder, operand.name);
        if (lookups_.state(beside) == "absent") return false;
        refuse("'" + beside + "' beside " + includer.label + " would be read for \"" + operand.name +
               "\" before the header bundles' copy");
        return true;
    }

    // The in-memory header of the project file `absolute` spelled `spelled`, read now if new.
    std::optional<std::string> header_named(const std::string& absolute, const std::string& spelled) {
        if (auto it = by_spelling_.find(spelled); it != by_spelling_.end()) return snapshot_.headers[it->second].name;
        auto [known, fresh] = read_.try_emplace(absolute);
        if (fresh) known->second = read_regular_file(absolute);
        std::optional<ReadFile> file = known->second;
        if (!file) {
            refuse("the header '" + absolute + "' cannot be read");
            return std::nullopt;
        }
        // One file under a second name (a link, "../inc/x.h" beside <x.h>): one in-memory header,
        // as NVRTC's #pragma once sees one file. Its #line names the first name found here, which
        // need not be the first NVRTC meets: the caller checks such a compile against one from
        // the files (`aliased`).
        const auto identity = std::make_pair(file->device, file->inode);
        if (auto it = by_identity_.find(identity); it != by_identity_.end()) {
            if (snapshot_.aliased.empty())
                snapshot_.aliased = "'" + spelled + "' and '" + spellings_[it->second] + "'";
            by_spelling_.emplace(spelled, it->second);
            return snapshot_.headers[it->second].name;
        }
        // What the #line written below cannot carry as NVRTC reads it: a quote, backslash or newline
        // (the string's end, escapes), a trigraph where ??= is #, and the byte 0xff (NVRTC's lexer
        // takes it for the file's end).
        if (spelled.find_first_of("\"\\\n\xff") != std::string::npos || (trigraphs() && has_trigraph(spelled))) {
            refuse("the header path '" + spelled + "' holds a quote, a backslash, a newline, the byte 0xff or a "
                   "trigraph, which a #line naming it cannot carry");
            return std::nullopt;
        }
        // NVRTC is given headers from memory as C strings: one with a NUL byte would end there.
        if (file->bytes.find('\0') != std::string::npos) {
            refuse("the header '" + absolute + "' holds a NUL byte, which NVRTC cannot be given from memory");
            return std::nullopt;
        }
        const std::size_t index = snapshot_.headers.size();
        std::string name = std::string(snapshot_memory_folder) + std::to_string(index);
        snapshot_.headers.push_back({name, "#line 1 \"" + spelled + "\"\n"});
        by_spelling_.emplace(spelled, index);
        by_identity_.emplace(identity, index);
        spellings_.push_back(spelled);
        pending_.push_back({index, std::move(file->bytes),
                            Includer{spelled_parent(spelled), spelled_parent(absolute), "the header '" + absolute + "'", false,
                                     true}});
        return name;
    }

    // The toolkit's own includes look in the include folders: a project folder holding one of
    // those names would give a compile from the files the project's file.
    void check_toolkit_shadows() {
        std::vector<std::string> entries(toolkit_entries_.begin(), toolkit_entries_.end());
        if (entries.empty()) return;
        const std::shared_ptr<const ToolkitClosure> closure =
            ToolkitCache::instance().closure(entries, folders_, request_.toolkit_directories);
        snapshot_.toolkit_digest = closure->digest;
        snapshot_.toolkit_files = std::shared_ptr<const std::vector<std::string>>(closure, &closure->files);
        wrappers_.insert(closure->wrappers.begin(), closure->wrappers.end());  // the project may use them
        for (const Folder& folder : folders_) {
            if (folder.toolkit) continue;
            snapshot_.reads_files = true;
            std::set<std::string> present;  // the closure's first components this folder holds
            if (DIR* dir = ::opendir(folder.absolute.c_str())) {
                while (const dirent* entry = ::readdir(dir)) {
                    std::string_view component = entry->d_name;
                    if (component.ends_with(stdh_suffix)) component.remove_suffix(stdh_suffix.size());
                    if (closure->first_components.contains(std::string(component))) present.emplace(component);
                }
                ::closedir(dir);
            }
            if (present.empty()) continue;
            for (const std::string& name : closure->searched_names) {
                if (!present.contains(name.substr(0, name.find('/')))) continue;
                const std::string path = folder.absolute + "/" + name;
                if (nvrtc_finds_at(path, name, [&](const std::string& at) { return lookups_.state(at); })) {
                    refuse("'" + path + "' would be found before the toolkit's own <" + name +
                           "> by the toolkit's headers");
                    return;
                }
            }
        }
    }

    void refuse(std::string why) {
        if (snapshot_.refusal.empty()) snapshot_.refusal = std::move(why);
    }

    const SnapshotRequest& request_;
    std::map<std::string, std::optional<ReadFile>>& read_;
    LookupStates& lookups_;
    CompileSnapshot snapshot_;
    std::vector<Folder> folders_;
    std::vector<std::size_t> pre_include_flags_;  // indices into snapshot_.flags
    std::string flag_refusal_;        // why the flags alone refuse the snapshot
    int standard_ = 17;               // the C++ standard's year (standard_of)
    bool trigraphs() const { return standard_ < 17; }  // ??= is # before C++17
    bool found_in_toolkit_ = false;   // the last name resolved was the toolkit's
    std::deque<Pending> pending_;  // a deque: rewriting one adds others, and must not move it
    std::map<std::string, std::size_t> by_spelling_;
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::size_t> by_identity_;
    std::vector<std::string> spellings_;  // of each header, as first found
    std::set<std::string> toolkit_entries_;
    std::set<std::string, std::less<>> wrappers_;
};

// `path` with its leading folder `from` spelled `to`.
std::string respelled_path(const std::string& path, const std::string& from, const std::string& to) {
    if (from.empty() || path.size() <= from.size() || path.compare(0, from.size(), from) != 0 ||
        path[from.size()] != '/')
        return path;
    return to + path.substr(from.size());
}

// `text` with every occurrence of `from` + '/' spelled `to` + '/'.
std::string respelled_text(std::string_view text, const std::string& from, const std::string& to) {
    const std::string needle = from + "/";
    std::string out;
    std::size_t copied = 0;
    for (std::size_t at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + 1)) {
        out.append(text.substr(copied, at - copied));
        out += to;
        copied = at + from.size();
    }
    out.append(text.substr(copied));
    return out;
}

void input_field(std::string& out, std::string_view field) {
    out += std::to_string(field.size());
    out += ':';
    out += field;
}

}  // namespace

// A macro that hands its operand to __has_include, defined in one file and used in another
// (CCCL's _CCCL_HAS_INCLUDE in a project header), makes operands that a scan without it does not
// see: when one turns up, in a project file or the toolkit's, everything is scanned again
// knowing it.
CompileSnapshot take_compile_snapshot(const SnapshotRequest& request) {
    std::set<std::string, std::less<>> wrappers = ToolkitCache::instance().known_wrappers();
    // One look at the files per snapshot: each file read once, each path looked up once.
    std::map<std::string, std::optional<ReadFile>> read;
    LookupStates lookups;
    for (;;) {
        SnapshotBuilder builder(request, wrappers, read, lookups);
        CompileSnapshot snapshot = builder.build();
        snapshot.fixed_folders = request.toolkit_directories;
        snapshot.bundled_names = request.bundled_names;
        if (builder.wrappers().size() == wrappers.size()) return snapshot;
        wrappers = builder.wrappers();
    }
}

bool looked_up_beside_project_text(const CompileSnapshot& snapshot, const std::string& looked_up) {
    // NVRTC tries each name also with ".stdh" appended (its own standard headers' form).
    const std::string path = looked_up.ends_with(".stdh") ? looked_up.substr(0, looked_up.size() - 5) : looked_up;
    // A name given from memory, or a folder of one: NVRTC looks such a folder up before it looks
    // beside a header of that name (a quoted include there is then looked up, and recorded, itself).
    auto given_or_its_folder = [](std::string_view name, std::string_view given) {
        return given == name || (given.size() > name.size() && given.starts_with(name) && given[name.size()] == '/');
    };
    auto bundled = [&](std::string_view name) {
        return std::any_of(snapshot.bundled_names.begin(), snapshot.bundled_names.end(),
                           [&](const std::string& given) { return given_or_its_folder(name, given); });
    };
    if (path.starts_with(snapshot_memory_folder))
        return !bundled(std::string_view(path).substr(snapshot_memory_folder.size())) &&
               std::none_of(snapshot.headers.begin(), snapshot.headers.end(),
                            [&](const SnapshotHeader& header) { return given_or_its_folder(path, header.name); });
    if (path.empty() || path == snapshot.nvrtc_name || inside_any(path, snapshot.fixed_folders)) return false;
    const std::size_t slash = snapshot.nvrtc_name.rfind('/');
    if (slash != std::string::npos) {
        const std::string folder = snapshot.nvrtc_name.substr(0, slash + 1);
        return path.starts_with(folder) && !bundled(std::string_view(path).substr(folder.size()));
    }
    // A bare name: beside it is the working directory, where NVRTC also looks its own names up, and
    // the pre-includes first.
    const bool pre_include = std::find(snapshot.flags.begin(), snapshot.flags.end(), "--pre-include=" + path) !=
                             snapshot.flags.end();
    return path.front() != '/' && path != nvrtc_builtin_header && path != "__nv_name_map" && !bundled(path) &&
           !pre_include;
}

CompileSnapshot respelled(const CompileSnapshot& snapshot, const std::vector<Respelling>& folders) {
    CompileSnapshot out = snapshot;
    for (const auto& [from, to] : folders) {
        if (from.empty() || from == "/") continue;  // every path: nothing to tell apart
        out.nvrtc_name = respelled_path(out.nvrtc_name, from, to);
        // The fixed folders (the toolkit's, the standard headers' below the cache folder) stay
        // where they are, also inside a folder respelled: they are keyed by their files' bytes.
        for (std::size_t i = 0; i < out.flags.size();) {
            const IncludeFlag include = include_flag(out.flags, i);
            const bool fixed = include.kind == IncludeFlag::Kind::folder &&
                               in_fixed_folder(without_trailing_slash(include.operand), out.fixed_folders);
            if (!fixed)
                for (std::size_t k = i; k < i + include.count; ++k) out.flags[k] = respelled_text(out.flags[k], from, to);
            i += include.count;
        }
        for (auto& header : out.headers) {
            // Only the #line spelling names a path; the file's own bytes are its bytes.
            const std::size_t line_end = header.content.find('\n');
            header.content = respelled_text(std::string_view(header.content).substr(0, line_end), from, to) +
                             header.content.substr(line_end);
        }
    }
    return out;
}

std::string serialized_inputs(const CompileSnapshot& snapshot) {
    std::string out;
    std::size_t size = snapshot.source.size() + 256;
    for (const auto& header : snapshot.headers) size += header.name.size() + header.content.size() + 32;
    out.reserve(size);
    input_field(out, "cudacore-nvrtc-inputs-v1");
    input_field(out, snapshot.toolkit_digest);
    input_field(out, snapshot.nvrtc_name);
    input_field(out, snapshot.source);
    input_field(out, std::to_string(snapshot.flags.size()));
    for (const auto& flag : snapshot.flags) input_field(out, flag);
    input_field(out, std::to_string(snapshot.headers.size()));
    for (const auto& header : snapshot.headers) {
        input_field(out, header.name);
        input_field(out, header.content);
    }
    return out;
}

std::pair<std::vector<const char*>, std::vector<const char*>> nvrtc_headers(const CompileSnapshot& snapshot) {
    std::pair<std::vector<const char*>, std::vector<const char*>> out;
    for (const auto& header : snapshot.headers) {
        out.first.push_back(header.content.c_str());
        out.second.push_back(header.name.c_str());
    }
    return out;
}

}  // namespace cudacore::detail
