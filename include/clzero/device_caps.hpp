// SPDX-License-Identifier: Apache-2.0
// DeviceCaps: what a device offers for moving tensors between host and device
// without copies: SVM kinds, unified memory, vendor host-memory extensions.
#pragma once

#include <CL/cl.h>

#include <cstring>
#include <string>
#include <vector>

#include "clzero/detail/extensions.hpp"
#include "clzero/error.hpp"

namespace clzero {

/// A snapshot of one device's properties that matter for zero copy. Built by
/// DeviceCaps::query (clGetDeviceInfo / clGetPlatformInfo); plain data after that.
struct DeviceCaps {
  /// The device queried.
  cl_device_id device = nullptr;
  /// Its platform (CL_DEVICE_PLATFORM).
  cl_platform_id platform = nullptr;
  /// CL_DEVICE_NAME, for messages and logs.
  std::string name, vendor, device_version, driver_version, platform_name, platform_version;
  /// \var vendor
  /// CL_DEVICE_VENDOR.
  /// \var device_version
  /// CL_DEVICE_VERSION ("OpenCL 3.0 ..."), which opencl_major and opencl_minor come from.
  /// \var driver_version
  /// CL_DRIVER_VERSION, for messages and bug reports.
  /// \var platform_name
  /// The platform's CL_PLATFORM_NAME.
  /// \var platform_version
  /// The platform's CL_PLATFORM_VERSION.

  unsigned opencl_major = 1, opencl_minor = 0;  ///< from CL_DEVICE_VERSION ("OpenCL 3.0 ...")
  /// \var opencl_major
  /// The major OpenCL version, from CL_DEVICE_VERSION ("OpenCL 3.0 ..."); SVM needs 2 or more.

  /// CL_DEVICE_TYPE bits; see is_cpu() and is_gpu().
  cl_device_type type = 0;
  cl_ulong max_mem_alloc_size = 0;       ///< CL_DEVICE_MAX_MEM_ALLOC_SIZE, the largest one buffer
  cl_ulong global_mem_size = 0;          ///< CL_DEVICE_GLOBAL_MEM_SIZE
  cl_uint mem_base_addr_align_bits = 0;  ///< CL_DEVICE_MEM_BASE_ADDR_ALIGN, in bits (sub-buffer offsets)
  bool host_unified_memory = false;      ///< CL_DEVICE_HOST_UNIFIED_MEMORY: device and host share memory
  bool out_of_order_queue = false;       ///< the device supports out-of-order host queues
  bool svm_coarse_grain_buffer = false;  ///< CL_DEVICE_SVM_CAPABILITIES bits (OpenCL 2.0+)
  /// CL_DEVICE_SVM_FINE_GRAIN_BUFFER: buffers shared without maps (policy::Svm's fine grain).
  bool svm_fine_grain_buffer = false;
  /// CL_DEVICE_SVM_FINE_GRAIN_SYSTEM: any host allocation is shared (not used by clzero).
  bool svm_fine_grain_system = false;
  /// CL_DEVICE_SVM_ATOMICS: atomics visible across host and device (not used by clzero).
  bool svm_atomics = false;
  bool nv_create_buffer = false;   ///< cl_nv_create_buffer: host-located pinned buffers
  bool arm_import_memory = false;  ///< cl_arm_import_memory (+ _host): import host memory
  bool qcom_ext_host_ptr = false;  ///< cl_qcom_ext_host_ptr: ION / dma-buf host memory
  bool intel_usm_host = false;     ///< cl_intel_unified_shared_memory with host allocations
  std::string extensions;          ///< the device's and platform's extension strings

  /// A CPU device (its host views poll or block as measured, detail/wait_method.hpp).
  bool is_cpu() const noexcept { return (type & CL_DEVICE_TYPE_CPU) != 0; }
  /// A GPU device (integrated or discrete; host_unified_memory tells which).
  bool is_gpu() const noexcept { return (type & CL_DEVICE_TYPE_GPU) != 0; }
  /// Whether any buffer SVM (coarse- or fine-grained) is offered, so policy::Svm can run.
  bool svm_any() const noexcept { return svm_coarse_grain_buffer || svm_fine_grain_buffer; }

  /// Whether `ext` appears as a whole word in the device's or platform's extensions.
  bool has_extension(const char* ext) const noexcept {
    const std::size_t n = std::strlen(ext);
    for (std::size_t pos = extensions.find(ext); pos != std::string::npos; pos = extensions.find(ext, pos + 1)) {
      const bool starts = pos == 0 || extensions[pos - 1] == ' ';
      const bool ends = pos + n == extensions.size() || extensions[pos + n] == ' ';
      if (starts && ends) return true;
    }
    return false;
  }

