#include "remote/redis_connection.hpp"

#include "remote/redis_stream.hpp"

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <new>

namespace cudacore::detail {
namespace {

// Holds SIGPIPE back on this thread while OpenSSL writes (it uses write(), which raises SIGPIPE
// when the peer has reset the connection, and whose default action ends the process), then
// discards the SIGPIPE the write raised, if any; a SIGPIPE that was pending before stays pending.
// The way libpq keeps its writes from killing the program, without touching the process's
// signal disposition.
class SigpipeHold {
public:
    SigpipeHold() noexcept {
        sigemptyset(&pipe_);
        sigaddset(&pipe_, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe_, &previous_);
        sigset_t pending;
        sigemptyset(&pending);
        pending_before_ = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
    }
    ~SigpipeHold() {
        if (!pending_before_) {
            sigset_t pending;
            sigemptyset(&pending);
            if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1) {
                const timespec none{0, 0};
                while (sigtimedwait(&pipe_, nullptr, &none) < 0 && errno == EINTR) {
                }
            }
        }
        pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
    }
    SigpipeHold(const SigpipeHold&) = delete;
    SigpipeHold& operator=(const SigpipeHold&) = delete;

private:
    sigset_t pipe_{};
    sigset_t previous_{};
    bool pending_before_ = false;
};

// A command's arguments as hiredis takes them: pointers and lengths side by side.
struct ArgumentVectors {
    explicit ArgumentVectors(const std::vector<std::string_view>& arguments) {
        pointers.reserve(arguments.size());
        lengths.reserve(arguments.size());
        for (std::string_view argument : arguments) {
            pointers.push_back(argument.data());
            lengths.push_back(argument.size());
        }
    }
    std::vector<const char*> pointers;
    std::vector<std::size_t> lengths;
};

}  // namespace

void RedisReplyDeleter::operator()(redisReply* reply) const noexcept { freeReplyObject(reply); }

RedisReplyType reply_type(const redisReply& reply) noexcept {
    switch (reply.type) {
        case REDIS_REPLY_STRING: return RedisReplyType::string;
        case REDIS_REPLY_ARRAY: return RedisReplyType::array;
        case REDIS_REPLY_INTEGER: return RedisReplyType::integer;
        case REDIS_REPLY_NIL: return RedisReplyType::nil;
        case REDIS_REPLY_STATUS: return RedisReplyType::status;
        case REDIS_REPLY_ERROR: return RedisReplyType::error;
        default: return RedisReplyType::other;
    }
}

std::string_view reply_text(const redisReply& reply) noexcept {
    if (reply.str == nullptr) return {};
    return {reply.str, static_cast<std::size_t>(reply.len)};
}

long long reply_integer(const redisReply& reply) noexcept { return reply.integer; }

std::size_t reply_elements(const redisReply& reply) noexcept { return reply.elements; }

const redisReply& reply_element(const redisReply& reply, std::size_t i) noexcept {
    return *reply.element[i];
}

// Slack over max_entry_bytes for a reply's framing (and the small replies of other commands).
constexpr std::uint64_t reply_framing_bytes = 64 << 10;
// The longest first line of a reply read (Redis's own are a few hundred bytes at most).
constexpr std::uint64_t longest_first_line = 64 << 10;

namespace {

// What one reply object costs beyond its contents: hiredis's struct and the allocator's header.
constexpr std::uint64_t object_bytes = sizeof(redisReply) + 16;

// Takes `bytes` from the budget of the reply `task` belongs to, when `needed` (at least `bytes`)
// are left; false (the object refused, which hiredis reports as "Out of memory") when they are
// not. Called from C: never throws.
bool charge(const redisReadTask* task, std::uint64_t bytes, std::uint64_t needed,
            long long elements = -1) noexcept {
    ReplyBudget& budget = *static_cast<ReplyBudget*>(task->privdata);
    if (needed > budget.left) {
        budget.refused_bytes = needed;
        budget.refused_elements = elements;
        return false;
    }
    budget.left -= bytes;
    return true;
}

bool charge(const redisReadTask* task, std::uint64_t bytes) noexcept {
    return charge(task, bytes, bytes);
}

const redisReplyObjectFunctions& made_by_hiredis(const redisReadTask* task) noexcept {
    return *static_cast<ReplyBudget*>(task->privdata)->hiredis;
}

void* create_string(const redisReadTask* task, char* text, size_t length) {
    if (!charge(task, object_bytes + length + 1)) return nullptr;
    return made_by_hiredis(task).createString(task, text, length);
}

void* create_array(const redisReadTask* task, int elements) {
    const auto count = static_cast<std::uint64_t>(std::max(elements, 0));
    // Each element to come takes its slot and an object at least: refused from the count, before
    // hiredis allocates the slots, when they cannot all fit. The elements are charged as they come.
    const std::uint64_t slots = object_bytes + count * sizeof(redisReply*);
    if (!charge(task, slots, slots + count * object_bytes, elements)) return nullptr;
    return made_by_hiredis(task).createArray(task, elements);
}

void* create_integer(const redisReadTask* task, long long value) {
    if (!charge(task, object_bytes)) return nullptr;
    return made_by_hiredis(task).createInteger(task, value);
}

void* create_nil(const redisReadTask* task) {
    if (!charge(task, object_bytes)) return nullptr;
    return made_by_hiredis(task).createNil(task);
}

void free_object(void* reply) { freeReplyObject(reply); }

redisReplyObjectFunctions budgeted_functions = {create_string, create_array, create_integer,
                                                create_nil, free_object};

}  // namespace

