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
    CudaArray array;  // held: the surface writes it
    int ordinal = 0;
    LaunchStreams uses;
    explicit SurfaceBox(CudaArray written) : array(std::move(written)) {}
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
                           std::shared_ptr<ArrayBox>(detail::box_of(array)));
    }
    SurfaceBox(const SurfaceBox&) = delete;
    SurfaceBox& operator=(const SurfaceBox&) = delete;
};

}  // namespace detail

SurfaceObject::SurfaceObject(std::shared_ptr<detail::SurfaceBox> box) noexcept
    : box_(std::move(box)) {}

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
    return SurfaceObject(std::move(box));
}

CUsurfObject SurfaceObject::handle() const noexcept { return box_ ? box_->handle : 0; }

const CudaArray& SurfaceObject::array() const noexcept {
    static const CudaArray none =
        detail::BoxAccess::make<CudaArray>(std::shared_ptr<detail::ArrayBox>{});
    return box_ ? box_->array : none;
}

std::string SurfaceObject::description() const {
    if (!box_) return closed_as_.empty() ? "moved-from SurfaceObject" : closed_as_ + " (closed)";
    return "surface object " + std::to_string(box_->handle) + " over " + box_->array.description();
}

void SurfaceObject::note_launch(const Stream& stream) const {
    if (box_ && detail::box_of(stream)) box_->uses.note(detail::box_of(stream));
}


void SurfaceObject::close() {
    if (!box_ || is_closed()) return;  // moved from, or closed
    closed_as_ = description();
    detail::release_share(box_);
}

const std::shared_ptr<detail::SurfaceBox>& SurfaceObject::open_box(const char* operation) const {
    if (box_) [[likely]] return box_;
    if (closed_as_.empty()) detail::throw_moved_from(operation, "SurfaceObject", "surface");
    detail::throw_closed_object(operation, closed_as_, "SurfaceObject");
}

void detail::throw_unusable_argument(const char* call, const SurfaceObject& object) {
    detail::open_box_of(object, call);
    throw InvalidArgumentError(std::string(call) + ": an unusable SurfaceObject");
}

}  // namespace cudacore
