// Over 200 lines: the deprecated one-for-one NVTX wrappers, beside what NVTX3 lacks.
/// @file
/// Tracing: ranges and marks in named NVTX domains a profiler shows on a timeline, with
/// categories, colours and a number each; cudacore marks its own work in Domain::cudacore().
/// Without a tool attached a Range or mark() tests one flag. Every call may be made from any
/// thread; ranges nest per thread; nothing here throws unless it says so. Guide: docs/tracing.md.
#pragma once

#include <atomic>
#include <bit>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace cudacore::tracing {

/// A colour, as 0xAARRGGBB; 0 (the default) is no colour: the tool picks one.
struct Color {
    std::uint32_t argb = 0;  ///< alpha, red, green, blue (one byte each); 0: none

    /// Whether a colour is set (argb is not 0).
    constexpr bool is_set() const noexcept { return argb != 0; }

    /// An opaque colour from its red, green and blue parts.
    static constexpr Color rgb(std::uint8_t red, std::uint8_t green, std::uint8_t blue) noexcept {
        return Color{0xFF000000u | (std::uint32_t{red} << 16) | (std::uint32_t{green} << 8) |
                     std::uint32_t{blue}};
    }
    /// Equal when the four bytes are.
    friend constexpr bool operator==(Color, Color) noexcept = default;
};

/// One number an event carries (NVTX's payload): an integer or floating-point number.
class Payload {
public:
    /// What the payload holds.
    enum class Type : std::uint8_t { none, int64, uint64, float64 };

    /// No payload.
    constexpr Payload() noexcept = default;
    /// A signed integer, kept as a 64-bit signed value.
    template <std::signed_integral T>
    constexpr Payload(T value) noexcept  // NOLINT: implicit, so `.payload = n` reads naturally
        : type_(Type::int64), bits_(static_cast<std::uint64_t>(static_cast<std::int64_t>(value))) {}
    /// An unsigned integer (not bool), kept as a 64-bit unsigned value.
    template <std::unsigned_integral T>
        requires(!std::same_as<T, bool>)
    constexpr Payload(T value) noexcept : type_(Type::uint64), bits_(value) {}  // NOLINT: as above
    /// A floating-point number, kept as a double.
    template <std::floating_point T>
    constexpr Payload(T value) noexcept  // NOLINT: as above
        : type_(Type::float64), bits_(std::bit_cast<std::uint64_t>(static_cast<double>(value))) {}

    /// What it holds.
    constexpr Type type() const noexcept { return type_; }
    /// The value of an int64 payload.
    constexpr std::int64_t int64() const noexcept { return static_cast<std::int64_t>(bits_); }
    /// The value of a uint64 payload.
    constexpr std::uint64_t uint64() const noexcept { return bits_; }
    /// The value of a float64 payload.
    constexpr double float64() const noexcept { return std::bit_cast<double>(bits_); }

private:
    Type type_ = Type::none;
    std::uint64_t bits_ = 0;
};

/// "none", "int64", "uint64", "float64"; "Payload::Type(N)" outside the enumeration.
std::string to_string(Payload::Type type);

/// How an event shows: `{.color = Color::rgb(0, 160, 0), .payload = bytes}`.
struct EventOptions {
    Color color{};               ///< Color{} (the default): the tool picks one
    std::uint32_t category = 0;  ///< 0: none; name the others with Domain::name_category
    Payload payload{};           ///< none by default
};

/// cudacore's domain as an NVTX3 domain tag: `nvtx3::scoped_range_in<tracing::nvtx3_domain>`.
struct nvtx3_domain {
    static constexpr const char* name = "cudacore";  ///< the domain's name, as NVTX3 reads it
};

/// The categories of cudacore's own events in Domain::cudacore().
enum class CudacoreCategory : std::uint32_t {
    compile = 1,  ///< Program::compile, compile_cached
    link = 2,     ///< Linker::link
    cache = 3,    ///< lookups and stores in each tier, with a mark for each hit, miss and store
    load = 4,     ///< loading code into the current context
    graph = 5,    ///< graph instantiation
    memory = 6,   ///< memory pools growing
};

/// "compile", "link", "cache", "load", "graph", "memory"; "CudacoreCategory(N)" outside it.
std::string to_string(CudacoreCategory category);

namespace detail {
// The default options, bound by reference: a call without options stores nothing.
inline constexpr EventOptions no_options{};
struct DomainState;
struct RegisteredText;
struct Access;  // what the implementation reads of Domain and RegisteredString
// Whether a tool is attached: unknown until the first question (NVTX looks once).
enum ToolState : unsigned char { tool_unknown, tool_absent, tool_present };
extern std::atomic<unsigned char> tool_state;
bool find_tool() noexcept;
}  // namespace detail

/// Whether an NVTX tool is attached (the first call looks for one; later calls read a flag).
inline bool tool_attached() noexcept {
    const unsigned char state = detail::tool_state.load(std::memory_order_acquire);
    if (state != detail::tool_unknown) [[likely]] return state == detail::tool_present;
    return detail::find_tool();
}

class RegisteredString;

