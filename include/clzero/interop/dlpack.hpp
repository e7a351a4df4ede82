// SPDX-License-Identifier: Apache-2.0
// Optional DLPack interop: lend a host view to a framework that takes
// DLPack tensors (PyTorch, TVM, NumPy through its C API, ...) without a copy.
//
// The DLManagedTensor owns the HostView it was made from: while the borrower
// holds it, the tensor stays host-owned and cannot go to the device (a
// device_access() throws); its deleter ends the view. That is DLPack's
// borrowing contract ("when the borrowing framework doesn't need the tensor,
// it should call the deleter") mapped onto clzero's ownership rule.
//
// Include <dlpack/dlpack.h> your way first, or let this header include it.
// Works with DLPack 0.6 (Debian 12's libdlpack-dev) and later; bool needs
// 0.8, the versioned tensor (with its read-only flag) needs 1.0.
#pragma once

#include <dlpack/dlpack.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "clzero/error.hpp"
#include "clzero/host_view.hpp"
#include "clzero/shape.hpp"

/// 1 when the included dlpack.h has kDLBool (DLPack 0.8 and later), else 0.
#if defined(DLPACK_MAJOR_VERSION) || (defined(DLPACK_VERSION) && DLPACK_VERSION >= 80)
#define CLZERO_INTEROP_DLPACK_HAS_BOOL 1
#else
#define CLZERO_INTEROP_DLPACK_HAS_BOOL 0
#endif

/// 1 when the included dlpack.h has DLManagedTensorVersioned (DLPack 1.0 and later),
/// so that to_dlpack_versioned() exists; else 0.
#if defined(DLPACK_MAJOR_VERSION) && DLPACK_MAJOR_VERSION >= 1
#define CLZERO_INTEROP_DLPACK_HAS_VERSIONED 1
#else
#define CLZERO_INTEROP_DLPACK_HAS_VERSIONED 0
#endif

namespace clzero {
namespace interop {

/// How the exported DLTensor describes its layout. Both describe the same
/// compact row-major storage; DLPack 0.6 accepts null for it, later DLPack
/// versions ask for explicit strides, which is why they are the default.
enum class DLPackStrides {
  row_major,  ///< strides[] filled in elements, outermost first (always valid)
  null,       ///< strides == nullptr: "compact and row-major" in DLPack 0.x
};

namespace detail {

#if CLZERO_INTEROP_DLPACK_HAS_BOOL
constexpr std::uint8_t kDLPackBoolCode = kDLBool;
#else
constexpr std::uint8_t kDLPackBoolCode = 0xFF;  // never used: DLPackType<bool> does not compile
#endif

template <class T>
struct DLPackType {
  static_assert(!std::is_same<T, bool>::value || CLZERO_INTEROP_DLPACK_HAS_BOOL,
                "DLPack has kDLBool from version 0.8 on; this dlpack.h is older");
  // long double has no portable DLPack encoding: its size differs by ABI.
  static_assert(std::is_arithmetic<T>::value && !std::is_same<T, long double>::value,
                "clzero::interop::dlpack_dtype<T>: DLPack has no type code for this T; pass a DLDataType");
  static constexpr std::uint8_t code = std::is_same<T, bool>::value ? kDLPackBoolCode
                                       : std::is_floating_point<T>::value
                                           ? static_cast<std::uint8_t>(kDLFloat)
                                           : static_cast<std::uint8_t>(std::is_signed<T>::value ? kDLInt : kDLUInt);
};

template <class F>
struct DLPackType<std::complex<F>> {
  static constexpr std::uint8_t code = static_cast<std::uint8_t>(kDLComplex);
};

/// What manager_ctx points at: a type-erased owner, so that one extern "C"
/// deleter serves every element type.
struct DLPackOwner {
  virtual ~DLPackOwner() = default;
};

template <class T, class Managed>
struct DLPackHolder final : DLPackOwner {
  explicit DLPackHolder(HostView<T>&& v) noexcept : view(std::move(v)) {}
  HostView<T> view;
  std::int64_t shape[Shape::max_rank] = {};
  std::int64_t strides[Shape::max_rank] = {};
  Managed managed{};
};

inline void check_dtype(const DLDataType& dtype, std::size_t element_bytes) {
  const std::size_t bits = static_cast<std::size_t>(dtype.bits) * dtype.lanes;
  if (dtype.lanes == 0 || bits != element_bytes * 8)
    clzero::detail::raise_invalid("interop::to_dlpack",
                                  "the DLDataType describes " + std::to_string(bits) + "-bit elements (bits " +
                                      std::to_string(dtype.bits) + " x lanes " + std::to_string(dtype.lanes) +
                                      ") but the view's elements have " + std::to_string(element_bytes * 8) + " bits");
}

template <class Managed, class T>
Managed* export_view(HostView<T>&& view, const DLDataType& dtype, DLPackStrides strides, void (*deleter)(Managed*)) {
  if (!view)
    clzero::detail::raise_invalid("interop::to_dlpack", "the view has ended (or was moved from); export a live view");
  check_dtype(dtype, sizeof(T));
  // Allocated before the view is moved in: if this throws, the caller keeps
  // a live view.
  auto* holder = new DLPackHolder<T, Managed>(std::move(view));
  const Shape& shape = holder->view.shape();
  std::int64_t stride = 1;
  for (std::size_t axis = shape.rank(); axis-- > 0;) {
    holder->shape[axis] = static_cast<std::int64_t>(shape[axis]);
    holder->strides[axis] = stride;
    stride *= static_cast<std::int64_t>(shape[axis]);
  }
  DLTensor& t = holder->managed.dl_tensor;
  // DLPack asks for data aligned to 256 bytes and byte_offset for the rest;
  // its own header notes that CPU producers pass byte_offset 0 and that
  // consumers must not rely on the alignment, as clzero does here.
  t.data = const_cast<std::remove_const_t<T>*>(holder->view.data());
  t.device.device_type = kDLCPU;
  t.device.device_id = 0;
  t.ndim = static_cast<decltype(t.ndim)>(shape.rank());
  t.dtype = dtype;
  t.shape = holder->shape;
  t.strides = strides == DLPackStrides::row_major ? holder->strides : nullptr;
  t.byte_offset = 0;
  holder->managed.manager_ctx = static_cast<DLPackOwner*>(holder);
  holder->managed.deleter = deleter;
  return &holder->managed;
}

}  // namespace detail
}  // namespace interop
}  // namespace clzero

