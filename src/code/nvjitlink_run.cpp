#include "code/nvjitlink_run.hpp"
#include "code/worker_messages.hpp"

#include "cudacore/compile_errors.hpp"
#include "cudacore/errors.hpp"
#include "loader/compiler_apis.hpp"
#include "support/child_process.hpp"
#include "support/parent_death.hpp"
#include "support/system_call_error.hpp"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string_view>
#include <system_error>

namespace cudacore::detail {

namespace {

// Throws CompilerApiError naming the call, nvJitLink's status and the link unless it succeeded.
void check_nvjitlink(nvJitLinkResult status, const char* call, const std::string& object) {
    if (status == NVJITLINK_SUCCESS) return;
    throw CompilerApiError(call, static_cast<int>(status), nvjitlink_status_name(status), object);
}

nvJitLinkInputType nvjitlink_input_type(CodeType type) {
    switch (type) {
        case CodeType::cubin: return NVJITLINK_INPUT_CUBIN;
        case CodeType::ptx: return NVJITLINK_INPUT_PTX;
        case CodeType::ltoir: return NVJITLINK_INPUT_LTOIR;
        case CodeType::fatbin: return NVJITLINK_INPUT_FATBIN;
        case CodeType::object: return NVJITLINK_INPUT_OBJECT;
        case CodeType::library: return NVJITLINK_INPUT_LIBRARY;
    }
    return NVJITLINK_INPUT_ANY;
}

std::string nvjitlink_log(const NvJitLinkApi& api, nvJitLinkHandle handle, bool error) {
    size_t size = 0;
    auto status = error ? api.get_error_log_size(handle, &size) : api.get_info_log_size(handle, &size);
    if (status != NVJITLINK_SUCCESS || size <= 1) return {};
    std::string log(size, '\0');
    status = error ? api.get_error_log(handle, log.data()) : api.get_info_log(handle, log.data());
    if (status != NVJITLINK_SUCCESS) return {};
    log.resize(size - 1);
    return log;
}

std::string add_data_call(const ObjectCode& input, const std::string& name) {
    return "nvJitLinkAddData(" + std::string(to_string(input.code_type())) + " '" + name + "', " +
           std::to_string(input.size()) + " bytes)";
}

// ---- the messages between a Linker and its worker ------------------------------------------
// Each message is a sequence of fields, each a little-endian 64-bit length and the bytes. The
// worker writes records on its reply channel as it goes: "S" + step number before each step,
// then one "R" (the run) or "E" (an error other than a failed link) with the fields after it.

constexpr std::string_view kRequestMagic = "cudacore-link-request-1";

}  // namespace

nvJitLinkHandle create_nvjitlink(const std::vector<std::string>& flags, const std::string& object) {
    std::vector<const char*> argv;
    for (const auto& flag : flags) argv.push_back(flag.c_str());
    nvJitLinkHandle handle = nullptr;
    check_nvjitlink(nvjitlink().create(&handle, static_cast<uint32_t>(argv.size()), argv.data()),
                    "nvJitLinkCreate", object);
    return handle;
}

NvJitLinkRun run_nvjitlink(nvJitLinkHandle handle, const std::vector<ObjectCode>& inputs,
                           const std::vector<std::string>& names, CodeType target,
                           const std::string& object, const LinkStepObserver& before_step) {
    const auto& api = nvjitlink();
    NvJitLinkRun run;
    auto take_logs = [&] {
        run.info_log = nvjitlink_log(api, handle, false);
        run.error_log = nvjitlink_log(api, handle, true);
    };
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (before_step) before_step(i);
        const ObjectCode& input = inputs[i];
        const auto status = api.add_data(handle, nvjitlink_input_type(input.code_type()),
                                         input.code().data(), input.size(), names[i].c_str());
        if (status != NVJITLINK_SUCCESS) {
            take_logs();
            run.failure = add_data_call(input, names[i]) + " failed: " + nvjitlink_status_name(status);
            return run;
        }
    }
    if (before_step) before_step(kCompleteStep);
    if (const auto status = api.complete(handle); status != NVJITLINK_SUCCESS) {
        take_logs();
        run.failure = "nvJitLinkComplete failed: " + nvjitlink_status_name(status);
        return run;
    }
    take_logs();
    size_t size = 0;
    if (target == CodeType::ptx) {
        check_nvjitlink(api.get_linked_ptx_size(handle, &size), "nvJitLinkGetLinkedPtxSize", object);
        run.code.resize(size);
        check_nvjitlink(api.get_linked_ptx(handle, run.code.data()), "nvJitLinkGetLinkedPtx", object);
        while (!run.code.empty() && run.code.back() == '\0') run.code.pop_back();
    } else {
        check_nvjitlink(api.get_linked_cubin_size(handle, &size), "nvJitLinkGetLinkedCubinSize", object);
        run.code.resize(size);
        check_nvjitlink(api.get_linked_cubin(handle, run.code.data()), "nvJitLinkGetLinkedCubin", object);
    }
    run.linked = true;
    return run;
}

