#include "cache/redis_connection.hpp"

#include "cache/redis_tls_stream.hpp"

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

#include <cerrno>
#include <ctime>
#include <new>

namespace cudacore::detail {
namespace {

timeval to_timeval(std::chrono::milliseconds duration) {
    timeval value{};
    value.tv_sec = static_cast<time_t>(duration.count() / 1000);
    value.tv_usec = static_cast<suseconds_t>((duration.count() % 1000) * 1000);
    return value;
}

// Holds SIGPIPE back on this thread while hiredis writes (it uses write(), which raises SIGPIPE
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

std::string context_error(const redisContext* context) {
    return context ? std::string(context->errstr) : std::string("out of memory");
}

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

RedisConnection::RedisConnection(const RemoteCacheOptions& options)
    : operation_timeout_(options.operation_timeout), server_(options.display_url()) {
    if (options.tls) {
        tls_ = std::make_unique<RedisTlsStream>(options, server_);
        reader_ = redisReaderCreate();
        if (reader_ == nullptr) {
            tls_.reset();
            throw RedisFailure(RedisFailure::Kind::connect, "connect",
                               "cannot connect to " + server_ + ": out of memory");
        }
    } else {
        context_ = redisConnectWithTimeout(options.host.c_str(), options.port,
                                           to_timeval(options.connect_timeout));
        if (context_ == nullptr || context_->err != 0) {
            const std::string error = context_error(context_);
            if (context_ != nullptr) redisFree(context_);
            context_ = nullptr;
            throw RedisFailure(RedisFailure::Kind::connect, "connect",
                               "cannot connect to " + server_ + ": " + error);
        }
        redisSetTimeout(context_, to_timeval(options.operation_timeout));
        redisEnableKeepAlive(context_);  // a vanished peer is noticed on idle pooled connections
    }
    auto handshake = [&](const std::vector<std::string_view>& arguments, const char* what) {
        RedisReply reply;
        try {
            reply = command(arguments);
        } catch (const RedisFailure& failure) {
            throw RedisFailure(RedisFailure::Kind::connect, what,
                               std::string(what) + " on " + server_ + " failed: " + failure.what());
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
        if (context_ != nullptr) redisFree(context_);
        context_ = nullptr;
        if (reader_ != nullptr) redisReaderFree(reader_);
        reader_ = nullptr;
        tls_.reset();
        throw;
    }
}

RedisConnection::~RedisConnection() {
    if (context_ != nullptr) redisFree(context_);
    if (reader_ != nullptr) redisReaderFree(reader_);
    if (tls_) {
        SigpipeHold hold;  // the close notice is a write
        tls_.reset();
    }
}

RedisReply RedisConnection::tls_command(const std::vector<std::string_view>& arguments) {
    ArgumentVectors vectors(arguments);  // hiredis 0.14 takes non-const pointers
    char* formatted = nullptr;
    const int length = redisFormatCommandArgv(&formatted, static_cast<int>(arguments.size()),
                                              vectors.pointers.data(), vectors.lengths.data());
    if (length < 0) throw std::bad_alloc();
    const std::unique_ptr<char, void (*)(char*)> held(formatted, redisFreeCommand);
    const std::string name(arguments.empty() ? "" : arguments[0]);
    try {
        {
            SigpipeHold hold;
            tls_->write_all({formatted, static_cast<std::size_t>(length)}, operation_timeout_);
        }
        void* reply = nullptr;
        char buffer[16384];
        for (;;) {
            if (redisReaderGetReply(reader_, &reply) != REDIS_OK) {
                throw RedisFailure(RedisFailure::Kind::io, "I/O error",
                                   "the reply is not Redis's protocol: " + std::string(reader_->errstr));
            }
            if (reply != nullptr) return RedisReply(static_cast<redisReply*>(reply));
            const std::size_t read = tls_->read_some(buffer, sizeof buffer, operation_timeout_);
            if (redisReaderFeed(reader_, buffer, read) != REDIS_OK) throw std::bad_alloc();
        }
    } catch (const RedisFailure& failure) {
        broken_ = true;
        throw RedisFailure(failure.kind, failure.cause,
                           name + " on " + server_ + " failed: " + failure.what());
    }
}

RedisReply RedisConnection::command(const std::vector<std::string_view>& arguments) {
    if (tls_) return tls_command(arguments);
    ArgumentVectors vectors(arguments);  // hiredis 0.14 takes non-const pointers
    void* reply = nullptr;
    int error_number = 0;
    {
        SigpipeHold hold;
        errno = 0;
        reply = redisCommandArgv(context_, static_cast<int>(arguments.size()),
                                 vectors.pointers.data(), vectors.lengths.data());
        error_number = errno;
    }
    if (reply != nullptr) return RedisReply(static_cast<redisReply*>(reply));
    broken_ = true;
    const std::string message = std::string(arguments.empty() ? "" : arguments[0]) + " on " +
                                server_ + " failed: " + context_error(context_);
    if (context_->err == REDIS_ERR_EOF || error_number == ECONNRESET || error_number == EPIPE)
        throw RedisFailure(RedisFailure::Kind::lost, "connection lost", message);
    if (context_->err == REDIS_ERR_IO && (error_number == EAGAIN || error_number == EWOULDBLOCK))
        throw RedisFailure(RedisFailure::Kind::timeout, "timeout",
                           message + " (past the operation timeout)");
    throw RedisFailure(RedisFailure::Kind::io, "I/O error", message);
}

}  // namespace cudacore::detail
