// Which of librpmpm's symbols other programs may link to. The library is
// built with -fvisibility=hidden: only what the public headers declare
// between RPM_API_BEGIN and RPM_API_END is exported, as librpma's version
// script and libpmem2's export list do for theirs. Internal names stay
// inside the library (tests and tools that need them link the internal
// archive, rpm_internal), and tests/install/exports_test.sh fails the build
// if any other name leaks out.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
/// Opens a region of public declarations (after a header's #includes).
#define RPM_API_BEGIN _Pragma("GCC visibility push(default)")
/// Closes it (at the end of the header).
#define RPM_API_END _Pragma("GCC visibility pop")
/// A name a public header must mention but programs may not link to: the
/// implementation classes behind a public one (forward declarations).
#define RPM_INTERNAL __attribute__((visibility("hidden")))
#else
#define RPM_API_BEGIN
#define RPM_API_END
#define RPM_INTERNAL
#endif
