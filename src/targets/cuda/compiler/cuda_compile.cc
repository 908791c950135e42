// NVRTC in-process: one program per unit, compiled straight to SASS for the
// target's architecture (a cubin), so loading it needs no JIT step.
#include "targets/cuda/compiler/cuda_compile.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "runtime/sha256.h"
#include "support/error.h"
#include "toolchain/verified_cache.h"

#ifdef SY_HAVE_CUDA
#include <dlfcn.h>
#include <nvrtc.h>

#include <type_traits>
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

// NVRTC, loaded the first time a CUDA kernel is compiled: linking it put its
// 30 MB of pages into every process that runs the CLI or the Python package,
// CPU-only runs included. The toolkit's copy found at configure time comes
// first, then the dynamic loader's search (LD_LIBRARY_PATH on a GPU machine).
struct Nvrtc {
  std::string error;  // why it could not be loaded; empty when it was
  decltype(&nvrtcVersion) version = nullptr;
  decltype(&nvrtcGetErrorString) error_string = nullptr;
  decltype(&nvrtcCreateProgram) create_program = nullptr;
  decltype(&nvrtcCompileProgram) compile_program = nullptr;
  decltype(&nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&nvrtcGetProgramLog) log = nullptr;
  decltype(&nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&nvrtcGetCUBIN) cubin = nullptr;
  decltype(&nvrtcDestroyProgram) destroy_program = nullptr;
};

const Nvrtc& nvrtc() {
  static const Nvrtc loaded = [] {
    Nvrtc n;
    void* library = dlopen(SY_NVRTC_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!library) library = dlopen(SY_NVRTC_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char* why = dlerror();
      n.error = std::string("NVRTC cannot be loaded (") + SY_NVRTC_SONAME + ": " + (why ? why : "not found") + ")";
      return n;
    }
    auto find = [&](auto& function, const char* symbol) {
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(library, symbol));
      if (!function && n.error.empty()) n.error = std::string("NVRTC (") + SY_NVRTC_SONAME + ") lacks " + symbol;
    };
    find(n.version, "nvrtcVersion");
    find(n.error_string, "nvrtcGetErrorString");
    find(n.create_program, "nvrtcCreateProgram");
    find(n.compile_program, "nvrtcCompileProgram");
    find(n.log_size, "nvrtcGetProgramLogSize");
    find(n.log, "nvrtcGetProgramLog");
    find(n.cubin_size, "nvrtcGetCUBINSize");
    find(n.cubin, "nvrtcGetCUBIN");
    find(n.destroy_program, "nvrtcDestroyProgram");
    return n;
  }();
  return loaded;
}

std::string program_log(nvrtcProgram program) {
  size_t size = 0;
  if (nvrtc().log_size(program, &size) != NVRTC_SUCCESS || size <= 1) return "";
  std::string log(size, '\0');
  nvrtc().log(program, log.data());
  log.resize(size - 1);
  return log;
}

}  // namespace

// What compiled a cubin: part of its cache key.
static std::string nvrtc_version() {
  if (!nvrtc().error.empty()) return "no NVRTC";
  int major = 0, minor = 0;
  nvrtc().version(&major, &minor);
  return "NVRTC " + std::to_string(major) + "." + std::to_string(minor);
}

Cubin compile_cuda(const std::string& code, const std::string& name, const std::string& arch) {
  const Nvrtc& n = nvrtc();
  if (!n.error.empty()) throw Error(ErrorKind::kBackend, "cannot compile " + name + " for " + arch + ": " + n.error);
  nvrtcProgram program = nullptr;
  nvrtcResult created = n.create_program(&program, code.c_str(), (name + ".cu").c_str(), 0, nullptr, nullptr);
  if (created != NVRTC_SUCCESS)
    throw Error(ErrorKind::kBackend, "NVRTC could not take " + name + ": " + n.error_string(created));
  std::string arch_option = "--gpu-architecture=" + arch;
  // -default-device: the sy_ helpers are written once, as plain functions.
  // --fmad=false: each multiply and add rounds as the interpreter's does.
  const char* options[] = {arch_option.c_str(), "--std=c++17", "-default-device", "--fmad=false"};
  nvrtcResult compiled = n.compile_program(program, int(std::size(options)), options);
  Cubin out;
  out.arch = arch;
  out.log = program_log(program);
  size_t size = 0;
  if (compiled == NVRTC_SUCCESS && n.cubin_size(program, &size) == NVRTC_SUCCESS && size > 0) {
    out.image.resize(size);
    if (n.cubin(program, reinterpret_cast<char*>(out.image.data())) != NVRTC_SUCCESS) out.image.clear();
  }
  n.destroy_program(&program);
  if (compiled != NVRTC_SUCCESS || out.image.empty())
    throw Error(ErrorKind::kBackend, "NVRTC could not compile " + name + " for " + arch + " (" +
                                         n.error_string(compiled) + "):\n" + out.log);
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
