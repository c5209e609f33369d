// The messages between cudacore and its worker processes (the link worker, the compile worker):
// a sequence of fields, each a little-endian 64-bit length and the bytes. A worker reads its
// request on standard input and writes records on descriptor 3 as it goes. Internal.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace cudacore::detail {

// Appends one field to `out`.
void put_field(std::string& out, std::string_view field);

// The next field of `in` (removed from it), or nullopt when `in` ends before it does (a worker
// that died mid-write).
std::optional<std::string_view> take_field(std::string_view& in);

// The next field read as a decimal count, or nullopt.
std::optional<std::size_t> take_count(std::string_view& in);

// Writes all of `bytes` to `fd`; false when it cannot.
bool write_all(int fd, std::string_view bytes);

// Everything `fd` gives until its end.
std::string read_all(int fd);

// Sends one record (a field) on the reply channel, descriptor 3.
void send_record(std::string_view record);

// Sends the record of a worker that failed before it had an answer: "E" and `what`.
void send_error_record(std::string_view what);

}  // namespace cudacore::detail
