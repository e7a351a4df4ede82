// SPDX-License-Identifier: Apache-2.0
// ObjectCounts: the references the application holds to OpenCL objects of
// one kind, from the calls that create, retain and release them. An object
// the application made before the layer saw it is simply not counted.
#pragma once

#include <unordered_map>

namespace clzero_fault {

class ObjectCounts {
 public:
  void created(const void* handle) {
    if (handle != nullptr) refs_[handle] = 1;  // a handle may be reused once freed
  }
  void retained(const void* handle) {
    auto it = refs_.find(handle);
    if (it != refs_.end()) ++it->second;
  }
  void released(const void* handle) {
    auto it = refs_.find(handle);
    if (it != refs_.end() && --it->second <= 0) refs_.erase(it);
  }
  bool known(const void* handle) const { return refs_.count(handle) != 0; }
  /// Whether a release now drops the application's last reference.
  bool last_reference(const void* handle) const {
    auto it = refs_.find(handle);
    return it != refs_.end() && it->second == 1;
  }
  long live() const { return static_cast<long>(refs_.size()); }

 private:
  std::unordered_map<const void*, long> refs_;
};

}  // namespace clzero_fault
