// Implementation of the run command: load artifact + .npy inputs, run the VM, print/save outputs.
#include "run_command.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "relax/runtime/device_api.h"
#include "relax/runtime/device_module.h"
#include "relax/runtime/memory_stats.h"
#include "relax/runtime/npy.h"
#include "relax/support/error.h"
#include "relax/support/utf8.h"
#include "relax/vm/runner.h"
#include "tool_inputs.h"

namespace relax::tools {
namespace {

using runtime::NDArray;

float HalfToFloat(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0)
    v = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31)
    v = mant ? NAN : INFINITY;
  else
    v = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

std::string FormatValue(const NDArray& a, int64_t i) {
  char buf[64];
  const char* p = static_cast<const char*>(a.data());
  std::string dt = runtime::DTypeToString(a.dtype());
  auto load = [&](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, p + i * sizeof(v), sizeof(v));
    return v;
  };
  if (dt == "float32") {
    std::snprintf(buf, sizeof(buf), "%.9g", static_cast<double>(load(float{})));
  } else if (dt == "float64") {
    std::snprintf(buf, sizeof(buf), "%.9g", load(double{}));
  } else if (dt == "float16") {
    std::snprintf(buf, sizeof(buf), "%.9g", static_cast<double>(HalfToFloat(load(uint16_t{}))));
  } else if (dt == "bfloat16") {  // the upper half of an f32
    uint32_t bits = static_cast<uint32_t>(load(uint16_t{})) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    std::snprintf(buf, sizeof(buf), "%.9g", static_cast<double>(f));
  } else if (dt.rfind("float8_", 0) == 0) {  // bit patterns
    std::snprintf(buf, sizeof(buf), "0x%02x", static_cast<unsigned>(load(uint8_t{})));
  } else if (dt == "int8" || dt == "int4") {
    std::snprintf(buf, sizeof(buf), "%d", static_cast<int>(load(int8_t{})));
  } else if (dt == "int16") {
    std::snprintf(buf, sizeof(buf), "%d", static_cast<int>(load(int16_t{})));
  } else if (dt == "int32") {
    std::snprintf(buf, sizeof(buf), "%" PRId32, load(int32_t{}));
  } else if (dt == "int64") {
    std::snprintf(buf, sizeof(buf), "%" PRId64, load(int64_t{}));
  } else if (dt == "uint8" || dt == "uint4") {
    std::snprintf(buf, sizeof(buf), "%u", static_cast<unsigned>(load(uint8_t{})));
  } else if (dt == "uint16") {
    std::snprintf(buf, sizeof(buf), "%u", static_cast<unsigned>(load(uint16_t{})));
  } else if (dt == "uint32") {
    std::snprintf(buf, sizeof(buf), "%" PRIu32, load(uint32_t{}));
  } else if (dt == "uint64") {
    std::snprintf(buf, sizeof(buf), "%" PRIu64, load(uint64_t{}));
  } else if (dt == "bool") {
    return load(uint8_t{}) ? "true" : "false";
  } else {
    return "?";
  }
  return buf;
}

std::string SanitizeName(const std::string& name) {
  std::string s = name;
  for (char& c : s) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    if (!ok) c = '_';
  }
  if (s.empty() || s == "." || s == "..") s = "output" + s;
  // Keep "<name>.npy" and its temporary's name within NAME_MAX: a long name keeps its first
  // 160 characters and gets a hash of the whole name (FNV-1a).
  if (s.size() > 180) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    s = s.substr(0, 160) + "_" + hex;
  }
  return s;
}

std::string Describe(const std::string& name, const NDArray& o) {
  std::string line = name + ": shape=" + runtime::ShapeToString(o.shape()) +
                     " dtype=" + runtime::DTypeToString(o.dtype()) + " values=[";
  int64_t n = o.numel();
  for (int64_t k = 0; k < n && k < 8; ++k) line += (k ? ", " : "") + FormatValue(o, k);
  if (n > 8) line += ", ...";
  return line + "]";
}

