// Side by side, signals between two streams (needs a GPU): an event recorded on one stream and
// waited for on another, against a word written on one stream and waited for on the other
// (stream memory operations). Enqueue-only, per pair; both streams synchronized outside the timing.
#include "side_by_side/areas.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/event.hpp"
#include "cudacore/stream_memory_operations.hpp"
#include "cudacore/synchronous_memory_resource.hpp"
#include "loader/driver_api.hpp"

#include <cstdint>
#include <memory>

namespace cudacore::bench::side_by_side {

const std::vector<std::string> signal_operation_names = {
    "event_record_wait_pair", "stream_write_wait_pair", "stream_write_wait_pair_buffer"};

void signal_operations(Runner& runner, const Device& device) {
    const auto& api = detail::driver();
    device.set_current();
    const Stream producer = device.create_stream();
    const Stream consumer = device.create_stream();
    const CUstream raw_producer = producer.handle();
    const CUstream raw_consumer = consumer.handle();
    constexpr int pairs_per_batch = 64;
    // Nanoseconds per pair: `pair` enqueued pairs_per_batch times, both streams synchronized
    // outside the timing.
    auto per_pair = [&](const auto& pair) {
        const double ns = nanoseconds([&] {
            for (int i = 0; i < pairs_per_batch; ++i) pair();
        });
        producer.sync();
        consumer.sync();
        return ns / pairs_per_batch;
    };

    const Event event = device.create_event();
    runner.compare(
        "event_record_wait_pair", {10, 300},
        {{"raw",
          [&] {
              const CUevent raw_event = event.handle();
              return per_pair([&] {
                  detail::check(api.cuEventRecord(raw_event, raw_producer), "cuEventRecord");
                  detail::check(api.cuStreamWaitEvent(raw_consumer, raw_event, 0), "cuStreamWaitEvent");
              });
          },
          "cuEventRecord on one stream + cuStreamWaitEvent on another (timing disabled)"},
         {"cudacore",
          [&] {
              return per_pair([&] {
                  producer.record(event);
                  consumer.wait(event);
              });
          },
          "Stream::record(event) + Stream::wait(event) on another stream"}});

    // A counter word: each pair writes the next value and waits until the word has reached it.
    // cuMemAlloc memory: stream memory operations refuse memory from a stream-ordered pool.
    const auto plain = std::make_shared<SynchronousMemoryResource>(device);
    const Buffer flag = plain->allocate(sizeof(std::uint32_t), producer);
    flag.fill_uint32(0, producer);
    producer.sync();
    std::uint32_t next = 0;
    const WaitOptions reached{.condition = WaitCondition::greater_or_equal};
    auto raw_write_wait = [&] {
        const CUdeviceptr word = flag.handle();
        return per_pair([&] {
            ++next;
            detail::check(api.cuStreamWriteValue32(raw_producer, word, next, 0), "cuStreamWriteValue32");
            detail::check(api.cuStreamWaitValue32(raw_consumer, word, next, CU_STREAM_WAIT_VALUE_GEQ),
                          "cuStreamWaitValue32");
        });
    };
    auto cudacore_write_wait = [&](const ValueAddress& word) {
        return per_pair([&] {
            ++next;
            write_value32(word, next, producer);
            wait_value32(word, next, consumer, reached);
        });
    };
    runner.compare(
        "stream_write_wait_pair", {10, 300},
        {{"raw", raw_write_wait,
          "cuStreamWriteValue32 on one stream + cuStreamWaitValue32 (>=) on another"},
         {"cudacore", [&] { return cudacore_write_wait({.pointer = flag.handle()}); },
          "write_value32 + wait_value32 (greater_or_equal) on another stream, the word as a raw "
          "address (nothing held)"}});

    // The word as a Buffer: checked (open, inside, aligned), and held as a copy holds its buffers
    // (by the deallocation stream's order; this loop keeps `flag` meanwhile).
    runner.compare(
        "stream_write_wait_pair_buffer", {10, 300},
        {{"raw", raw_write_wait,
          "cuStreamWriteValue32 + cuStreamWaitValue32 (>=), as stream_write_wait_pair"},
         {"cudacore", [&] { return cudacore_write_wait({.buffer = flag}); },
          "write_value32 + wait_value32 (greater_or_equal) on another stream, the word as a "
          "Buffer (checked; kept by its deallocation stream's order, as for copies)"}});
    producer.sync();
    consumer.sync();
}

}  // namespace cudacore::bench::side_by_side
