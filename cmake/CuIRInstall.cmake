# Installs CuIR's libraries, headers (including the ODS-generated ones) and a
# CMake package, after CIRCT's export scheme: an export set of targets plus a
# CuIRConfig.cmake that finds MLIR and includes it.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CUIR_EXPORTED_LIBS CuIRDialect CuIRPasses CuIRSupport CuIRInterpreter
    CuIRVariants CuIRTransfer CuIRLower CuIRLLM CuIRLift CuIRRegistration CuIRCAPI)
foreach(lib ${CUIR_EXPORTED_LIBS})
  target_include_directories(${lib} INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()
install(TARGETS ${CUIR_EXPORTED_LIBS} EXPORT CuIRTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS cuir-opt RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(DIRECTORY include/cuir include/cuir-c
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/cuir
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.inc"
  PATTERN "CMakeFiles" EXCLUDE)
install(DIRECTORY dialects/cuir DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.td")
install(FILES passes/Passes.td
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cuir/Passes)
install(FILES ${CUIR_DOC_FILES} DESTINATION ${CMAKE_INSTALL_DOCDIR})

# MLIR's C API lives in static archives next to libMLIR.so; C API users link
# the IR part of it by path so that it resolves against the shared library.
find_library(CUIR_MLIR_CAPI_LIBRARY
  NAMES libMLIRCAPIIR.a HINTS ${LLVM_LIBRARY_DIR} NO_DEFAULT_PATH)

set(CUIR_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/cuir)
install(EXPORT CuIRTargets NAMESPACE CuIR:: DESTINATION ${CUIR_CMAKE_DIR})
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/CuIRConfig.cmake.in
  ${PROJECT_BINARY_DIR}/lib/cmake/cuir/CuIRConfig.cmake
  INSTALL_DESTINATION ${CUIR_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/lib/cmake/cuir/CuIRConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/lib/cmake/cuir/CuIRConfig.cmake
              ${PROJECT_BINARY_DIR}/lib/cmake/cuir/CuIRConfigVersion.cmake
  DESTINATION ${CUIR_CMAKE_DIR})
