// SPDX-License-Identifier: Apache-2.0
// The OpenCL configuration tag. What clzero compiles depends on
// CL_TARGET_OPENCL_VERSION in one place: SVM exists from OpenCL 2.0 on, so
// policy::Auto holds an Svm alternative, choose() may pick Svm and measure()
// may time it only where the headers declare OpenCL 2.0. Those entities live
// in an inline namespace named after the configuration (cl200 or cl120), so
// that translation units built with different values each get their own
// copy, and a tensor handed from one configuration to the other across a
// function (as a parameter or a return value) fails to link instead of
// running code compiled for another layout. Everything else (Error, the
// handlers, Shape, DeviceAccess, the buffer and SVM policies themselves) has
// one layout and one behaviour everywhere and is not tagged.
#pragma once

#include <CL/cl.h>

#if defined(CL_VERSION_2_0)
#define CLZERO_DETAIL_CL_NAMESPACE cl200
#define CLZERO_DETAIL_CL_TAG "cl200"
#else
#define CLZERO_DETAIL_CL_NAMESPACE cl120
#define CLZERO_DETAIL_CL_TAG "cl120"
#endif

// GCC and Clang also carry the tag into the mangled name of a function whose
// return type holds a tagged type (abi_tag); the Itanium mangling leaves
// return types out otherwise, so `MappedTensor<float> make();` would link.
#if defined(__GNUC__) || defined(__clang__)
#define CLZERO_DETAIL_CL_BEGIN inline namespace [[gnu::abi_tag(CLZERO_DETAIL_CL_TAG)]] CLZERO_DETAIL_CL_NAMESPACE {
#else
#define CLZERO_DETAIL_CL_BEGIN inline namespace CLZERO_DETAIL_CL_NAMESPACE {
#endif
#define CLZERO_DETAIL_CL_END }
