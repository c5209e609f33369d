#include "cudacore/embedded_header_bundle.hpp"

#include "cudacore/errors.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <optional>

namespace cudacore {
namespace {

struct Embedded {
    std::string_view bytes;
    std::optional<HeaderBundle> bundle;  // read on first use
};

struct Registry {
    std::mutex mutex;
    std::map<std::string, Embedded, std::less<>> bundles;
};

// Filled before main() by generated code in other translation units: made on first use, and
// never destroyed (usable from static destructors too).
Registry& registry() {
    static auto* table = new Registry;
    return *table;
}

}  // namespace

void register_embedded_header_bundle(const char* name, const unsigned char* bytes,
                                     std::size_t size) noexcept {
    try {
        Registry& table = registry();
        std::lock_guard lock(table.mutex);
        table.bundles.try_emplace(name, Embedded{
            std::string_view(reinterpret_cast<const char*>(bytes), size), std::nullopt});
    } catch (...) {  // out of memory before main(): the bundle is reported missing when asked for
    }
}

std::vector<std::string> embedded_header_bundle_names() {
    Registry& table = registry();
    std::lock_guard lock(table.mutex);
    std::vector<std::string> names;
    for (const auto& entry : table.bundles) names.push_back(entry.first);
    return names;
}

HeaderBundle embedded_header_bundle(std::string_view name) {
    Registry& table = registry();
    std::lock_guard lock(table.mutex);
    const auto it = table.bundles.find(name);
    if (it == table.bundles.end()) {
        std::string names;
        for (const auto& entry : table.bundles) names += (names.empty() ? "'" : ", '") + entry.first + "'";
        throw InvalidArgumentError("embedded_header_bundle: no bundle '" + std::string(name) +
                                   "' is built into this program (" +
                                   (names.empty() ? std::string("it has none") : "it has " + names) +
                                   "; cudacore_add_header_bundle(<target> NAME " +
                                   std::string(name) + " HEADERS ...) builds one in)");
    }
    if (!it->second.bundle) {
        try {
            it->second.bundle = HeaderBundle::deserialize(it->second.bytes);
        } catch (const SerializationError& e) {
            throw SerializationError("embedded_header_bundle '" + std::string(name) + "': " + e.what());
        }
    }
    return *it->second.bundle;
}

}  // namespace cudacore
