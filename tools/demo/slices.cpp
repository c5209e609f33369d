// `cudacore demo`: The slices step: part of a buffer as a Buffer, and the driver's pointer attributes of it.
#include "demo.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/buffer_slice.hpp"
#include "cudacore/pointer_attributes.hpp"

#include <cstdio>
#include <vector>

namespace cudacore::cli::demo {

// Part of a buffer as a Buffer (no wrap_unowned of an address), and what the driver knows of it.
void step_slices(Demo& demo) {
    std::printf("== slices and pointer attributes\n");
    if (!gpu_for(demo, "slices", "slices of device memory need a GPU")) return;
    Stream stream = demo.device->create_stream();
    Buffer whole = demo.device->allocate(1 << 16, stream);
    whole.fill_byte(0, stream);
    const Buffer middle = slice(whole, 4096, 8192);
    middle.fill_byte(7, stream);
    std::vector<std::uint8_t> back(whole.size());
    whole.copy_to(back, stream);
    stream.sync();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < back.size(); ++i)
        wrong += back[i] != ((i >= 4096 && i < 4096 + 8192) ? 7 : 0);
    const PointerAttributes where = pointer_attributes(middle.handle());
    const bool known = where.memory_type == MemoryType::device &&
                       where.device_ordinal == demo.device->ordinal() &&
                       where.range_start <= whole.handle() &&
                       middle.handle() + middle.size() <= where.range_start + where.range_size;
    std::printf("bytes [4096, 12288) of a 64 KiB buffer filled through a slice: %zu wrong; "
                "the driver says: %s\n",
                wrong, where.description().c_str());
    demo.outcomes.verify("slices", wrong == 0 && known);
}

}  // namespace cudacore::cli::demo
