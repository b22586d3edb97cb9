# CPack: `cpack` (or the `package` target) makes two .debs, and the
# `package_source` target a source tarball for FetchContent (README.md).
#   holdfast        libholdfast (and libholdfast-prometheus where built), the
#                   headers, the CMake package, holdfast.pc, the holdfast tool
#                   and its man page
#   holdfast-check  the safety checker (RELIABILITY.md), which starts its own
#                   redis-server and redis-sentinel processes
# Build it shared, with the tools and an install prefix of /usr:
#   cmake -S . -B build-package -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DCMAKE_INSTALL_PREFIX=/usr \
#         -DHOLDFAST_BUILD_TESTS=OFF -DHOLDFAST_BUILD_EXAMPLES=OFF -DHOLDFAST_BUILD_BENCH=OFF
#   cmake --build build-package -j2 && (cd build-package && cpack)
set(CPACK_PACKAGE_NAME holdfast)
set(CPACK_PACKAGE_VENDOR holdfast)
# -DHOLDFAST_PACKAGE_CONTACT="Name <mail>" (cmake/Install.cmake) to publish: the
# packages and their changelogs name the same maintainer.
set(CPACK_PACKAGE_CONTACT "${HOLDFAST_PACKAGE_CONTACT}")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_GENERATOR DEB)  # into /usr, DEB's default prefix
# Stripped, as Debian ships binaries (lintian: unstripped-binary-or-object).
set(CPACK_STRIP_FILES ON)

# One .deb per component: every install() rule goes to `holdfast`
# (cmake/Install.cmake sets the default) except the checker's.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL holdfast check)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_HOLDFAST_PACKAGE_NAME holdfast)
# The description's first line is CPACK_PACKAGE_DESCRIPTION_SUMMARY (the project's).
set(CPACK_DEBIAN_HOLDFAST_DESCRIPTION "Reentrant, fair, read-write, spin, fenced and simple locks, multi-lock,
RedLock, semaphores and a count-down latch for C++20, sharing keys, channels
and messages with Redisson's, so C++ and Java services share locks. The
library, its headers, CMake package and holdfast.pc, and the holdfast tool.")
set(CPACK_DEBIAN_HOLDFAST_PACKAGE_SHLIBDEPS ON)  # hiredis, OpenSSL, libstdc++ as dpkg-shlibdeps finds them
# DEBIAN/shlibs: a package of the user's that links libholdfast gets
# "holdfast (>= <this version>)" from dpkg-shlibdeps (tests/consumer/run.sh
# checks it); the soname changes with the minor version (0.1), as the CMake
# package's compatibility does.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)  # holdfast's libraries: the checker has none
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
# dpkg runs ldconfig when the libraries come or go (lintian: lacks-ldconfig-trigger).
configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/triggers ${PROJECT_BINARY_DIR}/debian/holdfast/triggers COPYONLY)
set(CPACK_DEBIAN_HOLDFAST_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/debian/holdfast/triggers)
set(CPACK_DEBIAN_CHECK_PACKAGE_NAME holdfast-check)
set(CPACK_DEBIAN_CHECK_DESCRIPTION "holdfast-check, the safety checker of holdfast's locks: it runs client
processes through real faults (killed and paused holders, dropped connections,
server restarts, failovers) on redis-server processes of its own, and checks
mutual exclusion, fencing and liveness.")
set(CPACK_DEBIAN_CHECK_PACKAGE_SECTION devel)
# It depends on that exact holdfast (libholdfast among its libraries), and on
# what dpkg-shlibdeps finds for the others (libc, libstdc++, hiredis); it runs
# in the check package's staging directory, beside holdfast's, where it finds
# libholdfast (with no dependency information: CPack passes --ignore-missing-info).
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_COMPONENT_CHECK_DEPENDS holdfast)
set(CPACK_DEBIAN_CHECK_PACKAGE_DEPENDS "redis-server, redis-sentinel")
set(CPACK_DEBIAN_CHECK_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ../holdfast${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR})

# The source tarball: the tree as it is, without builds and version control.
set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_PACKAGE_FILE_NAME holdfast-${PROJECT_VERSION})
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git" "/build[^/]*/" "/__pycache__/" "~$" "\\\\.swp$")

include(CPack)