// The deleters are plain C functions: DLPack's deleter member has C language
// linkage, and a C++ function (a template included) must not be stored there.
/// The deleter of the tensors to_dlpack() makes: ends the view it owns.
/// Call it through the tensor (m->deleter(m)), as DLPack asks.
extern "C" inline void clzero_interop_dlpack_delete(DLManagedTensor* self) {
  if (self != nullptr) delete static_cast<clzero::interop::detail::DLPackOwner*>(self->manager_ctx);
}
#if CLZERO_INTEROP_DLPACK_HAS_VERSIONED
/// The deleter of the tensors to_dlpack_versioned() makes: ends the view it owns.
extern "C" inline void clzero_interop_dlpack_delete_versioned(DLManagedTensorVersioned* self) {
  if (self != nullptr) delete static_cast<clzero::interop::detail::DLPackOwner*>(self->manager_ctx);
}
#endif

namespace clzero {
namespace interop {

/// The DLPack data type of T: kDLFloat, kDLInt, kDLUInt, kDLComplex or
/// (DLPack 0.8+) kDLBool, with bits = 8 * sizeof(T) and one lane. Types
/// DLPack cannot name from T alone (cl_half, bfloat16 in a uint16_t) take an
/// explicit DLDataType in to_dlpack().
template <class T>
constexpr DLDataType dlpack_dtype() noexcept {
  using U = std::remove_cv_t<T>;
  return DLDataType{detail::DLPackType<U>::code, static_cast<std::uint8_t>(8 * sizeof(U)), 1};
}

/// Lends `view` to a DLPack consumer: a DLManagedTensor on the CPU device
/// (kDLCPU, device 0) with the view's data, dtype, shape and strides, that
/// owns the view. Call its deleter to end the view; until then the tensor
/// stays host-owned. Throws clzero::Error for an ended view or a dtype whose
/// size is not sizeof(T).
template <class T>
DLManagedTensor* to_dlpack(HostView<T>&& view, DLDataType dtype, DLPackStrides strides = DLPackStrides::row_major) {
  return detail::export_view<DLManagedTensor>(std::move(view), dtype, strides, &clzero_interop_dlpack_delete);
}

/// The same with the dtype of T (dlpack_dtype<T>()).
template <class T>
DLManagedTensor* to_dlpack(HostView<T>&& view, DLPackStrides strides = DLPackStrides::row_major) {
  return to_dlpack(std::move(view), dlpack_dtype<T>(), strides);
}

#if CLZERO_INTEROP_DLPACK_HAS_VERSIONED
/// DLPack 1.0's versioned tensor: the same, stamped with this header's
/// DLPACK_MAJOR_VERSION / MINOR, and flagged DLPACK_FLAG_BITMASK_READ_ONLY
/// for a read view (HostView<const T>).
template <class T>
DLManagedTensorVersioned* to_dlpack_versioned(HostView<T>&& view, DLDataType dtype,
                                              DLPackStrides strides = DLPackStrides::row_major) {
  DLManagedTensorVersioned* m = detail::export_view<DLManagedTensorVersioned>(std::move(view), dtype, strides,
                                                                              &clzero_interop_dlpack_delete_versioned);
  m->version.major = DLPACK_MAJOR_VERSION;
  m->version.minor = DLPACK_MINOR_VERSION;
  m->flags = std::is_const<T>::value ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
  return m;
}

/// The same with the dtype of T (dlpack_dtype<T>()).
template <class T>
DLManagedTensorVersioned* to_dlpack_versioned(HostView<T>&& view, DLPackStrides strides = DLPackStrides::row_major) {
  return to_dlpack_versioned(std::move(view), dlpack_dtype<T>(), strides);
}
#endif

}  // namespace interop
}  // namespace clzero
