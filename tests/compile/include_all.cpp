// SPDX-License-Identifier: Apache-2.0
// Compile-only test: every public header, every policy instantiated, for the
// CL_TARGET_OPENCL_VERSION this object is built with.
#include <clzero/clzero.hpp>
#include <clzero/interop/clhpp.hpp>

#include <cstdint>
#include <type_traits>

template class clzero::MappedTensor<float, clzero::policy::MapPerInference>;
template class clzero::MappedTensor<float, clzero::policy::Persistent>;
template class clzero::MappedTensor<std::uint8_t, clzero::policy::CopyToPinned>;
template class clzero::MappedTensor<double, clzero::policy::UnifiedHost>;
template class clzero::MappedTensor<std::int32_t, clzero::policy::Auto>;
template class clzero::HostView<const float>;
template class clzero::HostView<float>;
#if defined(CL_VERSION_2_0)
template class clzero::MappedTensor<float, clzero::policy::Svm>;
#else
static_assert(CL_TARGET_OPENCL_VERSION < 200, "SVM is compiled from OpenCL 2.0 on");
#endif
template class clzero::TensorArena<clzero::policy::Persistent>;
template class clzero::TensorArena<clzero::policy::Auto>;
template class clzero::TensorRing<float, clzero::policy::Auto>;

// The configuration tag: Auto is compiled once per OpenCL configuration
// (clzero/detail/abi.hpp), reachable as clzero::policy::Auto in both.
#if defined(CL_VERSION_2_0)
static_assert(std::is_same<clzero::policy::Auto, clzero::policy::cl200::Auto>::value, "Auto is tagged cl200");
#else
static_assert(std::is_same<clzero::policy::Auto, clzero::policy::cl120::Auto>::value, "Auto is tagged cl120");
#endif
