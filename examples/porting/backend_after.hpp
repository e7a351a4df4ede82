// SPDX-License-Identifier: Apache-2.0
// The same engine after the port to clzero: the tensors are MappedTensors,
// the host writes the input and reads the outputs in place, and the kernel is
// ordered by events, so the same code runs on in-order and out-of-order
// queues. docs/porting.md quotes the part between the snippet markers verbatim.
#pragma once

#include <clzero/interop/clhpp.hpp>

#include <algorithm>
#include <optional>
#include <vector>

#include "engine_common.hpp"

namespace porting {
namespace after {

// snippet begin
class HeadBackend {
 public:
  HeadBackend(const cl::Context& context, const cl::CommandQueue& queue, const cl::Program& program)
      : mContext(context), mQueue(queue), mKernel(program, "head") {}

  // When the model is loaded or resized: allocate every tensor, once.
  void onResize() {
    using clzero::Intent;
    mInput = clzero::interop::make_tensor<float>(mContext, mQueue, {kRows, kChannels}, Intent::input);
    mBoxes = clzero::interop::make_tensor<float>(mContext, mQueue, {kRows, 4}, Intent::output);
    mScores = clzero::interop::make_tensor<float>(mContext, mQueue, {kRows, kClasses}, Intent::output);
  }

  // Every inference: the host writes the input in place (no copy at all) ...
  clzero::HostView<float> inputView() { return mInput->write_view(); }

  // ... or, keeping the engine's API, copies it in.
  void copyFromHost(const float* input) {
    auto view = mInput->write_view();
    std::copy(input, input + view.size(), view.begin());
  }

  // The kernels wait for clzero's events and hand theirs back: needed on an
  // out-of-order queue, harmless on an in-order one. Nothing here blocks.
  void onExecute() {
    auto input = mInput->device_access();
    auto boxes = mBoxes->device_access();
    auto scores = mScores->device_access();
    clzero::interop::bind(input, mKernel, 0);
    clzero::interop::bind(boxes, mKernel, 1);
    clzero::interop::bind(scores, mKernel, 2);
    mKernel.setArg(3, cl_uint(kChannels));
    mKernel.setArg(4, cl_uint(kClasses));
    std::vector<cl::Event> waits;
    for (const clzero::DeviceAccess* access : {&input, &boxes, &scores})
      for (const cl::Event& e : clzero::interop::wait_events(*access)) waits.push_back(e);
    cl::Event done;
    cl_int res = mQueue.enqueueNDRangeKernel(mKernel, cl::NullRange, cl::NDRange(kRows), cl::NullRange, &waits, &done);
    check_cl(res, "enqueueNDRangeKernel head");
    for (clzero::DeviceAccess* access : {&input, &boxes, &scores}) clzero::interop::used_by(*access, done);
  }  // the tensors go back to the host, each ordered after `done`

  // The outputs, read in place; each view blocks only until its data is visible.
  clzero::HostView<const float> boxes() { return mBoxes->read_view(); }
  clzero::HostView<const float> scores() { return mScores->read_view(); }

 private:
  cl::Context mContext;
  cl::CommandQueue mQueue;
  cl::Kernel mKernel;
  std::optional<clzero::MappedTensor<float>> mInput, mBoxes, mScores;
};
// snippet end

}  // namespace after
}  // namespace porting
