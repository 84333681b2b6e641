// Tests of .npy loading/saving: round trips for every dtype and every malformed-file case.
#include "relax/runtime/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "relax/support/error.h"

namespace relax::runtime {
namespace {

namespace fs = std::filesystem;

class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("relax_npy_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) { return (dir_ / name).string(); }
  void WriteRaw(const std::string& name, const std::string& bytes) {
    std::ofstream f(Path(name), std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  // A version-1.0 npy file with `header` (padded) and `data`.
  static std::string Npy(const std::string& header, const std::string& data, int major = 1) {
    std::string h = header;
    size_t prefix = major == 1 ? 10 : 12;
    while ((prefix + h.size() + 1) % 64 != 0) h.push_back(' ');
    h.push_back('\n');
    std::string out("\x93NUMPY", 6);
    out.push_back(static_cast<char>(major));
    out.push_back(0);
    out.push_back(static_cast<char>(h.size() & 0xff));
    out.push_back(static_cast<char>(h.size() >> 8));
    if (major != 1) out.append(2, '\0');
    return out + h + data;
  }
  void ExpectLoadError(const std::string& name, const std::string& words) {
    try {
      LoadNpy(Path(name));
      FAIL() << "expected an error for " << name;
    } catch (const Error& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(words), std::string::npos) << msg;
      EXPECT_NE(msg.find(name), std::string::npos) << "message must name the file: " << msg;
    }
  }
  fs::path dir_;
};

TEST_F(NpyTest, RoundTripAllDtypes) {
  for (const char* dt :
       {"float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8", "bool"}) {
    NDArray a = NDArray::Empty({2, 3}, ParseDType(dt));
    auto* p = static_cast<uint8_t*>(a.data());
    for (size_t i = 0; i < a.nbytes(); ++i) p[i] = static_cast<uint8_t>(i * 7 + 1);
    if (std::string(dt) == "bool")
      for (size_t i = 0; i < a.nbytes(); ++i) p[i] = i % 2;
    std::string path = Path(std::string(dt) + ".npy");
    SaveNpy(path, a);
    NDArray b = LoadNpy(path);
    EXPECT_EQ(DTypeToString(b.dtype()), dt);
    EXPECT_EQ(b.shape(), (std::vector<int64_t>{2, 3}));
    ASSERT_EQ(b.nbytes(), a.nbytes());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0) << dt;
    // The header is padded to a 64-byte boundary.
    EXPECT_EQ((fs::file_size(path) - a.nbytes()) % 64, 0u);
  }
}

TEST_F(NpyTest, ScalarAnd1DAndEmpty) {
  for (std::vector<int64_t> shape : {std::vector<int64_t>{}, {5}, {0, 4}}) {
    NDArray a = NDArray::Empty(shape, ParseDType("int32"));
    for (int64_t i = 0; i < a.numel(); ++i) static_cast<int32_t*>(a.data())[i] = int32_t(i - 2);
    SaveNpy(Path("s.npy"), a);
    NDArray b = LoadNpy(Path("s.npy"));
    EXPECT_EQ(b.shape(), shape);
    if (a.nbytes()) {
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0);
    }
  }
}

TEST_F(NpyTest, ReadsHandWrittenV1AndV2) {
  float vals[3] = {1.5f, -2.0f, 3.25f};
  std::string data(reinterpret_cast<char*>(vals), sizeof(vals));
  for (int major : {1, 2}) {
    WriteRaw("v.npy",
             Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", data, major));
    NDArray a = LoadNpy(Path("v.npy"));
    ASSERT_EQ(a.shape(), std::vector<int64_t>{3});
    EXPECT_EQ(static_cast<float*>(a.data())[2], 3.25f);
  }
}

TEST_F(NpyTest, MissingFile) { ExpectLoadError("nope.npy", "cannot open"); }

TEST_F(NpyTest, BadMagic) {
  WriteRaw("bad.npy", "PK\x03\x04 this is a zip");
  ExpectLoadError("bad.npy", "bad magic");
  WriteRaw("empty.npy", "");
  ExpectLoadError("empty.npy", "bad magic");
}

TEST_F(NpyTest, TruncatedHeader) {
  std::string full =
      Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", std::string(12, '\0'));
  WriteRaw("t1.npy", full.substr(0, 7));
  ExpectLoadError("t1.npy", "truncated");
  WriteRaw("t2.npy", full.substr(0, 9));
  ExpectLoadError("t2.npy", "truncated");
  WriteRaw("t3.npy", full.substr(0, 40));
  ExpectLoadError("t3.npy", "truncated");
}

TEST_F(NpyTest, TruncatedData) {
  WriteRaw("td.npy",
           Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", std::string(11, 'x')));
  ExpectLoadError("td.npy", "truncated");
}

TEST_F(NpyTest, FortranOrder) {
  WriteRaw("f.npy",
           Npy("{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }", std::string(12, '\0')));
  ExpectLoadError("f.npy", "fortran_order");
}

TEST_F(NpyTest, BigEndianAndUnsupportedDtype) {
  WriteRaw("be.npy",
           Npy("{'descr': '>f4', 'fortran_order': False, 'shape': (3,), }", std::string(12, '\0')));
  ExpectLoadError("be.npy", "big-endian");
  WriteRaw("c.npy",
           Npy("{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", std::string(24, '\0')));
  ExpectLoadError("c.npy", "unsupported dtype");
  WriteRaw("s.npy", Npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,), }",
                        std::string(12, '\0')));
  ExpectLoadError("s.npy", "descr");
}

TEST_F(NpyTest, HeaderParseErrors) {
  for (const char* h :
       {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,, }",
        "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (3,), }",
        "{'descr': '<f4', 'shape': (3,), }", "not a dict at all",
        "{'descr': '<f4, 'fortran_order': False, 'shape': (-3,), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }"}) {
    WriteRaw("h.npy", Npy(h, std::string(12, '\0')));
    ExpectLoadError("h.npy", "h.npy");
  }
}

TEST_F(NpyTest, UnsupportedVersion) {
  std::string f =
      Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", std::string(12, '\0'));
  f[6] = 9;
  WriteRaw("ver.npy", f);
  ExpectLoadError("ver.npy", "version");
}

TEST_F(NpyTest, SaveToBadPath) {
  NDArray a = NDArray::Empty({1}, ParseDType("float32"));
  EXPECT_THROW(SaveNpy(Path("no/such/dir/x.npy"), a), Error);
}

// A symlink at the output path is replaced by the new file; its target is left alone, and no
// temporary file is left behind.
TEST_F(NpyTest, SaveReplacesSymlinkInsteadOfFollowingIt) {
  WriteRaw("target.txt", "precious\n");
  fs::create_directories(dir_ / "out");
  fs::create_symlink(dir_ / "target.txt", dir_ / "out" / "y.npy");
  NDArray a = NDArray::Empty({2}, ParseDType("float32"));
  float v[2] = {1.5f, -2.0f};
  std::memcpy(a.data(), v, sizeof(v));
  SaveNpy(Path("out/y.npy"), a);
  std::ifstream t(Path("target.txt"), std::ios::binary);
  std::string kept((std::istreambuf_iterator<char>(t)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept, "precious\n");
  EXPECT_FALSE(fs::is_symlink(dir_ / "out" / "y.npy"));
  NDArray back = LoadNpy(Path("out/y.npy"));
  ASSERT_EQ(back.shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(std::memcmp(back.data(), v, sizeof(v)), 0);
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "out")) files += e.exists() ? 1 : 0;
  EXPECT_EQ(files, 1) << "temporary files left behind";
}

}  // namespace
}  // namespace relax::runtime