RedisConnection::RedisConnection(const RemoteCacheOptions& options,
                                 std::atomic<std::uint64_t>* bytes_received)
    : RedisConnection(options, Clock::now() + options.connect_timeout, bytes_received) {}

RedisConnection::RedisConnection(const RemoteCacheOptions& options, Clock::time_point deadline,
                                 std::atomic<std::uint64_t>* bytes_received)
    : operation_timeout_(options.operation_timeout),
      max_value_bytes_(options.max_entry_bytes),
      max_reply_bytes_(options.max_entry_bytes + reply_framing_bytes),
      bytes_received_(bytes_received),
      server_(options.display_url()) {
    stream_ = std::make_unique<RedisStream>(options, server_, deadline);
    reader_ = redisReaderCreate();
    if (reader_ == nullptr) {
        stream_.reset();
        throw RedisFailure(RedisFailure::Kind::connect, "connect",
                           "cannot connect to " + server_ + ": out of memory");
    }
    budget_.hiredis = reader_->fn;  // hiredis's own functions make the objects
    reader_->fn = &budgeted_functions;
    reader_->privdata = &budget_;
    auto handshake = [&](const std::vector<std::string_view>& arguments, const char* what) {
        RedisReply reply;
        try {
            reply = exchange(arguments, deadline);
        } catch (const RedisFailure& failure) {
            throw RedisFailure(RedisFailure::Kind::connect, what,
                               std::string(what) + " on " + server_ + " failed: " + failure.what() +
                                   (failure.kind == RedisFailure::Kind::timeout
                                        ? " (past the connect timeout)"
                                        : ""));
        }
        if (reply_type(*reply) == RedisReplyType::error) {
            throw RedisFailure(RedisFailure::Kind::connect, what,
                               std::string(what) + " on " + server_ +
                                   " refused: " + std::string(reply_text(*reply)));
        }
    };
    try {
        if (!options.password.empty()) {
            if (options.user.empty()) {
                handshake({"AUTH", options.password}, "AUTH");
            } else {
                handshake({"AUTH", options.user, options.password}, "AUTH");
            }
        }
        if (options.database != 0) {
            const std::string database = std::to_string(options.database);
            handshake({"SELECT", database}, "SELECT");
        }
    } catch (...) {
        redisReaderFree(reader_);
        reader_ = nullptr;
        SigpipeHold hold;  // a TLS close notice is a write
        stream_.reset();
        throw;
    }
}

RedisConnection::~RedisConnection() {
    if (reader_ != nullptr) redisReaderFree(reader_);
    SigpipeHold hold;  // a TLS close notice is a write
    stream_.reset();
}

RedisReply RedisConnection::command(const std::vector<std::string_view>& arguments) {
    return command(arguments, Clock::now() + operation_timeout_);
}

RedisReply RedisConnection::command(const std::vector<std::string_view>& arguments,
                                    Clock::time_point deadline) {
    const std::string name(arguments.empty() ? "" : arguments[0]);
    try {
        return exchange(arguments, deadline);
    } catch (const RedisFailure& failure) {
        throw RedisFailure(failure.kind, failure.cause,
                           name + " on " + server_ + " failed: " + failure.what());
    }
}

namespace {
// Refuses a reply too large for the cache before hiredis buffers it, from what arrives piece by
// piece: a bulk string whose announced size cannot fit, a first line that does not end, or more
// bytes than the largest reply. (What the parsed reply costs in memory is ReplyBudget's.)
struct ReplyGuard {
    ReplyGuard(std::uint64_t value_bytes, std::uint64_t reply_bytes)
        : max_value_bytes(value_bytes), max_reply_bytes(reply_bytes) {}