  /// Queries `device`. Throws clzero::Error if a core query fails; optional
  /// queries a device does not know (SVM on OpenCL 1.2) just read as absent.
  static DeviceCaps query(cl_device_id device) {
    constexpr const char* doing = "DeviceCaps::query: querying the device's capabilities";
    if (device == nullptr)
      detail::raise_invalid(doing, "the cl_device_id is null; pass a device from clGetDeviceIDs or the queue's");
    DeviceCaps c;
    c.device = device;
    auto info_string = [&](cl_device_info what) {
      std::size_t size = 0;
      detail::check(clGetDeviceInfo(device, what, 0, nullptr, &size), "clGetDeviceInfo", doing);
      std::string s(size, '\0');
      detail::check(clGetDeviceInfo(device, what, size, &s[0], nullptr), "clGetDeviceInfo", doing);
      while (!s.empty() && s.back() == '\0') s.pop_back();
      return s;
    };
    auto platform_string = [&](cl_platform_info what) {
      std::size_t size = 0;
      detail::check(clGetPlatformInfo(c.platform, what, 0, nullptr, &size), "clGetPlatformInfo", doing);
      std::string s(size, '\0');
      detail::check(clGetPlatformInfo(c.platform, what, size, &s[0], nullptr), "clGetPlatformInfo", doing);
      while (!s.empty() && s.back() == '\0') s.pop_back();
      return s;
    };
    auto info = [&](cl_device_info what, auto& value) {
      detail::check(clGetDeviceInfo(device, what, sizeof value, &value, nullptr), "clGetDeviceInfo", doing);
    };
    info(CL_DEVICE_PLATFORM, c.platform);
    c.name = info_string(CL_DEVICE_NAME);
    c.vendor = info_string(CL_DEVICE_VENDOR);
    c.device_version = info_string(CL_DEVICE_VERSION);
    c.driver_version = info_string(CL_DRIVER_VERSION);
    c.platform_name = platform_string(CL_PLATFORM_NAME);
    c.platform_version = platform_string(CL_PLATFORM_VERSION);
    c.extensions = info_string(CL_DEVICE_EXTENSIONS) + " " + platform_string(CL_PLATFORM_EXTENSIONS);
    parse_version(c.device_version, c.opencl_major, c.opencl_minor);
    info(CL_DEVICE_TYPE, c.type);
    info(CL_DEVICE_MAX_MEM_ALLOC_SIZE, c.max_mem_alloc_size);
    info(CL_DEVICE_GLOBAL_MEM_SIZE, c.global_mem_size);
    info(CL_DEVICE_MEM_BASE_ADDR_ALIGN, c.mem_base_addr_align_bits);
    // A query the device does not know answers CL_INVALID_VALUE and reads as
    // "absent"; any other failure is an error, never a missing feature.
    auto optional_info = [&](cl_device_info what, auto& value) {
      const cl_int rc = clGetDeviceInfo(device, what, sizeof value, &value, nullptr);
      if (rc == CL_INVALID_VALUE) return false;
      detail::check(rc, "clGetDeviceInfo", doing);
      return true;
    };
    cl_bool unified = CL_FALSE;
    // Deprecated since OpenCL 2.0 but still answered by every driver we know.
    if (optional_info(CL_DEVICE_HOST_UNIFIED_MEMORY, unified)) c.host_unified_memory = unified == CL_TRUE;
    cl_command_queue_properties queue_props = 0;
    info(CL_DEVICE_QUEUE_PROPERTIES, queue_props);
    c.out_of_order_queue = (queue_props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0;
    if (c.opencl_major >= 2) {
      cl_bitfield svm = 0;
      if (optional_info(detail::kDeviceSvmCapabilities, svm)) {
        c.svm_coarse_grain_buffer = (svm & detail::kSvmCoarseGrainBuffer) != 0;
        c.svm_fine_grain_buffer = (svm & detail::kSvmFineGrainBuffer) != 0;
        c.svm_fine_grain_system = (svm & detail::kSvmFineGrainSystem) != 0;
        c.svm_atomics = (svm & detail::kSvmAtomics) != 0;
      }
    }
    c.nv_create_buffer = c.has_extension("cl_nv_create_buffer");
    c.arm_import_memory = c.has_extension("cl_arm_import_memory");
    c.qcom_ext_host_ptr = c.has_extension("cl_qcom_ext_host_ptr");
    if (c.has_extension("cl_intel_unified_shared_memory")) {
      cl_bitfield host_caps = 0;
      if (optional_info(detail::kDeviceHostMemCapabilitiesIntel, host_caps))
        c.intel_usm_host = (host_caps & detail::kUnifiedSharedMemoryAccessIntel) != 0;
    }
    return c;
  }

 private:
  static void parse_version(const std::string& v, unsigned& major, unsigned& minor) noexcept {
    // "OpenCL <major>.<minor> <vendor-specific>" (OpenCL 3.0 section 4.2).
    const std::size_t p = v.find(' ');
    if (p == std::string::npos) return;
    unsigned mj = 0, mn = 0;
    std::size_t i = p + 1;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9') mj = mj * 10 + static_cast<unsigned>(v[i++] - '0');
    if (i < v.size() && v[i] == '.') ++i;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9') mn = mn * 10 + static_cast<unsigned>(v[i++] - '0');
    if (mj > 0) {
      major = mj;
      minor = mn;
    }
  }
};

}  // namespace clzero
