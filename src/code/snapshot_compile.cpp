#include "code/snapshot_compile.hpp"

#include "code/compile_request.hpp"
#include "code/nvrtc_compile.hpp"
#include "code/worker_messages.hpp"
#include "cudacore/errors.hpp"
#include "support/child_process.hpp"
#include "support/parent_death.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <exception>
#include <set>

namespace cudacore::detail {

ObjectCode compile_from_snapshot(Program& program, CodeType target,
                                 const std::vector<std::string>& name_expressions,
                                 const CompileSnapshot& snapshot, const CancellationToken* cancellation) {
    return ProgramInternals::compile_snapshot(program, target, name_expressions, snapshot, cancellation);
}

namespace {

constexpr std::string_view kCheckRequestMagic = "cudacore-check-compile-request-1";
// A check compile that runs longer than this is given up (the code is still returned, not cached).
constexpr std::chrono::milliseconds kCheckCompileTimeout{10 * 60 * 1000};

// A working directory unlike `current`: relative names in line information then name another
// folder.
std::string check_working_directory(const std::string& current) { return current == "/" ? "/proc" : "/"; }

std::string check_request(const CheckCompileRequest& request) {
    const CompileSnapshot& snapshot = request.snapshot;
    std::string out;
    put_field(out, kCheckRequestMagic);
    put_field(out, to_string(request.target));
    put_field(out, request.move_clock ? std::to_string(check_compile_clock_shift) : "0");
    put_field(out, request.move_working_directory ? check_working_directory(current_working_directory()) : "");
    put_field(out, snapshot.nvrtc_name);
    put_field(out, snapshot.source);
    put_field(out, std::to_string(snapshot.flags.size()));
    for (const auto& flag : snapshot.flags) put_field(out, flag);
    put_field(out, std::to_string(request.name_expressions.size()));
    for (const auto& name : request.name_expressions) put_field(out, name);
    // The headers as NVRTC is given them in this process: the bundles' (the first holding a name
    // wins), then the snapshot's.
    std::vector<std::pair<std::string_view, std::string_view>> headers;
    std::set<std::string_view> taken;
    for (const auto& bundle : request.bundles)
        for (const auto& header : bundle.headers())
            if (taken.insert(header.name).second) headers.emplace_back(header.name, header.content);
    for (const auto& header : snapshot.headers) headers.emplace_back(header.name, header.content);
    put_field(out, std::to_string(headers.size()));
    for (const auto& [name, content] : headers) {
        put_field(out, name);
        put_field(out, content);
    }
    return out;
}

CheckCompileResult check_failure(std::string why) {
    CheckCompileResult result;
    result.failure = std::move(why);
    return result;
}

// A count, then that many paths, appended to `out`; false where the reply ends before them.
bool take_paths(std::string_view& fields, std::vector<std::string>& out) {
    const auto count = take_count(fields);
    for (std::size_t i = 0; count && i < *count; ++i) {
        const auto path = take_field(fields);
        if (!path) return false;
        out.emplace_back(*path);
    }
    return count.has_value();
}

CheckCompileResult read_check_reply(const ChildProcessResult& ended) {
    CheckCompileResult result;
    std::string_view records = ended.reply;
    while (auto record = take_field(records)) {
        if (record->empty()) continue;
        std::string_view fields = record->substr(1);
        if (record->front() == 'E') {
            result.failure = "the compile worker failed: " + std::string(take_field(fields).value_or(""));
            return result;
        }
        if (record->front() != 'R') continue;
        const auto process = take_count(fields);
        const auto compiled = take_field(fields);
        const auto code = take_field(fields);
        const auto log = take_field(fields);
        const auto count = take_count(fields);
        if (!process || !compiled || !code || !log || !count) break;
        result.process_id = static_cast<long>(*process);
        for (std::size_t i = 0; i < *count; ++i) {
            const auto expression = take_field(fields);
            const auto lowered = take_field(fields);
            if (!expression || !lowered) return check_failure("the compile worker's reply is cut short");
            result.symbols.emplace(*expression, *lowered);
        }
        if (!take_paths(fields, result.opened) || !take_paths(fields, result.absent))
            return check_failure("the compile worker's reply is cut short");
        result.compiled = *compiled == "1";
        result.code = *code;
        if (!result.compiled) result.failure = "the check compile failed: " + std::string(log->substr(0, 2000));
        return result;
    }
    if (ended.timed_out) {
        result.failure = "the compile worker was stopped after " + std::to_string(ended.timeout.count()) + " ms";
    } else {
        result.failure = "the compile worker ended without a reply: " + ended.how_it_ended() +
                         (ended.err.empty() ? "" : ": " + ended.err.substr(0, 2000));
    }
    return result;
}

// The unit ids after each `marker` in `out` blanked (see without_unit_id); `pid`: the id of the
// process that compiled it.
void blank_unit_ids(std::string& out, std::string_view marker, const std::string& pid) {
    auto digits_at = [&](std::size_t at, std::size_t count) {
        if (at + count > out.size()) return false;
        for (std::size_t i = at; i < at + count; ++i)
            if (!std::isdigit(static_cast<unsigned char>(out[i]))) return false;
        return true;
    };
    for (std::size_t at = out.find(marker); at != std::string::npos; at = out.find(marker, at + 1)) {
        std::size_t pos = at + marker.size();
        if (!digits_at(pos, 8) || pos + 8 >= out.size() || out[pos + 8] != '_') continue;
        pos += 9;
        std::size_t length = 0, end = pos;
        while (end < out.size() && std::isdigit(static_cast<unsigned char>(out[end])) && end - pos < 6)
            length = length * 10 + static_cast<std::size_t>(out[end++] - '0');
        if (end == pos || end >= out.size() || out[end] != '_') continue;
        pos = end + 1 + length;  // past the file name
        if (pos + 10 > out.size() || out[pos] != '_' || out[pos + 9] != '_') continue;
        bool hex = true;
        for (std::size_t i = pos + 1; i < pos + 9; ++i) hex = hex && std::isxdigit(static_cast<unsigned char>(out[i]));
        if (!hex) continue;
        std::fill(out.begin() + static_cast<std::ptrdiff_t>(pos + 1), out.begin() + static_cast<std::ptrdiff_t>(pos + 9), '#');
        if (out.compare(pos + 10, pid.size(), pid) == 0)
            std::fill(out.begin() + static_cast<std::ptrdiff_t>(pos + 10),
                      out.begin() + static_cast<std::ptrdiff_t>(pos + 10 + pid.size()), '#');
    }
}

// `code` with the translation unit id NVRTC wrote into internal names blanked:
// "_INTERNAL_<8 digits>_<n>_<n characters of the file name>_<8 hex digits>_<process id>", and the
// same id in the names of unnamed namespaces ("_GLOBAL__N__<8 digits>_...": CCCL's
// <cuda/std/__algorithm_> has some), the hex digits and the id of `process` (the process that
// compiled it) each replaced by '#'.
std::string without_unit_id(std::string_view code, long process) {
    std::string out(code);
    const std::string pid = std::to_string(process);
    for (std::string_view marker : {std::string_view("_INTERNAL_"), std::string_view("_GLOBAL__N__")})
        blank_unit_ids(out, marker, pid);
    return out;
}

}  // namespace

bool same_code_but_unit_ids(std::string_view a, long a_process, std::string_view b, long b_process) {
    if (a == b) return true;
    if (a.size() != b.size()) return false;
    return without_unit_id(a, a_process) == without_unit_id(b, b_process);
}

CheckCompileResult run_check_compile(const CheckCompileRequest& request) {
    try {
        const auto worker = find_helper_program("cudacore-compile-worker", "CUDACORE_COMPILE_WORKER", {});
        const std::string input = check_request(request);
        // A reply holds one program's code and the paths NVRTC looked at: far less than its bound.
        ChildProcessOptions options{.input = input, .timeout = kCheckCompileTimeout, .reply_channel = true,
                                    .max_reply = std::size_t{256} << 20};
        if (const CancellationToken* token = request.cancellation)
            options.stop_requested = [token] { return token->is_cancelled(); };
        const ChildProcessResult ended = run_child_process(worker, {}, options);
        return read_check_reply(ended);
    } catch (const std::bad_alloc&) {
        throw;
    } catch (const std::exception& e) {
        return check_failure(std::string("the compile worker could not run: ") + e.what());
    }
}

namespace {

std::vector<std::string> take_check_strings(std::string_view& in) {
    const auto count = take_count(in);
    if (!count) throw Error("truncated check compile request");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < *count; ++i) {
        const auto field = take_field(in);
        if (!field) throw Error("truncated check compile request");
        out.emplace_back(*field);
    }
    return out;
}

std::string take_check_string(std::string_view& in) {
    const auto field = take_field(in);
    if (!field) throw Error("truncated check compile request");
    return std::string(*field);
}

}  // namespace

