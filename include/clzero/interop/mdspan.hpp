// SPDX-License-Identifier: Apache-2.0
// Optional mdspan interop: a std::mdspan (C++23) over a host view, for code
// that indexes tensors as view[n, c, h, w] or hands them to std::linalg.
//
// Compiled only where the standard library has <mdspan> (__cpp_lib_mdspan),
// e.g. libstdc++ 15 or libc++ 17 with -std=c++23. Elsewhere (g++ 12 and
// clang 14 with libstdc++ 12, Debian 12's compilers, among them)
// the header is harmless and CLZERO_INTEROP_HAS_MDSPAN is 0; HostView's own
// operator()(n, c, h, w) gives checked multi-index access everywhere.
#pragma once

#if defined(__has_include)
#if __has_include(<version>)
#include <version>
#endif
#if __has_include(<mdspan>) && defined(__cpp_lib_mdspan)
#include <mdspan>
#endif
#endif

/// 1 where the standard library has std::mdspan and interop::to_mdspan exists, else 0.
#if defined(__cpp_lib_mdspan) && __cpp_lib_mdspan >= 202207L
#define CLZERO_INTEROP_HAS_MDSPAN 1
#else
#define CLZERO_INTEROP_HAS_MDSPAN 0
#endif

#include "clzero/host_view.hpp"

#if CLZERO_INTEROP_HAS_MDSPAN

#include <array>
#include <cstddef>
#include <string>

#include "clzero/error.hpp"
#include "clzero/shape.hpp"

namespace clzero {
namespace interop {

/// A row-major std::mdspan over `view`'s elements with extents `Extents`
/// (static, dynamic or mixed). Every extent is checked against the view's
/// shape; throws clzero::Error on a rank or extent mismatch or an ended view.
/// Like std::span, it does not own the view: use it only while the view lives.
template <class Extents, class T>
std::mdspan<T, Extents, std::layout_right> to_mdspan(const HostView<T>& view) {
  constexpr const char* doing = "interop::to_mdspan";
  if (!view) clzero::detail::raise_invalid(doing, "the view has ended (or was moved from)");
  const Shape& shape = view.shape();
  if (shape.rank() != Extents::rank())
    clzero::detail::raise_invalid(
        doing, "an mdspan of rank " + std::to_string(Extents::rank()) + " over a tensor of shape " + shape.to_string());
  std::array<typename Extents::index_type, Extents::rank()> extents{};
  for (std::size_t axis = 0; axis < Extents::rank(); ++axis) {
    const std::size_t want = Extents::static_extent(axis);
    if (want != std::dynamic_extent && want != shape[axis])
      clzero::detail::raise_invalid(doing, "static extent " + std::to_string(want) + " along axis " +
                                               std::to_string(axis) + " does not match shape " + shape.to_string());
    extents[axis] = static_cast<typename Extents::index_type>(shape[axis]);
  }
  return std::mdspan<T, Extents, std::layout_right>(view.data(), Extents(extents));
}

/// The same with all extents dynamic: to_mdspan<4>(view) for an NCHW tensor.
template <std::size_t Rank, class T>
std::mdspan<T, std::dextents<std::size_t, Rank>, std::layout_right> to_mdspan(const HostView<T>& view) {
  return to_mdspan<std::dextents<std::size_t, Rank>>(view);
}

}  // namespace interop
}  // namespace clzero

#endif  // CLZERO_INTEROP_HAS_MDSPAN
