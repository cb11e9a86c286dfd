# SPDX-License-Identifier: Apache-2.0
# Install rules: `cmake --install <build> --prefix P` installs
#   P/include/burtorch/...            public headers, the generated
#                                     build_config.hpp, port headers,
#                                     (lanes/ops.hpp brings a tape of Lanes
#                                     its members: core/detail/)
#   P/lib/libburtorch.a               the core and nn
#   P/lib/libburtorch_port_*.a        the port libraries this build made
#   P/lib/cmake/burtorch/             burtorchConfig.cmake, ...Version.cmake,
#                                     exported targets burtorch::burtorch,
#                                     burtorch::port, burtorch::port_<name>;
#                                     burtorchMpiTargets.cmake: the `mpi`
#                                     component, burtorch::port_mpi
#   P/lib/pkgconfig/burtorch.pc       (and burtorch-mpi.pc with port_mpi)
#   P/share/burtorch/burtorch.mk      the archives' sources, include
#                                     directories and flags, and rules, for a
#                                     Makefile or an IDE (BurtorchMake.cmake)
#   P/share/burtorch/src/             those sources
# and, for a board build (BURTORCH_BOARD), the board support:
#   P/lib/burtorch/board/...          startup objects (burtorch::board)
#   P/share/burtorch/board/           board.ld, sections.ld, board.cmake (and
#                                     uart_console.cpp where the board has one)
#   P/share/burtorch/toolchains/      the CMake toolchain files
#   P/share/burtorch/tools/qemu-run   the QEMU runner
# with burtorch_target_program() defined by find_package(burtorch).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Fixed "lib" (not a multiarch libdir): the pkg-config file finds the prefix
# relative to itself.
set(CMAKE_INSTALL_LIBDIR lib)
set(BURTORCH_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/burtorch)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/burtorch DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# port/mpi.hpp only with burtorch::port_mpi (the `mpi` component, below).
if(TARGET burtorch_port_mpi)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/port/include/burtorch DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
else()
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/port/include/burtorch DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
          PATTERN "mpi.hpp" EXCLUDE)
endif()
install(FILES ${BURTORCH_GENERATED_INCLUDE_DIR}/burtorch/build_config.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/burtorch)
# Template definitions of Tape<T>, for tapes of a scalar type the archive does
# not instantiate (a tape of Lanes): the out-of-line members under
# <burtorch/core/detail/>, which lanes/ops.hpp includes (installed with the
# rest of include/burtorch).

set(_burtorch_export_targets burtorch ${BURTORCH_PORT_TARGETS})
if(TARGET burtorch_board)
  list(APPEND _burtorch_export_targets burtorch_board)
endif()
install(TARGETS ${_burtorch_export_targets} EXPORT burtorchTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        OBJECTS DESTINATION ${CMAKE_INSTALL_LIBDIR}/burtorch/board
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT burtorchTargets NAMESPACE burtorch:: DESTINATION ${BURTORCH_INSTALL_CMAKEDIR})
# The `mpi` component: burtorch::port_mpi in an export set of its own, so
# that only a project asking for it needs MPI (its archive links MPI::MPI_C).
set(BURTORCH_PACKAGE_HAS_MPI OFF)
if(TARGET burtorch_port_mpi)
  set(BURTORCH_PACKAGE_HAS_MPI ON)
  install(TARGETS burtorch_port_mpi EXPORT burtorchMpiTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT burtorchMpiTargets NAMESPACE burtorch:: DESTINATION ${BURTORCH_INSTALL_CMAKEDIR})
endif()

set(BURTORCH_PACKAGE_HAS_BOARD OFF)
if(TARGET burtorch_board)
  set(BURTORCH_PACKAGE_HAS_BOARD ON)
  install(FILES ${BURTORCH_BOARD_DIR}/board.ld ${BURTORCH_BOARD_DIR}/board.cmake
                ${PROJECT_SOURCE_DIR}/targets/boards/cortex-m/sections.ld
          DESTINATION ${CMAKE_INSTALL_DATADIR}/burtorch/board)
  install(FILES ${PROJECT_SOURCE_DIR}/toolchains/arm-none-eabi.cmake ${PROJECT_SOURCE_DIR}/toolchains/${BURTORCH_CPU}.cmake
          DESTINATION ${CMAKE_INSTALL_DATADIR}/burtorch/toolchains)
  install(PROGRAMS ${PROJECT_SOURCE_DIR}/tools/qemu-run DESTINATION ${CMAKE_INSTALL_DATADIR}/burtorch/tools)
  # A board's alternative console (e.g. the MPS2 UART), as source to build
  # into a firmware in place of semihosting (docs/porting.md).
  if(EXISTS ${BURTORCH_BOARD_DIR}/uart_console.cpp)
    install(FILES ${BURTORCH_BOARD_DIR}/uart_console.cpp DESTINATION ${CMAKE_INSTALL_DATADIR}/burtorch/board)
  endif()
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/BurtorchProgram.cmake DESTINATION ${BURTORCH_INSTALL_CMAKEDIR})
endif()

