// An NVTX tool for the tests: a shared library that NVTX loads through NVTX_INJECTION64_PATH and
// that writes a line for each call it takes to the file named by CUDACORE_NVTX_RECORD, fields
// separated by tabs (read back by tests/support/nvtx_record.hpp):
//   domain NAME
//   category DOMAIN ID NAME
//   string DOMAIN TEXT
//   push THREAD DOMAIN MESSAGE_TYPE MESSAGE CATEGORY COLOR PAYLOAD
//   mark THREAD DOMAIN MESSAGE_TYPE MESSAGE CATEGORY COLOR PAYLOAD
//   pop THREAD DOMAIN
//   start THREAD DOMAIN ID MESSAGE_TYPE MESSAGE CATEGORY COLOR PAYLOAD
//   end THREAD DOMAIN ID
//   thread_name THREAD_ID NAME
// MESSAGE_TYPE is ascii or registered; COLOR is none or eight hex digits (ARGB); PAYLOAD is none,
// i64:N, u64:N or f64:X. Only the domain calls and thread naming are taken; the others stay
// NVTX's no-ops.
#include <nvtx3/nvToolsExt.h>

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
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

// A domain's handle, and a registered string's, is its name or text, kept for the process.
const char* text_of(const void* handle) {
    return handle ? static_cast<const std::string*>(handle)->c_str() : "(default)";
}

std::string thread_id() { return std::to_string(::syscall(SYS_gettid)); }

std::string payload_of(const nvtxEventAttributes_t& attributes) {
    switch (attributes.payloadType) {
        case NVTX_PAYLOAD_UNKNOWN: return "none";
        case NVTX_PAYLOAD_TYPE_INT64: return "i64:" + std::to_string(attributes.payload.llValue);
        case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64: return "u64:" + std::to_string(attributes.payload.ullValue);
        case NVTX_PAYLOAD_TYPE_DOUBLE: {
            char text[64];
            std::snprintf(text, sizeof text, "f64:%g", attributes.payload.dValue);
            return text;
        }
        default: return "other:" + std::to_string(attributes.payloadType);
    }
}

// The fields an event carries, from MESSAGE_TYPE to PAYLOAD.
std::string event_fields(const nvtxEventAttributes_t* attributes) {
    if (!attributes) return "none\t\t0\tnone\tnone";
    std::string message_type = "other";
    std::string message;
    if (attributes->messageType == NVTX_MESSAGE_TYPE_ASCII && attributes->message.ascii) {
        message_type = "ascii";
        message = attributes->message.ascii;
    } else if (attributes->messageType == NVTX_MESSAGE_TYPE_REGISTERED) {
        message_type = "registered";
        message = text_of(attributes->message.registered);
    }
    std::string color = "none";
    if (attributes->colorType == NVTX_COLOR_ARGB) {
        char hex[16];
        std::snprintf(hex, sizeof hex, "%08X", attributes->color);
        color = hex;
    }
    return message_type + "\t" + message + "\t" + std::to_string(attributes->category) + "\t" +
           color + "\t" + payload_of(*attributes);
}

nvtxDomainHandle_t NVTX_API create_domain(const char* name) {
    record(std::string("domain\t") + name);
    return reinterpret_cast<nvtxDomainHandle_t>(new std::string(name));
}

void NVTX_API name_category(nvtxDomainHandle_t domain, uint32_t id, const char* name) {
    record(std::string("category\t") + text_of(domain) + "\t" + std::to_string(id) + "\t" + name);
}

nvtxStringHandle_t NVTX_API register_string(nvtxDomainHandle_t domain, const char* text) {
    record(std::string("string\t") + text_of(domain) + "\t" + text);
    return reinterpret_cast<nvtxStringHandle_t>(new std::string(text));
}

int NVTX_API push_range(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
    record("push\t" + thread_id() + "\t" + text_of(domain) + "\t" + event_fields(attributes));
    return 0;
}

int NVTX_API pop_range(nvtxDomainHandle_t domain) {
    record("pop\t" + thread_id() + "\t" + text_of(domain));
    return 0;
}

void NVTX_API mark(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
    record("mark\t" + thread_id() + "\t" + text_of(domain) + "\t" + event_fields(attributes));
}

std::uint64_t next_range_id = 0;  // ids of started ranges, 1, 2, ...

nvtxRangeId_t NVTX_API start_range(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
    const std::uint64_t id = __atomic_add_fetch(&next_range_id, 1, __ATOMIC_RELAXED);
    record("start\t" + thread_id() + "\t" + text_of(domain) + "\t" + std::to_string(id) + "\t" +
           event_fields(attributes));
    return id;
}

void NVTX_API end_range(nvtxDomainHandle_t domain, nvtxRangeId_t id) {
    record("end\t" + thread_id() + "\t" + text_of(domain) + "\t" + std::to_string(id));
}

void NVTX_API name_os_thread(uint32_t thread, const char* name) {
    record("thread_name\t" + std::to_string(thread) + "\t" + name);
}

template <class Function>
void install(NvtxFunctionTable table, unsigned size, unsigned id, Function function) {
    if (id < size) *table[id] = reinterpret_cast<NvtxFunctionPointer>(function);
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
    if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) || !table) return 0;
    install(table, size, NVTX_CBID_CORE2_DomainCreateA, create_domain);
    install(table, size, NVTX_CBID_CORE2_DomainNameCategoryA, name_category);
    install(table, size, NVTX_CBID_CORE2_DomainRegisterStringA, register_string);
    install(table, size, NVTX_CBID_CORE2_DomainRangePushEx, push_range);
    install(table, size, NVTX_CBID_CORE2_DomainRangePop, pop_range);
    install(table, size, NVTX_CBID_CORE2_DomainMarkEx, mark);
    install(table, size, NVTX_CBID_CORE2_DomainRangeStartEx, start_range);
    install(table, size, NVTX_CBID_CORE2_DomainRangeEnd, end_range);
    NvtxFunctionTable core = nullptr;
    unsigned int core_size = 0;
    if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size) && core)
        install(core, core_size, NVTX_CBID_CORE_NameOsThreadA, name_os_thread);
    return 1;  // success: NVTX calls the functions installed above
}
