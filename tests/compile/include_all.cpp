// SPDX-License-Identifier: Apache-2.0
// Compile-only test: every public header, every policy instantiated, for the
// CL_TARGET_OPENCL_VERSION this object is built with.
#include <clzero/clzero.hpp>
#include <clzero/interop/clhpp.hpp>

#include <cstdint>

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
