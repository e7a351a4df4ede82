// SPDX-License-Identifier: Apache-2.0
// Compile-only: every interop header, every interop function template
// instantiated, for the compiler, standard and CL_TARGET_OPENCL_VERSION this
// object is built with. Built, never linked.
#include <clzero/clzero.hpp>
#include <clzero/interop/clhpp.hpp>
#include <clzero/interop/mdspan.hpp>

#include <complex>
#include <cstdint>

#if __has_include(<dlpack/dlpack.h>)
#include <clzero/interop/dlpack.hpp>
#endif

namespace clzero {
namespace interop {

template MappedTensor<float, policy::Auto> make_tensor<float, policy::Auto>(const cl::Context&, const cl::CommandQueue&,
                                                                            const Shape&, Intent,
                                                                            const policy::Auto::Options&);
template MappedTensor<std::uint8_t, policy::Persistent> make_tensor<std::uint8_t, policy::Persistent>(
    const cl::CommandQueue&, const Shape&, Intent, const policy::Persistent::Options&);
template cl::Buffer buffer<float, policy::CopyToPinned>(const MappedTensor<float, policy::CopyToPinned>&);
#if defined(CL_VERSION_2_0)
template cl::Buffer buffer<double, policy::Svm>(const MappedTensor<double, policy::Svm>&);
#endif

#if defined(DLPACK_DLPACK_H_)
template DLManagedTensor* to_dlpack<float>(HostView<float>&&, DLPackStrides);
template DLManagedTensor* to_dlpack<const float>(HostView<const float>&&, DLPackStrides);
template DLManagedTensor* to_dlpack<const std::int8_t>(HostView<const std::int8_t>&&, DLPackStrides);
template DLManagedTensor* to_dlpack<std::uint64_t>(HostView<std::uint64_t>&&, DLPackStrides);
template DLManagedTensor* to_dlpack<const std::complex<float>>(HostView<const std::complex<float>>&&, DLPackStrides);
template DLManagedTensor* to_dlpack<std::uint16_t>(HostView<std::uint16_t>&&, DLDataType, DLPackStrides);
#if CLZERO_INTEROP_DLPACK_HAS_BOOL
template DLManagedTensor* to_dlpack<const bool>(HostView<const bool>&&, DLPackStrides);
#endif
#if CLZERO_INTEROP_DLPACK_HAS_VERSIONED
template DLManagedTensorVersioned* to_dlpack_versioned<const float>(HostView<const float>&&, DLPackStrides);
template DLManagedTensorVersioned* to_dlpack_versioned<std::int32_t>(HostView<std::int32_t>&&, DLPackStrides);
#endif
#endif

#if CLZERO_INTEROP_HAS_MDSPAN
template std::mdspan<const float, std::dextents<std::size_t, 4>> to_mdspan<4, const float>(
    const HostView<const float>&);
template std::mdspan<float, std::extents<std::size_t, 3, std::dynamic_extent>>
to_mdspan<std::extents<std::size_t, 3, std::dynamic_extent>, float>(const HostView<float>&);
#endif

}  // namespace interop
}  // namespace clzero
