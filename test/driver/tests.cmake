# The compiler as a library in a long-running process (issue 35): 50 compiles of the seven
# node-test models of RELAX_REPEAT_MODELS (test/driver/compile_repeat.cmake) through
# relax::driver::Compile;
# RSS after compile 50 must stay within 5 % of RSS after compile 10. The same loop under
# LeakSanitizer (the ASan build, build/san) is fuzz.compile_repeat_lsan in the top-level
# CMakeLists.txt.
add_test(NAME driver.compile_repeat_rss
         COMMAND compile_repeat --count 50 --check-rss ${RELAX_REPEAT_MODELS})
set_tests_properties(driver.compile_repeat_rss PROPERTIES TIMEOUT 300 LABELS unit)
