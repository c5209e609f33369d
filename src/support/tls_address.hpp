// The address of a thread-local variable, reached once where it is used. The library's TLS uses
// the default model (general-dynamic: no static TLS, so the library loads with dlopen), where
// each access calls __tls_get_addr, and GCC calls it again at each use in a function (three
// calls in one give-back of a block). Through this, the address is an opaque value: one call
// serves every use that follows.
#pragma once

namespace cudacore::detail {

template <class T>
inline T& tls_address(T& variable) noexcept {
    T* address = &variable;
    asm("" : "+r"(address));
    return *address;
}

}  // namespace cudacore::detail
