// Loads one library through cudacore's loader and reports the outcome on stdout.
// Exit codes: 0 loaded, 2 LoaderError, 3 NoDriverError, 1 anything else.
#include "cudacore/errors.hpp"
#include "cudacore/linker.hpp"
#include "cudacore/system.hpp"
#include "cudacore/system_info.hpp"
#include "loader/compiler_apis.hpp"
#include "loader/driver_api.hpp"
#include "loader/nvfatbin_api.hpp"
#include "loader/nvvm_api.hpp"

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

int main(int argc, char** argv) {
    const char* what = argc > 1 ? argv[1] : "driver";
    try {
        if (std::strcmp(what, "driver") == 0) {
            std::printf("driver %d\n", cudacore::system::driver_version());
        } else if (std::strcmp(what, "driver-twice") == 0) {
            std::string first, second;
            try { cudacore::system::driver_version(); } catch (const cudacore::Error& e) { first = e.what(); }
            try { cudacore::system::device_count(); } catch (const cudacore::Error& e) { second = e.what(); }
            if (!first.empty() && first == second && !cudacore::system::driver_available())
                std::printf("same error twice: %s\n", first.c_str());
            else
                std::printf("different: [%s] [%s]\n", first.c_str(), second.c_str());
        } else if (std::strcmp(what, "nvrtc") == 0) {
            const auto& api = cudacore::detail::nvrtc();
            std::printf("nvrtc %d.%d from %s\n", api.major, api.minor, api.path.c_str());
        } else if (std::strcmp(what, "nvrtc-version") == 0) {
            const auto version = cudacore::system::nvrtc_version();
            std::printf("nvrtc version %d.%d\n", version.major, version.minor);
        } else if (std::strcmp(what, "nvjitlink-version") == 0) {
            const auto version = cudacore::system::nvjitlink_version();
            std::printf("nvjitlink version %d.%d\n", version.major, version.minor);
        } else if (std::strcmp(what, "compiler-paths") == 0) {
            std::printf("nvrtc path %s\n", cudacore::system::nvrtc_path().c_str());
            std::printf("nvjitlink path %s\n", cudacore::system::nvjitlink_path().c_str());
        } else if (std::strcmp(what, "which-backend") == 0) {
            std::printf("backend %s, driver %s\n",
                        std::string(cudacore::to_string(cudacore::Linker::which_backend())).c_str(),
                        cudacore::system::driver_available() ? "yes" : "no");
        } else if (std::strcmp(what, "nvjitlink") == 0) {
            const auto& api = cudacore::detail::nvjitlink();
            std::printf("nvjitlink %u.%u from %s\n", api.major, api.minor, api.path.c_str());
        } else if (std::strcmp(what, "nvml") == 0) {
            std::printf("available %d\n", cudacore::system::nvml_available() ? 1 : 0);
            std::printf("nvml driver %s\n", cudacore::system::nvml_driver_version().c_str());
        } else if (std::strcmp(what, "nvfatbin") == 0) {
            std::printf("nvfatbin %s\n", cudacore::detail::nvfatbin_version().c_str());
            std::printf("nvfatbin path %s\n", cudacore::detail::nvfatbin_path().c_str());
        } else if (std::strcmp(what, "optional-versions") == 0) {
            // Never throws for a missing library: "available M.m from PATH" or "not available: WHY".
            for (const auto& [name, library] :
                 {std::pair{"nvfatbin", cudacore::system::nvfatbin_version()},
                  std::pair{"nvvm", cudacore::system::nvvm_version()}}) {
                if (library.available())
                    std::printf("%s available %d.%d from %s\n", name, library.version->major,
                                library.version->minor, library.path.c_str());
                else
                    std::printf("%s not available: %s\n", name, library.not_available.c_str());
            }
        } else if (std::strcmp(what, "nvvm") == 0) {
            std::printf("nvvm %s, libdevice %s\n", cudacore::detail::nvvm_version().c_str(),
                        cudacore::detail::libdevice_path().c_str());
        }
    } catch (const cudacore::NoDriverError& e) {
        std::printf("NoDriverError: %s\n", e.what());
        return 3;
    } catch (const cudacore::LoaderError& e) {
        std::printf("LoaderError: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::printf("other: %s\n", e.what());
        return 1;
    }
    return 0;
}
