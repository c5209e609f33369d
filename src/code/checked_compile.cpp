#include "code/checked_compile.hpp"

#include "code/compile_request.hpp"
#include "code/ptx_unused_globals.hpp"
#include "code/snapshot_compile.hpp"
#include "cudacore/compile_errors.hpp"
#include "headers/include_lookups.hpp"

#include <unistd.h>

#include <algorithm>
#include <future>
#include <optional>

namespace cudacore::detail {
namespace {

// The other spelling of `folder` a check compile uses: other bytes and another length, so that
// code that names the folder, its length or any part of it comes out otherwise.
std::string other_spelling(const std::string& folder, std::string_view tag) {
    std::string other = "/.cudacore-check-" + std::string(tag);
    while (other.size() <= folder.size() + 3) other += 'q';
    if (other.size() == folder.size()) other += 'q';
    return other;
}

// Whether `code` (made in this process) is what the check compile made, but for the process ids
// NVRTC writes into internal names.
bool same_code(const ObjectCode& code, const CheckCompileResult& check) {
    return check.compiled && code.symbol_map() == check.symbols &&
           same_code_but_unit_ids(code.code(), static_cast<long>(::getpid()), check.code, check.process_id);
}

// The compile from the files, as a plain compile of `program` makes it: its code, or its
// CompileError thrown.
ObjectCode compile_from_files(Program program, CodeType target, const std::vector<std::string>& name_expressions,
                              const CancellationToken& cancellation) {
    return ProgramInternals::compile_cxx(program, target, name_expressions, false, &cancellation);
}

// One file under two names: the compile from memory is kept only where the compile from the
// files agrees (which of the names NVRTC meets first decides its __FILE__). Started beside the
// compile from memory, on a copy of the program made here; its future gives the files' code or
// throws their CompileError.
std::future<ObjectCode> start_compile_from_files(const Program& program, CodeType target,
                                                 const std::vector<std::string>& name_expressions,
                                                 const CancellationToken& cancellation) {
    return std::async(std::launch::async, [copy = program, target, &name_expressions, &cancellation]() {
        return compile_from_files(copy, target, name_expressions, cancellation);
    });
}

// The check compile's code as the program's own compile makes it: without its unused variables
// where the program asks (ProgramOptions::remove_unused_globals, applied after NVRTC).
CheckCompileResult run_check(const Program& program, const CheckCompileRequest& request) {
    CheckCompileResult result = run_check_compile(request);
    if (result.compiled && program.options().remove_unused_globals && request.target == CodeType::ptx)
        result.code = without_unused_globals(result.code, result.symbols);
    return result;
}

}  // namespace

// The snapshot gives NVRTC every project header from memory: any other file is an include or a
// test the scan did not follow.
std::string read_outside_snapshot(const CheckCompileResult& check, const CompileSnapshot& moved,
                                  const CompileSnapshot& unmoved) {
    const std::string missed = " from disk in its check compile, an include the scan did not find";
    for (const std::string& path : check.absent)
        if (looked_up_beside_project_text(moved, path))
            return "NVRTC looked for '" + path + "' in its check compile, a quoted include the scan did not find";
    for (const std::string& path : check.opened) {
        if (path == moved.nvrtc_name) continue;  // NVRTC looks its source's name up (given from memory)
        // The kernel's files (NVRTC reads /proc/sys/vm/mmap_min_addr on some hosts): no header.
        if (path.starts_with("/proc/") || path.starts_with("/sys/") || path.starts_with("/dev/")) continue;
        if (!path.starts_with('/') || !inside_any(path, moved.fixed_folders))
            return "NVRTC read '" + path + "'" + missed + ", whose bytes no key holds";
        const auto& reached = moved.toolkit_files;
        if (!reached || !std::binary_search(reached->begin(), reached->end(), path))
            return "NVRTC read the toolkit's '" + path + "'" + missed + ", which the key's toolkit files leave out";
        for (const std::string& fixed : moved.fixed_folders) {
            if (!inside_any(path, {fixed})) continue;
            const std::string name = path.substr(fixed.size() + (fixed.ends_with('/') ? 0 : 1));
            for (const std::string& folder : unmoved.project_include_folders)
                if (nvrtc_finds_at(folder + "/" + name, name, lookup_state))
                    return "NVRTC read the toolkit's '" + path + "'" + missed + ", where a compile from the files may "
                           "find '" + folder + "/" + name + "' first";
        }
    }
    return {};
}

// Long because: the compile, the check compile beside it, and the second check are one sequence.
// Only NVRTC's translation unit id (same_code_but_unit_ids) may differ between the code returned
// and a plain compile of the same inputs.
CheckedCompile compile_checked(Program& program, CodeType target, const std::vector<std::string>& name_expressions,
                               const CodeKeys& keys, bool declared, const CancellationToken& cancellation) {
    const std::vector<HeaderBundle>& bundles = program.options().header_bundles;
    std::vector<Respelling> moved_folders;
    for (const auto& folder : keys.folders)
        moved_folders.push_back({folder.from, other_spelling(folder.from, moved_folders.empty() ? "p" : "s")});
    const CompileSnapshot moved = declared ? CompileSnapshot{} : respelled(keys.snapshot, moved_folders);
    // Both checks run beside the compile from memory; their futures come from std::async, whose
    // destructors wait, so every way out of here ends them before the locals they read.
    std::future<CheckCompileResult> check;
    if (!declared) {
        check = std::async(std::launch::async, [&] {
            return run_check(program, {moved, bundles, name_expressions, target, true, true, &cancellation});
        });
    }
    std::future<ObjectCode> from_files;
    if (!keys.snapshot.aliased.empty()) from_files = start_compile_from_files(program, target, name_expressions, cancellation);
    std::optional<ObjectCode> from_memory;
    try {
        from_memory = compile_from_snapshot(program, target, name_expressions, keys.snapshot, &cancellation);
    } catch (const CompileCancelled&) {
        throw;
    } catch (const CompileError&) {
        // What the compile from the files gives decides: its error (thrown), or its code, not
        // stored (a header the snapshot could not give, such as one a bundled header includes
        // from the project's folders).
        ObjectCode plain = from_files.valid() ? from_files.get()
                                              : compile_from_files(program, target, name_expressions, cancellation);
        return {std::move(plain), StoredUnder::nowhere,
                "the compile from memory failed where the compile from the files did not"};
    }
    const ObjectCode code = std::move(*from_memory);
    std::optional<ObjectCode> plain;  // the compile from the files, once made
    // Not stored, as a check found the snapshot may not be what NVRTC reads from the files (or
    // could not tell): what a plain compile gives is returned, its error thrown.
    auto nowhere = [&](std::string why) {
        if (!plain) plain = from_files.valid() ? from_files.get() : compile_from_files(program, target, name_expressions, cancellation);
        return CheckedCompile{*plain, StoredUnder::nowhere, std::move(why)};
    };
    if (from_files.valid()) {
        // The files' outcome is what a compile without the cache gives: their error is thrown,
        // and their code is returned where it differs, neither stored.
        plain = from_files.get();
        const long here = static_cast<long>(::getpid());
        if (!same_code_but_unit_ids(plain->code(), here, code.code(), here)) {
            return nowhere(keys.snapshot.aliased + " are one file, and the compile from memory differs from the "
                                                   "compile from the files");
        }
    }
    if (declared) return {code, StoredUnder::first_key, {}};
    const CheckCompileResult first = check.get();
    if (cancellation.is_cancelled())
        throw CompileCancelled(program.options().name, program.flags(target), program.backend());
    if (std::string read = read_outside_snapshot(first, moved, keys.snapshot); !read.empty())
        return nowhere(std::move(read));
    // A check is compared with this process's code, or, where it ran in a process whose id has
    // another number of digits (NVRTC writes the id into internal names, whose lengths then
    // differ), with the same inputs compiled unmoved in the compile worker, whose code is then the
    // one kept.
    std::optional<CheckCompileResult> unmoved;
    std::string unmoved_read;  // what the unmoved compile read from disk outside the snapshot, if any
    auto digits = [](long id) { return std::to_string(id).size(); };
    auto agrees = [&](const CheckCompileResult& check_result) {
        if (!check_result.compiled) return false;
        if (digits(check_result.process_id) == digits(static_cast<long>(::getpid())))
            return same_code(code, check_result);
        if (!unmoved) {
            unmoved = run_check(program, {keys.snapshot, bundles, name_expressions, target, false, false, &cancellation});
            unmoved_read = read_outside_snapshot(*unmoved, keys.snapshot, keys.snapshot);
        }
        return unmoved->compiled && unmoved_read.empty() && unmoved->symbols == check_result.symbols &&
               digits(unmoved->process_id) == digits(check_result.process_id) &&
               same_code_but_unit_ids(unmoved->code, unmoved->process_id, check_result.code, check_result.process_id);
    };
    auto kept = [&] {
        return unmoved ? ObjectCode::from_bytes(target, unmoved->code, program.options().name, unmoved->symbols) : code;
    };
    if (agrees(first)) return {kept(), StoredUnder::first_key, {}};
    if (!first.compiled) return nowhere("its check compile could not be made (" + first.failure + ")");
    // In the working directory itself: what NVRTC reads there from disk is screened as the first
    // check's reads were (a folder that only the real working directory holds, say).
    const CheckCompileResult second =
        run_check(program, {keys.snapshot, bundles, name_expressions, target, true, false, &cancellation});
    if (std::string read = read_outside_snapshot(second, keys.snapshot, keys.snapshot); !read.empty())
        return nowhere(std::move(read));
    if (agrees(second)) return {kept(), StoredUnder::path_bound, {}};
    if (!unmoved_read.empty()) return nowhere(std::move(unmoved_read));
    if (!second.compiled) return nowhere("its check compile could not be made (" + second.failure + ")");
    // The snapshot was shown complete (nothing read outside it): its code is this moment's.
    return {code, StoredUnder::nowhere,
            "its code depends on the clock (__DATE__ or __TIME__): compiled with the clock moved it came out "
            "otherwise; pass CompileOptions::extra_digest to cache it"};
}

}  // namespace cudacore::detail
