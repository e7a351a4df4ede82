// SPDX-License-Identifier: Apache-2.0
// TensorRing: K tensors used in turn, so the host reads the output of
// inference i while the device already computes inference i+1.
//
// With Persistent (and CopyToPinned, Svm, UnifiedHost) the host side of
// inference i is enqueued right after its kernels, before the kernels of
// inference i+1, so a view of slot i waits for those only and the device
// keeps working meanwhile: a slot never defers its map to the view, even on
// devices where a lone tensor does (detail/wait_method.hpp). MapPerInference
// cannot overlap: its view's map joins the queue after inference i+1.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <string>
#include <vector>

#include "clzero/error.hpp"
#include "clzero/intent.hpp"
#include "clzero/mapped_tensor.hpp"
#include "clzero/shape.hpp"

namespace clzero {

/// `slots` tensors of one shape used in turn (ring[inference]), so that the host
/// reads inference i while the device computes inference i + 1. Each slot is a
/// MappedTensor and follows its rules on its own. Movable, not copyable.
template <class T, class Policy = policy::Auto>
class TensorRing {
 public:
  /// The type of one slot.
  using Tensor = MappedTensor<T, Policy>;
  /// The policy's options, given to every slot.
  using Options = typename Policy::Options;

  /// `slots` tensors of `shape`, all allocated now (K >= 2 to overlap).
  TensorRing(cl_context context, cl_command_queue queue, const Shape& shape, Intent intent, std::size_t slots,
             const Options& options = Options{}) {
    if (slots == 0)
      detail::raise_invalid("TensorRing: constructing",
                            "a ring needs at least one slot; use 2 or more to overlap inferences");
    tensors_.reserve(slots);
    for (std::size_t i = 0; i < slots; ++i)
      tensors_.push_back(Tensor(Tensor::Slot::in_ring, context, queue, shape, intent, options));
  }

  /// The number of slots.
  std::size_t slots() const noexcept { return tensors_.size(); }

  /// The tensor of inference `inference` (slot inference mod K). Throws
  /// clzero::Error (misuse) on a moved-from ring, which holds no slots.
  Tensor& operator[](std::size_t inference) { return tensors_[slot(inference)]; }
  /// The same, read-only.
  const Tensor& operator[](std::size_t inference) const { return tensors_[slot(inference)]; }

 private:
  std::size_t slot(std::size_t inference) const {
    if (tensors_.empty())
      detail::raise_misuse("TensorRing::operator[]",
                           "the ring is moved-from and holds no slots; use the ring it was moved to");
    return inference % tensors_.size();
  }

  std::vector<Tensor> tensors_;
};

}  // namespace clzero
