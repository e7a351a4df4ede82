// SPDX-License-Identifier: Apache-2.0
// What reading an output costs MNN users, per inference, with MNN's OpenCL
// backend as it is or with clzero's patch (the same binary runs both: the
// variant is the libMNN_CL.so it loads). Models are built in memory with
// MNN's Express API: an element-wise model and a 1x1 convolution, each with
// outputs of 4 KiB, 256 KiB and 4 MiB.
//
// Per inference, three ways, taking turns so that drift hits all of them:
//   wait: runSession, then Tensor::wait(MAP_TENSOR_READ, true) (no readback;
//         the baseline)
//   copy: runSession, copyToHostTensor, the host reads every element
//   map:  runSession, Tensor::map(MAP_TENSOR_READ), the host reads every
//         element, unmap
// Every inference gets a new input (never zeros), so every output differs
// from the one before. Outside the timed part, and outside every total, the
// host reads the copied or mapped output a second time (*_reread_us: what
// the same read costs once the first has brought the data in), and in the
// wait turn it reads a buffer of the output's size that it owns and read
// just before (own_read_us: a read of memory in the caches, in this
// process). Each copied or mapped output
// is hashed (patched and unpatched runs must give the same hash for the same
// inference) and compared with MNN's CPU backend (1e-3 relative).
//
// Writes one JSON file; run_bench.sh alternates variants and processes.
#include <MNN/MNNForwardType.h>
#include <MNN/Interpreter.hpp>
#include <MNN/Tensor.hpp>
#include <MNN/expr/Expr.hpp>
#include <MNN/expr/ExprCreator.hpp>
#define MNN_USER_SET_DEVICE
#include <MNN/MNNSharedContext.h>

#include <CL/cl.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace MNN;
using namespace MNN::Express;

namespace {

using Clock = std::chrono::steady_clock;

double us_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

// What the process is doing, for a crash report: a process that dies in
// MNN (on PoCL 5, in every run so far) then says where.
char g_phase[160] = "starting";

void phase(const std::string& what) { std::snprintf(g_phase, sizeof g_phase, "%s", what.c_str()); }

void on_fatal_signal(int sig) {
  const char head[] = "readback_bench: fatal signal while ";
  ssize_t ignored = write(2, head, sizeof head - 1);
  ignored = write(2, g_phase, std::strlen(g_phase));
  ignored = write(2, "; backtrace:\n", 13);
  (void)ignored;
  void* frames[64];
  backtrace_symbols_fd(frames, backtrace(frames, 64), 2);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void report_crashes() {
  void* warm[1];
  backtrace(warm, 1);  // loads the unwinder now, not inside the handler
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) std::signal(sig, on_fatal_signal);
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "readback_bench: %s\n", what.c_str());
  std::exit(1);
}

struct ModelSpec {
  std::string name;        // "elementwise" or "conv1x1"
  std::vector<int> input;  // NCHW
  int out_channels;
};

std::vector<int8_t> build_model(const ModelSpec& spec) {
  auto x = _Input(spec.input, NCHW, halide_type_of<float>());
  x->setName("in");
  VARP y;
  if (spec.name == "elementwise") {
    y = _Add(_Multiply(x, _Scalar<float>(1.5f)), _Scalar<float>(0.25f));
  } else {
    const int cin = spec.input[1];
    std::vector<float> weight(static_cast<std::size_t>(spec.out_channels) * cin);
    for (std::size_t i = 0; i < weight.size(); ++i) weight[i] = 0.01f + static_cast<float>(i % 17) * 0.003f;
    std::vector<float> bias(spec.out_channels, 0.1f);
    y = _Convert(_Conv(std::move(weight), std::move(bias), _Convert(x, NC4HW4), {cin, spec.out_channels}, {1, 1}),
                 NCHW);
  }
  y->setName("out");
  return Variable::save({y});
}

// Input of inference k: positive, different for every k (period 4096).
void fill_input(float* data, std::size_t n, std::uint64_t k) {
  const float shift = static_cast<float>(k % 4096) * (1.0f / 4096.0f);
  for (std::size_t i = 0; i < n; ++i) data[i] = 0.5f + static_cast<float>(i % 97) * 0.01f + shift;
}