// Long because: the request's fields are read in order, then one compile and its reply.
int compile_worker_main(const CompileWorkerHooks& hooks) {
    die_with_parent_from_environment();  // an orphaned worker would compile for nobody
    const std::string request = read_all(0);
    try {
        std::string_view in = request;
        if (take_field(in) != kCheckRequestMagic) throw Error("not a check compile request on standard input");
        const CodeType target = code_type_from_string(take_check_string(in));
        const long long shift = std::stoll(take_check_string(in));
        const std::string working_directory = take_check_string(in);
        const std::string name = take_check_string(in);
        const std::string source = take_check_string(in);
        const std::vector<std::string> flags = take_check_strings(in);
        const std::vector<std::string> name_expressions = take_check_strings(in);
        const auto header_count = take_count(in);
        if (!header_count) throw Error("truncated check compile request");
        std::vector<std::string> header_names, header_contents;
        for (std::size_t i = 0; i < *header_count; ++i) {
            header_names.push_back(take_check_string(in));
            header_contents.push_back(take_check_string(in));
        }
        hooks.move_clock(shift);
        if (!working_directory.empty() && ::chdir(working_directory.c_str()) != 0)
            throw Error("cannot change the working directory to '" + working_directory + "'");
        InMemoryHeaders headers;
        for (std::size_t i = 0; i < header_names.size(); ++i) {
            headers.names.push_back(header_names[i].c_str());
            headers.contents.push_back(header_contents[i].c_str());
        }
        hooks.record_opens(true);
        const NvrtcAttempt attempt = nvrtc_compile(source, name, flags, name_expressions, target,
                                                   "check compile of '" + name + "'", false, nullptr, true, headers);
        hooks.record_opens(false);
        std::fflush(nullptr);
        std::string reply = "R";
        put_field(reply, std::to_string(::getpid()));
        put_field(reply, attempt.status == NVRTC_SUCCESS ? "1" : "0");
        put_field(reply, attempt.code);
        put_field(reply, attempt.log);
        put_field(reply, std::to_string(attempt.symbols.size()));
        for (const auto& [expression, lowered] : attempt.symbols) {
            put_field(reply, expression);
            put_field(reply, lowered);
        }
        const std::vector<std::string> opened = hooks.opened();
        put_field(reply, std::to_string(opened.size()));
        for (const auto& path : opened) put_field(reply, path);
        const std::vector<std::string> absent = hooks.absent();
        put_field(reply, std::to_string(absent.size()));
        for (const auto& path : absent) put_field(reply, path);
        send_record(reply);
    } catch (const std::exception& e) {
        send_error_record(e.what());
        return 1;
    }
    return 0;
}

}  // namespace cudacore::detail
