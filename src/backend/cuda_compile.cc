// NVRTC in-process: one program per unit, compiled straight to SASS for the
// target's architecture (a cubin), so loading it needs no JIT step.
#include "backend/cuda_compile.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "backend/verified_cache.h"
#include "runtime/sha256.h"
#include "support/error.h"

#ifdef SY_HAVE_CUDA
#include <nvrtc.h>
#endif

namespace switchyard {

bool cuda_toolkit_available() {
#ifdef SY_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

std::string cuda_arch(const Target* target) {
  std::string arch = target ? target->option("-arch") : "";
  if (arch.empty()) return "sm_90";
  bool digits = arch.size() > 3 && arch.compare(0, 3, "sm_") == 0;
  for (size_t i = 3; digits && i < arch.size(); ++i) digits = std::isdigit(static_cast<unsigned char>(arch[i]));
  if (!digits)
    throw Error(ErrorKind::kUsage, "target '" + target->str() + "': -arch must name a GPU architecture such as sm_90, not '" +
                                       arch + "'");
  return arch;
}

int cuda_compute_capability(const std::string& arch) { return std::stoi(arch.substr(3)); }

#ifdef SY_HAVE_CUDA

namespace {

std::string program_log(nvrtcProgram program) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return "";
  std::string log(size, '\0');
  nvrtcGetProgramLog(program, log.data());
  log.resize(size - 1);
  return log;
}

}  // namespace

// What compiled a cubin: part of its cache key.
static std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return "NVRTC " + std::to_string(major) + "." + std::to_string(minor);
}

Cubin compile_cuda(const std::string& code, const std::string& name, const std::string& arch) {
  nvrtcProgram program = nullptr;
  nvrtcResult created = nvrtcCreateProgram(&program, code.c_str(), (name + ".cu").c_str(), 0, nullptr, nullptr);
  if (created != NVRTC_SUCCESS)
    throw Error(ErrorKind::kBackend, "NVRTC could not take " + name + ": " + nvrtcGetErrorString(created));
  std::string arch_option = "--gpu-architecture=" + arch;
  // -default-device: the sy_ helpers are written once, as plain functions.
  const char* options[] = {arch_option.c_str(), "--std=c++17", "-default-device"};
  nvrtcResult compiled = nvrtcCompileProgram(program, int(std::size(options)), options);
  Cubin out;
  out.arch = arch;
  out.log = program_log(program);
  size_t size = 0;
  if (compiled == NVRTC_SUCCESS && nvrtcGetCUBINSize(program, &size) == NVRTC_SUCCESS && size > 0) {
    out.image.resize(size);
    if (nvrtcGetCUBIN(program, reinterpret_cast<char*>(out.image.data())) != NVRTC_SUCCESS) out.image.clear();
  }
  nvrtcDestroyProgram(&program);
  if (compiled != NVRTC_SUCCESS || out.image.empty())
    throw Error(ErrorKind::kBackend, "NVRTC could not compile " + name + " for " + arch + " (" +
                                         nvrtcGetErrorString(compiled) + "):\n" + out.log);
  return out;
}

#else

static std::string nvrtc_version() { return "no NVRTC"; }

Cubin compile_cuda(const std::string&, const std::string& name, const std::string& arch) {
  throw Error(ErrorKind::kBackend, "cannot compile " + name + " for " + arch +
                                       ": this Switchyard was built without a CUDA toolkit (configure with one, "
                                       "SY_CUDA=ON, to build for cuda devices)");
}

#endif

Cubin compile_cuda_cached(const std::string& code, const std::string& name, const std::string& arch,
                          const std::string& cache_dir, bool* cached) {
  std::string key = code + "\n--\n" + arch + "\n--\n" + nvrtc_version();
  std::string path = cache_dir + "/cubins/" + sha256_hex(key.data(), key.size()) + ".cubin";
  std::string problem;
  *cached = verified_cache_entry(path, &problem);
  if (*cached) {
    std::ifstream in(path, std::ios::binary);
    Cubin out{arch, std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()), ""};
    if (in.bad() || out.image.empty())
      throw Error(ErrorKind::kBackend, "cannot read the cached cubin " + path + " of " + name);
    return out;
  }
  Cubin out = compile_cuda(code, name, arch);
  std::error_code ignored;
  std::filesystem::create_directories(cache_dir + "/cubins", ignored);
  std::string temporary = cache_temporary_name(path);
  {
    std::ofstream file(temporary, std::ios::binary);
    file.write(reinterpret_cast<const char*>(out.image.data()), std::streamsize(out.image.size()));
    if (!file) throw Error(ErrorKind::kBackend, "cannot write the cubin of " + name + " to " + temporary);
  }
  store_cache_entry(temporary, path);
  return out;
}

}  // namespace switchyard
