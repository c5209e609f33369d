#include "cudacore/surface.hpp"

#include "cudacore/errors.hpp"
#include "runtime/release/release.hpp"
#include "support/box_access.hpp"
#include "errors/closed_object.hpp"
#include "views/array_box.hpp"

namespace cudacore {

namespace detail {

struct SurfaceBox {
    CUsurfObject handle = 0;
    std::shared_ptr<ContextBox> context;
    // Held: the surface writes it. The box is the hold (closing the caller's array, or the
    // object array() returns, ends their objects, not this hold); the object is what array()
    // returns, one of its own.
    std::shared_ptr<ArrayBox> array_box;
    CudaArray array;
    int ordinal = 0;
    LaunchStreams uses;
    explicit SurfaceBox(const CudaArray& written)
        : array_box(box_of(written)), array(BoxAccess::make<CudaArray>(array_box)) {}
    ~SurfaceBox() {
        std::function<void(const DriverApi&)> destroy;
        if (handle) {
            try {
                destroy = [surface = handle, ordinal = ordinal](const DriverApi& api) {
                    check_release(api.cuSurfObjectDestroy(surface), "cuSurfObjectDestroy", [&] {
                        return "surface object " + std::to_string(surface) + " on device " +
                               std::to_string(ordinal);
                    });
                };
            } catch (...) {
                return;  // out of memory: leaked to the driver
            }
        }
        // The array is dropped with the surface, after the launches that used it.
        release_after_uses(uses, context, std::move(destroy),
                           std::move(array_box));
    }
    SurfaceBox(const SurfaceBox&) = delete;
    SurfaceBox& operator=(const SurfaceBox&) = delete;
};

}  // namespace detail

SurfaceObject SurfaceObject::from_array(const CudaArray& array) {
    constexpr const char* call = "SurfaceObject::from_array";
    const auto& array_box = detail::open_box_of(array, call);
    if (!array_box->options.surface_load_store)
        throw InvalidArgumentError(std::string(call) + ": " + array.description() +
                                   " was made without ArrayOptions::surface_load_store "
                                   "(CUDA_ARRAY3D_SURFACE_LDST); a surface needs it");
    auto box = std::make_shared<detail::SurfaceBox>(array);
    box->ordinal = array_box->ordinal;
    CUDA_RESOURCE_DESC resource{};
    resource.resType = CU_RESOURCE_TYPE_ARRAY;
    resource.res.array.hArray = array_box->handle;
    detail::start_deferred_releases();  // the release may wait for launches
    {
        detail::ContextScope scope(*array_box->context);
        detail::check(detail::driver().cuSurfObjectCreate(&box->handle, &resource),
                      "cuSurfObjectCreate",
                      [&] { return "surface object over " + array.description(); });
    }
    box->context = array_box->context;
    return detail::BoxAccess::make<SurfaceObject>(std::move(box));
}

const CudaArray& SurfaceObject::array() const noexcept {
    static const CudaArray none =
        detail::BoxAccess::empty<CudaArray>();
    return box() ? box()->array : none;
}

std::string SurfaceObject::description() const {
    if (!box()) return is_closed() ? closed_description() + " (closed)" : "moved-from SurfaceObject";
    return "surface object " + std::to_string(box()->handle) + " over " + box()->array.description();
}

void SurfaceObject::note_launch(const Stream& stream) const {
    if (box() && detail::box_of(stream)) box()->uses.note(detail::box_of(stream));
}


void SurfaceObject::close() {
    if (box()) close_as(description());
}

}  // namespace cudacore
