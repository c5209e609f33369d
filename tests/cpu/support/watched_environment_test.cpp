// support/watched_environment: a watched variable answers what getenv answers after any change of
// the environment, and equal values are one pointer. The random walk changes the environment
// every way glibc offers (and by hand) and compares after each step.
#include "test_support.hpp"

#include "support/watched_environment.hpp"

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern char** environ;

namespace {

using cudacore::detail::WatchedVariable;

constexpr const char* kName = "CUDACORE_TEST_WATCHED";

// What the variable answers, as a comparable value: its text, or "<unset>".
std::string answered(const WatchedVariable& variable) {
    const std::string* value = variable.value();
    return value ? *value : "<unset>";
}
std::string from_getenv() {
    const char* value = std::getenv(kName);
    return value ? value : "<unset>";
}

// The environment as it was, put back at the end (clearenv and `environ =` drop it).
class SavedEnvironment {
public:
    SavedEnvironment() {
        for (char** entry = environ; entry && *entry; ++entry) saved_.emplace_back(*entry);
    }
    ~SavedEnvironment() {
        ::clearenv();
        for (const std::string& entry : saved_) {
            const auto equals = entry.find('=');
            ::setenv(entry.substr(0, equals).c_str(), entry.substr(equals + 1).c_str(), 1);
        }
    }

private:
    std::vector<std::string> saved_;
};

TEST(WatchedVariable, FollowsSetenvUnsetenvAndEqualValuesAreOnePointer) {
    SavedEnvironment saved;
    const WatchedVariable variable(kName);
    ::unsetenv(kName);
    EXPECT_EQ(variable.value(), nullptr);
    ::setenv(kName, "/opt/a", 1);
    ASSERT_NE(variable.value(), nullptr);
    const std::string* first = variable.value();
    EXPECT_EQ(*first, "/opt/a");
    ::setenv(kName, "/opt/b", 1);
    EXPECT_EQ(*variable.value(), "/opt/b");
    ::setenv(kName, "/opt/a", 1);
    EXPECT_EQ(variable.value(), first);  // the same value, the same pointer
    ::unsetenv(kName);
    EXPECT_EQ(variable.value(), nullptr);
}

TEST(WatchedVariable, SeesAPutenvStringWrittenInPlace) {
    SavedEnvironment saved;
    const WatchedVariable variable(kName);
    static char entry[] = "CUDACORE_TEST_WATCHED=/opt/x";
    ASSERT_EQ(::putenv(entry), 0);
    EXPECT_EQ(*variable.value(), "/opt/x");
    entry[sizeof(entry) - 2] = 'y';  // "/opt/y": the environment changed with no call
    EXPECT_EQ(*variable.value(), "/opt/y");
    ::unsetenv(kName);
}

// Long because: one case a way of changing the environment; a random walk over all of them reads
// best as one switch.
TEST(WatchedVariable, RandomChangesOfTheEnvironmentAnswerAsGetenvDoes) {
    SavedEnvironment saved;
    const WatchedVariable variable(kName);
    std::mt19937 random(20261128);
    std::vector<std::string> others;
    for (int i = 0; i < 12; ++i) others.push_back("CUDACORE_TEST_OTHER_" + std::to_string(i));
    std::vector<std::vector<char>> putenv_strings;  // kept alive: putenv keeps the pointer
    std::vector<char*> own_array;                     // an environment assigned by hand
    for (int step = 0; step < 20000; ++step) {
        const std::string value = "/opt/" + std::to_string(random() % 5);
        const std::string& other = others[random() % others.size()];
        switch (random() % 9) {
        case 0: ::setenv(kName, value.c_str(), 1); break;
        case 1: ::setenv(kName, value.c_str(), 0); break;
        case 2: ::unsetenv(kName); break;
        case 3: ::setenv(other.c_str(), value.c_str(), 1); break;
        case 4: ::unsetenv(other.c_str()); break;
        case 5: {
            const std::string text = std::string(random() % 2 ? kName : other.c_str()) + "=" + value;
            putenv_strings.emplace_back(text.begin(), text.end());
            putenv_strings.back().push_back('\0');
            ::putenv(putenv_strings.back().data());
            break;
        }
        case 6:
            if (!putenv_strings.empty()) {  // a putenv string written in place, same length
                std::vector<char>& text = putenv_strings[random() % putenv_strings.size()];
                text[text.size() - 2] = static_cast<char>('0' + random() % 5);
            }
            break;
        case 7:
            if (random() % 50 == 0) ::clearenv();
            break;
        case 8:
            if (random() % 50 == 0) {  // `environ` assigned by hand, as some programs do
                static std::string by_hand;
                by_hand = std::string(kName) + "=" + value;
                own_array = {by_hand.data(), nullptr};
                environ = own_array.data();
            }
            break;
        }
        ASSERT_EQ(answered(variable), from_getenv()) << "after step " << step;
    }
}

}  // namespace
