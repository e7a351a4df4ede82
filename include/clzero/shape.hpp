// SPDX-License-Identifier: Apache-2.0
// Shape: the extents of a tensor, row-major, rank 1 to 8, held inline (no heap).
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <string>

#include "clzero/error.hpp"

namespace clzero {

/// The extents of a tensor, outermost first (row-major, like C arrays and
/// NCHW layouts). Rank 1 to Shape::max_rank; every extent at least 1.
class Shape {
 public:
  /// The highest rank a Shape holds inline (no heap); flatten adjacent axes for more.
  static constexpr std::size_t max_rank = 8;

  /// Shape{2, 3, 224, 224}. Throws clzero::Error (ErrorKind::invalid_argument) for no
  /// extent, more than max_rank, an extent below 1 or an element count that overflows.
  Shape(std::initializer_list<std::size_t> extents) { assign(extents.begin(), extents.end()); }

  /// From any range of extents, e.g. a std::vector<std::size_t> or int64_t dims.
  template <class Iterator>
  Shape(Iterator first, Iterator last) {
    assign(first, last);
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
  template <class Iterator>
  void assign(Iterator first, Iterator last) {
    constexpr const char* doing = "building a tensor Shape";
    rank_ = 0;
    elements_ = 1;
    for (; first != last; ++first) {
      if (rank_ == max_rank)
        detail::raise_invalid(
            doing, "rank above " + std::to_string(max_rank) + " is not supported; flatten adjacent axes into one");
      const auto extent = *first;
      if (extent <= 0)
        detail::raise_invalid(
            doing,
            "extent " + std::to_string(rank_) + " is " + std::to_string(extent) +
                "; a tensor needs at least one element along every axis; give every axis an extent of 1 or more");
      const auto e = static_cast<std::size_t>(extent);
      if (elements_ > std::numeric_limits<std::size_t>::max() / e)
        detail::raise_invalid(doing, "the element count overflows std::size_t at extent " + std::to_string(rank_) +
                                         "; split the tensor into smaller ones");
      elements_ *= e;
      extents_[rank_++] = e;
    }
    if (rank_ == 0)
      detail::raise_invalid(doing, "a shape needs rank 1 or more (zero elements); give at least one extent, e.g. {1}");
  }

  std::array<std::size_t, max_rank> extents_{};
  std::size_t rank_ = 0;
  std::size_t elements_ = 0;
};

}  // namespace clzero
