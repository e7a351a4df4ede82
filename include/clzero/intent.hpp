// SPDX-License-Identifier: Apache-2.0
// Intent (which way data crosses) and Access (what a kernel does with it).
#pragma once

namespace clzero {

/// Which way the tensor's data crosses between host and device. Fixed at
/// construction; it decides the map flags and which host views are allowed.
enum class Intent {
  /// The device writes, the host reads (read_view). An inference's output.
  output,
  /// The host writes, the device reads (write_view). The host overwrites every
  /// element before each device access: a write view starts with unspecified
  /// contents (CL_MAP_WRITE_INVALIDATE_REGION, OpenCL 1.2 section 5.4.2).
  input,
  /// Both ways: the host reads and writes, kernels read and write.
  inout,
};

/// What the kernels of one device access do with the tensor. The spec
/// (clEnqueueMapBuffer, OpenCL 3.0 section 5.4.3) lets a region mapped for
/// reading stay mapped while kernels only read it; any write needs it unmapped.
enum class Access {
  read,        ///< kernels only read the tensor
  write,       ///< kernels only write it (they may leave elements unwritten)
  read_write,  ///< kernels read and write it
};

/// The access a device access has when none is named: what the intent implies.
constexpr Access default_access(Intent intent) noexcept {
  return intent == Intent::output ? Access::write : intent == Intent::input ? Access::read : Access::read_write;
}

/// The intent's name ("output", "input", "inout"), for messages.
constexpr const char* to_string(Intent intent) noexcept {
  return intent == Intent::output ? "output" : intent == Intent::input ? "input" : "inout";
}

/// The access's name ("read", "write", "read_write"), for messages.
constexpr const char* to_string(Access access) noexcept {
  return access == Access::read ? "read" : access == Access::write ? "write" : "read_write";
}

/// Whether the host reads the tensor (read_view() allowed): output and inout.
constexpr bool host_reads(Intent intent) noexcept { return intent != Intent::input; }
/// Whether the host writes the tensor (write_view() allowed): input and inout.
constexpr bool host_writes(Intent intent) noexcept { return intent != Intent::output; }
/// Whether kernels write the tensor: then a mapping for reading cannot stay (see Access).
constexpr bool device_writes(Access access) noexcept { return access != Access::read; }

}  // namespace clzero
