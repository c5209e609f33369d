// `cudacore demo`: The serialize and load steps: saxpy saved, loaded and compared; then its library loaded lazily
// on first use (and not again).
#include "demo.hpp"


#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

namespace cudacore::cli::demo {

void step_serialize(Demo& demo) {
    std::printf("== serialize (saxpy ObjectCode -> file -> ObjectCode)\n");
    if (!made_by(demo, demo.saxpy, "serialize", "compile")) return;
    const ObjectCode& original = *demo.saxpy;
    const std::string bytes = original.serialize();
    const fs::path path = demo.scratch_path() / "saxpy.ccobj";
    original.save(path);
    std::printf("serialize(): %zu code bytes -> %zu bytes; save() wrote %ju bytes to %s\n",
                original.size(), bytes.size(), static_cast<std::uintmax_t>(fs::file_size(path)),
                path.filename().c_str());
    const ObjectCode loaded = ObjectCode::from_saved(path);
    const bool equal = loaded == original && ObjectCode::deserialize(bytes) == original;
    std::printf("ObjectCode::from_saved(path) == original (%s \"%s\", %zu bytes): %s\n",
                std::string(to_string(loaded.code_type())).c_str(), loaded.name().c_str(),
                loaded.size(),
                demo.outcomes.verify("serialize", equal));

    std::printf("-- launch saxpy from the deserialized code\n");
    if (!gpu_for(demo, "deserialized launch", "launching needs a GPU")) return;
    const bool was_loaded = loaded.is_loaded();
    const Kernel kernel = loaded.get_kernel("saxpy");
    std::printf("loaded before first get_kernel: %s; after: %s\n", was_loaded ? "yes" : "no",
                loaded.is_loaded() ? "yes" : "no");
    const bool ok = launch_and_compare(*demo.device, kernel, saxpy_on_cpu);
    demo.outcomes.verify("deserialized launch", ok && !was_loaded && loaded.is_loaded());
}

void step_load(Demo& demo) {
    std::printf("== load (lazily, on first get_kernel)\n");
    if (!gpu_for(demo, "load", "loading needs a GPU")) return;
    if (!made_by(demo, demo.saxpy, "load", "compile")) return;
    const bool was_loaded = demo.saxpy->is_loaded();
    std::printf("saxpy loaded before first use: %s\n", was_loaded ? "yes" : "no");
    auto start = std::chrono::steady_clock::now();
    demo.saxpy->get_kernel("saxpy");
    const double first = milliseconds_since(start);
    start = std::chrono::steady_clock::now();
    demo.saxpy->get_kernel("saxpy");
    const double second = milliseconds_since(start);
    const bool is_loaded = demo.saxpy->is_loaded();
    std::printf("first get_kernel (loads): %.3f ms; second (cached): %.6f ms; loaded now: %s: %s\n",
                first, second, is_loaded ? "yes" : "no",
                demo.outcomes.verify("load", !was_loaded && is_loaded));
}

}  // namespace cudacore::cli::demo
