#include "cudacore/tracing.hpp"
#include "cudacore/tracing_handles.hpp"
#include "support/enum_text.hpp"
#include "support/tracing_domain.hpp"

#include "cudacore/errors.hpp"

#include <nvtx3/nvToolsExt.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <mutex>

namespace cudacore::tracing {
namespace detail {

std::atomic<unsigned char> tool_state{tool_unknown};

struct Access {
    static const DomainState* state(const Domain& domain) noexcept { return domain.state_; }
    static const DomainState* domain_of(const RegisteredString& string) noexcept { return string.domain_; }
    static const RegisteredText* text_of(const RegisteredString& string) noexcept { return string.text_; }
};

bool find_tool() noexcept {
    static const bool present = [] {
        nvtxInitialize(nullptr);  // NVTX's one search for a tool, done now
        // A tool installs the calls it takes in NVTX's table and NVTX leaves the rest null: the
        // table NVTX's own inline functions read on every call.
        const auto& table = NVTX_VERSIONED_IDENTIFIER(nvtxGlobals);
        return table.nvtxDomainRangePushEx_impl_fnptr != nullptr ||
               table.nvtxDomainMarkEx_impl_fnptr != nullptr;
    }();
    tool_state.store(present ? tool_present : tool_absent, std::memory_order_release);
    return present;
}

namespace {

// Domains by name, never destroyed: ranges may begin and end in static destructors.
struct DomainRegistry {
    std::mutex mutex;
    std::map<std::string, std::unique_ptr<DomainState>, std::less<>> domains;
};

DomainRegistry& domain_registry() {
    static auto* registry = new DomainRegistry;
    return *registry;
}

const DomainState* domain_named(std::string_view name) {
    const bool tool = tool_attached();  // before the lock: the first call loads the tool
    DomainRegistry& registry = domain_registry();
    std::lock_guard lock(registry.mutex);
    if (auto it = registry.domains.find(name); it != registry.domains.end()) return it->second.get();
    auto state = std::make_unique<DomainState>();
    state->name = std::string(name);
    if (tool) state->handle = nvtxDomainCreateA(state->name.c_str());
    return registry.domains.emplace(state->name, std::move(state)).first->second.get();
}

nvtxEventAttributes_t nvtx_attributes(const EventOptions& options) noexcept {
    nvtxEventAttributes_t attributes{};
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.category = options.category;
    if (options.color.is_set()) {
        attributes.colorType = NVTX_COLOR_ARGB;
        attributes.color = options.color.argb;
    }
    switch (options.payload.type()) {
        case Payload::Type::none: break;
        case Payload::Type::int64:
            attributes.payloadType = NVTX_PAYLOAD_TYPE_INT64;
            attributes.payload.llValue = options.payload.int64();
            break;
        case Payload::Type::uint64:
            attributes.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
            attributes.payload.ullValue = options.payload.uint64();
            break;
        case Payload::Type::float64:
            attributes.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
            attributes.payload.dValue = options.payload.float64();
            break;
    }
    return attributes;
}

// A registered string's handle where it belongs to `domain` and the tool took it; otherwise its
// text goes as an ordinary message.
void set_message(nvtxEventAttributes_t& attributes, const DomainState* domain,
                 const RegisteredString& message) noexcept {
    const RegisteredText* text = Access::text_of(message);
    if (Access::domain_of(message) == domain && text->handle) {
        attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        attributes.message.registered = text->handle;
    } else {
        attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
        attributes.message.ascii = text->text.c_str();
    }
}

}  // namespace

void name_category(const DomainState* domain, std::uint32_t id, std::string_view category_name) noexcept {
    if (!tool_attached()) return;
    try {
        const std::string text(category_name);
        nvtxDomainNameCategoryA(domain->handle, id, text.c_str());
    } catch (...) {
        // No memory for the name: the tool shows the number.
    }
}

const DomainState* push(const Domain& domain, std::string_view message,
                        const EventOptions& options) noexcept {
    try {
        const std::string text(message);  // NVTX takes a terminated string
        nvtxEventAttributes_t attributes = nvtx_attributes(options);
        attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
        attributes.message.ascii = text.c_str();
        const DomainState* state = Access::state(domain);
        nvtxDomainRangePushEx(state->handle, &attributes);
        return state;
    } catch (...) {
        return nullptr;  // no memory for the message: no range
    }
}

const DomainState* push(const Domain& domain, const RegisteredString& message,
                        const EventOptions& options) noexcept {
    const DomainState* state = Access::state(domain);
    nvtxEventAttributes_t attributes = nvtx_attributes(options);
    set_message(attributes, state, message);
    nvtxDomainRangePushEx(state->handle, &attributes);
    return state;
}

void pop(const DomainState* domain) noexcept { nvtxDomainRangePop(domain->handle); }

RangeId start(const Domain& domain, std::string_view message, const EventOptions& options) noexcept {
    try {
        const std::string text(message);
        nvtxEventAttributes_t attributes = nvtx_attributes(options);
        attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
        attributes.message.ascii = text.c_str();
        const DomainState* state = Access::state(domain);
        return RangeId(state, nvtxDomainRangeStartEx(state->handle, &attributes));
    } catch (...) {
        return {};  // no memory for the message: no range
    }
}

void mark(const Domain& domain, std::string_view message, const EventOptions& options) noexcept {
    try {
        const std::string text(message);
        nvtxEventAttributes_t attributes = nvtx_attributes(options);
        attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
        attributes.message.ascii = text.c_str();
        nvtxDomainMarkEx(Access::state(domain)->handle, &attributes);
    } catch (...) {
        // No memory for the message: no mark.
    }
}

void mark(const Domain& domain, const RegisteredString& message, const EventOptions& options) noexcept {
    const DomainState* state = Access::state(domain);
    nvtxEventAttributes_t attributes = nvtx_attributes(options);
    set_message(attributes, state, message);
    nvtxDomainMarkEx(state->handle, &attributes);
}

}  // namespace detail

Domain::Domain(std::string_view name) : state_(nullptr) {
    if (name.empty()) throw InvalidArgumentError("tracing::Domain: the name is empty");
    state_ = detail::domain_named(name);
}

const Domain& Domain::cudacore() noexcept {
    static const Domain domain = [] {
        Domain made("cudacore");
        static constexpr std::pair<CudacoreCategory, const char*> categories[] = {
            {CudacoreCategory::compile, "compile"}, {CudacoreCategory::link, "link"},
            {CudacoreCategory::cache, "cache"},     {CudacoreCategory::load, "load"},
            {CudacoreCategory::graph, "graph"},     {CudacoreCategory::memory, "memory"}};
        for (const auto& [id, category_name] : categories)
            detail::name_category(detail::Access::state(made), static_cast<std::uint32_t>(id),
                                  category_name);
        return made;
    }();
    return domain;
}

std::string_view Domain::name() const noexcept { return state_->name; }

void* Domain::native_handle() const noexcept { return state_->handle; }

void Domain::name_category(std::uint32_t id, std::string_view category_name) const noexcept {
    detail::name_category(state_, id, category_name);
}

RegisteredString Domain::register_string(std::string_view text) const {
    std::lock_guard lock(state_->strings_mutex);
    auto it = state_->strings.find(text);
    if (it == state_->strings.end()) {
        auto registered = std::make_unique<detail::RegisteredText>();
        registered->text = std::string(text);
        if (tool_attached())
            registered->handle = nvtxDomainRegisterStringA(state_->handle, registered->text.c_str());
        it = state_->strings.emplace(registered->text, std::move(registered)).first;
    }
    return RegisteredString(state_, it->second.get());
}

std::string_view RegisteredString::text() const noexcept { return text_->text; }

}  // namespace cudacore::tracing

namespace cudacore::tracing {

std::string to_string(Payload::Type type) {
    static constexpr cudacore::detail::EnumText<Payload::Type> names[] = {
        {Payload::Type::none, "none"},
        {Payload::Type::int64, "int64"},
        {Payload::Type::uint64, "uint64"},
        {Payload::Type::float64, "float64"},
    };
    return cudacore::detail::enum_text(type, names, "Payload::Type");
}

std::string to_string(CudacoreCategory category) {
    static constexpr cudacore::detail::EnumText<CudacoreCategory> names[] = {
        {CudacoreCategory::compile, "compile"},
        {CudacoreCategory::link, "link"},
        {CudacoreCategory::cache, "cache"},
        {CudacoreCategory::load, "load"},
        {CudacoreCategory::graph, "graph"},
        {CudacoreCategory::memory, "memory"},
    };
    return cudacore::detail::enum_text(category, names, "CudacoreCategory");
}

}  // namespace cudacore::tracing
