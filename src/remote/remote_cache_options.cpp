// RemoteCacheOptions from a redis:// URL, parsed by uriparser (RFC 3986), and the secret its
// options name.
#include "cudacore/remote_cache_options.hpp"

#include "cudacore/errors.hpp"

#include "cache/seal_secret.hpp"

#include <uriparser/Uri.h>

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <memory>

namespace cudacore {
namespace {

std::string text(const UriTextRangeA& range) {
    if (range.first == nullptr || range.afterLast == nullptr) return {};
    return std::string(range.first, range.afterLast);
}

bool present(const UriTextRangeA& range) { return range.first != nullptr; }

std::string percent_decoded(std::string value) {
    value.push_back('\0');
    const char* end = uriUnescapeInPlaceExA(value.data(), URI_FALSE, URI_BR_DONT_TOUCH);
    value.resize(static_cast<std::size_t>(end - value.data()));
    return value;
}

// The URL with what follows "user:" up to '@' replaced, for messages (the password is secret).
std::string redacted(std::string_view url) {
    // Everything up to the last '@' before the query may be a password, whatever it holds ('/',
    // '@' and ':' unescaped included, or no "://" at all): all of it after the user's name is
    // hidden (all of it where no ':' names a user).
    const auto scheme_end = url.find("://");
    const std::size_t authority = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
    const std::string_view before_query = url.substr(0, url.find_first_of("?#", authority));
    const auto at = before_query.rfind('@');
    if (at == std::string_view::npos || at < authority) return std::string(url);
    const auto colon = before_query.find(':', authority);
    const std::size_t hidden_from = colon != std::string_view::npos && colon < at ? colon + 1 : authority;
    return std::string(url.substr(0, hidden_from)) + "***" + std::string(url.substr(at));
}

template <class Number>
Number parse_number(const std::string& value, const std::string& what, const std::string& url,
                    Number low, Number high) {
    Number number{};
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (value.empty() || error != std::errc{} || end != value.data() + value.size() ||
        number < low || number > high) {
        throw InvalidArgumentError("RemoteCacheOptions::from_url('" + url + "'): " + what + " '" +
                                   value + "' is not a number in " + std::to_string(low) + ".." +
                                   std::to_string(high));
    }
    return number;
}

struct UriHolder {
    UriUriA uri{};
    bool parsed = false;
    ~UriHolder() {
        if (parsed) uriFreeUriMembersA(&uri);
    }
};

struct QueryHolder {
    UriQueryListA* list = nullptr;
    ~QueryHolder() {
        if (list != nullptr) uriFreeQueryListA(list);
    }
};

// One option of a URL's query (`key=value`) into `options`; `url` is the redacted URL errors name.
void apply_url_option(RemoteCacheOptions& options, const std::string& key, const std::string& value,
                      const std::string& url) {
    auto fail = [&](const std::string& why) -> InvalidArgumentError {
        return InvalidArgumentError("RemoteCacheOptions::from_url('" + url + "'): " + why);
    };
    using std::chrono::milliseconds;
    const std::int64_t day_ms = 86'400'000;
    if (key == "connect_timeout_ms") {
        options.connect_timeout = milliseconds(parse_number<std::int64_t>(value, key, url, 1, day_ms));
    } else if (key == "timeout_ms") {
        options.operation_timeout = milliseconds(parse_number<std::int64_t>(value, key, url, 1, day_ms));
    } else if (key == "retry_ms") {
        options.retry_after = milliseconds(parse_number<std::int64_t>(value, key, url, 1, day_ms));
    } else if (key == "max_retry_ms") {
        options.max_retry_after = milliseconds(parse_number<std::int64_t>(value, key, url, 1, day_ms));
    } else if (key == "expiry_s") {
        options.expiry = std::chrono::seconds(
            parse_number<std::int64_t>(value, key, url, 0, std::int64_t{10} * 365 * 86400));
    } else if (key == "max_entry_bytes") {
        options.max_entry_bytes = parse_number<std::uint64_t>(
            value, key, url, 1, std::uint64_t{512} << 20);
    } else if (key == "lock_ms") {
        options.lock_expiry = milliseconds(parse_number<std::int64_t>(value, key, url, 0, day_ms));
    } else if (key == "lock_wait_ms") {
        options.lock_wait = milliseconds(parse_number<std::int64_t>(value, key, url, 0, day_ms));
    } else if (key == "prefix") {
        options.key_prefix = value;
    } else if (key == "secret_file" || key == "secret_env") {
        if (value.empty()) throw fail("the option '" + key + "' needs a value");
        (key == "secret_file" ? options.secret_file : options.secret_env) = value;
    } else if (key == "tls_ca" || key == "tls_cert" || key == "tls_key") {
        if (!options.tls) throw fail("the option '" + key + "' needs rediss://");
        if (value.empty()) throw fail("the option '" + key + "' needs a file");
        (key == "tls_ca" ? options.tls_ca_file
                         : key == "tls_cert" ? options.tls_cert_file : options.tls_key_file) = value;
    } else {
        throw fail("unknown option '" + key +
                   "' (known: connect_timeout_ms, timeout_ms, retry_ms, max_retry_ms, "
                   "expiry_s, max_entry_bytes, lock_ms, lock_wait_ms, prefix, secret_file, "
                   "secret_env, and with "
                   "rediss:// tls_ca, tls_cert, tls_key)");
    }
}

// Every option of the URL's query into `options`.
void apply_url_query(RemoteCacheOptions& options, const UriUriA& uri, const std::string& url) {
    QueryHolder query;
    int count = 0;
    if (uriDissectQueryMallocA(&query.list, &count, uri.query.first, uri.query.afterLast) != URI_SUCCESS)
        throw InvalidArgumentError("RemoteCacheOptions::from_url('" + url + "'): its query cannot be read");
    for (const UriQueryListA* item = query.list; item != nullptr; item = item->next)
        apply_url_option(options, item->key ? item->key : "", item->value ? item->value : "", url);
}

}  // namespace

RemoteCacheOptions RemoteCacheOptions::from_url(std::string_view url_text) {
    const std::string url = redacted(url_text);
    auto fail = [&](const std::string& why) -> InvalidArgumentError {
        return InvalidArgumentError("RemoteCacheOptions::from_url('" + url + "'): " + why);
    };
    const std::string copy(url_text);
    UriHolder holder;
    const char* error_at = nullptr;
    if (uriParseSingleUriExA(&holder.uri, copy.data(), copy.data() + copy.size(), &error_at) !=
        URI_SUCCESS) {
        throw fail("not a URL (at offset " +
                   std::to_string(error_at ? error_at - copy.data() : 0) + ")");
    }
    holder.parsed = true;
    const UriUriA& uri = holder.uri;
    std::string scheme = text(uri.scheme);
    for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (scheme != "redis" && scheme != "rediss")
        throw fail("the scheme must be redis:// or rediss:// (not '" + scheme + "://')");
    RemoteCacheOptions options;
    options.tls = scheme == "rediss";
    options.host = text(uri.hostText);
    if (options.host.empty()) throw fail("no host");
    if (present(uri.userInfo)) {
        const std::string user_info = text(uri.userInfo);
        const auto colon = user_info.find(':');
        options.user = percent_decoded(user_info.substr(0, colon));
        if (colon != std::string::npos) options.password = percent_decoded(user_info.substr(colon + 1));
        if (options.password.empty() && !options.user.empty()) {
            throw fail("a user needs a password (redis://user:password@host; a password alone: "
                       "redis://:password@host)");
        }
    }
    if (present(uri.portText) && !text(uri.portText).empty())
        options.port = parse_number<int>(text(uri.portText), "port", url, 1, 65535);
    std::vector<std::string> segments;
    for (const UriPathSegmentA* segment = uri.pathHead; segment != nullptr; segment = segment->next)
        segments.push_back(text(segment->text));
    if (!segments.empty() && segments.back().empty()) segments.pop_back();  // a trailing '/'
    if (segments.size() > 1) throw fail("the path must be at most one database number");
    if (segments.size() == 1)
        options.database = parse_number<int>(segments[0], "database", url, 0,
                                             std::numeric_limits<int>::max());
    if (present(uri.fragment)) throw fail("a fragment ('#...') means nothing here");
    if (present(uri.query) && uri.query.first != uri.query.afterLast) apply_url_query(options, uri, url);
    // A first delay longer than the default longest one raises the longest one to it.
    if (options.max_retry_after < options.retry_after) {
        if (url_text.find("max_retry_ms=") != std::string_view::npos)
            throw fail("max_retry_ms is less than retry_ms");
        options.max_retry_after = options.retry_after;
    }
    return options;
}

std::optional<RemoteCacheOptions> RemoteCacheOptions::from_environment() {
    const char* value = std::getenv("CUDACORE_REMOTE_CACHE");
    if (value == nullptr || *value == '\0') return std::nullopt;
    return from_url(value);
}

std::string RemoteCacheOptions::display_url() const {
    std::string url = tls ? "rediss://" : "redis://";
    if (!user.empty()) url += user + "@";
    if (host.find(':') != std::string::npos) {
        url += "[" + host + "]";
    } else {
        url += host;
    }
    return url + ":" + std::to_string(port) + "/" + std::to_string(database);
}

std::string RemoteCacheOptions::read_secret() const {
    return detail::read_seal_secret({.owner = "RemoteProgramCache(" + display_url() + ")",
                                     .file = secret_file,
                                     .file_option = "secret_file",
                                     .env = secret_env,
                                     .env_option = "secret_env"});
}

}  // namespace cudacore
