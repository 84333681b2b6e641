# Security regression tests (issue 26; label security): hostile names never reach a shell, no
# write follows a planted symlink, external data is read only as far as tensors declare, and a
# pattern table cannot take a registered plugin's name (security_cases.py CASE).
foreach(case injection symlink amplification plugin_names)
  add_test(NAME security.${case}
           COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/venv-python.sh
                   ${CMAKE_CURRENT_SOURCE_DIR}/security/security_cases.py ${case}
                   --relaxc $<TARGET_FILE:relaxc> --relax-run $<TARGET_FILE:relax-run>
                   --work ${CMAKE_CURRENT_BINARY_DIR}/security)
  set_tests_properties(security.${case} PROPERTIES TIMEOUT 600 LABELS security)
endforeach()
