/// @file
/// Headers made on demand (jitify's header_callback): with_generated_headers() asks a callback for
/// each header a C++ program includes that no folder has, so that it compiles (and caches) like
/// any program. docs/compiling.md, "Headers made on demand", says how the answers are keyed.
///
///     Program program = with_generated_headers(Program(source, SourceType::cxx, options),
///         [](const std::string& name) -> std::optional<std::string> {
///             if (name == "config.h") return "#define TILE 32\n";
///             return std::nullopt;  // not one of ours: the compile says it is missing
///         });
///     ObjectCode code = compile_cached(program, CodeType::cubin, {}, {.cache = &cache});
#pragma once

#include "cudacore/cancellation.hpp"
#include "cudacore/program.hpp"

#include <functional>
#include <optional>
#include <string>

namespace cudacore {

/// Asked with the include name of a header no folder has; answers its text, or nothing.
using HeaderCallback = std::function<std::optional<std::string>(const std::string& include_name)>;

/// `program` with the headers `callback` makes for it, asked at each header NVRTC's front end
/// cannot open; the answers go to a HeaderBundle folder on include_path. A cache hit never calls
/// the callback. InvalidArgumentError for a program that is not C++; Error naming the header;
/// CacheError; CompileCancelled; LoaderError. Calls the callback on this thread, once per name.
Program with_generated_headers(const Program& program, const HeaderCallback& callback,
                               const CancellationToken& cancellation = {});

}  // namespace cudacore