namespace {
// The request the link worker reads on its standard input: the flags, then each input's type,
// name and bytes.
std::string link_request(const std::vector<ObjectCode>& inputs, const std::vector<std::string>& names,
                         const std::vector<std::string>& flags, CodeType target) {
    std::string request;
    put_field(request, kRequestMagic);
    put_field(request, to_string(target));
    put_field(request, std::to_string(flags.size()));
    for (const auto& flag : flags) put_field(request, flag);
    put_field(request, std::to_string(inputs.size()));
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        put_field(request, to_string(inputs[i].code_type()));
        put_field(request, names[i]);
        put_field(request, inputs[i].code());
    }
    return request;
}

// Runs the link worker on `request`. A worker that cannot be started throws LoaderError when it
// is not there (or not a program), CompilerApiError naming the limit otherwise.
ChildProcessResult run_link_worker(const std::filesystem::path& worker, const std::string& request,
                                   std::chrono::milliseconds timeout) {
    try {
        return run_child_process(worker, {}, {.input = request, .timeout = timeout, .reply_channel = true});
    } catch (const ChildStartError& e) {
        const int error = e.code().value();
        // Only a worker that is not there (or not a program) is a loader's problem; a limit on
        // descriptors or processes is said as what it is.
        if (error == ENOENT || error == EACCES || error == ENOEXEC || error == ENOTDIR ||
            error == ELOOP || error == ENAMETOOLONG) {
            throw LoaderError(worker.filename().string(), {worker.string()}, "CUDACORE_LINK_WORKER",
                              std::string("cannot start the link worker: ") + e.what());
        }
        const char* name = ::strerrorname_np(error);
        std::string why = std::strerror(error);
        if (std::string hint = resource_limit_hint(error); !hint.empty()) why += ": " + hint;
        throw CompilerApiError(e.call(), error, name ? name : "errno " + std::to_string(error),
                               "the link worker '" + worker.string() + "' could not be started: " + why);
    }
}
}  // namespace

