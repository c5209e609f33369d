#include "cudacore/header_bundle.hpp"

#include "headers/includer_folder_rule.hpp"
#include "support/hex.hpp"
#include "support/sha256.hpp"

#include "cudacore/errors.hpp"
#include "headers/bundle_folder.hpp"

#include <algorithm>
#include <memory>

namespace cudacore {

struct HeaderBundle::State {
    std::string name;
    std::vector<BundledHeader> headers;  // strictly increasing names
    std::uint64_t content_size = 0;
    std::string digest;
};

namespace {

// SHA-256 of each header's name and content, each length-prefixed so that no two run together.
std::string digest_of(const std::vector<BundledHeader>& headers) {
    detail::Sha256 hash;
    auto field = [&](std::string_view bytes) {
        unsigned char length[8];
        for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(bytes.size() >> (8 * i));
        hash.update(length, sizeof length);
        hash.update(bytes);
    };
    field("cudacore-header-bundle-digest-v1");
    for (const auto& header : headers) {
        field(header.name);
        field(header.content);
    }
    const detail::Sha256Digest digest = hash.finish();
    return detail::hex_of(digest.data(), digest.size());
}

}  // namespace

HeaderBundle::HeaderBundle() {
    static const auto empty = [] {
        auto state = std::make_shared<State>();
        state->name = "empty";
        state->digest = digest_of(state->headers);
        return std::shared_ptr<const State>(std::move(state));
    }();
    state_ = empty;
}

HeaderBundle::HeaderBundle(std::shared_ptr<const State> state) : state_(std::move(state)) {}

HeaderBundle HeaderBundle::from_headers(std::vector<BundledHeader> headers, std::string name) {
    std::sort(headers.begin(), headers.end(),
              [](const BundledHeader& a, const BundledHeader& b) { return a.name < b.name; });
    const auto repeated = std::adjacent_find(headers.begin(), headers.end(),
                                             [](const BundledHeader& a, const BundledHeader& b) { return a.name == b.name; });
    // The rule needs each name once: exactly() refuses the repeated name.
    if (repeated == headers.end()) headers = detail::with_includer_folder_rule(std::move(headers));
    return exactly(std::move(headers), std::move(name));
}

HeaderBundle HeaderBundle::exactly(std::vector<BundledHeader> headers, std::string name) {
    const std::string what = "HeaderBundle '" + name + "'";
    std::sort(headers.begin(), headers.end(),
              [](const BundledHeader& a, const BundledHeader& b) { return a.name < b.name; });
    std::uint64_t size = name.size();
    for (std::size_t i = 0; i < headers.size(); ++i) {
        const std::string& header = headers[i].name;
        if (header.empty())
            throw InvalidArgumentError(what + ": a header has an empty name");
        if (header.find('\0') != std::string::npos)
            throw InvalidArgumentError(what + ": the header name '" + header.substr(0, header.find('\0')) +
                                       "\\0...' holds a NUL byte");
        if (i > 0 && headers[i - 1].name == header)
            throw InvalidArgumentError(what + ": the header '" + header +
                                       "' is given twice (a bundle holds each name once)");
        size += header.size() + headers[i].content.size();
    }
    if (headers.size() > max_headers) {
        throw InvalidArgumentError(what + ": " + std::to_string(headers.size()) + " headers, more than the limit of " +
                                   std::to_string(max_headers));
    }
    if (size > max_payload_size) {
        throw InvalidArgumentError(what + ": " + std::to_string(headers.size()) + " headers of " +
                                   std::to_string(size) + " bytes exceed the limit of " +
                                   std::to_string(max_payload_size));
    }
    auto state = std::make_shared<State>();
    state->name = std::move(name);
    state->content_size = size - state->name.size();
    state->digest = digest_of(headers);
    state->headers = std::move(headers);
    return HeaderBundle(std::move(state));
}

const std::string& HeaderBundle::name() const noexcept { return state_->name; }
const std::vector<BundledHeader>& HeaderBundle::headers() const noexcept { return state_->headers; }
std::size_t HeaderBundle::size() const noexcept { return state_->headers.size(); }
bool HeaderBundle::empty() const noexcept { return state_->headers.empty(); }
std::uint64_t HeaderBundle::content_size() const noexcept { return state_->content_size; }
const std::string& HeaderBundle::digest() const noexcept { return state_->digest; }

const std::string* HeaderBundle::find(std::string_view include_name) const noexcept {
    const auto& headers = state_->headers;
    const auto it = std::lower_bound(
        headers.begin(), headers.end(), include_name,
        [](const BundledHeader& header, std::string_view name) { return header.name < name; });
    if (it == headers.end() || it->name != include_name) return nullptr;
    return &it->content;
}

std::string HeaderBundle::describe() const {
    return "'" + state_->name + "' (" + std::to_string(state_->headers.size()) +
           (state_->headers.size() == 1 ? " header" : " headers") + ", digest " +
           state_->digest.substr(0, 12) + ")";
}

std::filesystem::path HeaderBundle::folder() const { return detail::bundle_folder(*this); }

HeaderBundle::FolderRemoval HeaderBundle::remove_folders(const std::filesystem::path& cache_folder) {
    detail::BundleFolderRemoval removal = detail::remove_bundle_folders(cache_folder);
    return {removal.removed, std::move(removal.in_use), std::move(removal.repaired), std::move(removal.left)};
}

bool HeaderBundle::operator==(const HeaderBundle& other) const noexcept {
    return state_ == other.state_ ||
           (state_->name == other.state_->name && state_->digest == other.state_->digest);
}

}  // namespace cudacore
