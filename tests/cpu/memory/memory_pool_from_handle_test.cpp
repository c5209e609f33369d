// A pool made elsewhere without a GPU, against a stand-in driver table: how the device the caller
// names to DeviceMemoryResource::from_handle is checked (read-write access to the pool, nothing
// changed), how a default pool is known, and that a MemoryPool never destroys its pool (its
// resource does). The owning-object contract runs over MemoryPool objects of the stand-in.
// tests/gpu/memory/memory_pool_from_handle_test.cpp takes real pools over.
#include "owning_contract.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/memory_pool.hpp"
#include "memory/memory_pool_box.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace cudacore;

// The stand-in's state: its devices, each one's access to the pool, the pool they own, the
// pools destroyed, and the context id the driver answers.
struct StandIn {
    int devices = 1;
    int owner = 0;
    CUmemoryPool default_pool_of_device_1 = nullptr;
    std::map<int, CUmemAccess_flags> access;
    bool refuse_owner = true;  // a driver that refuses the pool's own device in an access list
    std::vector<CUmemAccessDesc> access_set;
    std::vector<CUmemoryPool> destroyed;
    unsigned long long context_id = 7;
};
StandIn stand_in;

CUresult get_count(int* count) {
    *count = stand_in.devices;
    return CUDA_SUCCESS;
}
CUresult get_device(CUdevice* device, int ordinal) {
    *device = ordinal;
    return CUDA_SUCCESS;
}
CUresult default_pool(CUmemoryPool* pool, CUdevice device) {
    static int pool_of_device[8];
    *pool = device == 1 && stand_in.default_pool_of_device_1
                ? stand_in.default_pool_of_device_1
                : reinterpret_cast<CUmemoryPool>(&pool_of_device[device]);
    return CUDA_SUCCESS;
}
CUresult get_access(CUmemAccess_flags* flags, CUmemoryPool, CUmemLocation* location) {
    *flags = stand_in.access[location->id];
    return CUDA_SUCCESS;
}
CUresult set_access(CUmemoryPool, const CUmemAccessDesc* list, size_t count) {
    for (size_t i = 0; i < count; ++i) {
        if (stand_in.refuse_owner && list[i].location.id == stand_in.owner) return CUDA_ERROR_INVALID_DEVICE;
        stand_in.access_set.push_back(list[i]);
    }
    return CUDA_SUCCESS;
}
CUresult destroy(CUmemoryPool pool) {
    stand_in.destroyed.push_back(pool);
    return CUDA_SUCCESS;
}
CUresult context_id(CUcontext, unsigned long long* id) {
    *id = stand_in.context_id;
    return CUDA_SUCCESS;
}

detail::DriverApi stand_in_driver() {
    detail::DriverApi api;
    api.cuDeviceGetCount = get_count;
    api.cuDeviceGet = get_device;
    api.cuDeviceGetDefaultMemPool = default_pool;
    api.cuMemPoolGetAccess = get_access;
    api.cuMemPoolSetAccess = set_access;
    api.cuMemPoolDestroy = destroy;
    api.cuCtxGetId = context_id;
    return api;
}

// The stand-in as the loaded driver for the whole test program (releases ask driver_if_loaded).
const detail::DriverApi& loaded_stand_in() {
    static const detail::DriverApi api = stand_in_driver();
    static const bool loaded = [] {
        detail::loaded_driver.store(&api);
        return true;
    }();
    (void)loaded;
    return api;
}

CUmemoryPool fake_pool(std::uintptr_t value) { return reinterpret_cast<CUmemoryPool>(value); }

int destroyed_count(CUmemoryPool pool) {
    int count = 0;
    for (CUmemoryPool destroyed : stand_in.destroyed) count += destroyed == pool;
    return count;
}

TEST(MemoryPoolFromHandle, TheNamedDeviceMustHaveReadWriteAccessAndNothingChanges) {
    const detail::DriverApi& api = loaded_stand_in();
    stand_in = {};
    stand_in.devices = 3;
    stand_in.access = {{0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE},
                       {1, CU_MEM_ACCESS_FLAGS_PROT_READ},
                       {2, CU_MEM_ACCESS_FLAGS_PROT_NONE}};
    EXPECT_NO_THROW(detail::check_pool_device(fake_pool(0x10), 0, api, "test"));
    for (const auto& [ordinal, access] : {std::pair{1, "read-only"}, std::pair{2, "none"}}) {
        try {
            detail::check_pool_device(fake_pool(0x10), ordinal, api, "DeviceMemoryResource::from_handle");
            ADD_FAILURE() << "device " << ordinal << " was taken as the pool's";
        } catch (const InvalidArgumentError& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find("DeviceMemoryResource::from_handle: device " + std::to_string(ordinal) +
                                " is not the device of memory pool"),
                      std::string::npos) << what;
            EXPECT_NE(what.find(std::string("its access to the pool is ") + access), std::string::npos) << what;
        }
    }
    EXPECT_TRUE(stand_in.access_set.empty()) << "the check changed an access";
}

TEST(MemoryPoolFromHandle, ADefaultPoolIsKnownAsItsDevices) {
    const detail::DriverApi& api = loaded_stand_in();
    stand_in = {};
    stand_in.devices = 2;
    stand_in.default_pool_of_device_1 = fake_pool(0x20);
    EXPECT_TRUE(detail::is_default_pool_of(fake_pool(0x20), 1, api));
    EXPECT_FALSE(detail::is_default_pool_of(fake_pool(0x20), 0, api));
    EXPECT_FALSE(detail::is_default_pool_of(fake_pool(0x21), 1, api));
}

// The owning-object contract over MemoryPool objects of the stand-in's pools (a MemoryPool never
// destroys its pool: the resource it holds does, DeviceMemoryResource::from_handle's included).
struct StandInPoolTraits {
    using Object = MemoryPool;
    static bool available(std::string&) { return true; }
    static MemoryPool make() {
        loaded_stand_in();
        static std::uintptr_t next = 0x1000;
        return MemoryPool(fake_pool(next++), "stand-in memory pool", nullptr);
    }
    static void use(const MemoryPool& pool) { pool.check_usable("MemoryPool::use"); }
};

TEST(MemoryPoolFromHandle, AMemoryPoolNeverDestroysItsPool) {
    loaded_stand_in();
    stand_in = {};
    const CUmemoryPool pool = fake_pool(0x50);
    {
        MemoryPool wrapped(pool, "stand-in memory pool", nullptr);
        EXPECT_FALSE(wrapped.owns_handle());
        MemoryPool copy = wrapped;
        wrapped.close();
        EXPECT_TRUE(copy.is_closed());
    }
    EXPECT_EQ(destroyed_count(pool), 0);
}

}  // namespace

namespace cudacore::test {
INSTANTIATE_TYPED_TEST_SUITE_P(CpuMemoryPool, OwningContract, ::testing::Types<StandInPoolTraits>);
INSTANTIATE_TYPED_TEST_SUITE_P(CpuMemoryPool, OwningEquality, ::testing::Types<StandInPoolTraits>);
}  // namespace cudacore::test