NvJitLinkRun run_nvjitlink_isolated(const std::filesystem::path& worker,
                                    const std::vector<ObjectCode>& inputs,
                                    const std::vector<std::string>& names,
                                    const std::vector<std::string>& flags, CodeType target,
                                    std::chrono::milliseconds timeout) {
    const ChildProcessResult ended =
        run_link_worker(worker, link_request(inputs, names, flags, target), timeout);
    NvJitLinkRun run;
    run.console = ended.out;
    if (!ended.err.empty()) run.console += (run.console.empty() ? "" : "\n") + ended.err;
    std::optional<std::size_t> step;
    std::string_view records = ended.reply;
    while (auto record = take_field(records)) {
        if (record->empty()) continue;
        const char tag = record->front();
        std::string_view fields = record->substr(1);
        if (tag == 'S') {
            std::size_t value = 0;
            if (std::from_chars(fields.data(), fields.data() + fields.size(), value).ec == std::errc())
                step = value;
        } else if (tag == 'E') {
            throw Error("link worker '" + worker.string() + "': " + std::string(take_field(fields).value_or("")));
        } else if (tag == 'R' && !ended.crashed()) {
            const auto linked = take_field(fields);
            const auto failure = take_field(fields);
            const auto info = take_field(fields);
            const auto error = take_field(fields);
            const auto code = take_field(fields);
            if (!linked || !failure || !info || !error || !code) break;
            run.linked = *linked == "1";
            run.failure = *failure;
            run.info_log = *info;
            run.error_log = *error;
            run.code = *code;
            return run;
        }
    }
    // Ended without a reply: killed by a signal, or an exit of its own from inside nvJitLink
    // (LLVM's fatal errors exit; so does a sanitizer's report). Either way the input did it:
    // name the step it was in.
    std::string call = "the link request";
    if (step && *step < inputs.size()) call = add_data_call(inputs[*step], names[*step]);
    else if (step) call = "nvJitLinkComplete";
    if (ended.timed_out) {
        run.failure = call + " did not finish: the link worker process was killed after the time "
                             "limit of " + std::to_string(ended.timeout.count()) + " ms";
    } else if (ended.crashed()) {
        run.failure = call + " crashed the link worker process: " + ended.how_it_ended();
    } else {
        constexpr std::size_t kConsoleShown = 2000;
        run.failure = call + " ended the link worker process without a reply: " +
                      ended.how_it_ended() +
                      (run.console.empty() ? "" : ": " + run.console.substr(0, kConsoleShown));
    }
    return run;
}

int link_worker_main() {
    die_with_parent_from_environment();  // an orphaned worker would link for nobody
    const std::string request = read_all(0);
    try {
        std::string_view in = request;
        if (take_field(in) != kRequestMagic) throw Error("not a link request on standard input");
        const auto target = take_field(in);
        const auto flag_count = take_count(in);
        if (!target || !flag_count) throw Error("truncated link request");
        std::vector<std::string> flags;
        for (std::size_t i = 0; i < *flag_count; ++i) {
            const auto flag = take_field(in);
            if (!flag) throw Error("truncated link request");
            flags.emplace_back(*flag);
        }
        const auto input_count = take_count(in);
        if (!input_count) throw Error("truncated link request");
        std::vector<ObjectCode> inputs;
        std::vector<std::string> names;
        for (std::size_t i = 0; i < *input_count; ++i) {
            const auto type = take_field(in);
            const auto name = take_field(in);
            const auto bytes = take_field(in);
            if (!type || !name || !bytes) throw Error("truncated link request");
            inputs.push_back(ObjectCode::from_bytes(code_type_from_string(std::string(*type)),
                                                    std::string(*bytes), std::string(*name)));
            names.emplace_back(*name);
        }
        const CodeType code_type = code_type_from_string(std::string(*target));
        const std::string object = "link worker";
        nvJitLinkHandle handle = create_nvjitlink(flags, object);
        const NvJitLinkRun run =
            run_nvjitlink(handle, inputs, names, code_type, object, [](std::size_t step) {
                // Built by appending: GCC 12 warns (-Wrestrict, wrongly) on "S" + string here.
                std::string record = "S";
                record += std::to_string(step);
                send_record(record);
            });
        // What the linker printed must reach the parent before the reply says it is done.
        std::fflush(nullptr);
        std::string reply = "R";
        put_field(reply, run.linked ? "1" : "0");
        put_field(reply, run.failure);
        put_field(reply, run.info_log);
        put_field(reply, run.error_log);
        put_field(reply, run.code);
        send_record(reply);
        nvjitlink().destroy(&handle);
    } catch (const std::exception& e) {
        send_error_record(e.what());
        return 1;
    }
    return 0;
}

}  // namespace cudacore::detail