// The timed read: every element, as integers so that it vectorizes.
std::uint64_t read_all(const void* data, std::size_t bytes) {
  auto words = static_cast<const std::uint32_t*>(data);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < bytes / 4; ++i) sum += words[i];
  return sum;
}

std::uint64_t hash_of(const void* data, std::size_t bytes) {
  auto words = static_cast<const std::uint32_t*>(data);
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < bytes / 4; ++i) h = (h ^ words[i]) * 1099511628211ull;
  return h;
}

struct Session_ {
  std::unique_ptr<Interpreter, void (*)(Interpreter*)> net{nullptr, Interpreter::destroy};
  Session* session = nullptr;
  Tensor* input = nullptr;
  Tensor* output = nullptr;
};

Session_ open_session(const std::vector<int8_t>& model, MNNForwardType type, BackendConfig* config, int gpu_mode) {
  Session_ s;
  s.net.reset(Interpreter::createFromBuffer(model.data(), model.size()));
  if (!s.net) fail("Interpreter::createFromBuffer failed");
  ScheduleConfig schedule;
  schedule.type = type;
  if (type == MNN_FORWARD_OPENCL)
    schedule.mode = gpu_mode;
  else
    schedule.numThread = 1;
  schedule.backendConfig = config;
  s.session = s.net->createSession(schedule);
  if (s.session == nullptr) fail("createSession failed");
  s.input = s.net->getSessionInput(s.session, "in");
  s.output = s.net->getSessionOutput(s.session, "out");
  if (s.input == nullptr || s.output == nullptr) fail("the model has no tensor named in / out");
  if (type == MNN_FORWARD_OPENCL) {
    int backends[4] = {-1, -1, -1, -1};
    s.net->getSessionInfo(s.session, Interpreter::BACKENDS, backends);
    if (backends[0] != MNN_FORWARD_OPENCL || s.output->host<void>() != nullptr)
      fail("MNN did not run the model on its OpenCL backend (backend " + std::to_string(backends[0]) +
           "); is an OpenCL GPU device there? (MNN takes only CL_DEVICE_TYPE_GPU devices; see README.md)");
  }
  return s;
}

struct Stats {
  std::vector<double> wait, copy, map, copy_run, copy_readback, copy_read, map_run, map_map, map_read, map_unmap;
  std::vector<double> copy_reread, map_reread, own_read;
  std::vector<std::uint64_t> copy_hash, map_hash;
  double cpu_max_rel = 0;
  long cpu_bad = 0;
  long unchanged = 0;
};

void json_numbers(FILE* f, const char* key, const std::vector<double>& v, bool comma = true) {
  std::fprintf(f, "      \"%s\": [", key);
  for (std::size_t i = 0; i < v.size(); ++i) std::fprintf(f, "%s%.2f", i ? "," : "", v[i]);
  std::fprintf(f, "]%s\n", comma ? "," : "");
}

void json_hashes(FILE* f, const char* key, const std::vector<std::uint64_t>& v) {
  std::fprintf(f, "      \"%s\": [", key);
  for (std::size_t i = 0; i < v.size(); ++i) std::fprintf(f, "%s\"%016llx\"", i ? "," : "", (unsigned long long)v[i]);
  std::fprintf(f, "],\n");
}

// The platform and device MNN will take, named for the log (MNN does not say).
struct ClInfo {
  std::string platform, device, device_version, driver;
};

std::string cl_string(void* lib, bool device, void* handle, cl_uint what) {
  using PlatformInfo = cl_int (*)(cl_platform_id, cl_platform_info, size_t, void*, size_t*);
  using DeviceInfo = cl_int (*)(cl_device_id, cl_device_info, size_t, void*, size_t*);
  char text[512] = {0};
  if (device)
    reinterpret_cast<DeviceInfo>(dlsym(lib, "clGetDeviceInfo"))(static_cast<cl_device_id>(handle), what,
                                                                sizeof text - 1, text, nullptr);
  else
    reinterpret_cast<PlatformInfo>(dlsym(lib, "clGetPlatformInfo"))(static_cast<cl_platform_id>(handle), what,
                                                                    sizeof text - 1, text, nullptr);
  return text;
}

