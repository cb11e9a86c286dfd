// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief The library's version (semantic versioning: a minor release keeps
/// the 0.x API of the previous patch releases; CHANGELOG.md lists changes).
///
/// CMakeLists.txt's project(VERSION) and these numbers are kept equal by a
/// test (tests/targets/version_check.cmake).
#ifndef BURTORCH_VERSION_HPP
#define BURTORCH_VERSION_HPP

/// Major version: 0 while the API may still change between minor versions.
#define BURTORCH_VERSION_MAJOR 0
/// Minor version: new features; within 0.x also API changes.
#define BURTORCH_VERSION_MINOR 3
/// Patch version: fixes only.
#define BURTORCH_VERSION_PATCH 0
/// The version as "MAJOR.MINOR.PATCH".
#define BURTORCH_VERSION_STRING "0.3.0"
/// The version as one comparable number: MAJOR * 10000 + MINOR * 100 + PATCH.
#define BURTORCH_VERSION ((BURTORCH_VERSION_MAJOR * 10000) + (BURTORCH_VERSION_MINOR * 100) + BURTORCH_VERSION_PATCH)

#endif  // BURTORCH_VERSION_HPP
