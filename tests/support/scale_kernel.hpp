// The kernel helper_serialized_launch launches and checks (data[i] * 3 + 1 for float): tests that
// hand it code compile this source, so the helper's check holds for what they ship.
#pragma once

namespace cudacore::test {

inline constexpr const char* kScaleSource = R"(
template <typename T>
__global__ void scale(T* data, T factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = data[i] * factor + T(1);
}
)";

}  // namespace cudacore::test
