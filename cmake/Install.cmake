# cmake --install: headers, the library, the two executables, a CMake package
# (find_package(holdfast CONFIG) -> holdfast::holdfast) and holdfast.pc.
include(CMakePackageConfigHelpers)
# Every rule below is part of the `holdfast` package (cmake/Package.cmake) but
# the checker's, which is its own.
set(CMAKE_INSTALL_DEFAULT_COMPONENT_NAME holdfast)
set(HOLDFAST_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/holdfast)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/holdfast
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
install(TARGETS holdfast EXPORT holdfastTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(HOLDFAST_PROMETHEUS)
  install(TARGETS holdfast_prometheus EXPORT holdfastTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
if(TARGET holdfast_cli)
  install(TARGETS holdfast_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
if(TARGET holdfast_check)
  install(TARGETS holdfast_check RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT check)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/holdfast)
# Each package's copyright and changelog, where Debian looks for them
# (/usr/share/doc/<package>/). The changelog, in Debian's form, names the
# maintainer the .debs are published as (cmake/Package.cmake) and the build's
# date (SOURCE_DATE_EPOCH when set), compressed as Debian wants it.
set(HOLDFAST_PACKAGE_CONTACT "holdfast maintainers <maintainers@holdfast.invalid>" CACHE STRING
    "The maintainer the .debs are published as: Name <mail>")
string(TIMESTAMP HOLDFAST_DEB_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
find_program(HOLDFAST_GZIP gzip)
foreach(component holdfast check)
  set(HOLDFAST_DEB_PACKAGE holdfast)
  if(component STREQUAL "check")
    set(HOLDFAST_DEB_PACKAGE holdfast-check)
  endif()
  set(doc ${PROJECT_BINARY_DIR}/debian/${HOLDFAST_DEB_PACKAGE})
  set(CPACK_PACKAGE_CONTACT ${HOLDFAST_PACKAGE_CONTACT})
  configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/changelog.in ${doc}/changelog @ONLY)
  set(files ${PROJECT_SOURCE_DIR}/cmake/debian/copyright)
  if(HOLDFAST_GZIP)
    execute_process(COMMAND ${HOLDFAST_GZIP} -9n -c ${doc}/changelog OUTPUT_FILE ${doc}/changelog.gz)
    list(APPEND files ${doc}/changelog.gz)
  endif()
  install(FILES ${files} DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${HOLDFAST_DEB_PACKAGE} COMPONENT ${component})
endforeach()
# The exceptions the holdfast package makes to Debian's rules, with why.
install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/holdfast.lintian-overrides
        DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME holdfast)
foreach(page IN LISTS HOLDFAST_MAN_PAGE_FILES)
  get_filename_component(name ${page} NAME)
  set(component holdfast)
  if(name MATCHES "^holdfast-check")
    set(component check)
  endif()
  install(FILES ${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT ${component})
endforeach()

# A static libholdfast needs hiredis and OpenSSL at the final link (and only there).
get_target_property(HOLDFAST_TYPE holdfast TYPE)
if(HOLDFAST_TYPE STREQUAL "STATIC_LIBRARY")
  set(HOLDFAST_STATIC ON)
  list(GET HIREDIS_LINK_LIBRARIES 0 HOLDFAST_HIREDIS_HINT)
  get_filename_component(HOLDFAST_HIREDIS_HINT "${HOLDFAST_HIREDIS_HINT}" DIRECTORY)
  # Libs.private, not Requires.private: hiredis's Cflags would reach consumers' compiles.
  list(JOIN HIREDIS_LDFLAGS " " HOLDFAST_PC_PRIVATE)
  set(HOLDFAST_PC_PRIVATE "Libs.private: ${HOLDFAST_PC_PRIVATE} -lssl -lcrypto")
else()
  set(HOLDFAST_STATIC OFF)
  set(HOLDFAST_PC_PRIVATE "")
endif()

install(EXPORT holdfastTargets NAMESPACE holdfast:: DESTINATION ${HOLDFAST_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/holdfastConfig.cmake.in
  ${PROJECT_BINARY_DIR}/holdfastConfig.cmake INSTALL_DESTINATION ${HOLDFAST_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/holdfastConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/holdfastConfig.cmake ${PROJECT_BINARY_DIR}/holdfastConfigVersion.cmake
        DESTINATION ${HOLDFAST_CMAKE_DIR})

# prefix relative to the .pc file, so `cmake --install --prefix` elsewhere works.
file(RELATIVE_PATH HOLDFAST_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
string(REGEX REPLACE "/$" "" HOLDFAST_PC_TO_PREFIX "${HOLDFAST_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/holdfast.pc.in ${PROJECT_BINARY_DIR}/holdfast.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/holdfast.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
