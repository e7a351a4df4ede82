// SPDX-License-Identifier: Apache-2.0
// std::mdspan over a host view. Built as C++23; where the standard library
// has no <mdspan> (libstdc++ 12, Debian 12) only the last test case runs: it
// checks that the header then compiles to nothing and says so.
#include <clzero/clzero.hpp>
#include <clzero/interop/mdspan.hpp>

#include <cstdint>

#include "support/catch.hpp"
#include "support/test_env.hpp"

using namespace clzero;
using namespace clzero_test;

#if CLZERO_INTEROP_HAS_MDSPAN

TEST_CASE("an mdspan over a read view indexes fresh data row-major", "[mdspan]") {
  Env& env = Env::get();
  constexpr std::size_t n = 2 * 3 * 5 * 7;
  MappedTensor<std::uint32_t, policy::Persistent> tensor(env.context, env.queue, {2, 3, 5, 7}, Intent::output);
  Kernel fill("fill_u32");
  std::size_t wrong = 0, checked = 0;
  for (std::uint32_t iter = 1; iter <= 6; ++iter) {
    {
      auto dev = tensor.device_access();
      dev.bind(fill.k, 0);
      fill.arg(1, static_cast<cl_uint>(n));
      fill.arg(2, iter);
      launch(env.queue, fill.k, n, dev);
    }
    auto view = tensor.read_view();
    auto md = interop::to_mdspan<4>(view);
    REQUIRE(md.extent(0) == 2);
    REQUIRE(md.extent(3) == 7);
    std::uint32_t flat = 0;
    for (std::size_t a = 0; a < 2; ++a)
      for (std::size_t b = 0; b < 3; ++b)
        for (std::size_t c = 0; c < 5; ++c)
          for (std::size_t d = 0; d < 7; ++d, ++checked) wrong += md[a, b, c, d] != value(flat++, iter);
  }
  CHECK(checked == n * 6);
  CHECK(wrong == 0);
}

TEST_CASE("static extents are checked against the tensor's shape", "[mdspan]") {
  Env& env = Env::get();
  MappedTensor<float, policy::Persistent> tensor(env.context, env.queue, {4, 8}, Intent::inout);
  auto view = tensor.write_view();
  auto md = interop::to_mdspan<std::extents<std::size_t, 4, std::dynamic_extent>>(view);
  md[3, 7] = 1.5f;
  CHECK(view[31] == 1.5f);
  CHECK_THROWS_AS((interop::to_mdspan<std::extents<std::size_t, 4, 9>>(view)), Error);
  CHECK_THROWS_AS(interop::to_mdspan<3>(view), Error);
}

#endif

TEST_CASE("the mdspan header is there exactly when the standard library has mdspan", "[mdspan]") {
#if defined(__cpp_lib_mdspan) && __cpp_lib_mdspan >= 202207L
  STATIC_REQUIRE(CLZERO_INTEROP_HAS_MDSPAN == 1);
#else
  STATIC_REQUIRE(CLZERO_INTEROP_HAS_MDSPAN == 0);
  WARN("no <mdspan> in this standard library (__cplusplus " << __cplusplus
                                                            << "): clzero/interop/mdspan.hpp compiled to nothing");
#endif
  // Either way HostView's own multi-index access is there.
  MappedTensor<float, policy::Persistent> tensor(Env::get().queue, {2, 3}, Intent::inout);
  auto view = tensor.write_view();
  view(1, 2) = 4.0f;
  CHECK(view[5] == 4.0f);
}
