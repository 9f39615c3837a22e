# Packaging: `cpack -G DEB` (run in the build directory) writes
# gpuguard_<version>_<arch>.deb with both binaries, their documentation and
# the policy schema. Depends is computed by dpkg-shlibdeps from the libraries
# the binaries really load, so it stays right when a library is added.
#
#   cmake --build build && (cd build && cpack -G DEB)
#   sudo dpkg -i build/gpuguard_*.deb      (Debian 12 / bookworm)
#
# The binaries install to /usr/bin, the docs to /usr/share/doc/gpuguard, the
# schema to /usr/share/gpuguard/policy.schema.json. test/ship/package_test.sh
# builds the package and runs both binaries from an unpacked copy.
include(GNUInstallDirs)
# `install` and cpack package what is built, without building `all` first (the test suite
# and the fuzzers are not in the package); build the two binaries before packaging.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

install(TARGETS gpuguard-webhook gpuguard-lint RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
set(GPUGUARD_DOC_DIR ${CMAKE_INSTALL_DATAROOTDIR}/doc/gpuguard)
install(FILES README.md CHANGELOG.md DESTINATION ${GPUGUARD_DOC_DIR})
# Debian policy 12.5: the licence goes to /usr/share/doc/<package>/copyright.
install(FILES LICENSE DESTINATION ${GPUGUARD_DOC_DIR} RENAME copyright)
install(DIRECTORY docs/ DESTINATION ${GPUGUARD_DOC_DIR}/docs FILES_MATCHING PATTERN "*.md")
install(FILES manifests/base/policy.yaml DESTINATION ${GPUGUARD_DOC_DIR}/examples)
install(FILES docs/policy.schema.json DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/gpuguard)

set(CPACK_PACKAGE_NAME gpuguard)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "gpuguard")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Stops broken GPU workloads before they reach a Kubernetes cluster")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)   # gpuguard_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "gpuguard maintainers <maintainers@gpuguard.io>" CACHE STRING
    "Maintainer field of the .deb")
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "Kubernetes GPU workload checks: linter and admission webhook\n\
gpuguard-lint checks Kubernetes manifests (files, directories, stdin) for GPU\n\
mistakes: fractional or misspelt GPU resources, missing GPU tolerations and\n\
driver pins, CUDA images too new for the nodes' driver, and more; it writes\n\
text, JSON, SARIF, JUnit and GitHub annotations.\n\
gpuguard-webhook is the same rule engine as an HTTPS ValidatingAdmissionWebhook.")
include(CPack)
