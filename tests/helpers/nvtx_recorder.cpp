// An NVTX tool for the tests: a shared library that NVTX loads through NVTX_INJECTION64_PATH and
// that writes a line for each domain created, range pushed and range popped to the file named by
// CUDACORE_NVTX_RECORD:
//   domain NAME
//   push DOMAIN/MESSAGE
//   pop DOMAIN
// Only the calls cudacore makes are recorded (domains with ASCII messages); the others stay
// NVTX's no-ops.
#include <nvtx3/nvToolsExt.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace {

int record_fd = -1;

// One write per line (O_APPEND), so lines of concurrent threads never interleave.
void record(const std::string& line) {
    if (record_fd < 0) return;
    const std::string text = line + "\n";
    [[maybe_unused]] const ssize_t written = ::write(record_fd, text.data(), text.size());
}

// A domain's handle is its name, kept for the life of the process.
const char* domain_name(nvtxDomainHandle_t domain) {
    return domain ? reinterpret_cast<const std::string*>(domain)->c_str() : "(default)";
}

nvtxDomainHandle_t NVTX_API create_domain(const char* name) {
    record(std::string("domain ") + name);
    return reinterpret_cast<nvtxDomainHandle_t>(new std::string(name));
}

int NVTX_API push_range(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
    std::string message = "(no message)";
    if (attributes && attributes->messageType == NVTX_MESSAGE_TYPE_ASCII && attributes->message.ascii)
        message = attributes->message.ascii;
    record(std::string("push ") + domain_name(domain) + "/" + message);
    return 0;
}

int NVTX_API pop_range(nvtxDomainHandle_t domain) {
    record(std::string("pop ") + domain_name(domain));
    return 0;
}

}  // namespace

extern "C" int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
    if (const char* path = std::getenv("CUDACORE_NVTX_RECORD"))
        record_fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    const auto* callbacks =
        static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
    if (!callbacks || callbacks->struct_size < sizeof(NvtxExportTableCallbacks)) return 0;
    NvtxFunctionTable table = nullptr;
    unsigned int size = 0;
    if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) || !table ||
        size <= NVTX_CBID_CORE2_DomainCreateA)
        return 0;
    *table[NVTX_CBID_CORE2_DomainCreateA] = reinterpret_cast<NvtxFunctionPointer>(create_domain);
    *table[NVTX_CBID_CORE2_DomainRangePushEx] = reinterpret_cast<NvtxFunctionPointer>(push_range);
    *table[NVTX_CBID_CORE2_DomainRangePop] = reinterpret_cast<NvtxFunctionPointer>(pop_range);
    return 1;  // success: NVTX calls the functions installed above
}
