// keep_signal_dispositions: a library whose signal imports were pointed gets the disposition in
// force from signal() and sigaction() (called directly or through a pointer) and changes nothing,
// also where its relocation slots are read-only (full RELRO); the program's own calls still work.
// The library is libcudacore_signal_setter.so (tests/support/signal_setter.cpp).
#include "loader/signal_imports.hpp"
#include "test_support.hpp"

#include <dlfcn.h>
#include <signal.h>

namespace {

using cudacore::detail::keep_signal_dispositions;

void program_handler(int, siginfo_t*, void*) {}
void library_handler(int) {}

struct sigaction disposition(int signal) {
    struct sigaction now {};
    ::sigaction(signal, nullptr, &now);
    return now;
}

TEST(SignalImports, ALibraryGetsTheDispositionButChangesNothing) {
    const auto path = cudacore::test::executable_dir() / "libcudacore_signal_setter.so";
    void* library = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(library, nullptr) << ::dlerror();
    using SetSignal = sighandler_t (*)(int, sighandler_t);
    using SetAction = int (*)(int, const struct sigaction*, struct sigaction*);
    const auto set_signal = reinterpret_cast<SetSignal>(::dlsym(library, "signal_setter_signal"));
    const auto set_action = reinterpret_cast<SetAction>(::dlsym(library, "signal_setter_sigaction"));
    const auto set_through_pointer =
        reinterpret_cast<SetSignal>(::dlsym(library, "signal_setter_signal_through_pointer"));
    ASSERT_TRUE(set_signal && set_action && set_through_pointer);

    // Left alone, the library changes what it asks for.
    ::signal(SIGUSR1, SIG_IGN);
    EXPECT_EQ(set_signal(SIGUSR1, SIG_DFL), SIG_IGN);
    EXPECT_EQ(disposition(SIGUSR1).sa_handler, SIG_DFL);

    // Two slots, both read-only: signal()'s in the GOT (the compiler calls it there too, as its
    // address is taken) and sigaction()'s jump slot.
    EXPECT_EQ(keep_signal_dispositions(reinterpret_cast<const void*>(set_signal)), 2);
    ::signal(SIGUSR1, SIG_IGN);  // the program's own calls are not affected
    struct sigaction program {};
    program.sa_sigaction = program_handler;
    program.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&program.sa_mask);
    sigaddset(&program.sa_mask, SIGTERM);
    ASSERT_EQ(::sigaction(SIGUSR2, &program, nullptr), 0);

    EXPECT_EQ(set_signal(SIGUSR1, library_handler), SIG_IGN);
    EXPECT_EQ(set_through_pointer(SIGUSR1, library_handler), SIG_IGN);
    EXPECT_EQ(disposition(SIGUSR1).sa_handler, SIG_IGN);
    struct sigaction theirs {}, old {};
    theirs.sa_handler = library_handler;
    EXPECT_EQ(set_action(SIGUSR2, &theirs, &old), 0);
    EXPECT_EQ(old.sa_sigaction, program_handler);
    const struct sigaction kept = disposition(SIGUSR2);
    EXPECT_EQ(kept.sa_sigaction, program_handler);
    EXPECT_EQ(kept.sa_flags & (SA_SIGINFO | SA_RESTART), SA_SIGINFO | SA_RESTART);
    EXPECT_EQ(sigismember(&kept.sa_mask, SIGTERM), 1);
    // A bad signal number fails as the real calls fail.
    EXPECT_EQ(set_signal(-1, SIG_IGN), SIG_ERR);
    EXPECT_EQ(set_action(-1, nullptr, &old), -1);

    ::signal(SIGUSR1, SIG_DFL);
    ::signal(SIGUSR2, SIG_DFL);
}

TEST(SignalImports, AnAddressInNoLibraryPointsNothing) {
    int on_the_stack = 0;
    EXPECT_EQ(keep_signal_dispositions(&on_the_stack), 0);
}

}  // namespace
