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
/// (its source and options, --fdevice-syntax-only, without PCH) and, each time it stops at a
/// header it cannot open, `callback` is asked for that name; an answer becomes a header of a
/// HeaderBundle ("generated headers of '<name>'") and the front end runs again, until the program
/// parses, fails otherwise, or the callback answers nothing (the compile of the program returned
/// then fails naming that header). The program returned is `program` with that bundle's folder
/// (HeaderBundle::folder(), named by the answers' digest) appended to include_path: it compiles
/// from files, and a cached compile keys the answers by their bytes like every header it reads
/// (a hit is exact). No answer needed: `program` itself is returned. Each call asks again: call
/// it once per program and keep the Program it returns (each call costs one front-end run per
/// missing header, plus one). A header the answers include by a quoted name is looked for beside
/// its includer first, as on disk.
///
/// Throws InvalidArgumentError for a program that is not C++ or has no source
/// (Program::from_handle); Error naming the header and the program when the callback throws (its
/// what() in the message) or a header it answered is still not found; CacheError when the
/// answers' folder cannot be had (a name that is no plain relative path: "../x.h", "/x.h");
/// CompileCancelled when `cancellation` is cancelled; LoaderError when NVRTC cannot be loaded.
/// Keeps nothing alive: `callback` is not called after the return. The callback is called on
/// the calling thread, one call at a time, at most once per name; thread-safe as long as the
/// callback is when calls share it.
Program with_generated_headers(const Program& program, const HeaderCallback& callback,
                               const CancellationToken& cancellation = {});

}  // namespace cudacore
