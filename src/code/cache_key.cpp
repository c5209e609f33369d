#include "cudacore/cache_key.hpp"

#include "cudacore/program_options.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/program.hpp"
#include "code/key_versions.hpp"
#include "code/path_key.hpp"
#include "code/program_key_memo.hpp"
#include "code/project_search.hpp"
#include "headers/include_lookups.hpp"
#include "headers/standard_headers.hpp"
#include "code/compiler_build.hpp"
#include "code/compiler_environment.hpp"
#include "code/compiler_identity.hpp"
#include "support/hex.hpp"
#include "support/sha256.hpp"

#include <cstring>
#include <memory>
#include <optional>

namespace cudacore {
namespace {

// Feeds length-prefixed fields into one SHA-256. Small fields are gathered and hashed together: a
// key has dozens of them, and each update of the digest costs more than copying a flag.
class KeyHasher {
public:
    KeyHasher() { pending_.reserve(gathered); }
    void field(std::string_view bytes) {
        char length[8];
        for (int i = 0; i < 8; ++i) length[i] = static_cast<char>(bytes.size() >> (8 * i));
        pending_.append(length, sizeof length);
        if (pending_.size() + bytes.size() <= gathered) {
            pending_.append(bytes);
            return;
        }
        flush();
        hash_.update(bytes);  // a large field (the source) as it is
    }
    CacheKey finish() {
        flush();
        CacheKey key;
        key.digest = hash_.finish();
        return key;
    }

private:
    static constexpr std::size_t gathered = 4096;
    void flush() {
        hash_.update(pending_);
        pending_.clear();
    }
    detail::Sha256 hash_;
    std::string pending_;  // fields not yet given to the digest
};

}  // namespace

namespace detail {
std::string nvrtc_version_in_keys() { return compiler_version_in_keys(Compiler::nvrtc); }
std::string nvjitlink_version_in_keys() { return compiler_version_in_keys(Compiler::nvjitlink); }
}  // namespace detail

std::string CacheKey::hex() const { return detail::hex_of(digest.data(), digest.size()); }

CacheKey CacheKey::from_hex(std::string_view hex) {
    auto value = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    CacheKey key;
    bool valid = hex.size() == 64;
    for (std::size_t i = 0; valid && i < 32; ++i) {
        int high = value(hex[2 * i]), low = value(hex[2 * i + 1]);
        valid = high >= 0 && low >= 0;
        if (valid) key.digest[i] = static_cast<std::uint8_t>(high << 4 | low);
    }
    if (!valid) {
        throw InvalidArgumentError("CacheKey::from_hex: '" + std::string(hex.substr(0, 80)) +
                                   "' is not 64 hex digits");
    }
    return key;
}

CacheKey CacheKey::of_bytes(std::string_view bytes) {
    KeyHasher hasher;
    hasher.field("cudacore-bytes-key-v1");
    hasher.field(bytes);
    return hasher.finish();
}

std::size_t CacheKeyHash::operator()(const CacheKey& key) const noexcept {
    std::size_t value;
    std::memcpy(&value, key.digest.data(), sizeof value);  // already uniformly distributed
    return value;
}

namespace {

// The flags and the program's name. A C++ program's folders and absolute name are relative to its
// project (code/path_key.hpp): the same project at another path has the same key (the code key
// keeps the project's folder where the code may name it). Returns the search of a C++ program.
std::shared_ptr<const detail::ProjectSearch> hash_flags_and_name(KeyHasher& hasher, const Program& program,
                                                                 const std::vector<std::string>& flags) {
    hasher.field(std::to_string(flags.size()));
    if (program.source_type() != SourceType::cxx) {
        for (const auto& flag : flags) hasher.field(detail::standard_headers_key_flag(flag));
        hasher.field(program.options().name);
        return nullptr;
    }
    std::shared_ptr<const detail::ProjectSearch> search =
        detail::project_search(program.options().name, flags);
    for (const auto& field : search->key_fields) hasher.field(field);  // the flags, then the name
    return search;
}

// The key, computed from every input (cache_key remembers it per Program value), and the search
// of a C++ program.
detail::SourceKey compute_key(const Program& program, CodeType target,
                              const std::vector<std::string>& name_expressions) {
    const std::vector<std::string> flags = program.flags(target);
    const std::string backend = program.backend();
    KeyHasher hasher;
    hasher.field("cudacore-program-cache-key-v2");
    hasher.field(program.source());
    switch (program.source_type()) {
        case SourceType::cxx: hasher.field("c++"); break;
        case SourceType::ptx: hasher.field("ptx"); break;
        case SourceType::nvvm: hasher.field("nvvm"); break;
    }
    hasher.field(to_string(target));
    std::shared_ptr<const detail::ProjectSearch> search = hash_flags_and_name(hasher, program, flags);
    hasher.field(std::to_string(name_expressions.size()));
    for (const auto& expression : name_expressions) hasher.field(expression);
    hasher.field(backend);
    // Named without opening NVRTC or nvJitLink where their files tell (a hit opens neither).
    hasher.field(detail::nvrtc_version_in_keys());
    hasher.field(detail::nvjitlink_version_in_keys());
    // What NVRTC reads from the environment that may change its code; only where some of it is
    // set, so that the keys of everyone else stay as they were.
    if (const std::string& environment = detail::nvrtc_environment_in_keys(); !environment.empty()) {
        hasher.field("nvrtc-environment");
        hasher.field(environment);
    }
    if (backend == "driver") hasher.field(detail::driver_build_in_keys());
    // Header bundles: by digest, in order (the first holding a name wins). Only when there are
    // some, so that the keys of programs without bundles stay as they were.
    if (const auto& bundles = program.options().header_bundles; !bundles.empty()) {
        hasher.field("header-bundles");
        hasher.field(std::to_string(bundles.size()));
        for (const auto& bundle : bundles) hasher.field(bundle.digest());
    }
    // Compiled with debug or line information, the code names the file its source was written
    // to (Program::debug_source_path, from the source's digest and the folder): deliberately in
    // the key, so a hit never names a file in another folder. Identical programs with the same
    // folder keep one key; programs without that information keep the keys they had.
    if (const auto debug_source = program.debug_source_path(); !debug_source.empty()) {
        hasher.field("debug-source");
        hasher.field(debug_source.string());
    }
    // The code is NVRTC's PTX less its unused variables (no flag says so); keys without it stay.
    if (program.options().remove_unused_globals) hasher.field("remove-unused-globals");
    if (program.source_type() == SourceType::nvvm) {
        // NVVM links more modules (and maybe libdevice) into the result: each is an input.
        const ProgramOptions& options = program.options();
        hasher.field(std::to_string(options.extra_sources.size()));
        for (const auto& extra : options.extra_sources) {
            hasher.field(extra.name);
            hasher.field(extra.code);
        }
        hasher.field(options.use_libdevice.value_or(false) ? "libdevice" : "no-libdevice");
        hasher.field(detail::nvvm_build_in_keys());
    }
    return {hasher.finish(), std::move(search)};
}

}  // namespace

CacheKey cache_key(const Program& program, CodeType target,
                   const std::vector<std::string>& name_expressions) {
    return detail::source_key(program, target, name_expressions).key;
}

namespace detail {

SourceKey source_key(const Program& program, CodeType target,
                     const std::vector<std::string>& name_expressions) {
    // Only Program::from_handle makes a Program without source (the constructor refuses one):
    // NVRTC holds that source, so no key can tell two such programs apart.
    if (program.source().empty()) {
        throw InvalidArgumentError("cache_key: program '" + program.options().name +
                                   "' wraps an nvrtcProgram (Program::from_handle) whose source "
                                   "cudacore does not know; compile it without a cache");
    }
    // Asked again for the same value, arguments and context: the key computed the first time.
    ProgramKeyMemo* memo = program_key_memo(program);
    if (!memo) return compute_key(program, target, name_expressions);
    KeyContext context;
    try {
        context = key_context(program);
    } catch (const Error&) {
        return compute_key(program, target, name_expressions);  // throws as it always did
    }
    if (std::optional<CacheKey> known = memo->source_key(target, name_expressions, context))
        return {*known, nullptr};
    SourceKey key = compute_key(program, target, name_expressions);
    memo->remember_source_key(target, name_expressions, context, key.key);
    return key;
}

}  // namespace detail

}  // namespace cudacore
