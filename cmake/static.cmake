# GPUGUARD_STATIC=ON: gpuguard-lint and gpuguard-webhook linked fully statically (glibc,
# libstdc++, OpenSSL, yaml-cpp, RE2 from Debian 12's lib*.a), so one file runs on any x86_64
# Linux kernel without a library installed: a scratch image, an old or new distribution, a
# Python wheel. One caveat: the cluster facts' API client (cluster/http_client.cpp) resolves a
# kubeconfig's host name with getaddrinfo, which a static glibc can do only through the NSS
# modules of its own version at run time (the link warns); IP addresses (the in-cluster
# service account's) need none (docs/cluster-facts.md).
# tools/release.sh builds this way; test/ship/release_test.sh checks the result.
# Included after the find_package() calls: it points their imported targets at the static
# archives (their own configs name the shared objects by full path, which -static cannot undo).
if(NOT GPUGUARD_STATIC)
  return()
endif()
if(GPUGUARD_SANITIZE OR GPUGUARD_BUILD_TESTS OR GPUGUARD_BUILD_FUZZ OR GPUGUARD_BUILD_BENCH)
  message(FATAL_ERROR "GPUGUARD_STATIC builds the two shipped binaries only: "
                      "configure it with -DGPUGUARD_BUILD_TESTS=OFF and no sanitizer, fuzzer or benchmark")
endif()

function(gpuguard_static_archive var name)
  find_library(${var} NAMES lib${name}.a NO_CACHE)
  if(NOT ${var})
    message(FATAL_ERROR "GPUGUARD_STATIC: lib${name}.a not found (Debian: the -dev package ships it)")
  endif()
  set(${var} ${${var}} PARENT_SCOPE)
endfunction()
gpuguard_static_archive(ssl_a ssl)
gpuguard_static_archive(crypto_a crypto)
gpuguard_static_archive(yamlcpp_a yaml-cpp)
gpuguard_static_archive(re2_a re2)

set_target_properties(OpenSSL::Crypto PROPERTIES IMPORTED_LOCATION ${crypto_a}
                      INTERFACE_LINK_LIBRARIES "Threads::Threads")
set_target_properties(OpenSSL::SSL PROPERTIES IMPORTED_LOCATION ${ssl_a})
foreach(config IMPORTED_LOCATION IMPORTED_LOCATION_NONE IMPORTED_LOCATION_RELEASE IMPORTED_LOCATION_RELWITHDEBINFO)
  set_target_properties(yaml-cpp PROPERTIES ${config} ${yamlcpp_a})
endforeach()
set_target_properties(PkgConfig::RE2 PROPERTIES INTERFACE_LINK_LIBRARIES "${re2_a};Threads::Threads")

# -static: every executable from here on (the two binaries; tests are off). glibc 2.34+ has
# threads inside libc.a, so std::thread needs no --whole-archive libpthread trick.
add_link_options(-static)
