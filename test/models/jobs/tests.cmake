# Real jobs on real input (issue 9): each compiles its model(s) once with relaxc and calls them
# in-process through the relaxc package (relaxc.load; the copy python.package.install makes,
# test/python/tests.cmake), next to onnxruntime.
set(RELAX_VENV_PYTHON ${PROJECT_SOURCE_DIR}/scripts/venv-python.sh)
set(RELAX_JOBS_DIR ${CMAKE_CURRENT_SOURCE_DIR}/models/jobs)
set(RELAX_JOBS_WORK ${CMAKE_CURRENT_BINARY_DIR}/models_jobs)

# relax_model_job(NAME SCRIPT ARGS...): ctest models.job.NAME. Exit 77 is a skip (export cache
# missing with RELAX_EXPORT_MODELS=0, as models.suite.exported).
function(relax_model_job name script)
  add_test(NAME models.job.${name}
           COMMAND bash ${RELAX_VENV_PYTHON} ${RELAX_JOBS_DIR}/${script}
                   --relaxc $<TARGET_FILE:relaxc> --package-dir ${CMAKE_BINARY_DIR}/python-pkg/site
                   --work ${RELAX_JOBS_WORK}/${name} ${ARGN})
  set_tests_properties(models.job.${name} PROPERTIES TIMEOUT 600 LABELS models
                       SKIP_RETURN_CODE 77 FIXTURES_REQUIRED python_package)
endfunction()

# Text generation: greedy decode of 32 tokens with the GPT-2-style step and its KV cache.
relax_model_job(gpt2_decode gpt2_decode.py)

# Sentence embeddings: all-MiniLM-L6-v2 on two paraphrases and two unrelated sentences (batch and
# each alone), cosine similarities and embeddings vs onnxruntime.
relax_model_job(minilm minilm.py)

# Voice activity: an espeak-ng sentence padded with silence, chunk by chunk with the state
# carried (silero_vad_16k_sequence: all chunks in one call); every model of the silero-vad wheel.
relax_model_job(vad vad.py
                --models silero_vad,silero_vad_16k_op15,silero_vad_half,silero_vad_16k_sequence,silero_vad_op18_ifless,silero_vad_openvino_16k)
