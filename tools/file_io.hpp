// Reading and writing the files the CLI's commands take and produce.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace cudacore::cli {

// The whole file. Throws InvalidArgumentError naming the path when it cannot be read.
std::string read_input_file(const std::filesystem::path& path);
// Replaces the file with `bytes`. Throws InvalidArgumentError naming the path on failure.
void write_output_file(const std::filesystem::path& path, std::string_view bytes);

}  // namespace cudacore::cli
