// SPDX-License-Identifier: Apache-2.0
// ShadowMemory: the host copy a shadow map hands out instead of the
// implementation's pointer, as a driver may do for CL_MEM_ALLOC_HOST_PTR
// (NVIDIA returns a new pointer from map to map). Its pages are inaccessible
// until the map's completion has been observed, read-only for CL_MAP_READ,
// and inaccessible again after the unmap, so a use outside the mapping
// faults at once instead of reading stale data.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <deque>
#include <utility>

namespace clzero_fault {

class ShadowMemory {
 public:
  ShadowMemory() = default;
  explicit ShadowMemory(std::size_t bytes) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    length_ = (bytes + page - 1) / page * page;
    void* p = mmap(nullptr, length_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    data_ = p == MAP_FAILED ? nullptr : p;
  }
  ShadowMemory(ShadowMemory&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), length_(std::exchange(o.length_, 0)) {}
  ShadowMemory& operator=(ShadowMemory&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(length_, o.length_);
    return *this;
  }
  ShadowMemory(const ShadowMemory&) = delete;
  ShadowMemory& operator=(const ShadowMemory&) = delete;
  ~ShadowMemory() {
    if (data_ != nullptr) munmap(data_, length_);
  }

  void* data() const { return data_; }
  std::size_t length() const { return length_; }
  explicit operator bool() const { return data_ != nullptr; }
  void protect(int prot) const {
    if (data_ != nullptr) mprotect(data_, length_, prot);
  }

 private:
  void* data_ = nullptr;
  std::size_t length_ = 0;
};

/// Unmapped shadows stay reserved and inaccessible for a while, so that a
/// use after unmap hits a protected page rather than memory reused since.
class Quarantine {
 public:
  void add(ShadowMemory shadow) {
    shadow.protect(PROT_NONE);
    bytes_ += shadow.length();
    kept_.push_back(std::move(shadow));
    while (kept_.size() > 256 || bytes_ > (std::size_t{64} << 20)) {
      bytes_ -= kept_.front().length();
      kept_.pop_front();
    }
  }

 private:
  std::deque<ShadowMemory> kept_;
  std::size_t bytes_ = 0;
};

}  // namespace clzero_fault
