// SPDX-License-Identifier: Apache-2.0
// Engine-shaped benchmarks: TensorArena against separate tensors, TensorRing
// against the serialized loop (pipeline.cpp).
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "inference.hpp"

namespace clzero_bench {

/// Registers one benchmark: its name, its inference and its size in bytes.
using Register = std::function<void(const std::string& name, InferenceFactory make, std::size_t bytes)>;

/// Registers arena/one_map.*, arena/separate.*, pipeline/serial.* and
/// pipeline/ring*.* at 4 KiB, 256 KiB and 4 MiB.
void register_pipeline_benchmarks(const Register& add);

}  // namespace clzero_bench
