// SPDX-License-Identifier: Apache-2.0
// The two files train.py writes: the trained layers (weights.txt) and the test
// set (test_set.txt). train.py's docstring describes both formats.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace mlp_digits {

/// One fully connected layer: y = x W + b, then ReLU if `relu`.
struct Dense {
  std::size_t inputs = 0, outputs = 0;
  bool relu = false;
  std::vector<float> weights;  ///< inputs x outputs, row-major
  std::vector<float> bias;     ///< outputs
};

struct TestSet {
  std::size_t samples = 0, features = 0;
  std::vector<float> inputs;  ///< samples x features, pixel / 16
  std::vector<int> labels;    ///< samples, 0..9
};

namespace detail {

// The file's tokens with '#' comment lines dropped, read one by one.
class Tokens {
 public:
  explicit Tokens(const std::string& path) : path_(path) {
    std::ifstream file(path);
    if (!file) throw std::runtime_error("cannot open " + path + "; pass the folder of train.py's files with --data");
    std::string line, text;
    while (std::getline(file, line))
      if (line.empty() || line[0] != '#') text += line + '\n';
    stream_.str(text);
  }

  std::string word() {
    std::string w;
    if (!(stream_ >> w)) fail("unexpected end of file");
    return w;
  }
  void expect(const std::string& w) {
    if (word() != w) fail("expected '" + w + "'");
  }
  std::size_t count() {
    const std::string w = word();
    char* end = nullptr;
    const unsigned long long v = std::strtoull(w.c_str(), &end, 10);
    if (w[0] == '-' || *end != '\0') fail("expected a count, found '" + w + "'");
    return static_cast<std::size_t>(v);
  }
  // strtof rounds correctly, so the 9 digits train.py prints give back the
  // float32 it stored, bit for bit.
  float number() {
    const std::string w = word();
    char* end = nullptr;
    const float v = std::strtof(w.c_str(), &end);
    if (*end != '\0') fail("expected a number, found '" + w + "'");
    return v;
  }
  bool at_end() {
    stream_ >> std::ws;
    return stream_.eof();
  }
  [[noreturn]] void fail(const std::string& what) const { throw std::runtime_error(path_ + ": " + what); }

 private:
  std::string path_;
  std::istringstream stream_;
};

}  // namespace detail

inline std::vector<Dense> load_layers(const std::string& path) {
  detail::Tokens t(path);
  std::vector<Dense> layers;
  while (!t.at_end()) {
    Dense d;
    t.expect("dense");
    d.inputs = t.count();
    d.outputs = t.count();
    const std::string activation = t.word();
    if (activation != "relu" && activation != "linear") t.fail("unknown activation '" + activation + "'");
    d.relu = activation == "relu";
    if (!layers.empty() && layers.back().outputs != d.inputs) t.fail("layer sizes do not chain");
    d.weights.resize(d.inputs * d.outputs);
    for (float& w : d.weights) w = t.number();
    d.bias.resize(d.outputs);
    for (float& b : d.bias) b = t.number();
    layers.push_back(std::move(d));
  }
  if (layers.empty()) t.fail("no layers");
  return layers;
}

inline TestSet load_test_set(const std::string& path) {
  detail::Tokens t(path);
  TestSet s;
  t.expect("samples");
  s.samples = t.count();
  t.expect("features");
  s.features = t.count();
  s.inputs.resize(s.samples * s.features);
  s.labels.resize(s.samples);
  for (std::size_t i = 0; i < s.samples; ++i) {
    const std::size_t label = t.count();
    if (label > 9) t.fail("label out of range");
    s.labels[i] = static_cast<int>(label);
    for (std::size_t f = 0; f < s.features; ++f) {
      const std::size_t pixel = t.count();
      if (pixel > 16) t.fail("pixel out of range");
      s.inputs[i * s.features + f] = static_cast<float>(pixel) / 16.0f;
    }
  }
  if (!t.at_end()) t.fail("more data than the header announces");
  return s;
}

}  // namespace mlp_digits
