#include <cudacore/cudacore.hpp>

#include <cstdio>

int main() {
    std::printf("cudacore %s, driver %s\n", cudacore::version(),
                cudacore::system::driver_available() ? "present" : "absent");
    return 0;
}
