# The Python packages (pyproject.toml: relaxc; python/runtime/pyproject.toml: relaxc-runtime),
# pip-installed from this checkout into a venv of their own (install_package.sh; label python).
# The fixture python_package also copies the installed relaxc to ${RELAX_PY_PKG}/site, which
# tests run by the test venv put on PYTHONPATH (models.job.ocr: the OCR job through the facade).
set(RELAX_PY_TEST_DIR ${CMAKE_CURRENT_SOURCE_DIR}/python)
set(RELAX_PY_PKG ${CMAKE_BINARY_DIR}/python-pkg)
set(RELAX_PY_WORK ${CMAKE_CURRENT_BINARY_DIR}/python)

# pip install . and pip install python/runtime (a rerun reuses build-pip-*: relinks at most).
add_test(NAME python.package.install
         COMMAND bash ${RELAX_PY_TEST_DIR}/install_package.sh ${RELAX_PY_PKG})
set_tests_properties(python.package.install PROPERTIES FIXTURES_SETUP python_package
                     TIMEOUT 1800 LABELS python)

# compile PP-OCR cls and MiniLM, run on NumPy vs onnxruntime, two threads vs the CLI's bytes,
# InferenceSession and its cache, errors.
add_test(NAME python.package
         COMMAND bash ${RELAX_PY_TEST_DIR}/venv_run.sh ${RELAX_PY_PKG}
                 ${RELAX_PY_TEST_DIR}/package_test.py --relaxc $<TARGET_FILE:relaxc>
                 --work ${RELAX_PY_WORK}/package)
set_tests_properties(python.package PROPERTIES FIXTURES_REQUIRED python_package TIMEOUT 600
                     LABELS python)

# torch CPU tensors in through DLPack (the export venv's torch; skips without it).
add_test(NAME python.package.torch
         COMMAND bash ${RELAX_PY_TEST_DIR}/torch_run.sh ${RELAX_PY_PKG}
                 ${RELAX_PY_TEST_DIR}/package_test.py --torch --relaxc $<TARGET_FILE:relaxc>
                 --work ${RELAX_PY_WORK}/torch)
set_tests_properties(python.package.torch PROPERTIES FIXTURES_REQUIRED python_package
                     TIMEOUT 300 LABELS python SKIP_RETURN_CODE 77)

# Tensors on the module's device (to_device, outputs_on_device, DLPack, device_traffic, free and
# close) on a tiny model for vulkan (lavapipe) and cpu.
add_test(NAME python.package.device
         COMMAND bash ${RELAX_PY_TEST_DIR}/venv_run.sh ${RELAX_PY_PKG}
                 ${RELAX_PY_TEST_DIR}/device_test.py --work ${RELAX_PY_WORK}/device)
set_tests_properties(python.package.device PROPERTIES FIXTURES_REQUIRED python_package
                     TIMEOUT 300 LABELS "python;gpu")

# relaxc-runtime: no compiler library linked or mapped; loads and runs a CLI-compiled artifact.
add_test(NAME python.runtime_package
         COMMAND bash ${RELAX_PY_TEST_DIR}/venv_run.sh ${RELAX_PY_PKG}
                 ${RELAX_PY_TEST_DIR}/runtime_package_test.py --relaxc $<TARGET_FILE:relaxc>
                 --work ${RELAX_PY_WORK}/runtime)
set_tests_properties(python.runtime_package PROPERTIES FIXTURES_REQUIRED python_package
                     TIMEOUT 300 LABELS python)