// Finds the platform whose name contains `want` and its platformId for MNN,
// which counts the platforms of the library it loads (the same one, opened
// here the same way) in an order of its own.
ClInfo find_platform(const std::string& want, unsigned* index) {
  // MNN's search order on Linux (OpenCLWrapper.cpp).
  void* lib = nullptr;
  for (const char* name : {"/usr/lib/libOpenCL.so", "/usr/local/lib/libOpenCL.so", "/usr/local/lib/libpocl.so",
                           "/usr/lib64/libOpenCL.so", "/usr/lib32/libOpenCL.so", "libOpenCL.so"}) {
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) break;
  }
  if (lib == nullptr) fail("no libOpenCL.so to load, where MNN looks for one");
  using GetPlatforms = cl_int (*)(cl_uint, cl_platform_id*, cl_uint*);
  using GetDevices = cl_int (*)(cl_platform_id, cl_device_type, cl_uint, cl_device_id*, cl_uint*);
  auto get_platforms = reinterpret_cast<GetPlatforms>(dlsym(lib, "clGetPlatformIDs"));
  auto get_devices = reinterpret_cast<GetDevices>(dlsym(lib, "clGetDeviceIDs"));
  cl_platform_id platforms[16];
  cl_uint count = 0;
  if (get_platforms(16, platforms, &count) != CL_SUCCESS || count == 0) fail("clGetPlatformIDs found no platform");
  count = std::min<cl_uint>(count, 16);
  // MNN's copy of cl2.hpp (cl::Platform::get) reorders the platforms before
  // platformId indexes them: with more than one, the first whose name has
  // "NVIDIA" (else "AMD") trades places with the first. Count as MNN does.
  if (count > 1) {
    for (const char* vendor : {"NVIDIA", "AMD"}) {
      cl_uint found = count;
      for (cl_uint p = 0; p < count && found == count; ++p)
        if (cl_string(lib, false, platforms[p], CL_PLATFORM_NAME).find(vendor) != std::string::npos) found = p;
      if (found < count) {
        std::swap(platforms[0], platforms[found]);
        break;
      }
    }
  }
  for (cl_uint p = 0; p < count; ++p) {
    ClInfo info;
    info.platform = cl_string(lib, false, platforms[p], CL_PLATFORM_NAME);
    if (info.platform.find(want) == std::string::npos) continue;
    cl_device_id device = nullptr;
    cl_uint devices = 0;
    // As MNN asks: GPU devices only (through the CPU-as-GPU shim, a CPU device).
    if (get_devices(platforms[p], CL_DEVICE_TYPE_GPU, 1, &device, &devices) != CL_SUCCESS || devices == 0)
      fail("platform \"" + info.platform + "\" has no device of type GPU, and MNN takes only those");
    info.device = cl_string(lib, true, device, CL_DEVICE_NAME);
    info.device_version = cl_string(lib, true, device, CL_DEVICE_VERSION);
    info.driver = cl_string(lib, true, device, CL_DRIVER_VERSION);
    *index = p;
    return info;
  }
  fail("no OpenCL platform whose name contains \"" + want + "\"");
}

int arg_int(const char* value, const char* name) {
  char* end = nullptr;
  long v = std::strtol(value, &end, 10);
  if (end == value || *end != '\0' || v < 0) fail(std::string("bad value for ") + name + ": " + value);
  return static_cast<int>(v);
}

}  // namespace

