// IpcChannel with no GPU: messages and real file descriptors (SCM_RIGHTS) between this process
// and a child program, and clear errors when the peer exits or is killed, on timeouts and on
// misuse.
#include "test_support.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/ipc_channel.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <functional>
#include <future>
#include <sstream>

namespace {

using namespace cudacore;
using namespace std::chrono_literals;
using cudacore::test::ProcessResult;
using cudacore::test::TempDir;

// Starts the channel peer program in MODE against `socket`; the result arrives when it exits.
std::future<ProcessResult> start_peer(const std::string& mode, const std::filesystem::path& socket) {
    const std::string helper = cudacore::test::helper_path("ipc_channel_peer").string();
    return std::async(std::launch::async, [=] {
        return cudacore::test::run_process({helper, mode, socket.string()});
    });
}

std::string expect_ipc_error(const std::function<void()>& call) {
    try {
        call();
    } catch (const IpcError& e) {
        return e.what();
    }
    ADD_FAILURE() << "no IpcError";
    return "";
}

TEST(IpcChannel, PassesAFileDescriptorToAnotherProcess) {
    TempDir dir;
    const auto socket = dir.path() / "channel";
    IpcListener listener(socket);
    auto peer = start_peer("write-fd", socket);
    IpcChannel channel = listener.accept(20s);

    // The child gets an open descriptor for a file whose name it never sees.
    const auto file = dir.path() / "written-by-child";
    FileDescriptor fd(::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    ASSERT_TRUE(fd.valid());
    channel.send(std::string("greetings"), fd.get());
    fd.reset();
    EXPECT_EQ(channel.receive(20s).text(), "done");

    const ProcessResult result = peer.get();
    ASSERT_EQ(result.exit_code, 0) << result.err;
    std::ifstream in(file);
    std::stringstream content;
    content << in.rdbuf();
    EXPECT_EQ(content.str().rfind("greetings from ", 0), 0u) << content.str();
    EXPECT_NE(content.str(), "greetings from " + std::to_string(::getpid()));  // another process
}

TEST(IpcChannel, ADescriptorComesBackAsANewNumberForTheSameFile) {
    TempDir dir;
    const auto socket = dir.path() / "echo";
    IpcListener listener(socket);
    auto peer = start_peer("echo-fd", socket);
    IpcChannel channel = listener.accept(20s);
    int pipe_fds[2];
    ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
    FileDescriptor read_end(pipe_fds[0]), write_end(pipe_fds[1]);
    channel.send(std::string("pipe"), write_end.get());
    IpcMessage back = channel.receive(20s);
    EXPECT_EQ(back.text(), "pipe");
    ASSERT_TRUE(back.fd.valid());
    EXPECT_NE(back.fd.get(), write_end.get());
    // Writing through the returned descriptor reaches our pipe: it is the same open file.
    ASSERT_EQ(::write(back.fd.get(), "x", 1), 1);
    char c = 0;
    ASSERT_EQ(::read(read_end.get(), &c, 1), 1);
    EXPECT_EQ(c, 'x');
    EXPECT_EQ(peer.get().exit_code, 0);
}

TEST(IpcChannel, PairKeepsMessageBoundaries) {
    auto [a, b] = IpcChannel::pair();
    a.send(std::string("one"));
    a.send(std::string("two two"));
    EXPECT_EQ(b.receive(1s).text(), "one");
    IpcMessage second = b.receive(1s);
    EXPECT_EQ(second.text(), "two two");
    EXPECT_FALSE(second.fd.valid());
    a.send(std::string("zero\0inside", 11));  // text() keeps every byte, a zero too
    EXPECT_EQ(b.receive(1s).text(), std::string("zero\0inside", 11));
    const std::vector<std::byte> largest(IpcChannel::max_message_size, std::byte{7});
    b.send(largest);
    EXPECT_EQ(a.receive(1s).bytes, largest);
}

TEST(IpcChannel, PeerThatExitsIsAClearErrorOnReceive) {
    TempDir dir;
    const auto socket = dir.path() / "exit";
    IpcListener listener(socket);
    auto peer = start_peer("exit", socket);
    IpcChannel channel = listener.accept(20s);
    EXPECT_EQ(peer.get().exit_code, 0);
    const std::string error = expect_ipc_error([&] { channel.receive(5s); });
    EXPECT_NE(error.find("closed its end"), std::string::npos) << error;
}

TEST(IpcChannel, PeerKilledMidUseIsAClearErrorNotASignal) {
    TempDir dir;
    const auto socket = dir.path() / "kill";
    IpcListener listener(socket);
    auto peer = start_peer("kill", socket);
    IpcChannel channel = listener.accept(20s);
    EXPECT_EQ(peer.get().exit_code, -SIGKILL);
    const std::string receive_error = expect_ipc_error([&] { channel.receive(5s); });
    EXPECT_NE(receive_error.find("closed its end"), std::string::npos) << receive_error;
    // Sending to a dead peer throws (EPIPE) instead of killing this process with SIGPIPE.
    const std::string send_error = expect_ipc_error([&] { channel.send(std::string("hello?")); });
    EXPECT_NE(send_error.find("sendmsg"), std::string::npos) << send_error;
}

TEST(IpcChannel, TimeoutsAndMissingListenersAreClearErrors) {
    auto [a, b] = IpcChannel::pair();
    const std::string timeout = expect_ipc_error([&a = a] { a.receive(20ms); });
    EXPECT_NE(timeout.find("no message within 20 ms"), std::string::npos) << timeout;

    TempDir dir;
    const auto nowhere = dir.path() / "nobody-listens";
    const std::string connect = expect_ipc_error([&] { IpcChannel::connect(nowhere, 50ms); });
    EXPECT_NE(connect.find("connect failed"), std::string::npos) << connect;
    EXPECT_NE(connect.find(nowhere.string()), std::string::npos) << connect;
    EXPECT_NE(connect.find("no listener within 50 ms"), std::string::npos) << connect;

    IpcListener listener(dir.path() / "quiet");
    const std::string accept = expect_ipc_error([&] { listener.accept(20ms); });
    EXPECT_NE(accept.find("no connection within 20 ms"), std::string::npos) << accept;
}

TEST(IpcChannel, AListenerReplacedByMoveRemovesItsPath) {
    TempDir dir;
    const auto first = dir.path() / "first";
    const auto second = dir.path() / "second";
    IpcListener listener(first);
    ASSERT_TRUE(std::filesystem::exists(first));
    listener = IpcListener(second);
    EXPECT_FALSE(std::filesystem::exists(first)) << "the replaced listener's socket file stays";
    EXPECT_TRUE(std::filesystem::exists(second));
    EXPECT_EQ(listener.path(), second);
    {
        IpcListener taken(std::move(listener));  // the moved-from listener removes nothing
        EXPECT_TRUE(std::filesystem::exists(second));
    }
    EXPECT_FALSE(std::filesystem::exists(second));
}

TEST(IpcChannel, MisuseIsRejected) {
    auto [a, b] = IpcChannel::pair();
    EXPECT_THROW(a.send(std::string()), InvalidArgumentError);
    const std::vector<std::byte> too_big(IpcChannel::max_message_size + 1);
    const std::string big = expect_ipc_error([&a = a, &too_big] { a.send(too_big); });
    EXPECT_NE(big.find("exceeds"), std::string::npos) << big;

    const std::string long_path = "/tmp/" + std::string(200, 'x');
    const std::string path_error = expect_ipc_error([&] { IpcListener listener(long_path); });
    EXPECT_NE(path_error.find("longer than"), std::string::npos) << path_error;

    TempDir dir;
    IpcListener first(dir.path() / "taken");
    const std::string taken = expect_ipc_error([&] { IpcListener second(dir.path() / "taken"); });
    EXPECT_NE(taken.find("bind failed"), std::string::npos) << taken;
    EXPECT_TRUE(std::filesystem::exists(dir.path() / "taken"));  // the first one's, left alone
}

TEST(IpcChannel, ListenerRemovesItsSocketFile) {
    TempDir dir;
    const auto socket = dir.path() / "gone";
    {
        IpcListener listener(socket);
        EXPECT_TRUE(std::filesystem::exists(socket));
    }
    EXPECT_FALSE(std::filesystem::exists(socket));
}

}  // namespace
