#include "code/worker_messages.hpp"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>

namespace cudacore::detail {

void put_field(std::string& out, std::string_view field) {
    std::uint64_t size = field.size();
    unsigned char length[8];
    for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(size >> (8 * i));
    out.append(reinterpret_cast<const char*>(length), sizeof length);
    out.append(field);
}

// The next field, or nullopt when `in` ends before it does (a worker that died mid-write).
std::optional<std::string_view> take_field(std::string_view& in) {
    if (in.size() < 8) return std::nullopt;
    std::uint64_t size = 0;
    for (int i = 0; i < 8; ++i) size |= std::uint64_t{static_cast<unsigned char>(in[i])} << (8 * i);
    in.remove_prefix(8);
    if (in.size() < size) return std::nullopt;
    const std::string_view field = in.substr(0, size);
    in.remove_prefix(size);
    return field;
}

std::optional<std::size_t> take_count(std::string_view& in) {
    const auto field = take_field(in);
    std::size_t value = 0;
    if (!field || std::from_chars(field->data(), field->data() + field->size(), value).ec != std::errc())
        return std::nullopt;
    return value;
}

bool write_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        const ssize_t n = ::write(fd, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

std::string read_all(int fd) {
    std::string in;
    char buffer[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        in.append(buffer, static_cast<std::size_t>(n));
    }
    return in;
}


void send_record(std::string_view record) {
    std::string framed;
    put_field(framed, record);
    write_all(3, framed);
}

void send_error_record(std::string_view what) {
    std::string reply = "E";
    put_field(reply, what);
    send_record(reply);
}

}  // namespace cudacore::detail
