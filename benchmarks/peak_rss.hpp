// SPDX-License-Identifier: Apache-2.0
// PeakRss: how far the process's resident set rose above where it stood when
// a benchmark began, as getrusage(RUSAGE_SELF).ru_maxrss reports it; and the
// process's page faults. The peak
// is process-wide and only ever grows, so each benchmark first resets it to
// the current resident set (Linux: writing 5 to /proc/self/clear_refs, which
// touches nothing else); where that is refused the growth reads as unknown.
#pragma once

#include <cstddef>

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>
#endif

namespace clzero_bench {

class PeakRss {
 public:
  /// Resets the peak and records the current resident set. Free heap memory
  /// is first handed back to the system: otherwise a tensor could reuse pages
  /// an earlier benchmark left resident and its memory would not show.
  PeakRss() noexcept {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
#if defined(__linux__)
    const int fd = open("/proc/self/clear_refs", O_WRONLY);
    if (fd >= 0) {
      reset_ = write(fd, "5", 1) == 1;
      close(fd);
    }
    baseline_ = current_bytes();
#endif
  }

  /// Whether the peak could be reset (the growth is meaningful).
  bool valid() const noexcept { return reset_ && baseline_ > 0; }

  /// Peak resident bytes since construction, minus the resident bytes then.
  double growth_bytes() const noexcept {
#if defined(__linux__)
    struct rusage u {};
    if (!valid() || getrusage(RUSAGE_SELF, &u) != 0) return -1;
    return static_cast<double>(u.ru_maxrss) * 1024.0 - static_cast<double>(baseline_);
#else
    return -1;
#endif
  }

  /// Page faults of the whole process so far (minor and major, all threads):
  /// memory the kernel had to map in, e.g. because a buffer was freed and
  /// allocated again.
  static double page_faults() noexcept {
#if defined(__linux__)
    struct rusage u {};
    if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
    return static_cast<double>(u.ru_minflt + u.ru_majflt);
#else
    return 0;
#endif
  }

  /// The resident set now (/proc/self/statm's second field, in pages).
  static std::size_t current_bytes() noexcept {
#if defined(__linux__)
    char text[128] = {};
    const int fd = open("/proc/self/statm", O_RDONLY);
    if (fd < 0) return 0;
    const ssize_t got = read(fd, text, sizeof text - 1);
    close(fd);
    if (got <= 0) return 0;
    const char* p = text;
    while (*p != '\0' && *p != ' ') ++p;  // skip the total size
    std::size_t pages = 0;
    for (++p; *p >= '0' && *p <= '9'; ++p) pages = pages * 10 + static_cast<std::size_t>(*p - '0');
    return pages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
#else
    return 0;
#endif
  }

 private:
  bool reset_ = false;
  std::size_t baseline_ = 0;
};

}  // namespace clzero_bench
