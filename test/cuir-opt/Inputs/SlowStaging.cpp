//===- SlowStaging.cpp - Widens the moment a staged output appears --------===//
//
// Preloaded (LD_PRELOAD) into cuir-opt by the interruption tests: each call
// that makes a staged output appear (mkdir of a `.cuir-` directory, the first
// close of a `.cuir-tmp-` file) returns 300 ms late, so that a signal sent
// as soon as the output appears lands right after its creation.
//
//===----------------------------------------------------------------------===//

#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {
template <typename F> F real(const char *name) {
  return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

void linger() { ::usleep(300 * 1000); }

bool isStagedFile(int fd) {
  char link[64], target[4096];
  std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  ssize_t n = ::readlink(link, target, sizeof(target) - 1);
  if (n <= 0)
    return false;
  target[n] = '\0';
  return std::strstr(target, ".cuir-tmp-") != nullptr;
}
} // namespace

extern "C" int close(int fd) {
  static auto realClose = real<int (*)(int)>("close");
  bool staged = isStagedFile(fd);
  int result = realClose(fd);
  if (staged)
    linger();
  return result;
}

extern "C" int mkdir(const char *path, mode_t mode) {
  static auto realMkdir = real<int (*)(const char *, mode_t)>("mkdir");
  int result = realMkdir(path, mode);
  if (result == 0 && std::strstr(path, "/.cuir-"))
    linger();
  return result;
}