    std::uint64_t max_value_bytes;
    std::uint64_t max_reply_bytes;
    // The reply's first line, kept until it is whole: a bulk string's announced length is
    // checked before a byte of its value is buffered.
    std::string header;
    bool header_checked = false;
    bool first_line_ended = false;
    std::uint64_t received = 0;

    void check(const char* buffer, std::size_t read) {
        received += read;
        if (!header_checked) check_header(buffer, read);
        // Every line of Redis's protocol that starts a reply (a status, an error, an integer,
        // a length) is short: one that goes on is junk, refused before hiredis rescans it.
        if (!first_line_ended) {
            first_line_ended = std::memchr(buffer, '\n', read) != nullptr;
            if (!first_line_ended && received > longest_first_line) {
                throw RedisFailure(RedisFailure::Kind::too_large, "oversized reply",
                                   "the reply's first line is longer than " +
                                       std::to_string(longest_first_line) +
                                       " bytes: not Redis's protocol, not read further");
            }
        }
        if (received > max_reply_bytes) {
            throw RedisFailure(RedisFailure::Kind::too_large, "oversized reply",
                               "the reply passed max_entry_bytes (" + std::to_string(max_value_bytes) +
                                   ") and more without ending: not read further");
        }
    }

    void check_header(const char* buffer, std::size_t read) {
        header.append(buffer, std::min<std::size_t>(read, 64 - header.size()));
        const auto end = header.find("\r\n");
        if (end == std::string::npos && header.size() != 64) return;
        header_checked = true;
        std::uint64_t announced = 0;
        const bool counted =
            end != std::string::npos && header[0] == '$' &&
            std::from_chars(header.data() + 1, header.data() + end, announced).ec == std::errc{};
        if (counted && announced > max_value_bytes) {
            throw RedisFailure(RedisFailure::Kind::too_large, "oversized reply",
                               "the reply announces a value of " + std::to_string(announced) +
                                   " bytes, more than max_entry_bytes (" + std::to_string(max_value_bytes) +
                                   "): not read");
        }
    }
};

// The failure of a reply whose objects would take more memory than `budget` allowed.
RedisFailure refused_for_memory(const ReplyBudget& budget, std::uint64_t max_value_bytes) {
    const std::string what =
        budget.refused_elements >= 0
            ? "an array of " + std::to_string(budget.refused_elements) + " elements (" +
                  std::to_string(budget.refused_bytes) + " bytes in memory at least)"
            : "an object of " + std::to_string(budget.refused_bytes) + " bytes";
    return RedisFailure(RedisFailure::Kind::too_large, "oversized reply",
                        "the reply holds " + what + ", more than is left of its bound (max_entry_bytes (" +
                            std::to_string(max_value_bytes) + ") and 64 KiB): not read further");
}
}  // namespace

RedisReply RedisConnection::exchange(const std::vector<std::string_view>& arguments,
                                     Clock::time_point deadline) {
    ArgumentVectors vectors(arguments);  // hiredis 0.14 takes non-const pointers
    char* formatted = nullptr;
    const int length = redisFormatCommandArgv(&formatted, static_cast<int>(arguments.size()),
                                              vectors.pointers.data(), vectors.lengths.data());
    if (length < 0) throw std::bad_alloc();
    const std::unique_ptr<char, void (*)(char*)> held(formatted, redisFreeCommand);
    try {
        {
            SigpipeHold hold;
            stream_->write_all({formatted, static_cast<std::size_t>(length)}, deadline);
        }
        ReplyGuard guard(max_value_bytes_, max_reply_bytes_);
        budget_ = {budget_.hiredis, max_reply_bytes_};
        char buffer[16384];
        for (;;) {
            void* reply = nullptr;
            if (redisReaderGetReply(reader_, &reply) != REDIS_OK) {
                if (budget_.refused_bytes != 0) throw refused_for_memory(budget_, max_value_bytes_);
                throw RedisFailure(RedisFailure::Kind::io, "I/O error",
                                   "the reply is not Redis's protocol: " + std::string(reader_->errstr));
            }
            if (reply != nullptr) return RedisReply(static_cast<redisReply*>(reply));
            const std::size_t read = stream_->read_some(buffer, sizeof buffer, deadline);
            if (bytes_received_ != nullptr) *bytes_received_ += read;
            guard.check(buffer, read);
            if (redisReaderFeed(reader_, buffer, read) != REDIS_OK) throw std::bad_alloc();
        }
    } catch (const RedisFailure&) {
        broken_ = true;
        throw;
    } catch (const std::bad_alloc&) {
        broken_ = true;  // a reply half read: the connection cannot be used again
        throw;
    }
}

}  // namespace cudacore::detail
