# SPDX-License-Identifier: Apache-2.0
# Installs the compliance kit users run in their own CI
# (docs/compliance-in-your-ci.md):
#   bin/burtorch-compliance                    the command (Python 3, standard library only)
#   share/burtorch/compliance/deviations.json  the deviation record it applies
#   share/burtorch/compliance/deviations.md    the same record, rendered for people
#   share/burtorch/compliance/.clang-tidy      the project's clang-tidy profile
#   share/burtorch/compliance/cppcheck-suppressions.txt
#                                              cppcheck checks outside the profile
# The command finds its data in ../share/burtorch/compliance relative to its
# own directory, so the default data directory layout is kept.
include(GNUInstallDirs)

set(_burtorch_compliance_root "${CMAKE_CURRENT_LIST_DIR}/..")
install(PROGRAMS "${_burtorch_compliance_root}/tools/burtorch-compliance"
        DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(FILES
          "${_burtorch_compliance_root}/docs/misra/deviations.json"
          "${_burtorch_compliance_root}/docs/misra/deviations.md"
          "${_burtorch_compliance_root}/.clang-tidy"
          "${_burtorch_compliance_root}/tools/gates/cppcheck-suppressions.txt"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/burtorch/compliance")
unset(_burtorch_compliance_root)
