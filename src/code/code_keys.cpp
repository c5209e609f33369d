#include "code/code_keys.hpp"

#include "code/compiler_identity.hpp"
#include "code/program_key_memo.hpp"
#include "code/nvrtc_compile.hpp"
#include "cudacore/program_options.hpp"
#include "cudacore/errors.hpp"

#include <utility>

namespace cudacore::detail {
namespace {

constexpr std::string_view path_bound_marker_name = "cudacore path-bound entry";
constexpr std::string_view path_bound_marker_bytes = "cudacore-path-bound-v1\n";

// Length-prefixed fields, so that no two inputs run together.
void key_field(std::string& out, std::string_view field) {
    out += std::to_string(field.size());
    out += ':';
    out += field;
}

}  // namespace

CacheKey extend_key(const CacheKey& base, std::string_view tag,
                    const std::vector<std::pair<std::string, std::string>>& fields) {
    std::string bytes;
    key_field(bytes, tag);
    key_field(bytes, base.hex());
    for (const auto& [name, value] : fields) {
        key_field(bytes, name);
        key_field(bytes, value);
    }
    return CacheKey::of_bytes(bytes);
}

namespace {

// The key that code depending on the folders is stored under.
CacheKey path_bound_key(const CodeKeys& keys) {
    std::vector<std::pair<std::string, std::string>> fields;
    for (const auto& folder : keys.folders) fields.emplace_back("folder", folder.from);
    fields.emplace_back("working-directory", keys.working_directory);
    return extend_key(keys.first, path_bound_marker_bytes, fields);
}

}  // namespace

CodeKeys code_keys(const Program& program, const std::vector<std::string>& program_flags, const CacheKey& source_key,
                   const ProjectSearch& search) {
    CodeKeys keys;
    const ProgramOptions& options = program.options();
    if (options.fdevice_time_trace) {  // the compile writes the user's trace file as it runs
        keys.snapshot.refusal = "with fdevice_time_trace set each compile writes its own trace file";
        return keys;
    }
    const std::filesystem::path debug_source = program.debug_source_path();
    const std::string nvrtc_name = debug_source.empty() ? options.name : debug_source.string();
    const std::vector<std::string> flags = without_pch_flags(program_flags);
    std::vector<std::string> bundled;
    for (const auto& bundle : options.header_bundles)
        for (const auto& header : bundle.headers()) bundled.push_back(header.name);
    // The standard headers' folder is cudacore's (named by its digest, remade when damaged): it
    // stays on NVRTC's path as the toolkit's folders do, and is keyed by its path.
    std::vector<std::string> fixed = toolkit_include_dirs();
    if (!search.root.standard_headers.empty()) fixed.push_back(search.root.standard_headers);
    keys.snapshot = take_compile_snapshot({search.search, nvrtc_name, program.source(), flags, fixed, bundled});
    if (!keys.snapshot.refusal.empty()) return keys;
    keys.folders = {{search.root.folder, "\x01project"}};
    keys.working_directory = current_working_directory();
    const CompileSnapshot abstract = respelled(keys.snapshot, keys.folders);
    std::string bytes;
    key_field(bytes, "cudacore-code-key-v5");
    key_field(bytes, source_key.hex());
    key_field(bytes, serialized_inputs(abstract));
    keys.first = CacheKey::of_bytes(bytes);
    keys.path_bound = path_bound_key(keys);
    // Nothing read outside the toolkit and no folder named: the same key at every call.
    if (!keys.snapshot.reads_files && abstract.nvrtc_name == keys.snapshot.nvrtc_name &&
        abstract.flags == keys.snapshot.flags) {
        if (ProgramKeyMemo* memo = program_key_memo(program)) memo->remember_first_key(source_key, keys.first);
    }
    return keys;
}

std::optional<CacheKey> remembered_lookup_key(const Program& program, CodeType target,
                                              const std::vector<std::string>& name_expressions) {
    ProgramKeyMemo* memo = program_key_memo(program);
    if (!memo) return std::nullopt;
    std::optional<CacheKey> key;
    bool debug_source = false;
    try {
        const KeyContext context = key_context(program);
        debug_source = !context.debug_folder.empty();  // only a program with debug information has one
        key = memo->lookup_key(target, name_expressions, context);
    } catch (const Error&) {
        return std::nullopt;  // the full path says why
    }
    if (key && debug_source) program.write_debug_source();
    return key;
}

ProgramKeys program_keys(const Program& program, CodeType target, SourceKey source, std::string_view extra_digest) {
    ProgramKeys keys{std::move(source), {}, std::nullopt, program.options().name, program.flags(target),
                     program.backend()};
    program.write_debug_source();
    if (!extra_digest.empty()) {
        keys.lookup = extend_key(keys.source.key, "cudacore-extra-digest-v1", {{"", std::string(extra_digest)}});
    } else if (program.source_type() != SourceType::cxx) {  // PTX and NVVM IR include nothing
        keys.lookup = keys.source.key;
    } else {
        std::shared_ptr<const ProjectSearch> search = keys.source.search;
        if (!search) search = project_search(program.options().name, nvrtc_flags(program.options()));
        keys.code = code_keys(program, keys.flags, keys.source.key, *search);
        keys.lookup = keys.code->first;
    }
    return keys;
}

ProgramKeys program_keys(const Program& program, CodeType target, const std::vector<std::string>& name_expressions,
                         std::string_view extra_digest) {
    // The compilers' identity before the key names them: a later correction (a library that
    // answers another version than its file said) then shows in compiler_generation.
    const unsigned generation = compiler_identity_generation();
    SourceKey source = source_key(program, target, name_expressions);
    source.compiler_generation = generation;
    return program_keys(program, target, std::move(source), extra_digest);
}

ObjectCode path_bound_marker() {
    return ObjectCode::from_bytes(CodeType::object, std::string(path_bound_marker_bytes), std::string(path_bound_marker_name));
}

bool is_path_bound_marker(const ObjectCode& entry) {
    return entry.name() == path_bound_marker_name && entry.code() == path_bound_marker_bytes;
}

}  // namespace cudacore::detail
