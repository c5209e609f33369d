// The reset-tolerance rule (runtime/release/reset_tolerance.hpp) against a stand-in driver table: a
// context is the one cudacore noted while the driver gives the same id for it, and a context
// destroyed under us (another id, or the driver refusing the handle) is left alone. Only the
// entry point the rule calls is filled in, so no GPU and no driver are needed.
#include "runtime/release/reset_tolerance.hpp"
#include "runtime/runtime_handles.hpp"

#include <gtest/gtest.h>

using namespace cudacore;
using namespace cudacore::detail;

namespace {

// The id the stand-in driver reports for every context, and the status it answers with.
unsigned long long current_id = 7;
CUresult id_status = CUDA_SUCCESS;

CUresult fake_cu_ctx_get_id(CUcontext, unsigned long long* id) {
    if (id_status == CUDA_SUCCESS) *id = current_id;
    return id_status;
}

DriverApi stand_in_driver() {
    DriverApi api;
    api.cuCtxGetId = fake_cu_ctx_get_id;
    return api;
}

// A box for a context of the caller's (nothing to release when it goes), its id noted.
void note(ContextBox& context, const DriverApi& api) {
    context.retained = false;
    context.handle = reinterpret_cast<CUcontext>(0x1000);
    ASSERT_EQ(note_context_id(context, api), CUDA_SUCCESS);
}

// Makes `api` (null: none) the loaded driver for the scope (what driver_if_loaded returns).
class LoadedDriver {
public:
    explicit LoadedDriver(const DriverApi* api)
        : previous_(loaded_driver.exchange(api, std::memory_order_acq_rel)) {}
    ~LoadedDriver() { loaded_driver.store(previous_, std::memory_order_release); }
    LoadedDriver(const LoadedDriver&) = delete;
    LoadedDriver& operator=(const LoadedDriver&) = delete;

private:
    const DriverApi* previous_;
};

}  // namespace

TEST(ResetTolerance, AContextSurvivesWhileTheDriverGivesItTheNotedId) {
    const DriverApi api = stand_in_driver();
    current_id = 7;
    id_status = CUDA_SUCCESS;
    ContextBox context;
    note(context, api);
    EXPECT_EQ(context.id, 7u);
    EXPECT_TRUE(context_survives(context, api));
    current_id = 8;  // someone reset the device: the context there now is another
    EXPECT_FALSE(context_survives(context, api));
    current_id = 7;
    id_status = CUDA_ERROR_CONTEXT_IS_DESTROYED;  // or the driver refuses the handle
    EXPECT_FALSE(context_survives(context, api));
    id_status = CUDA_SUCCESS;
}

TEST(ResetTolerance, ShutdownStatusesAreTheEndOfAnObjectNotAFailure) {
    EXPECT_TRUE(is_shutdown_status(CUDA_ERROR_DEINITIALIZED));
    EXPECT_TRUE(is_shutdown_status(CUDA_ERROR_NOT_INITIALIZED));
    EXPECT_TRUE(is_shutdown_status(CUDA_ERROR_CONTEXT_IS_DESTROYED));
    EXPECT_FALSE(is_shutdown_status(CUDA_SUCCESS));
    EXPECT_FALSE(is_shutdown_status(CUDA_ERROR_INVALID_VALUE));
    EXPECT_FALSE(is_shutdown_status(CUDA_ERROR_INVALID_CONTEXT));
}

TEST(ResetTolerance, AReleaseHasADriverOnlyWhileItsContextSurvives) {
    const DriverApi api = stand_in_driver();
    current_id = 7;
    id_status = CUDA_SUCCESS;
    ContextBox context;
    note(context, api);
    {
        LoadedDriver loaded(&api);
        EXPECT_EQ(driver_for_release(context), &api);
        EXPECT_FALSE(context_destroyed_under_us(CUDA_ERROR_CONTEXT_IS_DESTROYED, context))
            << "the context is there: the failure is not a reset's, no retry";
        current_id = 8;  // reset under the box
        EXPECT_EQ(driver_for_release(context), nullptr) << "its handles went with the context";
        EXPECT_TRUE(context_destroyed_under_us(CUDA_ERROR_CONTEXT_IS_DESTROYED, context));
        EXPECT_FALSE(context_destroyed_under_us(CUDA_ERROR_INVALID_VALUE, context));
        current_id = 7;
    }
    LoadedDriver none(nullptr);  // no driver: nothing was made
    EXPECT_EQ(driver_for_release(context), nullptr);
    EXPECT_FALSE(context_destroyed_under_us(CUDA_ERROR_CONTEXT_IS_DESTROYED, context));
}
