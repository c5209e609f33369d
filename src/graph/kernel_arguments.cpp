// KernelArguments: a kernel's argument bytes, aligned as the kernel sees them.
#include "cudacore/kernel_arguments.hpp"

#include "cudacore/errors.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace cudacore {

void KernelArguments::append(const void* data, std::size_t size) {
    if (!data && size) throw InvalidArgumentError("KernelArguments::append: null data");
    // 16-byte aligned offsets: each argument's bytes sit as the kernel will see them aligned.
    const std::size_t offset = (bytes_.size() + 15) / 16 * 16;
    bytes_.resize(offset + size);
    if (size) std::memcpy(bytes_.data() + offset, data, size);
    offsets_.push_back(offset);
    sizes_.push_back(size);
}

void KernelArguments::check_size(std::size_t index, std::size_t expected) const {
    if (index >= sizes_.size())
        throw InvalidArgumentError("KernelArguments: argument " + std::to_string(index) +
                                   " of " + std::to_string(sizes_.size()));
    if (sizes_[index] != expected)
        throw InvalidArgumentError("KernelArguments: argument " + std::to_string(index) + " has " +
                                   std::to_string(sizes_[index]) + " bytes, not " +
                                   std::to_string(expected));
}

std::size_t KernelArguments::size(std::size_t index) const {
    if (index >= sizes_.size())
        throw InvalidArgumentError("KernelArguments::size: argument " + std::to_string(index) +
                                   " of " + std::to_string(sizes_.size()));
    return sizes_[index];
}

const void* KernelArguments::data(std::size_t index) const {
    if (index >= sizes_.size())
        throw InvalidArgumentError("KernelArguments::data: argument " + std::to_string(index) +
                                   " of " + std::to_string(sizes_.size()));
    return bytes_.data() + offsets_[index];
}

std::vector<void*> KernelArguments::pointers() const {
    std::vector<void*> out(sizes_.size());
    for (std::size_t index = 0; index < out.size(); ++index)
        out[index] = const_cast<unsigned char*>(bytes_.data() + offsets_[index]);
    return out;
}

bool KernelArguments::operator==(const KernelArguments& other) const noexcept {
    if (sizes_ != other.sizes_) return false;
    for (std::size_t index = 0; index < sizes_.size(); ++index)
        if (sizes_[index] && std::memcmp(bytes_.data() + offsets_[index],
                                         other.bytes_.data() + other.offsets_[index],
                                         sizes_[index]) != 0)
            return false;
    return true;
}

}  // namespace cudacore
