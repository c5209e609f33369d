#include "code/header_trace.hpp"


#include "cudacore/errors.hpp"
#include "cudacore/program.hpp"
#include "code/nvrtc_compile.hpp"
#include "loader/compiler_apis.hpp"
#include "support/owned_folder.hpp"
#include "support/temporary_directory.hpp"

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>

namespace cudacore::detail {

namespace {

// A private folder for one time trace, removed with everything in it: an OwnedFolder, so that
// the folder of a process killed mid-compile is reclaimed by the next one that makes its own
// (once per process), and removed when a CLI is ended by a signal (registered as it is made).
constexpr std::string_view kTracePrefix = "cudacore-trace-";

class TraceDirectory {
public:
    explicit TraceDirectory(const std::string& object) {
        const TemporaryDirectory temporary = temporary_directory();
        if (!temporary.problem.empty()) {
            throw CompilerApiError("mkdtemp", ENOENT, "no temporary directory",
                                   object + ", folder for the header trace: " + temporary.problem);
        }
        static std::once_flag reclaimed;
        std::call_once(reclaimed, [&] { reclaim_abandoned_folders(temporary.path, kTracePrefix); });
        try {
            folder_ = OwnedFolder::make(temporary.path, kTracePrefix);
        } catch (const std::system_error& e) {
            throw CompilerApiError("mkdtemp", e.code().value(), e.what(),
                                   object + ", folder for the header trace in " +
                                       temporary.path.string());
        }
    }
    TraceDirectory(const TraceDirectory&) = delete;
    TraceDirectory& operator=(const TraceDirectory&) = delete;
    const std::filesystem::path& path() const noexcept { return folder_.path(); }

private:
    OwnedFolder folder_;  // removed by its destructor
};

// The header files named by the "Processing Header File" events of an NVRTC time trace. A name
// that one of `bundles` holds was read from memory (the event names it as the #include wrote
// it): it is no file, and the bundle's digest stands for it.
std::vector<std::string> headers_in_trace(const std::filesystem::path& trace,
                                          const std::string& object,
                                          const std::vector<HeaderBundle>& bundles) {
    std::ifstream in(trace, std::ios::binary);
    if (!in) {
        throw CompilerApiError("nvrtcCompileProgram", 0, "no time trace written",
                               object + ", expected " + trace.string());
    }
    nlohmann::json document;
    try {
        document = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw CompilerApiError("nvrtcCompileProgram", 0,
                               std::string("unreadable time trace: ") + e.what(),
                               object + ", " + trace.string());
    }
    std::vector<std::string> headers;
    const auto events = document.find("traceEvents");
    if (events == document.end() || !events->is_array()) return headers;
    for (const auto& event : *events) {
        if (!event.is_object() || event.value("name", "") != "Processing Header File") continue;
        const auto args = event.find("args");
        if (args == event.end() || !args->is_object()) continue;
        const std::string name = args->value("detail", "");
        if (name.empty()) continue;
        if (std::any_of(bundles.begin(), bundles.end(),
                        [&](const HeaderBundle& bundle) { return bundle.find(name) != nullptr; }))
            continue;
        std::error_code error;
        const std::filesystem::path path(name);
        // A bare name that is no file is one of NVRTC's built-in headers (covered by its version).
        if (!path.has_parent_path() && !std::filesystem::is_regular_file(path, error)) continue;
        headers.push_back(std::filesystem::absolute(path, error).lexically_normal().string());
    }
    std::sort(headers.begin(), headers.end());
    headers.erase(std::unique(headers.begin(), headers.end()), headers.end());
    return headers;
}

}  // namespace

std::vector<std::string> headers_opened(const std::string& source, const std::string& name,
                                        const std::vector<std::string>& flags,
                                        const std::vector<HeaderBundle>& bundles,
                                        const std::string& object,
                                        const CancellationToken* cancellation) {
    const TraceDirectory directory(object);
    const std::filesystem::path trace = directory.path() / "trace";
    std::vector<std::string> pass_flags = without_pch_flags(flags);
    pass_flags.push_back("--fdevice-syntax-only");
    pass_flags.push_back("--fdevice-time-trace=" + trace.string());
    const InMemoryHeaders headers = in_memory_headers(bundles);
    NvrtcAttempt attempt = nvrtc_compile(source, name, pass_flags, {}, CodeType::ptx, object,
                                         /*pch=*/false, nullptr, /*add_name_expressions=*/false,
                                         headers, cancellation);
    if (attempt.status != NVRTC_SUCCESS) {
        // NVRTC writes a failed compile's trace at this thread's next traced compile: end it here.
        end_failed_time_trace((directory.path() / "end").string());
        if (attempt.status == NVRTC_ERROR_CANCELLED) throw CompileCancelled(name, pass_flags, "NVRTC");
        std::string log = std::move(attempt.log);
        if (!log.empty() && log.back() != '\n') log += '\n';
        const char* status_name = nvrtc().nvrtcGetErrorString(attempt.status);
        log += std::string("nvrtcCompileProgram (front end only, to list the headers read) "
                           "failed: ") + (status_name ? status_name : "error");
        throw CompileError(name, std::move(log), pass_flags, "NVRTC", attempt.status);
    }
    // NVRTC appends ".json" to the name it is given.
    return headers_in_trace(trace.string() + ".json", object, bundles);
}

std::future<std::vector<std::string>> start_headers_opened(const Program& program,
                                                           CodeType target,
                                                           const CancellationToken* cancellation) {
    const ProgramOptions& options = program.options();
    std::string object = "program '" + options.name + "' (" + std::string(to_string(target)) +
                         ", the headers it reads)";
    if (program.source_type() != SourceType::cxx)
        throw InvalidArgumentError(object + ": only a C++ program reads headers");
    if (program.source().empty())
        throw InvalidArgumentError(object + ": a program made by Program::from_handle has no "
                                   "source to read the headers of");
    // The name compile() gives NVRTC: quoted includes of the source are looked for in its folder.
    const std::filesystem::path debug_source = program.debug_source_path();
    std::string name = debug_source.empty() ? options.name : debug_source.string();
    // flags() may read the current device's arch: on this thread, not the pass's.
    auto pass = [&program, name = std::move(name), flags = program.flags(target),
                 object = std::move(object), cancellation] {
        return headers_opened(program.source(), name, flags, program.options().header_bundles,
                              object, cancellation);
    };
    try {
        return std::async(std::launch::async, pass);
    } catch (const std::system_error&) {  // no thread to be had: the pass runs at get()
        return std::async(std::launch::deferred, std::move(pass));
    }
}

namespace {

// When the compile that made each PCH file of this process began.
struct PchBirths {
    std::mutex mutex;
    std::map<std::string, std::chrono::system_clock::time_point> began;
};

PchBirths& pch_births() {
    static auto* births = new PchBirths;  // never destroyed: usable from static destructors
    return *births;
}

std::optional<std::chrono::system_clock::time_point> pch_made_at(const std::string& file) {
    PchBirths& births = pch_births();
    std::lock_guard lock(births.mutex);
    const auto it = births.began.find(file);
    if (it == births.began.end()) return std::nullopt;
    return it->second;
}

std::chrono::system_clock::time_point as_time(const struct timespec& stamp) {
    return std::chrono::system_clock::time_point(std::chrono::duration_cast<
        std::chrono::system_clock::duration>(std::chrono::seconds(stamp.tv_sec) +
                                             std::chrono::nanoseconds(stamp.tv_nsec)));
}

}  // namespace

// File times come from a coarse clock: the second covers it.
bool pch_may_be_stale(const PchStatus& status, const std::vector<std::string>& headers) {
    if (status.outcome != PchOutcome::used) return false;
    const std::optional<std::chrono::system_clock::time_point> began = pch_made_at(status.file);
    if (!began) return true;
    const auto safe_before = *began - std::chrono::seconds(1);
    for (const std::string& header : headers) {
        struct stat info {};
        if (::stat(header.c_str(), &info) != 0) return true;
        if (as_time(info.st_mtim) >= safe_before || as_time(info.st_ctim) >= safe_before) return true;
    }
    return false;
}

void remember_pch_made(const std::string& file, std::chrono::system_clock::time_point began) noexcept {
    if (file.empty()) return;
    try {
        PchBirths& births = pch_births();
        std::lock_guard lock(births.mutex);
        births.began[file] = began;
    } catch (...) {  // std::bad_alloc: the PCH counts as unseen, so never trusted
    }
}


}  // namespace cudacore::detail
