// SPDX-License-Identifier: Apache-2.0
// clzero: zero-copy access to OpenCL tensors for inference engines.
// The umbrella header: everything public except the optional interop headers
// (clzero/interop/*.hpp).
//
// Configure OpenCL as you always do (CL_TARGET_OPENCL_VERSION, 120 or later);
// clzero defines no OpenCL or CLHPP macro for you. SVM (policy::Svm) needs
// 200 or later.
#pragma once

#include <CL/cl.h>

#if !defined(CL_VERSION_1_2)
#error "clzero needs OpenCL 1.2 headers or later: define CL_TARGET_OPENCL_VERSION as 120 or higher"
#endif

#include "clzero/allocation.hpp"
#include "clzero/device_access.hpp"
#include "clzero/device_caps.hpp"
#include "clzero/error.hpp"
#include "clzero/events.hpp"
#include "clzero/handle.hpp"
#include "clzero/host_view.hpp"
#include "clzero/intent.hpp"
#include "clzero/mapped_tensor.hpp"
#include "clzero/measure.hpp"
#include "clzero/policy/auto.hpp"
#include "clzero/policy/choice.hpp"
#include "clzero/policy/copy_to_pinned.hpp"
#include "clzero/policy/map_per_inference.hpp"
#include "clzero/policy/persistent.hpp"
#include "clzero/policy/svm.hpp"
#include "clzero/policy/unified_host.hpp"
#include "clzero/shape.hpp"
#include "clzero/tensor_arena.hpp"
#include "clzero/tensor_ring.hpp"
#include "clzero/version.hpp"
