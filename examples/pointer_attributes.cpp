// What the driver knows about an address: host, device (pool and cuMemAlloc), pinned, managed,
// a slice and an address the driver does not know, each asked with pointer_attributes (one cuPointerGetAttributes)
// and checked against what the program knows about it. Exits 1 when an answer is wrong.
#include <cudacore/cudacore.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace cudacore;

int wrong = 0;

// Prints the answer for `what` and counts it wrong when `ok` is false.
void check(const char* what, const PointerAttributes& a, bool ok) {
    std::printf("%-22s %s: %s\n", what, ok ? "ok   " : "WRONG", a.description().c_str());
    if (!ok) ++wrong;
}

bool contains(const PointerAttributes& a, CUdeviceptr pointer, std::size_t size) {
    return a.range_start <= pointer && pointer + size <= a.range_start + a.range_size;
}

}  // namespace

int main() try {
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    Device device(0);
    Stream stream = device.create_stream();

    std::vector<int> host(256);  // pageable memory: unknown to the driver
    const PointerAttributes h = pointer_attributes(host.data());
    check("pageable host memory", h, !h.is_known() && h.device_ordinal == -1);

    Buffer pooled = device.allocate(1 << 20, stream);
    stream.sync();
    const PointerAttributes p = pointer_attributes(pooled.handle());
    bool pool_ok = p.memory_type == MemoryType::device && p.device_ordinal == 0 &&
                   contains(p, pooled.handle(), pooled.size());
    if (device.attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED))
        pool_ok = pool_ok && p.pool == device.memory_pool_resource()->pool();
    check("pool memory", p, pool_ok);

    auto plain = std::make_shared<SynchronousMemoryResource>(device);
    Buffer allocated = plain->allocate(1 << 16, stream);
    const PointerAttributes d = pointer_attributes(allocated.handle());
    check("cuMemAlloc memory", d,
          d.memory_type == MemoryType::device && !d.pool && d.context &&
              d.range_start == allocated.handle() && d.range_size == allocated.size());

    Buffer part = slice(allocated, 4096, 1024);
    const PointerAttributes s = pointer_attributes(part.handle());
    check("slice at +4096", s,
          s.range_start == allocated.handle() && s.offset_of(part.handle()) == 4096 &&
              s.buffer_id == d.buffer_id);

    auto pinned_resource = std::make_shared<LegacyPinnedMemoryResource>(device);
    Buffer pinned = pinned_resource->allocate(4096, stream);
    const PointerAttributes n = pointer_attributes(pinned.data());
    check("pinned host memory", n, n.memory_type == MemoryType::host && n.host_pointer);

    if (device.properties().managed_memory) {
        auto managed_resource = std::make_shared<ManagedMemoryResource>(device);
        Buffer managed = managed_resource->allocate(4096, stream);
        const PointerAttributes m = pointer_attributes(managed.handle());
        check("managed memory", m, m.memory_type == MemoryType::managed && m.is_managed);
    } else {
        std::printf("managed memory: not supported by this device, part skipped\n");
    }

    std::printf("pointer attributes: %d wrong answers\n", wrong);
    return wrong == 0 ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
