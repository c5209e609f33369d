#include "support/nvtx_range.hpp"

namespace cudacore::detail {

nvtxDomainHandle_t nvtx_domain() noexcept {
    static const nvtxDomainHandle_t domain = nvtxDomainCreateA("cudacore");
    return domain;
}

NvtxRange::NvtxRange(const char* name) noexcept : domain_(nvtx_domain()) {
    nvtxEventAttributes_t attributes{};
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attributes.message.ascii = name;
    nvtxDomainRangePushEx(domain_, &attributes);
}

NvtxRange::~NvtxRange() { nvtxDomainRangePop(domain_); }

}  // namespace cudacore::detail