int main(int argc, char** argv) {
  std::string variant, out_path, platform_want;
  int iterations = 300, warmup = 20, round = 0;
  bool cpu_check = true;
  std::string only;
  // The layout the host reads in: the stored one (NCHW here: MNN's direct
  // case), or NC4HW4 (CAFFE_C4), which takes the conversion kernel, to
  // check that path's outputs too.
  Tensor::DimensionType read_layout = Tensor::CAFFE;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) fail("missing value after " + a);
      return argv[++i];
    };
    if (a == "--variant")
      variant = next();
    else if (a == "--out")
      out_path = next();
    else if (a == "--platform")
      platform_want = next();
    else if (a == "--iterations")
      iterations = arg_int(next(), "--iterations");
    else if (a == "--warmup")
      warmup = arg_int(next(), "--warmup");
    else if (a == "--round")
      round = arg_int(next(), "--round");
    else if (a == "--only")
      only = next();
    else if (a == "--no-cpu-check")
      cpu_check = false;
    else if (a == "--read-layout") {
      const std::string layout = next();
      if (layout == "c4")
        read_layout = Tensor::CAFFE_C4;
      else if (layout != "stored")
        fail("--read-layout takes stored or c4, not " + layout);
    }
    else
      fail("unknown argument " + a +
           "; usage: readback_bench --variant NAME --out FILE.json --platform SUBSTRING [--iterations N] "
           "[--warmup N] [--round N] [--only MODEL] [--no-cpu-check] [--read-layout stored|c4]");
  }
  if (variant.empty() || out_path.empty() || platform_want.empty())
    fail("--variant, --out and --platform are required");
  if (iterations < 1) fail("--iterations must be at least 1");

  report_crashes();
  phase("looking for the OpenCL platform");
  unsigned platform_index = 0;
  const ClInfo cl = find_platform(platform_want, &platform_index);
  MNNDeviceContext device_context;
  device_context.platformId = platform_index;
  BackendConfig gpu_config;
  gpu_config.precision = BackendConfig::Precision_High;  // fp32 on the device, as the host reads
  gpu_config.sharedContext = &device_context;
  // Buffer memory; no auto-tuning, so that every process picks the same
  // kernels and patched and unpatched outputs can be compared bit for bit.
  const int gpu_mode = MNN_GPU_MEMORY_BUFFER | MNN_GPU_TUNING_NONE;
  BackendConfig cpu_config;
  cpu_config.precision = BackendConfig::Precision_High;

  const std::vector<ModelSpec> specs = {
      {"elementwise", {1, 4, 16, 16}, 4}, {"elementwise", {1, 16, 64, 64}, 16}, {"elementwise", {1, 64, 128, 128}, 64},
      {"conv1x1", {1, 16, 8, 8}, 16},     {"conv1x1", {1, 16, 64, 64}, 16},     {"conv1x1", {1, 16, 128, 128}, 64},
  };

  FILE* f = std::fopen(out_path.c_str(), "w");
  if (f == nullptr) fail("cannot write " + out_path);
  std::fprintf(f, "{\n  \"format\": \"clzero-mnn-readback-1\",\n  \"variant\": \"%s\",\n  \"round\": %d,\n",
               variant.c_str(), round);
  std::fprintf(f,
               "  \"platform\": \"%s\",\n  \"device\": \"%s\",\n  \"device_version\": \"%s\",\n  \"driver\": \"%s\",\n",
               cl.platform.c_str(), cl.device.c_str(), cl.device_version.c_str(), cl.driver.c_str());
  std::fprintf(f, "  \"iterations\": %d,\n  \"warmup\": %d,\n  \"cpu_check\": %s,\n  \"read_layout\": \"%s\",\n",
               iterations, warmup, cpu_check ? "true" : "false", read_layout == Tensor::CAFFE ? "stored" : "c4");
  std::fprintf(f, "  \"models\": [\n");

  bool first_model = true;
  for (const auto& spec : specs) {
    if (!only.empty() && spec.name != only) continue;
    const std::string model_name = spec.name + " with a " + std::to_string(4 * spec.out_channels * spec.input[2] *
                                                                          spec.input[3]) + "-byte output";
    phase("building the " + model_name + " with MNN's Express API");
    const auto model = build_model(spec);
    phase("creating the OpenCL session of the " + model_name);
    auto gpu = open_session(model, MNN_FORWARD_OPENCL, &gpu_config, gpu_mode);
    Session_ cpu;
    phase("creating the CPU session of the " + model_name);
    if (cpu_check) cpu = open_session(model, MNN_FORWARD_CPU, &cpu_config, 0);
    phase("running the " + model_name);

    std::unique_ptr<Tensor> host_in(new Tensor(gpu.input, Tensor::CAFFE, true));
    std::unique_ptr<Tensor> host_out(new Tensor(gpu.output, read_layout, true));
    std::unique_ptr<Tensor> cpu_in, cpu_out;
    if (cpu_check) {
      cpu_in.reset(new Tensor(cpu.input, Tensor::CAFFE, true));
      cpu_out.reset(new Tensor(cpu.output, read_layout, true));
    }
    const std::size_t in_n = host_in->elementSize();
    const std::size_t out_bytes = host_out->size();
    if (out_bytes != static_cast<std::size_t>(host_out->elementSize()) * 4) fail("output is not float32");

    Stats st;
    std::uint64_t k = 1;  // inference number: the input
    std::uint64_t sink = 0;
    std::uint64_t last_copy = 0, last_map = 0;
    std::vector<float> reference(out_bytes / 4);
    // Memory of the output's size that only the host touches.
    std::vector<std::uint32_t> own(out_bytes / 4);
    for (std::size_t i = 0; i < own.size(); ++i) own[i] = static_cast<std::uint32_t>(i * 2654435761u);

    auto set_input = [&](std::uint64_t inference) {
      fill_input(host_in->host<float>(), in_n, inference);
      gpu.input->copyFromHostTensor(host_in.get());
      gpu.input->wait(Tensor::MAP_TENSOR_WRITE, true);  // the upload is not part of what is timed
    };
    auto check = [&](const void* data, std::uint64_t inference, std::vector<std::uint64_t>* hashes,
                     std::uint64_t* last) {
      const std::uint64_t h = hash_of(data, out_bytes);
      if (hashes) hashes->push_back(h);
      if (h == *last) ++st.unchanged;
      *last = h;
      if (!cpu_check || !hashes) return;
      fill_input(cpu_in->host<float>(), in_n, inference);
      cpu.input->copyFromHostTensor(cpu_in.get());
      cpu.net->runSession(cpu.session);
      cpu.output->copyToHostTensor(cpu_out.get());
      const float* want = cpu_out->host<float>();
      const float* got = static_cast<const float*>(data);
      for (std::size_t i = 0; i < out_bytes / 4; ++i) {
        const double rel = std::fabs(double(got[i]) - double(want[i])) / std::max(1e-30, std::fabs(double(want[i])));
        st.cpu_max_rel = std::max(st.cpu_max_rel, rel);
        if (!(rel <= 1e-3)) ++st.cpu_bad;
      }
    };

    for (int it = -warmup; it < iterations; ++it) {
      const bool keep = it >= 0;
      for (int turn = 0; turn < 3; ++turn) {
        const int mode = (turn + (it < 0 ? 0 : it)) % 3;
        const std::uint64_t inference = k++;
        set_input(inference);
        if (mode == 0) {
          auto t0 = Clock::now();
          gpu.net->runSession(gpu.session);
          gpu.output->wait(Tensor::MAP_TENSOR_READ, true);
          auto t1 = Clock::now();
          if (keep) st.wait.push_back(us_between(t0, t1));
          sink += read_all(own.data(), out_bytes);
          auto r0 = Clock::now();
          sink += read_all(own.data(), out_bytes);
          auto r1 = Clock::now();
          if (keep) st.own_read.push_back(us_between(r0, r1));
        } else if (mode == 1) {
          auto t0 = Clock::now();
          gpu.net->runSession(gpu.session);
          auto t1 = Clock::now();
          gpu.output->copyToHostTensor(host_out.get());
          auto t2 = Clock::now();
          sink += read_all(host_out->host<void>(), out_bytes);
          auto t3 = Clock::now();
          sink += read_all(host_out->host<void>(), out_bytes);
          auto t4 = Clock::now();
          if (keep) {
            st.copy_reread.push_back(us_between(t3, t4));
            st.copy.push_back(us_between(t0, t3));
            st.copy_run.push_back(us_between(t0, t1));
            st.copy_readback.push_back(us_between(t1, t2));
            st.copy_read.push_back(us_between(t2, t3));
          }
          check(host_out->host<void>(), inference, keep ? &st.copy_hash : nullptr, &last_copy);
        } else {
          auto t0 = Clock::now();
          gpu.net->runSession(gpu.session);
          auto t1 = Clock::now();
          void* mapped = gpu.output->map(Tensor::MAP_TENSOR_READ, read_layout);
          auto t2 = Clock::now();
          if (mapped == nullptr) fail("Tensor::map returned null");
          sink += read_all(mapped, out_bytes);
          auto t3 = Clock::now();
          sink += read_all(mapped, out_bytes);
          if (keep) st.map_reread.push_back(us_between(t3, Clock::now()));
          check(mapped, inference, keep ? &st.map_hash : nullptr, &last_map);  // before unmap: not timed
          auto t4 = Clock::now();
          gpu.output->unmap(Tensor::MAP_TENSOR_READ, read_layout, mapped);
          auto t5 = Clock::now();
          if (keep) {
            st.map.push_back(us_between(t0, t3) + us_between(t4, t5));
            st.map_run.push_back(us_between(t0, t1));
            st.map_map.push_back(us_between(t1, t2));
            st.map_read.push_back(us_between(t2, t3));
            st.map_unmap.push_back(us_between(t4, t5));
          }
        }
      }
    }

    std::fprintf(f, "%s    {\n      \"model\": \"%s\",\n      \"output_bytes\": %zu,\n", first_model ? "" : ",\n",
                 spec.name.c_str(), out_bytes);
    std::fprintf(
        f, "      \"cpu_max_rel\": %.3g,\n      \"cpu_bad\": %ld,\n      \"unchanged\": %ld,\n      \"sink\": %llu,\n",
        st.cpu_max_rel, st.cpu_bad, st.unchanged, (unsigned long long)sink);
    json_hashes(f, "copy_hash", st.copy_hash);
    json_hashes(f, "map_hash", st.map_hash);
    json_numbers(f, "wait_us", st.wait);
    json_numbers(f, "copy_us", st.copy);
    json_numbers(f, "copy_run_us", st.copy_run);
    json_numbers(f, "copy_readback_us", st.copy_readback);
    json_numbers(f, "copy_read_us", st.copy_read);
    json_numbers(f, "map_us", st.map);
    json_numbers(f, "map_run_us", st.map_run);
    json_numbers(f, "map_map_us", st.map_map);
    json_numbers(f, "map_read_us", st.map_read);
    json_numbers(f, "map_unmap_us", st.map_unmap);
    json_numbers(f, "copy_reread_us", st.copy_reread);
    json_numbers(f, "map_reread_us", st.map_reread);
    json_numbers(f, "own_read_us", st.own_read, false);
    std::fprintf(f, "    }");
    first_model = false;
    std::fprintf(stderr, "%s %s %zu B: cpu_bad %ld (max rel %.3g), unchanged %ld\n", variant.c_str(), spec.name.c_str(),
                 out_bytes, st.cpu_bad, st.cpu_max_rel, st.unchanged);
    if (st.cpu_bad != 0 || st.unchanged != 0) {
      std::fclose(f);
      fail("outputs disagree with the CPU backend or did not change between inferences");
    }
  }
  // Which OpenCL libraries the process loaded (MNN dlopens "libOpenCL.so").
  std::fprintf(f, "\n  ],\n  \"opencl_libraries\": [");
  std::vector<std::string> libraries;
  if (FILE* maps = std::fopen("/proc/self/maps", "r")) {
    char line[4096];
    while (std::fgets(line, sizeof line, maps)) {
      const char* path = std::strchr(line, '/');
      if (path == nullptr) continue;
      std::string name(path);
      if (!name.empty() && name.back() == '\n') name.pop_back();
      if (name.find("kcache") != std::string::npos) continue;  // PoCL's compiled kernels
      if ((name.find("OpenCL") != std::string::npos || name.find("pocl") != std::string::npos ||
           name.find("nvidia-opencl") != std::string::npos) &&
          std::find(libraries.begin(), libraries.end(), name) == libraries.end())
        libraries.push_back(name);
    }
    std::fclose(maps);
  }
  for (std::size_t i = 0; i < libraries.size(); ++i) std::fprintf(f, "%s\"%s\"", i ? ", " : "", libraries[i].c_str());
  std::fprintf(f, "]\n}\n");
  if (std::fclose(f) != 0) fail("cannot finish " + out_path);
  return 0;
}
