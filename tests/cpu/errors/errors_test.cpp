// Error messages name the call, the status (name and text) and the object.
#include "test_support.hpp"

#include "cudacore/compile_errors.hpp"
#include "cudacore/errors.hpp"

namespace {

using namespace cudacore;

TEST(Errors, DriverErrorNamesCallStatusAndObject) {
    DriverError error(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc", "1048576 bytes on device 0");
    const std::string message = error.what();
    EXPECT_NE(message.find("cuMemAlloc"), std::string::npos) << message;
    EXPECT_NE(message.find("CUDA_ERROR_OUT_OF_MEMORY"), std::string::npos) << message;
    EXPECT_NE(message.find("(2)"), std::string::npos) << message;
    EXPECT_NE(message.find("1048576 bytes on device 0"), std::string::npos) << message;
    EXPECT_EQ(error.status(), CUDA_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(error.status_name(), "CUDA_ERROR_OUT_OF_MEMORY");
    EXPECT_EQ(error.call(), "cuMemAlloc");
    EXPECT_FALSE(error.status_text().empty());
}

TEST(Errors, EveryDriverStatusHasItsName) {
    EXPECT_EQ(driver_status_name(CUDA_ERROR_INVALID_VALUE), "CUDA_ERROR_INVALID_VALUE");
    EXPECT_EQ(driver_status_name(CUDA_ERROR_NOT_READY), "CUDA_ERROR_NOT_READY");
    EXPECT_EQ(driver_status_name(CUDA_ERROR_DEINITIALIZED), "CUDA_ERROR_DEINITIALIZED");
    EXPECT_EQ(driver_status_name(CUDA_ERROR_UNKNOWN), "CUDA_ERROR_UNKNOWN");
    EXPECT_EQ(driver_status_name(static_cast<CUresult>(123456)), "CUresult 123456");
}

TEST(Errors, HierarchyIsCatchableAsBase) {
    try {
        throw NoDriverError("the CUDA driver", {"libcuda.so.1"}, "CUDACORE_LIBCUDA_PATH", "not found");
    } catch (const LoaderError& e) {
        EXPECT_EQ(e.env_var(), "CUDACORE_LIBCUDA_PATH");
        ASSERT_EQ(e.searched().size(), 1u);
        EXPECT_EQ(e.searched()[0], "libcuda.so.1");
        const std::string message = e.what();
        EXPECT_NE(message.find("set CUDACORE_LIBCUDA_PATH"), std::string::npos) << message;
        EXPECT_NE(message.find("searched: libcuda.so.1"), std::string::npos) << message;
    }
    EXPECT_THROW(throw InvalidArgumentError("x"), Error);
    EXPECT_THROW(throw DriverError(CUDA_ERROR_INVALID_VALUE, "cuX", ""), Error);
}

TEST(Errors, CompileErrorShowsFirstErrorLineAndKeepsLog) {
    const std::string log =
        "kernel.cu(3): warning: unused variable\n"
        "kernel.cu(7): error: expected a \";\"\n"
        "kernel.cu(9): error: identifier \"y\" is undefined\n";
    CompileError error("kernel.cu", log, {"-arch=sm_90"}, "NVRTC");
    const std::string message = error.what();
    EXPECT_NE(message.find("kernel.cu(7): error: expected a \";\""), std::string::npos) << message;
    EXPECT_EQ(message.find("identifier"), std::string::npos) << message;
    EXPECT_EQ(error.log(), log);
    EXPECT_EQ(error.program_name(), "kernel.cu");
    ASSERT_EQ(error.options().size(), 1u);
    EXPECT_EQ(error.options()[0], "-arch=sm_90");
    // Where NVRTC failed, the call and its status by name, as every other error names them.
    const std::string with_status =
        CompileError("old.cu", "nvrtc: error: invalid value for --gpu-architecture (-arch)\n", {}, "NVRTC",
                     NVRTC_ERROR_INVALID_OPTION).what();
    EXPECT_EQ(with_status, "compiling 'old.cu' failed (NVRTC; nvrtcCompileProgram: NVRTC_ERROR_INVALID_OPTION): "
                           "nvrtc: error: invalid value for --gpu-architecture (-arch)");
}

TEST(Errors, FirstErrorLineFallsBackToFirstNonEmptyLine) {
    EXPECT_EQ(first_error_line("\n  \nsomething odd\nmore\n"), "something odd");
    EXPECT_EQ(first_error_line(""), "");
    EXPECT_EQ(first_error_line("ptxas fatal   : ERROR in input\n"), "ptxas fatal   : ERROR in input");
    // nvJitLink names the status first, then the tool's own message: the message is the line.
    EXPECT_EQ(first_error_line("ERROR NVJITLINK_ERROR_PTX_COMPILE: JIT the PTX (k.ptx)\n"
                               "ptxas fatal   : SM version specified by .target is higher than default SM version assumed\n"),
              "ptxas fatal   : SM version specified by .target is higher than default SM version assumed");
    EXPECT_EQ(first_error_line("info: linking\nERROR NVJITLINK_ERROR_INTERNAL: x\n"), "ERROR NVJITLINK_ERROR_INTERNAL: x");
}

TEST(Errors, CompilerApiErrorNamesCallAndStatus) {
    CompilerApiError error("nvrtcCompileProgram", 7, "NVRTC_ERROR_INVALID_OPTION", "saxpy.cu");
    const std::string message = error.what();
    EXPECT_NE(message.find("nvrtcCompileProgram"), std::string::npos);
    EXPECT_NE(message.find("NVRTC_ERROR_INVALID_OPTION (7)"), std::string::npos) << message;
    EXPECT_NE(message.find("saxpy.cu"), std::string::npos);
}

}  // namespace
