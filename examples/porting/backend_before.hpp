// SPDX-License-Identifier: Apache-2.0
// The engine before the port, written the way OpenCL inference backends are:
// CLHPP objects, device buffers allocated when the model is resized, and a
// blocking copy in and out of host memory around every inference.
// docs/porting.md quotes the part between the snippet markers verbatim.
#pragma once

#include <vector>

#include "engine_common.hpp"

namespace porting {
namespace before {

// snippet begin
class HeadBackend {
 public:
  HeadBackend(const cl::Context& context, const cl::CommandQueue& queue, const cl::Program& program)
      : mContext(context), mQueue(queue), mKernel(program, "head") {}

  // When the model is loaded or resized: allocate every tensor on the device.
  void onResize() {
    mInput = cl::Buffer(mContext, CL_MEM_READ_ONLY, kRows * kChannels * sizeof(float));
    mBoxes = cl::Buffer(mContext, CL_MEM_WRITE_ONLY, kRows * 4 * sizeof(float));
    mScores = cl::Buffer(mContext, CL_MEM_WRITE_ONLY, kRows * kClasses * sizeof(float));
  }

  // Every inference: copy the input in ...
  void copyFromHost(const float* input) {
    cl_int res = mQueue.enqueueWriteBuffer(mInput, CL_TRUE, 0, kRows * kChannels * sizeof(float), input);
    check_cl(res, "enqueueWriteBuffer input");
  }

  // ... run the kernels ...
  void onExecute() {
    mKernel.setArg(0, mInput);
    mKernel.setArg(1, mBoxes);
    mKernel.setArg(2, mScores);
    mKernel.setArg(3, cl_uint(kChannels));
    mKernel.setArg(4, cl_uint(kClasses));
    cl_int res = mQueue.enqueueNDRangeKernel(mKernel, cl::NullRange, cl::NDRange(kRows), cl::NullRange);
    check_cl(res, "enqueueNDRangeKernel head");
  }

  // ... and copy every output out, blocking until each copy is done.
  void copyToHost(std::vector<float>& boxes, std::vector<float>& scores) {
    boxes.resize(kRows * 4);
    scores.resize(kRows * kClasses);
    cl_int res = mQueue.enqueueReadBuffer(mBoxes, CL_TRUE, 0, boxes.size() * sizeof(float), boxes.data());
    check_cl(res, "enqueueReadBuffer boxes");
    res = mQueue.enqueueReadBuffer(mScores, CL_TRUE, 0, scores.size() * sizeof(float), scores.data());
    check_cl(res, "enqueueReadBuffer scores");
  }

 private:
  cl::Context mContext;
  cl::CommandQueue mQueue;
  cl::Kernel mKernel;
  cl::Buffer mInput, mBoxes, mScores;
};
// snippet end

}  // namespace before
}  // namespace porting
