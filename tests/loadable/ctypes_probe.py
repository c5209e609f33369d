"""Opens the cudacore library from Python with ctypes.CDLL (a language binding's way) and calls
into it: version(), and the driver-log ring (thread-local state) through its C-compatible entry
point. Prints "loaded: VERSION"; exits 1 saying what failed.

    python3 ctypes_probe.py LIBRARY
"""
import ctypes
import sys


def main(path):
    try:
        library = ctypes.CDLL(path)
    except OSError as error:
        print(f"ctypes.CDLL failed: {error}")
        return 1
    version = library._ZN8cudacore7versionEv
    version.restype = ctypes.c_char_p
    version.argtypes = []
    # void cudacore::detail::driver_log_callback(void*, CUlogLevel, char*, std::size_t) noexcept
    callback = library._ZN8cudacore6detail19driver_log_callbackEPv15CUlogLevel_enumPcm
    callback.restype = None
    callback.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
    # void cudacore::detail::discard_driver_log() noexcept
    discard = library._ZN8cudacore6detail18discard_driver_logEv
    discard.restype = None
    line = b"a line from Python"
    callback(None, 0, line, len(line))
    discard()
    print(f"loaded: {version().decode()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
