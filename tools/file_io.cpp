#include "file_io.hpp"

#include "cudacore/errors.hpp"

#include "support/atomic_file.hpp"
#include "support/file_descriptor.hpp"
#include "support/input_file.hpp"
#include "support/system_call_error.hpp"

#include <stdexcept>
#include <system_error>

namespace cudacore::cli {

namespace {

using detail::FileDescriptor;

// `path` opened as detail::open_input_file opens it, and checked to hold at most `limit` bytes;
// `cannot_read` throws.
template <class CannotRead>
FileDescriptor open_bounded_input(const std::filesystem::path& path, std::string_view kind, std::uint64_t limit,
                                  const CannotRead& cannot_read) {
    detail::OpenedInputFile opened = detail::open_input_file(path);
    if (!opened.refused.empty()) cannot_read(opened.refused);
    if (opened.size > limit) {
        cannot_read("it is " + std::to_string(opened.size) + " bytes, more than the " +
                    std::to_string(limit) + "-byte limit for " + std::string(kind));
    }
    return std::move(opened.file);
}

}  // namespace

void check_input_file(const std::filesystem::path& path, std::string_view what) {
    open_bounded_input(path, what, ~std::uint64_t{0}, [&](const std::string& why) {
        throw InvalidArgumentError("cannot read " + std::string(what) + " '" + path.string() + "': " + why);
    });
}

std::string read_input_file(const std::filesystem::path& path, std::string_view what, std::uint64_t limit) {
    const std::string kind = what.empty() ? "an input file" : std::string(what);
    auto cannot_read = [&](const std::string& why) {
        throw InvalidArgumentError("cannot read " + (what.empty() ? "" : kind + " ") + "'" +
                                   path.string() + "': " + why);
    };
    const FileDescriptor file = open_bounded_input(path, kind, limit, cannot_read);
    try {
        return detail::read_open_file_bounded(file.fd, path, limit);
    } catch (const std::system_error& e) {
        cannot_read(e.code().message());
    } catch (const std::length_error&) {
        cannot_read("it grew past the " + std::to_string(limit) + "-byte limit for " +
                    kind + " while being read");
    }
    return {};  // not reached: cannot_read throws
}

namespace {

[[noreturn]] void cannot_write(const std::filesystem::path& path, const std::string& why) {
    throw std::runtime_error("cannot write '" + path.string() + "': " + why);
}

}  // namespace

void write_output_file(const std::filesystem::path& path, std::string_view bytes) {
    try {
        detail::write_regular_file(path, bytes, 0666);  // umask applies, as for any new file
    } catch (const std::system_error& e) {
        // "write '<temporary>': No space left on device" said with errno's name and what it
        // means: "write '<temporary>' failed: ENOSPC (No space left on device): the file system
        // is full".
        std::string call = e.what();
        const std::string text = ": " + e.code().message();
        if (call.ends_with(text)) call.resize(call.size() - text.size());
        cannot_write(path, detail::system_call_failure(call, e.code().value()));
    } catch (const std::invalid_argument& e) {
        cannot_write(path, e.what());
    }
}

}  // namespace cudacore::cli
