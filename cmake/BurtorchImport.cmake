# SPDX-License-Identifier: Apache-2.0
# Installs the model importer (docs/import.md):
#   bin/burtorch-import                        the command (Python 3, python3-onnx, python3-numpy)
#   share/burtorch/python/burtorch_onnx_graph.py  its reading of the graph into the library's layers
#   share/burtorch/python/burtorch_onnx_emit.py   the header it writes from that
#   share/burtorch/python/burtorch_onnx_ref.py    the numpy ONNX evaluator it folds and validates with
#   lib/cmake/burtorch/BurtorchImportModel.cmake  burtorch_import_model(), for the build
# The command finds its module in ../share/burtorch/python relative to its
# own directory, and the installed library (for validate) in its prefix.
include(GNUInstallDirs)

set(_burtorch_import_root "${CMAKE_CURRENT_LIST_DIR}/..")
install(PROGRAMS "${_burtorch_import_root}/tools/burtorch-import" DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(FILES "${_burtorch_import_root}/tools/burtorch_onnx_graph.py"
              "${_burtorch_import_root}/tools/burtorch_onnx_emit.py"
              "${_burtorch_import_root}/tools/burtorch_onnx_ref.py"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/burtorch/python")
install(FILES "${_burtorch_import_root}/cmake/BurtorchImportModel.cmake"
        DESTINATION "${CMAKE_INSTALL_LIBDIR}/cmake/burtorch")
unset(_burtorch_import_root)

# In a source tree (add_subdirectory) the same function runs the checkout's tool.
set(BURTORCH_IMPORT_COMMAND "${CMAKE_CURRENT_LIST_DIR}/../tools/burtorch-import" CACHE INTERNAL "")
include("${CMAKE_CURRENT_LIST_DIR}/BurtorchImportModel.cmake")
