// lib/support helpers the security rules rest on: UTF-8 validation and escaping (utf8.h),
// RunProcess's argument vector (process.h), OutputFile's replace-never-follow (output_file.h).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "relax/support/error.h"
#include "relax/support/output_file.h"
#include "relax/support/process.h"
#include "relax/support/utf8.h"

namespace relax {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(Utf8Test, Validity) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("input_ids"));
  EXPECT_TRUE(IsValidUtf8("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"));  // e-acute, euro, emoji
  EXPECT_FALSE(IsValidUtf8("\xFF"));
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xE0\x80\xAF"));      // overlong, 3 bytes
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // a surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xE2\x82"));          // truncated
}

TEST(Utf8Test, Escaping) {
  EXPECT_EQ(EscapeBytes("a\xFF\\"), "a\\xFF\\x5C");
  EXPECT_EQ(EscapeControl("y\x1B[2J\nerror: x\xC3\xA9"), "y\\x1B[2J\\x0Aerror: x\xC3\xA9");
  EXPECT_EQ(EscapeControl("line 1\nline 2\x07", /*keep_newlines=*/true), "line 1\nline 2\\x07");
  // C1 controls (CSI as UTF-8 and as a lone byte), a bidi override, a truncated sequence.
  EXPECT_EQ(EscapeControl("a\xC2\x9B"
                          "31m b\x9B c\xE2\x80\xAE"
                          "d \xE2\x82"),
            "a\\u009B31m b\\x9B c\\u202Ed \\xE2\\x82");
  EXPECT_EQ(EscapeControl("\xE2\x82\xAC \xF0\x9F\x98\x80"), "\xE2\x82\xAC \xF0\x9F\x98\x80");
}

TEST(ProcessTest, ArgumentsNeverReachAShell) {
  std::string marker = ::testing::TempDir() + "/relax_process_marker";
  std::remove(marker.c_str());
  // The hostile string is one argument of printf: printed, never run.
  ProcessResult r = RunProcess({"printf", "%s", "$(touch " + marker + ");`touch " + marker + "`"});
  EXPECT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.output, "$(touch " + marker + ");`touch " + marker + "`");
  EXPECT_NE(::access(marker.c_str(), F_OK), 0);
  ProcessResult missing = RunProcess({"/nonexistent/program"});
  EXPECT_FALSE(missing.started);
  EXPECT_NE(missing.error.find("/nonexistent/program"), std::string::npos);
  ProcessResult fails = RunProcess({"false"});
  EXPECT_TRUE(fails.started);
  EXPECT_EQ(fails.exit_code, 1);
  EXPECT_FALSE(FindProgram("sh").empty());
  EXPECT_TRUE(FindProgram("no-such-program-relaxc").empty());
}

TEST(OutputFileTest, ReplacesALinkNeverWritesThroughIt) {
  TempDir dir("relax-output-test");
  std::string victim = dir.Write("victim", "precious");
  std::string out = dir.File("out.bin");
  ASSERT_EQ(::symlink(victim.c_str(), out.c_str()), 0);
  WriteFileReplacing(out, "artifact", "test file");
  EXPECT_EQ(Slurp(victim), "precious");
  EXPECT_EQ(Slurp(out), "artifact");
  struct stat st;
  ASSERT_EQ(::lstat(out.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  // A link to a device, and a directory, are refused; nothing is left behind.
  std::string dev = dir.File("dev");
  ASSERT_EQ(::symlink("/dev/null", dev.c_str()), 0);
  EXPECT_THROW(WriteFileReplacing(dev, "x", "test file"), Error);
  EXPECT_THROW(WriteFileReplacing(dir.path(), "x", "test file"), Error);
  {
    OutputFile abandoned(dir.File("never.bin"), "test file");
    abandoned.Write("partial");
  }  // not committed: the temporary is removed, the name never appears
  EXPECT_NE(::access(dir.File("never.bin").c_str(), F_OK), 0);
}

}  // namespace
}  // namespace relax
