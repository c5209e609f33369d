/// @file
/// Headers made on demand (jitify's header_callback): with_generated_headers() asks a callback
/// for each header a C++ program includes that no folder has, and gives back the program with
/// the answers on its include path, so that it compiles (and caches) like any program.
///
///     Program program = with_generated_headers(Program(source, SourceType::cxx, options),
///         [](const std::string& name) -> std::optional<std::string> {
///             if (name == "config.h") return "#define TILE 32\n";
///             return std::nullopt;  // not one of ours: the compile says it is missing
///         });
///     ObjectCode code = compile_cached(program, CodeType::cubin, {}, {.cache = &cache});
///
/// docs/compiling.md, "Headers made on demand", says how the answers enter the cache key.
#pragma once

#include "cudacore/cancellation.hpp"
#include "cudacore/program.hpp"

#include <functional>
#include <optional>
#include <string>

namespace cudacore {

/// Asked with the include name of a header no folder has (the \#include operand as written,
/// "config.h", "gen/ops.cuh"); answers its text, or nothing when it has none.
using HeaderCallback = std::function<std::optional<std::string>(const std::string& include_name)>;

/// `program` with the headers `callback` makes for it: NVRTC's front end runs over the program
/// (syntax only, without PCH) and, at each header it cannot open, `callback` is asked for that
/// name, until the program parses or the callback answers nothing. The answers are written once
/// to a HeaderBundle folder named by their digest, appended to include_path: a cached compile
/// keys them by their bytes like any header it reads, and a hit never calls the callback, so call
/// this again whenever the answers may change. No answer needed: `program` itself is returned.
///
/// Throws InvalidArgumentError for a program that is not C++ or has no source; Error naming the
/// header and the program when the callback throws or an answered header is still not found;
/// CacheError when the folder cannot be had ("../x.h"); CompileCancelled; LoaderError without
/// NVRTC. Keeps nothing alive. Calls the callback on the calling thread, one call at a time, at
/// most once per name: thread-safe as long as a callback shared between threads is.
Program with_generated_headers(const Program& program, const HeaderCallback& callback,
                               const CancellationToken& cancellation = {});

}  // namespace cudacore