void RunOrThrow(const RunOptions& opts) {
  if (opts.repeat < 1) RELAX_THROW("--repeat must be >= 1, got " << opts.repeat);
  runtime::ArtifactRunner runner(opts.artifact, opts.device);
  const auto& sig = runner.inputs();
  std::string expected = runner.InputNamesText();

  const std::map<std::string, std::string> files = ParseInputFiles(sig, opts.inputs);
  std::vector<runtime::Value> inputs;
  for (const auto& s : sig) {
    auto it = files.find(s.name);
    if (it == files.end() && s.default_constant >= 0) {
      inputs.emplace_back();  // not given: the VM takes the input's default
      continue;
    }
    if (it == files.end())
      RELAX_THROW("missing input '" << s.name << "' (expected inputs: " << expected << ")");
    inputs.push_back(LoadInputFile(s, it->second));
  }

  // A bad output directory is an error before the run, not after it.
  if (!opts.output_dir.empty()) {
    std::error_code ec;
    if (std::filesystem::exists(opts.output_dir, ec) &&
        !std::filesystem::is_directory(opts.output_dir, ec))
      RELAX_THROW("output directory '" << opts.output_dir << "' exists and is not a directory");
  }
  runtime::VirtualMachine& vm = runner.vm();
  vm.set_profiling(opts.profile);
  vm.set_max_instructions(opts.max_instructions);
  std::vector<runtime::Value> outputs;
  double total_ms = 0;
  std::vector<double> times;
  // With --repeat, one untimed warm-up run first (page faults, thread-pool start).
  if (opts.repeat > 1) outputs = runner.RunValues(inputs);
  runtime::MemoryStats mem;
  int64_t mem_base = 0;
  // A GPU artifact's kernel time (from the device's own timers) and buffer traffic over the
  // timed runs.
  // (the device the VM runs on: a placed artifact whose device work is all BYOC has no
  // device module)
  const DLDevice run_dev = runner.vm().run_device();
  const bool on_device = run_dev.device_type != kDLCPU;
  auto counters = [&] {
    return on_device ? runtime::DeviceAPI::Get(run_dev)->Counters(run_dev)
                     : runtime::DeviceCounters{};
  };
  const runtime::DeviceCounters c0 = counters();
  for (int r = 0; r < opts.repeat; ++r) {
    outputs.clear();  // the previous run's outputs are not part of this run's peak
    runtime::ResetMemoryStats();
    mem_base = runtime::ReadMemoryStats().live_bytes;
    auto t0 = std::chrono::steady_clock::now();
    outputs = runner.RunValues(inputs);
    auto t1 = std::chrono::steady_clock::now();
    mem = runtime::ReadMemoryStats();
    times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    total_ms += times.back();
  }
  std::sort(times.begin(), times.end());

  std::set<std::string> used;
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string name = runner.OutputName(i);
    const std::string shown = EscapeControl(name);
    // A sequence output (a tuple of tensors) is written as the directory DIR/<name>/ holding
    // 0.npy, 1.npy, ...; a tensor as DIR/<name>.npy.
    std::vector<NDArray> elems;
    const auto* seq = std::get_if<runtime::Tuple>(&outputs[i]);
    if (seq) {
      std::cout << shown << ": sequence of " << (*seq)->fields.size() << " tensors\n";
      for (size_t k = 0; k < (*seq)->fields.size(); ++k) {
        elems.push_back(std::get<NDArray>((*seq)->fields[k]));
        std::cout << Describe(shown + "[" + std::to_string(k) + "]", elems.back()) << "\n";
      }
    } else {
      elems.push_back(std::get<NDArray>(outputs[i]));
      std::cout << Describe(shown, elems.back()) << "\n";
    }
    if (!opts.output_dir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(opts.output_dir, ec);
      if (ec)
        RELAX_THROW("cannot create output directory '" << opts.output_dir << "': " << ec.message());
      std::string file = SanitizeName(name);
      while (!used.insert(file).second) file += "_";
      std::filesystem::path base = std::filesystem::path(opts.output_dir) / file;
      if (!seq) {
        runtime::SaveNpy(base.string() + ".npy", elems[0]);
        continue;
      }
      // A new folder, or one that is really a folder: a symlink planted at the name is not
      // followed (the files would land wherever it points).
      if (::mkdir(base.c_str(), 0777) != 0) {
        const int err = errno;
        struct stat st;
        if (err != EEXIST)
          RELAX_THROW("cannot create directory '" << base.string() << "': " << std::strerror(err));
        if (::lstat(base.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
          RELAX_THROW("cannot write sequence output '"
                      << name << "': '" << base.string()
                      << "' exists and is not a directory (a symlink there is not followed)");
      }
      for (size_t k = 0; k < elems.size(); ++k)
        runtime::SaveNpy((base / (std::to_string(k) + ".npy")).string(), elems[k]);
    }
  }
  if (opts.repeat > 1) {
    char buf[128];
    std::snprintf(buf, sizeof(buf),
                  "mean latency: %.3f ms over %d runs (median %.3f ms, min %.3f ms)",
                  total_ms / opts.repeat, opts.repeat, times[times.size() / 2], times.front());
    std::cout << buf << "\n";
    const runtime::DeviceCounters c1 = counters();
    if (c1.kernel_ns >= 0) {
      std::snprintf(buf, sizeof(buf), "kernel time: %.3f ms per run (device timers)",
                    static_cast<double>(c1.kernel_ns - std::max<int64_t>(c0.kernel_ns, 0)) / 1e6 /
                        opts.repeat);
      std::cout << buf << "\n";
    }
    if (on_device) {
      auto per_run = [&](int64_t a, int64_t b) { return (b - a) / opts.repeat; };
      std::cout << "device launches: " << per_run(c0.launches, c1.launches) << " per run ("
                << per_run(c0.waits, c1.waits) << " waits); buffers in place: "
                << per_run(c0.in_place_buffers, c1.in_place_buffers)
                << ", staged: " << per_run(c0.staged_buffers, c1.staged_buffers) << " ("
                << per_run(c0.staged_in_bytes, c1.staged_in_bytes) << " bytes in, "
                << per_run(c0.staged_out_bytes, c1.staged_out_bytes) << " bytes out per run)\n";
      // Device placement: explicit copies between host and device memory, and the kernel
      // buffers reached through memory the host maps (0 when every tensor is device memory).
      std::cout << "device copies: " << per_run(c0.copies, c1.copies) << " per run ("
                << per_run(c0.copy_in_bytes, c1.copy_in_bytes) << " bytes to the device, "
                << per_run(c0.copy_out_bytes, c1.copy_out_bytes)
                << " bytes to the host); host-mapped buffers: "
                << per_run(c0.host_mapped_buffers, c1.host_mapped_buffers)
                << " per run; device memory held: " << c1.device_bytes << " bytes\n";
    }
  }
  if (opts.memory)
    std::cout << "memory: peak " << mem.peak_bytes - mem_base
              << " bytes live during the run; plan: " << mem.planned_allocs << " storages, "
              << mem.planned_bytes << " bytes; outside the plan: " << mem.unplanned_allocs
              << " allocations, " << mem.unplanned_bytes << " bytes\n";
  if (opts.profile) std::cout << "profile (all runs):\n" << vm.ProfileReport();
  std::cout.flush();
}

}  // namespace

