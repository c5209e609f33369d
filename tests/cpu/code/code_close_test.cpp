// close() on the code layer's objects (Program, Linker, ObjectCode) and on a memory resource:
// what a closed object answers, the errors later calls throw (naming the call and the object),
// every copy closed with it, what it leaves alone (code made before, a cache's entry), and
// closing twice. No GPU needed; tests/support/owning_contract.hpp covers the rest.
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/linker.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/memory_resource.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"

#include <optional>
#include <string>

namespace {

using namespace cudacore;

// `text` holds `part` (the whole text shown when it does not).
using cudacore::test::expect_invalid;

constexpr const char* kSource = R"(extern "C" __global__ void add_one(float* data) { data[threadIdx.x] += 1.0f; })";

ProgramOptions options_named(const std::string& name) {
    ProgramOptions options;
    options.name = name;
    options.arch = "sm_90";
    return options;
}

TEST(ObjectCodeClose, ClosedCallsNameTheCallAndTheCode) {
    ObjectCode code = ObjectCode::from_ptx(std::string(".version 8.0\n"), "saxpy.ptx", {{"a", "b"}});
    EXPECT_FALSE(code.is_closed());
    code.close();
    EXPECT_TRUE(code.is_closed());
    // The queries keep what says what it was, and give up the rest.
    EXPECT_EQ(code.name(), "saxpy.ptx");
    EXPECT_EQ(code.code_type(), CodeType::ptx);
    EXPECT_TRUE(code.code().empty());
    EXPECT_TRUE(code.symbol_map().empty());
    EXPECT_FALSE(code.is_loaded());
    EXPECT_FALSE(code.handle().has_value());
    // The calls that need the value refuse before any driver call (none is needed here).
    expect_invalid([&] { code.get_kernel("add_one"); }, {"ObjectCode::get_kernel", "ptx 'saxpy.ptx' is closed"});
    expect_invalid([&] { code.serialize(); }, {"ObjectCode::serialize: ptx 'saxpy.ptx' is closed"});
    expect_invalid([&] { code.load(); }, {"ObjectCode::load"});
    expect_invalid([&] { code.library_handle(); }, {"ObjectCode::library_handle"});
    expect_invalid([&] { code.get_global("x"); }, {"ObjectCode::get_global"});
    expect_invalid([&] { code.lowered_name("a"); }, {"ObjectCode::lowered_name"});
}

TEST(ObjectCodeClose, EveryCopyIsClosedAndAssigningAnOpenValueReopens) {
    const std::string bytes = ".version 8.0\n.target sm_90\n";
    ObjectCode code = ObjectCode::from_ptx(bytes, "kept.ptx");
    ObjectCode copy = code;
    ObjectCode equal_value = ObjectCode::from_ptx(bytes, "kept.ptx");  // another owner
    code.close();
    code.close();  // nothing more
    EXPECT_TRUE(copy.is_closed());
    EXPECT_TRUE(copy.code().empty());
    expect_invalid([&] { copy.serialize(); }, {"ObjectCode::serialize: ptx 'kept.ptx' is closed (ObjectCode::close was called on it or on a copy)"});
    EXPECT_EQ(code, copy);  // closed copies are one object
    EXPECT_FALSE(equal_value.is_closed());
    EXPECT_EQ(equal_value.code(), bytes);
    code = equal_value;
    EXPECT_FALSE(code.is_closed());
    EXPECT_TRUE(copy.is_closed());  // the other copies stay closed
}

// A memory cache's entry is an owner of its own: closing what was put, or what a get handed out,
// leaves the entry (and the next get) open.
TEST(ObjectCodeClose, ACachesEntrySurvivesTheCallersClose) {
    const std::string bytes = ".version 8.0\n.target sm_90\n";
    MemoryProgramCache cache;
    const CacheKey key = CacheKey::of_bytes("close test");
    ObjectCode put = ObjectCode::from_ptx(bytes, "cached.ptx");
    cache.put(key, put);
    put.close();
    std::optional<ObjectCode> first = cache.get(key);
    ASSERT_TRUE(first.has_value());
    EXPECT_FALSE(first->is_closed());
    first->close();
    std::optional<ObjectCode> second = cache.get(key);
    ASSERT_TRUE(second.has_value());
    EXPECT_FALSE(second->is_closed());
    EXPECT_EQ(second->code(), bytes);
    // A closed value is refused, naming the call and the code.
    expect_invalid([&] { cache.put(key, put); }, {"MemoryProgramCache::put: ptx 'cached.ptx' is closed"});
}

TEST(ObjectCodeClose, ALinkerRefusesAClosedInput) {
    ObjectCode code = ObjectCode::from_ptx(std::string(".version 8.0\n"), "gone.ptx");
    code.close();
    expect_invalid([&] { Linker({code}); }, {"ptx 'gone.ptx' is closed"});
}

TEST(ProgramClose, EveryCopyIsClosedAndCodeCompiledBeforeStays) {
    Program program(kSource, SourceType::cxx, options_named("add_one.cu"));
    ObjectCode ptx = program.compile(CodeType::ptx);
    Program copy = program;
    EXPECT_FALSE(std::holds_alternative<std::monostate>(copy.handle()));  // copies share it
    program.close();
    for (const Program* closed : {&program, &copy}) {
        EXPECT_TRUE(closed->is_closed());
        EXPECT_TRUE(std::holds_alternative<std::monostate>(closed->handle()));
        EXPECT_EQ(closed->source(), kSource);  // the queries keep their values
    }
    expect_invalid([&] { copy.compile(CodeType::ptx); }, {"Program::compile: program 'add_one.cu' is closed"});
    expect_invalid([&] { copy.flags(CodeType::ptx); }, {"Program::flags"});
    expect_invalid([&] { copy.backend(); }, {"Program::backend"});
    program.close();  // nothing more
    EXPECT_FALSE(ptx.is_closed());
    EXPECT_FALSE(ptx.code().empty());
}

TEST(LinkerClose, EveryCopyIsClosedAndCodeLinkedBeforeStays) {
    ObjectCode ptx = Program(kSource, SourceType::cxx, options_named("unit.cu")).compile(CodeType::ptx);
    LinkerOptions options;
    options.name = "app";
    options.arch = "sm_90";
    Linker linker({ptx}, options);
    ObjectCode cubin = linker.link();
    Linker copy = linker;
    EXPECT_FALSE(std::holds_alternative<std::monostate>(copy.handle()));
    linker.close();
    EXPECT_TRUE(linker.inputs().empty());
    for (const Linker* closed : {&linker, &copy}) {
        EXPECT_TRUE(closed->is_closed());
        EXPECT_TRUE(std::holds_alternative<std::monostate>(closed->handle()));
    }
    expect_invalid([&] { copy.link(); }, {"Linker::link: linker 'app' is closed"});
    expect_invalid([&] { copy.flags(); }, {"Linker::flags"});
    linker.close();  // nothing more
    EXPECT_FALSE(cubin.code().empty());
    EXPECT_FALSE(ptx.is_closed());  // an input is the caller's: closing the linker leaves it open
}

// A resource that hands out numbers: enough to see what close() does in the base class.
class CountingResource final : public MemoryResource {
public:
    int closes = 0;
    int frees = 0;
    bool is_device_accessible() const noexcept override { return true; }
    bool is_host_accessible() const noexcept override { return false; }
    int device_ordinal() const noexcept override { return 0; }
    std::string description() const override { return "counting resource"; }

protected:
    CUdeviceptr do_allocate(std::size_t size, CUstream) override { return 0x1000 + size; }
    void do_deallocate(CUdeviceptr, std::size_t, CUstream) override { ++frees; }
    void do_close() override { ++closes; }
};

TEST(MemoryResourceClose, RefusesNewMemoryAndStillTakesBackTheOld) {
    auto resource = std::make_shared<CountingResource>();
    const CUdeviceptr pointer = resource->allocate_pointer(16, nullptr);
    EXPECT_FALSE(resource->is_closed());
    resource->close();
    EXPECT_TRUE(resource->is_closed());
    EXPECT_EQ(resource->closes, 1);
    expect_invalid([&] { resource->allocate_pointer(16, nullptr); }, {"MemoryResource::allocate_pointer: counting resource is closed"});
    resource->deallocate_pointer(pointer, 16, nullptr);  // memory handed out before goes back
    EXPECT_EQ(resource->frees, 1);
    resource->close();  // nothing more: do_close runs once
    EXPECT_EQ(resource->closes, 1);
}

}  // namespace
