# Model tests: compile the PP-OCR text-direction classifier once, then compare relaxc against onnxruntime.
# Python, the venv and the model are found through scripts/env.sh (via scripts/venv-python.sh), so a
# fresh clone works after `bash scripts/setup.sh`; without the venv every test fails with a clear message.
set(RELAX_VENV_PYTHON ${PROJECT_SOURCE_DIR}/scripts/venv-python.sh)
set(RELAX_MODEL_TEST_DIR ${CMAKE_CURRENT_SOURCE_DIR}/models)
set(RELAX_MODEL_WORK ${CMAKE_CURRENT_BINARY_DIR}/models)
# The compiled classifier artifact, shared by the model tests and the CLI tests (fixture cls_artifact).
set(RELAX_CLS_ARTIFACT ${RELAX_MODEL_WORK}/ch_ppocr_mobile_v2.0_cls.so)

add_test(NAME models.cls.compile
         COMMAND bash ${RELAX_VENV_PYTHON} ${RELAX_MODEL_TEST_DIR}/compile_model.py
                 --relaxc $<TARGET_FILE:relaxc> -o ${RELAX_CLS_ARTIFACT})
set_tests_properties(models.cls.compile PROPERTIES FIXTURES_SETUP cls_artifact TIMEOUT 600
                     LABELS models)

# relaxc vs onnxruntime; name, then cls_case.py source arguments.
function(relax_cls_case name)
  add_test(NAME models.cls.${name}
           COMMAND bash ${RELAX_VENV_PYTHON} ${RELAX_MODEL_TEST_DIR}/cls_case.py
                   --relaxc $<TARGET_FILE:relaxc> --artifact ${RELAX_CLS_ARTIFACT}
                   --work ${RELAX_MODEL_WORK}/${name} --label models.cls.${name} ${ARGN})
  set_tests_properties(models.cls.${name} PROPERTIES FIXTURES_REQUIRED cls_artifact TIMEOUT 300
                       LABELS models)
endfunction()

# Two different (batch, h, w) from the same artifact (dynamic batch/h/w).
relax_cls_case(random_1x48x192 --random 1,48,192 --seed 1)
relax_cls_case(random_3x64x100 --random 3,64,100 --seed 2)
relax_cls_case(zeros_1x48x192 --zeros 1,48,192)

# Rendered text: upright must be class 0, its 180-degree rotation class 1.
add_test(NAME models.cls.render_text
         COMMAND bash ${RELAX_VENV_PYTHON} ${RELAX_MODEL_TEST_DIR}/render_text.py
                 --text "Hello relaxc 2026" ${RELAX_MODEL_WORK}/text)
set_tests_properties(models.cls.render_text PROPERTIES FIXTURES_SETUP cls_text_images TIMEOUT 120
                     LABELS models)
relax_cls_case(text_upright --input-npy ${RELAX_MODEL_WORK}/text/upright.npy --expect-class 0)
relax_cls_case(text_upside_down --input-npy ${RELAX_MODEL_WORK}/text/upside_down.npy --expect-class 1)
set_tests_properties(models.cls.text_upright models.cls.text_upside_down
                     PROPERTIES FIXTURES_REQUIRED "cls_artifact;cls_text_images")