void AddRunOptions(CLI::App& app, std::shared_ptr<RunOptions> opts) {
  app.add_option("artifact", opts->artifact, "Compiled artifact (.so) to run")->required();
  app.add_option("--input,-i", opts->inputs,
                 "Input as NAME=FILE.npy, or NAME=DIR for a sequence input (DIR/0.npy, 1.npy, ...;"
                 " repeatable). An optional input (an ONNX initializer that is also a graph "
                 "input) not given takes its default");
  app.add_option("--output-dir,-o", opts->output_dir, "Write each output as DIR/<name>.npy");
  app.add_option("--repeat", opts->repeat, "Run N times and print the mean latency");
  app.add_option("--device", opts->device,
                 "GPU index a vulkan/cuda artifact runs on (default 0; cpu artifacts ignore it)")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            bool ok = !s.empty() && s.size() <= 5 &&
                      s.find_first_not_of("0123456789") == std::string::npos;
            return ok ? "" : "a GPU index (0, 1, ...) is expected, got '" + s + "'";
          },
          "INDEX"));
  app.add_option("--max-instructions", opts->max_instructions,
                 "Fail a run that executes more than N VM instructions (0: no bound)");
  app.add_flag("--profile", opts->profile, "Print time spent per kernel/builtin");
  app.add_flag("--memory", opts->memory,
               "Print the last run's peak of live tensor bytes, the storages of the compiler's "
               "memory plan and any allocation made outside it");
}

int ExecuteRun(const RunOptions& opts) {
  try {
    RunOrThrow(opts);
    return 0;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "error: " << EscapeControl(e.what(), /*keep_newlines=*/true) << std::endl;
    return 1;
  }
}

void AddRunCommand(CLI::App& app) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "Run a compiled artifact on .npy inputs");
  AddRunOptions(*sub, opts);
  sub->callback([opts] {
    int rc = ExecuteRun(*opts);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace relax::tools
