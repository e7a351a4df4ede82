// SPDX-License-Identifier: Apache-2.0
// HostView<T>: the host's window on a tensor, valid while it lives. A view
// blocks (once, when it is made) only until the data is visible on the host,
// and while any view lives the tensor cannot go to the device.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#if __cplusplus >= 202002L && __has_include(<span>)
#include <span>
#endif

#include "clzero/detail/tensor_state.hpp"
#include "clzero/error.hpp"
#include "clzero/shape.hpp"

namespace clzero {

/// A span-like view of a tensor's elements in host memory, with its shape.
/// HostView<const T> for reading (read_view), HostView<T> for writing
/// (write_view). Move-only; ending it (destruction or reset()) gives the
/// tensor back for device access. It keeps the tensor's state alive, so it
/// never dangles, even if the MappedTensor is moved or destroyed first.
template <class T>
class HostView {
 public:
  /// The element type, const for a read view (as std::span names it).
  using element_type = T;
  /// The element type without const.
  using value_type = std::remove_cv_t<T>;
  /// The type of sizes and indices.
  using size_type = std::size_t;
  /// A pointer to an element.
  using pointer = T*;
  /// A reference to an element.
  using reference = T&;
  /// A contiguous iterator: a plain pointer.
  using iterator = T*;

  /// An empty view (data() is null) that holds no tensor, to be moved into later.
  HostView() noexcept = default;
  /// Not copyable: each view counts once while the tensor is host-owned.
  HostView(const HostView&) = delete;
  /// Not copyable, as above.
  HostView& operator=(const HostView&) = delete;
  /// Moves the view; `other` is left empty and no longer counts.
  HostView(HostView&& other) noexcept
      : state_(std::move(other.state_)), data_(std::exchange(other.data_, nullptr)), shape_(other.shape_) {}
  /// Ends this view (reset()), then takes over `other`.
  HostView& operator=(HostView&& other) noexcept {
    if (this != &other) {
      reset();
      state_ = std::move(other.state_);
      data_ = std::exchange(other.data_, nullptr);
      shape_ = other.shape_;
    }
    return *this;
  }
  /// Ends the view (reset()); never throws.
  ~HostView() { reset(); }

  /// Ends the view now; data() is null afterwards.
  void reset() noexcept {
    if (!state_) return;
    data_ = nullptr;
    std::exchange(state_, nullptr)->end_view(!std::is_const<T>::value);
  }

  /// The first element, or null once the view has ended.
  T* data() const noexcept { return data_; }
  /// The number of elements (shape().elements()), 0 once the view has ended.
  std::size_t size() const noexcept { return data_ != nullptr ? shape_.elements() : 0; }
  /// size() * sizeof(T).
  std::size_t size_bytes() const noexcept { return size() * sizeof(T); }
  /// Whether size() is 0, which only an ended or empty view is (every Shape has an element).
  bool empty() const noexcept { return size() == 0; }
  /// The shape of the tensor, or of the region, the view covers.
  const Shape& shape() const noexcept { return shape_; }
  /// Whether the view is live (not ended, not moved from).
  explicit operator bool() const noexcept { return data_ != nullptr; }

  /// The first element, for range-for and algorithms.
  T* begin() const noexcept { return data_; }
  /// One past the last element.
  T* end() const noexcept { return data_ + size(); }

  /// Element `i` of the flat, row-major storage. Unchecked, like std::span.
  T& operator[](std::size_t i) const noexcept { return data_[i]; }

  /// Element `i`, checked: throws clzero::Error past the end or on an ended view.
  T& at(std::size_t i) const {
    if (data_ == nullptr) raise_ended("HostView::at");
    if (i >= size())
      detail::raise(Error(ErrorKind::invalid_argument, "HostView::at",
                          "index " + std::to_string(i) + " is past the end (" + std::to_string(size()) +
                              " elements); check the index against size()"));
    return data_[i];
  }

  /// The element at a multi-index, row-major: view(n, c, h, w). The number of
  /// indices must equal the rank; each is checked against its extent.
  template <class... Index>
  T& operator()(Index... index) const {
    static_assert(sizeof...(Index) >= 1 && (std::is_integral<Index>::value && ...), "indices must be integers");
    if (data_ == nullptr) raise_ended("HostView::operator()");
    if (sizeof...(Index) != shape_.rank())
      detail::raise(Error(ErrorKind::invalid_argument, "HostView::operator()",
                          std::to_string(sizeof...(Index)) + " indices for a tensor of rank " +
                              std::to_string(shape_.rank()) + " " + shape_.to_string() + "; pass one index per axis"));
    const std::size_t idx[] = {static_cast<std::size_t>(index)...};
    std::size_t flat = 0;
    for (std::size_t a = 0; a < sizeof...(Index); ++a) {
      if (idx[a] >= shape_[a])
        detail::raise(Error(ErrorKind::invalid_argument, "HostView::operator()",
                            "index " + std::to_string(idx[a]) + " is out of range along axis " + std::to_string(a) +
                                " of shape " + shape_.to_string() + "; check each index against shape()"));
      flat = flat * shape_[a] + idx[a];
    }
    return data_[flat];
  }

#if __cplusplus >= 202002L && __has_include(<span>)
  /// The view as a std::span. A HostView lvalue is a contiguous range, so
  /// `std::span<const float> s = view;` works through span's own constructor;
  /// a temporary view converts too (it lives to the end of the expression,
  /// e.g. `consume(tensor.read_view())`), which the range constructor refuses.
  std::span<T> span() const noexcept { return std::span<T>(data_, size()); }
  /// The conversion a temporary view needs (see span()).
  operator std::span<T>() const&& noexcept { return span(); }
#endif

  /// Made by MappedTensor only.
  HostView(std::shared_ptr<detail::TensorState> state, T* data, const Shape& shape) noexcept
      : state_(std::move(state)), data_(data), shape_(shape) {}

 private:
  // Using an ended (or moved-from, or default-constructed) view breaks the
  // ownership rule, like an ended DeviceAccess: a misuse, not a bad index.
  [[noreturn]] static void raise_ended(const char* doing) {
    detail::raise_misuse(doing, "the view has ended; open a new one with read_view() or write_view()");
  }

  std::shared_ptr<detail::TensorState> state_;
  T* data_ = nullptr;
  Shape shape_{1};
};

}  // namespace clzero
