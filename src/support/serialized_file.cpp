#include "support/serialized_file.hpp"

#include "support/input_file.hpp"
#include "support/system_call_error.hpp"

#include <unistd.h>

#include <cerrno>
#include <vector>

namespace cudacore::detail {

std::string read_serialized(const std::filesystem::path& path, std::size_t head_size,
                            const std::function<std::uint64_t(std::string_view head, std::uint64_t size)>& check) {
    auto cannot_read = [&](const std::string& why) -> void {
        throw SerializationError("cannot read '" + path.string() + "': " + why);
    };
    const OpenedInputFile opened = open_input_file(path);
    if (!opened.refused.empty()) cannot_read(opened.refused);
    const FileDescriptor& file = opened.file;
    const std::uint64_t size = opened.size;
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
