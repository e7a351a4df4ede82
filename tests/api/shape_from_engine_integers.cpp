// SPDX-License-Identifier: Apache-2.0
// Engines keep dimensions as int and int64_t: Shape takes them as they are,
// with no narrowing, under -Werror -Wconversion -Wsign-conversion (built in
// the default build: a warning here fails it).
#define CL_TARGET_OPENCL_VERSION 300
#include <clzero/clzero.hpp>

#include <cstdint>
#include <vector>

clzero::Shape nchw(int batch, int channels, std::int64_t height, std::int64_t width) {
  return clzero::Shape{batch, channels, height, width};
}
clzero::Shape flat(int count) { return {count}; }
clzero::Shape mixed(std::size_t rows, std::int32_t columns) { return {rows, columns}; }
clzero::Shape from_dims(const std::vector<std::int64_t>& dims) { return clzero::Shape(dims.begin(), dims.end()); }
clzero::MappedTensor<float> logits(cl_command_queue queue, int classes) {
  return clzero::MappedTensor<float>(queue, {1, classes}, clzero::Intent::output);
}
clzero::ArenaPart boxes(std::int64_t batch) { return clzero::ArenaPart::of<float>({batch, 4}); }
