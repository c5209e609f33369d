// keep_signal_dispositions: a library whose signal imports were pointed gets the disposition in
// force from signal() and sigaction() (called directly or through a pointer) and changes nothing,
// also where its relocation slots are read-only (full RELRO); the program's own calls still work;
// what the library changed through the real calls before the pointing, it can still put back.
// The library is libcudacore_signal_setter.so (tests/support/signal_setter.cpp).
#include "loader/signal_imports.hpp"
#include "test_support.hpp"

#include <dlfcn.h>
#include <signal.h>

#include <filesystem>

namespace {

using cudacore::detail::keep_signal_dispositions;

void program_handler(int, siginfo_t*, void*) {}

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
    const auto library_handler = reinterpret_cast<sighandler_t>(::dlsym(library, "signal_setter_handler"));
    ASSERT_TRUE(set_signal && set_action && set_through_pointer && library_handler);

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

// Another thread was inside the library's first compile when its imports were pointed: the
// library's handler and SIG_IGN went in through the real calls, and only its calls putting back
// what it saved come through the pointed ones. Those are made; its other calls still change
// nothing. A copy of the library is opened, so that no earlier test pointed it.
TEST(SignalImports, ALibraryPutsBackWhatItChangedBeforeThePointing) {
    cudacore::test::TempDir dir;
    const auto copy = dir.path() / "libsignal_setter_copy.so";
    std::filesystem::copy_file(cudacore::test::executable_dir() / "libcudacore_signal_setter.so", copy);
    void* library = ::dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(library, nullptr) << ::dlerror();
    using SetSignal = sighandler_t (*)(int, sighandler_t);
    using SetAction = int (*)(int, const struct sigaction*, struct sigaction*);
    const auto set_signal = reinterpret_cast<SetSignal>(::dlsym(library, "signal_setter_signal"));
    const auto set_action = reinterpret_cast<SetAction>(::dlsym(library, "signal_setter_sigaction"));
    const auto own_handler = reinterpret_cast<sighandler_t>(::dlsym(library, "signal_setter_handler"));
    ASSERT_TRUE(set_signal && set_action && own_handler);

    // The program's: a handler with flags and a mask on SIGUSR1, the default on SIGUSR2 and
    // SIGWINCH, SIG_IGN on SIGURG.
    struct sigaction program {};
    program.sa_sigaction = program_handler;
    program.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&program.sa_mask);
    sigaddset(&program.sa_mask, SIGTERM);
    ASSERT_EQ(::sigaction(SIGUSR1, &program, nullptr), 0);
    ::signal(SIGUSR2, SIG_DFL);
    ::signal(SIGWINCH, SIG_DFL);
    ::signal(SIGURG, SIG_IGN);

    // Before the pointing, as NVRTC's first compile does: SIG_IGN for a moment, then its handler
    // (SIGUSR1); its handler through sigaction (SIGUSR2); SIG_IGN (SIGWINCH, as on SIGXFSZ).
    const sighandler_t saved_usr1 = set_signal(SIGUSR1, SIG_IGN);
    EXPECT_EQ(set_signal(SIGUSR1, own_handler), SIG_IGN);
    struct sigaction theirs {}, saved_usr2 {};
    theirs.sa_handler = own_handler;
    ASSERT_EQ(set_action(SIGUSR2, &theirs, &saved_usr2), 0);
    const sighandler_t saved_winch = set_signal(SIGWINCH, SIG_IGN);

    ASSERT_EQ(keep_signal_dispositions(reinterpret_cast<const void*>(set_signal)), 2);

    // Its handler again, and SIG_IGN where the default is: not made.
    EXPECT_EQ(set_signal(SIGUSR1, own_handler), own_handler);
    EXPECT_EQ(disposition(SIGUSR1).sa_handler, own_handler);
    ::signal(SIGHUP, SIG_DFL);
    EXPECT_EQ(set_signal(SIGHUP, SIG_IGN), SIG_DFL);
    EXPECT_EQ(disposition(SIGHUP).sa_handler, SIG_DFL);
    // What it saved, put back: made.
    EXPECT_EQ(set_signal(SIGUSR1, saved_usr1), own_handler);
    EXPECT_EQ(disposition(SIGUSR1).sa_sigaction, program_handler);
    EXPECT_EQ(set_action(SIGUSR2, &saved_usr2, nullptr), 0);
    EXPECT_EQ(disposition(SIGUSR2).sa_handler, SIG_DFL);
    EXPECT_EQ(set_signal(SIGWINCH, saved_winch), SIG_IGN);
    EXPECT_EQ(disposition(SIGWINCH).sa_handler, SIG_DFL);
    // The program's SIG_IGN stays, whatever the library puts back; so does a handler of the
    // program's, with its flags and mask, where the library puts back what is in force.
    EXPECT_EQ(set_signal(SIGURG, SIG_IGN), SIG_IGN);
    EXPECT_EQ(disposition(SIGURG).sa_handler, SIG_IGN);
    ASSERT_EQ(::sigaction(SIGUSR1, &program, nullptr), 0);
    EXPECT_EQ(set_signal(SIGUSR1, reinterpret_cast<sighandler_t>(program_handler)),
              reinterpret_cast<sighandler_t>(program_handler));
    const struct sigaction kept = disposition(SIGUSR1);
    EXPECT_EQ(kept.sa_flags & SA_SIGINFO, SA_SIGINFO);
    EXPECT_EQ(sigismember(&kept.sa_mask, SIGTERM), 1);

    for (const int signal : {SIGUSR1, SIGUSR2, SIGWINCH, SIGURG, SIGHUP}) ::signal(signal, SIG_DFL);
}

TEST(SignalImports, AnAddressInNoLibraryPointsNothing) {
    int on_the_stack = 0;
    EXPECT_EQ(keep_signal_dispositions(&on_the_stack), 0);
}

}  // namespace
