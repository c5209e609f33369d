// A consumer's header bundle, made during its build by the installed CLI
// (cudacore_add_header_bundle) and read back from the executable.
#include <cudacore/embedded_header_bundle.hpp>

#include <cstdio>

int main() {
    const cudacore::HeaderBundle bundle = cudacore::embedded_header_bundle("consumer_headers");
    const std::string* header = bundle.find("consumer/api.h");
    std::printf("bundle %s: %zu headers, consumer/api.h %s\n", bundle.name().c_str(), bundle.size(),
                header ? "present" : "absent");
    return header ? 0 : 1;
}
