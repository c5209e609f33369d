#include "support/serialized_file.hpp"

#include "support/file_descriptor.hpp"
#include "support/system_call_error.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace cudacore::detail {

std::string read_serialized(const std::filesystem::path& path, std::size_t head_size,
                            const std::function<std::uint64_t(std::string_view head, std::uint64_t size)>& check) {
    auto cannot_read = [&](const std::string& why) -> void {
        throw SerializationError("cannot read '" + path.string() + "': " + why);
    };
    const FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    if (file.fd < 0) cannot_read(errno_name_and_text(errno));
    struct stat info {};
    if (::fstat(file.fd, &info) != 0) cannot_read("fstat: " + errno_name_and_text(errno));
    if (!S_ISREG(info.st_mode)) cannot_read("it is " + std::string(file_kind(info.st_mode)) + ", not a regular file");
    const auto size = static_cast<std::uint64_t>(info.st_size);
    std::vector<char> head(head_size);
    const ssize_t got = ::pread(file.fd, head.data(), head.size(), 0);
    if (got < 0) cannot_read(errno_name_and_text(errno));
    std::uint64_t stated = 0;
    try {
        stated = check(std::string_view(head.data(), static_cast<std::size_t>(got)), size);
    } catch (const SerializationError& e) {
        throw SerializationError("'" + path.string() + "': " + e.what());
    }
    if (stated != size)
        cannot_read("it has " + std::to_string(size) + " bytes; its header states " + std::to_string(stated) +
                    (size < stated ? ": truncated" : ": trailing data"));
    try {
        return read_open_file_bounded(file.fd, path, size);
    } catch (const std::exception& e) {
        cannot_read(e.what());
    }
    return {};  // not reached: cannot_read throws
}

}  // namespace cudacore::detail
