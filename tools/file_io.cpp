#include "file_io.hpp"

#include "cudacore/errors.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace cudacore::cli {

std::string read_input_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in || std::filesystem::is_directory(path)) {
        throw InvalidArgumentError("cannot read '" + path.string() + "': " +
                                   (std::filesystem::exists(path) ? std::strerror(errno)
                                                                  : "no such file"));
    }
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) throw InvalidArgumentError("error reading '" + path.string() + "'");
    return bytes;
}

void write_output_file(const std::filesystem::path& path, std::string_view bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (out) out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
        throw InvalidArgumentError("cannot write '" + path.string() + "': " + std::strerror(errno));
    }
}

}  // namespace cudacore::cli
