// SPDX-License-Identifier: Apache-2.0
// Runs the engine of docs/porting.md before and after the port side by side:
// every iteration gets a new input, and every output element of the ported
// engine (on an in-order and on an out-of-order queue) must equal the
// original's bit for bit; the original is checked against a CPU reference.
// Last, the guide's warning: a view kept alive across onExecute() is refused.
//
//   porting_check [platform-name-substring]
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backend_after.hpp"
#include "backend_before.hpp"

namespace {

constexpr int kIterations = 200;

// Shifts by 0.01 every iteration, so every output element changes too.
float input_value(std::size_t i, int iteration) {
  return std::sin(0.37f * static_cast<float>(i)) + 0.01f * static_cast<float>(iteration);
}

// boxes are exact up to one rounding (the device may fuse the multiply-add);
// the device's exp is within 3 ulp (OpenCL 3.0 C spec, section 7.4).
bool near(float device, float cpu) { return std::fabs(device - cpu) <= 1e-6f * std::max(1.0f, std::fabs(cpu)); }

int reference_mismatches(const std::vector<float>& x, const std::vector<float>& boxes,
                         const std::vector<float>& scores) {
  using namespace porting;
  int bad = 0;
  for (std::size_t i = 0; i < kRows; ++i) {
    const float* row = &x[i * kChannels];
    for (std::size_t j = 0; j < 4; ++j) bad += !near(boxes[i * 4 + j], row[j] * 0.5f + row[j + 4]);
    for (std::size_t k = 0; k < kClasses; ++k)
      bad += !near(scores[i * kClasses + k], 1.0f / (1.0f + std::exp(-row[k % kChannels])));
  }
  return bad;
}

bool same(const clzero::HostView<const float>& view, const std::vector<float>& expected) {
  return view.size() == expected.size() && std::memcmp(view.data(), expected.data(), view.size_bytes()) == 0;
}

cl::Device pick_device(const char* want) {
  std::vector<cl::Platform> platforms;
  cl::Platform::get(&platforms);
  for (const cl::Platform& p : platforms) {
    if (want != nullptr && p.getInfo<CL_PLATFORM_NAME>().find(want) == std::string::npos) continue;
    std::vector<cl::Device> devices;
    p.getDevices(CL_DEVICE_TYPE_ALL, &devices);
    if (!devices.empty()) return devices.front();
  }
  return cl::Device();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace porting;
  cl::Device device = pick_device(argc > 1 ? argv[1] : nullptr);
  if (device() == nullptr) {
    std::fprintf(stderr, "porting_check: no OpenCL device\n");
    return 1;
  }
  cl::Context context(device);
  cl::Program program(context, std::string(kHeadSource));
  check_cl(program.build({device}), "build");
  cl::CommandQueue in_order(context, device);
  const cl_command_queue_properties props = device.getInfo<CL_DEVICE_QUEUE_ON_HOST_PROPERTIES>();
  const bool has_ooo = (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0;
  cl::CommandQueue out_of_order(context, device, has_ooo ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0);

  before::HeadBackend original(context, in_order, program);
  after::HeadBackend ported(context, in_order, program);
  after::HeadBackend ported_ooo(context, out_of_order, program);
  original.onResize();
  ported.onResize();
  ported_ooo.onResize();

  std::vector<float> x(kRows * kChannels), boxes, scores;
  int wrong_reference = 0, differ_in_order = 0, differ_ooo = 0;
  for (int n = 0; n < kIterations; ++n) {
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = input_value(i, n);

    original.copyFromHost(x.data());
    original.onExecute();
    original.copyToHost(boxes, scores);
    wrong_reference += reference_mismatches(x, boxes, scores) != 0;

    {
      auto input = ported.inputView();
      std::copy(x.begin(), x.end(), input.begin());
    }
    ported.onExecute();
    differ_in_order += !same(ported.boxes(), boxes) || !same(ported.scores(), scores);

    ported_ooo.copyFromHost(x.data());
    ported_ooo.onExecute();
    differ_ooo += !same(ported_ooo.boxes(), boxes) || !same(ported_ooo.scores(), scores);
  }

  bool refused = false;
  {
    auto kept = ported.boxes();
    try {
      ported.onExecute();
    } catch (const clzero::Error& e) {
      refused = e.kind() == clzero::ErrorKind::misuse;
    }
  }
  ported.onExecute();  // usable again once the view has ended

  std::printf("porting_check on %s, %d iterations\n", device.getInfo<CL_DEVICE_NAME>().c_str(), kIterations);
  std::printf("  %-42s %d iterations wrong\n", "before vs CPU reference:", wrong_reference);
  std::printf("  %-42s %d iterations differ\n", "after, in-order queue, vs before:", differ_in_order);
  std::printf("  %-42s %d iterations differ\n",
              has_ooo ? "after, out-of-order queue, vs before:" : "after, in-order queue (no OOO), vs before:",
              differ_ooo);
  std::printf("  %-42s %s\n", "a view kept across onExecute():",
              refused ? "refused (clzero::Error, misuse)" : "NOT refused");
  const bool ok = wrong_reference == 0 && differ_in_order == 0 && differ_ooo == 0 && refused;
  std::printf("%s\n", ok ? "PASS: both versions gave identical outputs every iteration" : "FAIL");
  return ok ? 0 : 1;
}