# A cross build for Linux (aarch64, armv7) carries its toolchain file like a
# board build does: a project consumes the install with
#   -DCMAKE_TOOLCHAIN_FILE=<prefix>/share/burtorch/toolchains/<file> -DCMAKE_PREFIX_PATH=<prefix>
set(BURTORCH_PACKAGE_TOOLCHAIN "")
if(TARGET burtorch_board)
  set(BURTORCH_PACKAGE_TOOLCHAIN "${BURTORCH_CPU}.cmake")
elseif(CMAKE_CROSSCOMPILING AND CMAKE_TOOLCHAIN_FILE)
  get_filename_component(_burtorch_toolchain "${CMAKE_TOOLCHAIN_FILE}" ABSOLUTE)
  get_filename_component(_burtorch_toolchain_dir "${_burtorch_toolchain}" DIRECTORY)
  if(_burtorch_toolchain_dir STREQUAL "${PROJECT_SOURCE_DIR}/toolchains")
    get_filename_component(BURTORCH_PACKAGE_TOOLCHAIN "${_burtorch_toolchain}" NAME)
    install(FILES "${_burtorch_toolchain}" DESTINATION ${CMAKE_INSTALL_DATADIR}/burtorch/toolchains)
  endif()
endif()

# Values burtorchConfig.cmake reports (BURTORCH_BOARD, BURTORCH_CPU, flags).
set(BURTORCH_PACKAGE_BOARD "${BURTORCH_BOARD}")
set(BURTORCH_PACKAGE_CPU "${BURTORCH_CPU}")
set(BURTORCH_PACKAGE_QEMU_MACHINE "${BURTORCH_BOARD_QEMU_MACHINE}")
set(BURTORCH_PACKAGE_QEMU_TIMEOUT "${BURTORCH_QEMU_TIMEOUT}")
set(BURTORCH_PACKAGE_PORT "${BURTORCH_PORT}")
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/burtorchConfig.cmake.in
  ${PROJECT_BINARY_DIR}/burtorchConfig.cmake INSTALL_DESTINATION ${BURTORCH_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_DATADIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/burtorchConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES ${PROJECT_BINARY_DIR}/burtorchConfig.cmake ${PROJECT_BINARY_DIR}/burtorchConfigVersion.cmake
        DESTINATION ${BURTORCH_INSTALL_CMAKEDIR})

# pkg-config: the core and the port library this build made. Core flags the
# archive was compiled with are not needed by users; C++17 is.
set(BURTORCH_PC_PORT_LIBS "")
if(BURTORCH_PORT STREQUAL "posix")
  set(BURTORCH_PC_PORT_LIBS "-lburtorch_port_posix")
elseif(BURTORCH_PORT STREQUAL "null")
  set(BURTORCH_PC_PORT_LIBS "-lburtorch_port_null")
elseif(BURTORCH_PORT STREQUAL "cortex-m")
  set(BURTORCH_PC_PORT_LIBS "-lburtorch_port_cortex_m_core -lburtorch_port_semihosting")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/burtorch.pc.in ${PROJECT_BINARY_DIR}/burtorch.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/burtorch.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
# burtorch-mpi.pc: the MPI port over burtorch.pc, with the MPI flags CMake
# found (port/CMakeLists.txt: BURTORCH_PC_MPI_CFLAGS, BURTORCH_PC_MPI_LIBS)
# so that no MPI module of pkg-config is assumed.
if(TARGET burtorch_port_mpi)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/burtorch-mpi.pc.in ${PROJECT_BINARY_DIR}/burtorch-mpi.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/burtorch-mpi.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
# The sources and a Make fragment for builds without CMake:
# share/burtorch/burtorch.mk, share/burtorch/src/ (cmake/BurtorchMake.cmake).
include(${PROJECT_SOURCE_DIR}/cmake/BurtorchMake.cmake)

install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/CHANGELOG.md
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/burtorch)
