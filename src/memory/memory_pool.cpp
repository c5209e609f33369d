#include "cudacore/memory_pool.hpp"

#include "errors/closed_object.hpp"
#include "loader/driver_api.hpp"
#include "memory/memory_pool_box.hpp"
#include "memory/owned_pool.hpp"

namespace cudacore {

MemoryPool::MemoryPool(CUmemoryPool pool, std::string description,
                       std::shared_ptr<const void> owner)
    : OwningHandle(made(std::make_shared<detail::MemoryPoolBox>(pool, std::move(description), std::move(owner)),
                        pool)) {}

bool MemoryPool::owns_handle() const noexcept { return false; }

const std::string& MemoryPool::description() const noexcept {
    return box() ? box()->description : closed_description();
}

std::uint64_t MemoryPool::get_u64(CUmemPool_attribute attribute, const char* name) const {
    check_usable(("MemoryPool::" + std::string(name)).c_str());
    cuuint64_t value = 0;
    detail::check(detail::driver().cuMemPoolGetAttribute(handle(), attribute, &value),
                  "cuMemPoolGetAttribute", [&] { return std::string(name) + " of " + description(); });
    return value;
}

void MemoryPool::set_u64(CUmemPool_attribute attribute, const char* name, std::uint64_t value) {
    check_usable(("MemoryPool::" + std::string(name)).c_str());
    cuuint64_t raw = value;
    detail::check(detail::driver().cuMemPoolSetAttribute(handle(), attribute, &raw),
                  "cuMemPoolSetAttribute", [&] {
                      return std::string(name) + " = " + std::to_string(value) + " of " +
                             description();
                  });
}

// The reuse attributes are ints, the others cuuint64_t (see CUmemPool_attribute).
bool MemoryPool::get_flag(CUmemPool_attribute attribute, const char* name) const {
    check_usable(("MemoryPool::" + std::string(name)).c_str());
    int value = 0;
    detail::check(detail::driver().cuMemPoolGetAttribute(handle(), attribute, &value),
                  "cuMemPoolGetAttribute", [&] { return std::string(name) + " of " + description(); });
    return value != 0;
}

void MemoryPool::set_flag(CUmemPool_attribute attribute, const char* name, bool value) {
    check_usable(("MemoryPool::" + std::string(name)).c_str());
    int raw = value ? 1 : 0;
    detail::check(detail::driver().cuMemPoolSetAttribute(handle(), attribute, &raw),
                  "cuMemPoolSetAttribute", [&] {
                      return std::string(name) + " = " + (value ? "true" : "false") + " of " +
                             description();
                  });
}

MemoryPoolAttributes MemoryPool::attributes() const {
    check_usable("MemoryPool::attributes");
    MemoryPoolAttributes out;
    out.reuse_follow_event_dependencies = reuse_follow_event_dependencies();
    out.reuse_allow_opportunistic = reuse_allow_opportunistic();
    out.reuse_allow_internal_dependencies = reuse_allow_internal_dependencies();
    out.release_threshold = release_threshold();
    out.reserved_mem_current = reserved_mem_current();
    out.reserved_mem_high = reserved_mem_high();
    out.used_mem_current = used_mem_current();
    out.used_mem_high = used_mem_high();
    return out;
}

bool MemoryPool::reuse_follow_event_dependencies() const {
    return get_flag(CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, "reuse_follow_event_dependencies");
}
void MemoryPool::set_reuse_follow_event_dependencies(bool enabled) {
    set_flag(CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, "reuse_follow_event_dependencies",
             enabled);
}
bool MemoryPool::reuse_allow_opportunistic() const {
    return get_flag(CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, "reuse_allow_opportunistic");
}
void MemoryPool::set_reuse_allow_opportunistic(bool enabled) {
    set_flag(CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, "reuse_allow_opportunistic", enabled);
}
bool MemoryPool::reuse_allow_internal_dependencies() const {
    return get_flag(CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
                    "reuse_allow_internal_dependencies");
}
void MemoryPool::set_reuse_allow_internal_dependencies(bool enabled) {
    set_flag(CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
             "reuse_allow_internal_dependencies", enabled);
}
std::uint64_t MemoryPool::release_threshold() const {
    return get_u64(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, "release_threshold");
}
void MemoryPool::set_release_threshold(std::uint64_t bytes) {
    set_u64(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, "release_threshold", bytes);
}
std::uint64_t MemoryPool::reserved_mem_current() const {
    return get_u64(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, "reserved_mem_current");
}
std::uint64_t MemoryPool::reserved_mem_high() const {
    return get_u64(CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, "reserved_mem_high");
}
// The driver accepts only 0 for the high marks, which resets them to the current value.
void MemoryPool::reset_reserved_mem_high() {
    set_u64(CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, "reserved_mem_high", 0);
}
std::uint64_t MemoryPool::used_mem_current() const {
    return get_u64(CU_MEMPOOL_ATTR_USED_MEM_CURRENT, "used_mem_current");
}
std::uint64_t MemoryPool::used_mem_high() const {
    return get_u64(CU_MEMPOOL_ATTR_USED_MEM_HIGH, "used_mem_high");
}
void MemoryPool::reset_used_mem_high() {
    set_u64(CU_MEMPOOL_ATTR_USED_MEM_HIGH, "used_mem_high", 0);
}

void MemoryPool::trim_to(std::size_t bytes_to_keep) {
    check_usable("MemoryPool::trim_to");
    detail::check(detail::driver().cuMemPoolTrimTo(handle(), bytes_to_keep), "cuMemPoolTrimTo",
                  [&] { return std::to_string(bytes_to_keep) + " bytes kept by " + description(); });
}

void MemoryPool::close() {
    if (box()) close_as(box()->description);
}

}  // namespace cudacore
