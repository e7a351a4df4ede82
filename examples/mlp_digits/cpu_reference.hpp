// SPDX-License-Identifier: Apache-2.0
// The model on the CPU, in float like the device, from the same weights: the
// reference every device logit is checked against.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "model_files.hpp"

namespace mlp_digits {

/// The logits of one sample: each layer's x W in input order, then + b, then
/// ReLU where the layer has it (the order the device applies them in).
inline std::vector<float> reference_logits(const std::vector<Dense>& layers, const float* input) {
  std::vector<float> x(input, input + layers.front().inputs), y;
  for (const Dense& d : layers) {
    y.assign(d.outputs, 0.0f);
    for (std::size_t k = 0; k < d.inputs; ++k)
      for (std::size_t j = 0; j < d.outputs; ++j) y[j] += x[k] * d.weights[k * d.outputs + j];
    for (std::size_t j = 0; j < d.outputs; ++j) {
      y[j] += d.bias[j];
      if (d.relu) y[j] = std::max(y[j], 0.0f);
    }
    x.swap(y);
  }
  return x;
}

/// The class with the largest logit (the first one on a tie).
inline int argmax(const float* logits, std::size_t classes) {
  return static_cast<int>(std::max_element(logits, logits + classes) - logits);
}

}  // namespace mlp_digits
