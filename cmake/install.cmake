# cmake --install: the binaries, the SDK (libcbqs.so and include/cbqs,
# include/common), a CMake package (find_package(cbqs) -> cbqs::sdk), a
# pkg-config file, the systemd unit and the sample configuration.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS cbqsd cbqs devchain_bin cip11d cip11-runner transitd transit RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS cbqs_sdk_shared EXPORT cbqsTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/cbqs include/common DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT cbqsTargets NAMESPACE cbqs:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cbqs)
file(WRITE ${CMAKE_BINARY_DIR}/packaging/cbqsConfig.cmake.in
     "@PACKAGE_INIT@\ninclude(\"\${CMAKE_CURRENT_LIST_DIR}/cbqsTargets.cmake\")\ncheck_required_components(cbqs)\n")
configure_package_config_file(${CMAKE_BINARY_DIR}/packaging/cbqsConfig.cmake.in ${CMAKE_BINARY_DIR}/packaging/cbqsConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cbqs)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/packaging/cbqsConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/packaging/cbqsConfig.cmake ${CMAKE_BINARY_DIR}/packaging/cbqsConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cbqs)
# pkg-config: the prefix is the one installed to (cmake --install --prefix).
install(CODE "
  set(prefix \"\${CMAKE_INSTALL_PREFIX}\")
  file(WRITE \"\$ENV{DESTDIR}\${prefix}/${CMAKE_INSTALL_LIBDIR}/pkgconfig/cbqs.pc\"
\"prefix=\${prefix}
libdir=\\\${prefix}/${CMAKE_INSTALL_LIBDIR}
includedir=\\\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}

Name: cbqs
Description: The CBQS (CIP-39) client SDK
Version: ${PROJECT_VERSION}
Cflags: -I\\\${includedir} -std=c++20
Libs: -L\\\${libdir} -lcbqs
\")")
install(FILES packaging/cbqsd.service packaging/transitd.service packaging/cip11d.service packaging/cip11-runner.service
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/systemd/system)
install(FILES packaging/cbqsd.toml packaging/transitd.toml packaging/cip11d.toml packaging/cip11-runner.toml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/cbqs)
install(FILES docs/operations.md docs/protocol.md docs/quickstart.md docs/transit.md DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/cbqs)