/// A named NVTX domain (one per name, for the process). Construction takes a lock.
class Domain {
public:
    /// The domain named `name`. @throws InvalidArgumentError if `name` is empty.
    explicit Domain(std::string_view name);

    /// cudacore's own domain, "cudacore", its categories named (CudacoreCategory).
    static const Domain& cudacore() noexcept;

    /// The domain's name.
    std::string_view name() const noexcept;

    /// Names category `id` (not 0) in this domain; nothing without a tool.
    /// @deprecated Use `nvtx3::named_category_in<Tag>::get<C>()` (docs/tracing.md).
    [[deprecated("use nvtx3::named_category_in<Tag> (nvtx3/nvtx3.hpp)")]]
    void name_category(std::uint32_t id, std::string_view category_name) const noexcept;

    /// `text` registered with the tool once, for messages repeated often. @throws std::bad_alloc.
    /// @deprecated Use `nvtx3::registered_string_in<Tag>::get<M>()`.
    [[deprecated("use nvtx3::registered_string_in<Tag> (nvtx3/nvtx3.hpp)")]]
    RegisteredString register_string(std::string_view text) const;

    /// The nvtxDomainHandle_t, for calls to NVTX itself; null without a tool.
    void* native_handle() const noexcept;

private:
    friend struct detail::Access;
    explicit Domain(const detail::DomainState* state) noexcept : state_(state) {}
    const detail::DomainState* state_;
};

/// A string registered in a Domain; copies are cheap.
/// @deprecated Use NVTX3's nvtx3::registered_string_in<Tag>.
class RegisteredString {
public:
    /// The text.
    std::string_view text() const noexcept;

private:
    friend class Domain;
    friend struct detail::Access;
    RegisteredString(const detail::DomainState* domain, const detail::RegisteredText* text) noexcept
        : domain_(domain), text_(text) {}
    const detail::DomainState* domain_;
    const detail::RegisteredText* text_;
};

/// A callable that makes a message when (and only when) a tool is attached.
template <class F>
concept MessageMaker = std::is_invocable_r_v<std::string, F&>;

namespace detail {
const DomainState* push(const Domain& domain, std::string_view message,
                        const EventOptions& options) noexcept;
const DomainState* push(const Domain& domain, const RegisteredString& message,
                        const EventOptions& options) noexcept;
void pop(const DomainState* domain) noexcept;
void mark(const Domain& domain, std::string_view message, const EventOptions& options) noexcept;
void mark(const Domain& domain, const RegisteredString& message, const EventOptions& options) noexcept;
}  // namespace detail

/// A range on this thread from construction to destruction. Neither copied nor moved.
class Range {
public:
    /// A range named `message`.
    Range(const Domain& domain, std::string_view message, const EventOptions& options = detail::no_options) noexcept {
        if (tool_attached()) [[unlikely]] domain_ = detail::push(domain, message, options);
    }
    /// A range named by a registered string.
    /// @deprecated Use nvtx3::scoped_range_in<Tag> with an nvtx3::registered_string_in<Tag>.
    [[deprecated("use nvtx3::scoped_range_in<Tag> with nvtx3::registered_string_in<Tag>")]]
    Range(const Domain& domain, const RegisteredString& message,
          const EventOptions& options = detail::no_options) noexcept {
        if (tool_attached()) [[unlikely]] domain_ = detail::push(domain, message, options);
    }
    /// A range named by what `make_message()` returns, called only when a tool is attached.
    template <MessageMaker F>
    Range(const Domain& domain, F&& make_message, const EventOptions& options = detail::no_options) noexcept {
        if (tool_attached()) [[unlikely]] {
            try {
                const std::string message = make_message();
                domain_ = detail::push(domain, message, options);
            } catch (...) {
                // No message, no range: tracing never changes what the program does.
            }
        }
    }
    /// Ends the range (on the thread that began it).
    ~Range() {
        if (domain_) [[unlikely]] detail::pop(domain_);
    }
    Range(const Range&) = delete;
    Range& operator=(const Range&) = delete;

private:
    const detail::DomainState* domain_ = nullptr;  // set once pushed
};

/// An instant on this thread's timeline (a cache hit, a decision); nothing without a tool.
inline void mark(const Domain& domain, std::string_view message, const EventOptions& options = detail::no_options) noexcept {
    if (tool_attached()) [[unlikely]] detail::mark(domain, message, options);
}

/// A mark named by a registered string.
/// @deprecated Use nvtx3::mark_in<Tag> with an nvtx3::registered_string_in<Tag>.
[[deprecated("use nvtx3::mark_in<Tag> with nvtx3::registered_string_in<Tag>")]]
inline void mark(const Domain& domain, const RegisteredString& message,
                 const EventOptions& options = detail::no_options) noexcept {
    if (tool_attached()) [[unlikely]] detail::mark(domain, message, options);
}

/// A mark named by what `make_message()` returns, called only when a tool is attached.
template <MessageMaker F>
void mark(const Domain& domain, F&& make_message, const EventOptions& options = detail::no_options) noexcept {
    if (tool_attached()) [[unlikely]] {
        try {
            detail::mark(domain, make_message(), options);
        } catch (...) {
            // As Range: no message, no mark.
        }
    }
}

}  // namespace cudacore::tracing
