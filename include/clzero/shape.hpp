// SPDX-License-Identifier: Apache-2.0
// Shape: the extents of a tensor, row-major, rank 1 to 8, held inline (no heap).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "clzero/error.hpp"

namespace clzero {
namespace detail {
/// The integer types a Shape's extents may have: every integer type but bool and the character types.
template <class E>
struct is_extent
    : std::integral_constant<bool, std::is_integral<E>::value && !std::is_same<E, bool>::value &&
                                       !std::is_same<E, char>::value && !std::is_same<E, wchar_t>::value &&
                                       !std::is_same<E, char16_t>::value && !std::is_same<E, char32_t>::value> {};
}  // namespace detail

/// The extents of a tensor, outermost first (row-major, like C arrays and
/// NCHW layouts). Rank 1 to Shape::max_rank; every extent at least 1.
class Shape {
 public:
  /// The highest rank a Shape holds inline (no heap); flatten adjacent axes for more.
  static constexpr std::size_t max_rank = 8;

  /// Shape{2, 3, 224, 224}, from extents of any integer types (std::size_t,
  /// int, int64_t, mixed), as engines keep their dimensions: no narrowing
  /// conversion, each extent is checked instead. Throws clzero::Error
  /// (ErrorKind::invalid_argument) for no extent, more than max_rank, an
  /// extent below 1 (naming the extent and its value) or one above
  /// std::size_t, and an element count that overflows.
  template <class... Extents,
            class = std::enable_if_t<(sizeof...(Extents) > 0) && (detail::is_extent<Extents>::value && ...)>>
  Shape(Extents... extents) {  // NOLINT(google-explicit-constructor): {n} converts, like the brace list it replaces
    begin_assign();
    (append(extents), ...);
    end_assign();
  }

  /// From any range of extents, e.g. a std::vector<std::size_t> or int64_t dims.
  template <class Iterator, class = std::enable_if_t<!std::is_integral<Iterator>::value>>
  Shape(Iterator first, Iterator last) {
    begin_assign();
    for (; first != last; ++first) append(*first);
    end_assign();
  }

  /// The number of axes, 1 to max_rank.
  std::size_t rank() const noexcept { return rank_; }
  /// The extent along `axis`, outermost first. Unchecked.
  std::size_t operator[](std::size_t axis) const noexcept { return extents_[axis]; }
  /// The extents as a range, outermost first.
  const std::size_t* begin() const noexcept { return extents_.data(); }
  /// The end of the extents' range.
  const std::size_t* end() const noexcept { return extents_.data() + rank_; }

  /// The number of elements: the product of the extents, checked for overflow
  /// when the shape was built.
  std::size_t elements() const noexcept { return elements_; }

  /// "[2, 3, 4]", for messages.
  std::string to_string() const {
    std::string s = "[";
    for (std::size_t i = 0; i < rank_; ++i) s += (i ? ", " : "") + std::to_string(extents_[i]);
    return s + "]";
  }

  /// Equal when the ranks and every extent match.
  friend bool operator==(const Shape& a, const Shape& b) noexcept {
    if (a.rank_ != b.rank_) return false;
    for (std::size_t i = 0; i < a.rank_; ++i)
      if (a.extents_[i] != b.extents_[i]) return false;
    return true;
  }
  /// Not equal: a rank or an extent differs.
  friend bool operator!=(const Shape& a, const Shape& b) noexcept { return !(a == b); }

 private:
  static constexpr const char* doing = "Shape: building a tensor shape";

  void begin_assign() noexcept {
    rank_ = 0;
    elements_ = 1;
  }

  template <class E>
  void append(E extent) {
    static_assert(detail::is_extent<E>::value, "a Shape's extents are integers (not bool or char)");
    if (rank_ == max_rank)
      detail::raise_invalid(
          doing, "rank above " + std::to_string(max_rank) + " is not supported; flatten adjacent axes into one");
    if (extent <= 0)
      detail::raise_invalid(
          doing, "extent " + std::to_string(rank_) + " is " + std::to_string(extent) +
                     "; a tensor needs at least one element along every axis; give every axis an extent of 1 or more");
    // Positive here, so the unsigned comparison below is exact for any width.
    if (static_cast<std::uintmax_t>(extent) > std::numeric_limits<std::size_t>::max())
      detail::raise_invalid(doing, "extent " + std::to_string(rank_) + " is " + std::to_string(extent) +
                                       ", above the largest std::size_t; split the tensor into smaller ones");
    const auto e = static_cast<std::size_t>(extent);
    if (elements_ > std::numeric_limits<std::size_t>::max() / e)
      detail::raise_invalid(doing, "the element count overflows std::size_t at extent " + std::to_string(rank_) +
                                       "; split the tensor into smaller ones");
    elements_ *= e;
    extents_[rank_++] = e;
  }

  void end_assign() const {
    if (rank_ == 0)
      detail::raise_invalid(doing, "a shape needs rank 1 or more (zero elements); give at least one extent, e.g. {1}");
  }

  std::array<std::size_t, max_rank> extents_{};
  std::size_t rank_ = 0;
  std::size_t elements_ = 0;
};

}  // namespace clzero
