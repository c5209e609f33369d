#include "after_mkdtemp.hpp"

#include <dlfcn.h>
#include <stdlib.h>

#include <chrono>
#include <utility>

namespace cudacore::test {

namespace {

struct Hook {
    std::string prefix;
    std::function<void(const std::filesystem::path&)> action;
    int runs = 0;
};
Hook* hook = nullptr;

}  // namespace

AfterMkdtemp::AfterMkdtemp(std::string prefix, std::function<void(const std::filesystem::path&)> action) {
    hook = new Hook{std::move(prefix), std::move(action)};
}

AfterMkdtemp::~AfterMkdtemp() {
    delete std::exchange(hook, nullptr);
}

int AfterMkdtemp::runs() const { return hook ? hook->runs : 0; }

void age_folder(const std::filesystem::path& folder, std::chrono::seconds age) {
    std::filesystem::last_write_time(folder, std::filesystem::file_time_type::clock::now() - age);
}

}  // namespace cudacore::test

extern "C" char* mkdtemp(char* name_template) {
    using Mkdtemp = char* (*)(char*);
    static const auto real = reinterpret_cast<Mkdtemp>(::dlsym(RTLD_NEXT, "mkdtemp"));
    char* made = real(name_template);
    cudacore::test::Hook* hook = cudacore::test::hook;
    if (made && hook && std::filesystem::path(made).filename().string().starts_with(hook->prefix)) {
        ++hook->runs;
        hook->action(made);
    }
    return made;
}
