// ContextOptions to and from cuCtxCreate flags: the one place they are turned into each other.
#include "cudacore/context.hpp"
#include "cudacore/errors.hpp"
#include "support/enum_text.hpp"

#include <cstdio>
#include <string>

namespace cudacore {

namespace {

// The bits Context::create sets or ContextOptions::from_flags reads. Others (coredump, the
// deprecated CU_CTX_BLOCKING_SYNC alias) are refused: the options have no field for them.
constexpr unsigned kKnownFlags = CU_CTX_SCHED_MASK | CU_CTX_MAP_HOST | CU_CTX_LMEM_RESIZE_TO_MAX |
                                 CU_CTX_SYNC_MEMOPS;

std::string hex(unsigned value) {
    char text[16];
    std::snprintf(text, sizeof text, "0x%x", value);
    return text;
}

}  // namespace

ContextOptions ContextOptions::from_flags(unsigned flags) {
    if (flags & ~kKnownFlags)
        throw InvalidArgumentError("ContextOptions::from_flags: flags " + hex(flags) +
                                   " hold bits it does not know (" + hex(flags & ~kKnownFlags) +
                                   "); known: CU_CTX_SCHED_*, CU_CTX_MAP_HOST, "
                                   "CU_CTX_LMEM_RESIZE_TO_MAX, CU_CTX_SYNC_MEMOPS");
    ContextOptions options;
    switch (flags & CU_CTX_SCHED_MASK) {
    case CU_CTX_SCHED_AUTO: options.scheduling = ContextScheduling::automatic; break;
    case CU_CTX_SCHED_SPIN: options.scheduling = ContextScheduling::spin; break;
    case CU_CTX_SCHED_YIELD: options.scheduling = ContextScheduling::yield; break;
    case CU_CTX_SCHED_BLOCKING_SYNC: options.scheduling = ContextScheduling::blocking_sync; break;
    default:
        throw InvalidArgumentError("ContextOptions::from_flags: flags " + hex(flags) +
                                   " set more than one scheduling bit (" +
                                   hex(flags & CU_CTX_SCHED_MASK) +
                                   "); at most one of CU_CTX_SCHED_SPIN, _YIELD, _BLOCKING_SYNC");
    }
    options.map_host = (flags & CU_CTX_MAP_HOST) != 0;
    options.lmem_resize_to_max = (flags & CU_CTX_LMEM_RESIZE_TO_MAX) != 0;
    options.sync_memops = (flags & CU_CTX_SYNC_MEMOPS) != 0;
    return options;
}

unsigned ContextOptions::flags() const {
    unsigned flags = 0;
    switch (scheduling) {
    case ContextScheduling::automatic: flags = CU_CTX_SCHED_AUTO; break;
    case ContextScheduling::spin: flags = CU_CTX_SCHED_SPIN; break;
    case ContextScheduling::yield: flags = CU_CTX_SCHED_YIELD; break;
    case ContextScheduling::blocking_sync: flags = CU_CTX_SCHED_BLOCKING_SYNC; break;
    default:
        throw InvalidArgumentError("ContextOptions::scheduling is " +
                                   std::to_string(static_cast<int>(scheduling)) +
                                   ", not a ContextScheduling value (automatic, spin, yield, "
                                   "blocking_sync)");
    }
    if (map_host) flags |= CU_CTX_MAP_HOST;
    if (lmem_resize_to_max) flags |= CU_CTX_LMEM_RESIZE_TO_MAX;
    if (sync_memops) flags |= CU_CTX_SYNC_MEMOPS;
    return flags;
}

}  // namespace cudacore

namespace cudacore {

std::string to_string(ContextScheduling scheduling) {
    static constexpr detail::EnumText<ContextScheduling> names[] = {
        {ContextScheduling::automatic, "automatic"},
        {ContextScheduling::spin, "spin"},
        {ContextScheduling::yield, "yield"},
        {ContextScheduling::blocking_sync, "blocking_sync"},
    };
    return detail::enum_text(scheduling, names, "ContextScheduling");
}

}  // namespace cudacore
