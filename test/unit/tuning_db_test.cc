// The tuning database (relax/schedule/tuning.h): canonical JSON round trip, lookups by target,
// machine and kernel key, replacing records, and refusing malformed files.
#include <gtest/gtest.h>

#include "relax/schedule/tuning.h"
#include "relax/support/error.h"

namespace relax::schedule {
namespace {

TuningRecord Record(const std::string& machine, const std::string& key, int64_t rows) {
  TuningRecord r;
  r.target = "cpu";
  r.machine = machine;
  r.key = key;
  r.rule = "cpu.register-tile";
  r.kernel = "fused_matmul";
  r.params = {{"tile_rows", rows}, {"tile_cols", 16}};
  r.measured_ms = {{"tile_cols=16,tile_rows=8", 0.5}, {FormatParams(r.params), 0.4}};
  return r;
}

TEST(TuningDatabase, RoundTripIsCanonical) {
  TuningDatabase a, b;
  a.Put(Record("znver5", "00000000000000aa", 12));
  a.Put(Record("sapphirerapids", "00000000000000bb", 4));
  // The same records in another order serialize to the same bytes.
  b.Put(Record("sapphirerapids", "00000000000000bb", 4));
  b.Put(Record("znver5", "00000000000000aa", 12));
  EXPECT_EQ(a.Serialize(), b.Serialize());
  TuningDatabase c = TuningDatabase::Parse(a.Serialize(), "test");
  EXPECT_EQ(c.Serialize(), a.Serialize());
  const TuningRecord* r = c.Find("cpu", "znver5", "00000000000000aa");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->params.at("tile_rows"), 12);
  EXPECT_EQ(c.Find("cpu", "znver4", "00000000000000aa"), nullptr);
  EXPECT_EQ(c.Find("vulkan", "znver5", "00000000000000aa"), nullptr);
}

TEST(TuningDatabase, PutReplacesTheSameKernelOnTheSameMachine) {
  TuningDatabase db;
  db.Put(Record("znver5", "00000000000000aa", 12));
  db.Put(Record("znver5", "00000000000000aa", 6));
  EXPECT_EQ(db.size(), 1u);
  EXPECT_EQ(db.Find("cpu", "znver5", "00000000000000aa")->params.at("tile_rows"), 6);
}

TEST(TuningDatabase, RefusesMalformedFiles) {
  auto fails = [](const std::string& text, const std::string& what) {
    try {
      TuningDatabase::Parse(text, "db.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  fails("{", "is not JSON");
  fails("[]", "is not a relaxc tuning database");
  fails(R"({"format": "relaxc-tuning-db", "version": 2, "records": []})", "version 2");
  fails(R"({"format": "relaxc-tuning-db", "version": 1})", "has no 'records'");
  const std::string head = R"({"format": "relaxc-tuning-db", "version": 1, "records": [)";
  fails(head + R"({"target": "cpu", "machine": "z", "kernel_key": "k", "rule": "r"}]})",
        "has no 'params'");
  fails(head +
            R"({"target": "cpu", "machine": "z", "kernel_key": "k", "rule": "r",
                "params": {"tile_rows": -3}}]})",
        "parameter 'tile_rows' must be an integer in [0, 4096]");
  fails(head + R"({"target": 5, "machine": "z", "kernel_key": "k", "rule": "r",
                "params": {"tile_rows": 4}}]})",
        "'target' must be a non-empty string");
  fails(std::string(100, '[') + std::string(100, ']'), "nests deeper");
}

TEST(TuningParams, FormatAndParse) {
  TuningParams p = ParseParams("tile_rows=8,tile_cols=16", "test");
  EXPECT_EQ(FormatParams(p), "tile_cols=16,tile_rows=8");
  EXPECT_THROW(ParseParams("tile_rows", "test"), Error);
  EXPECT_THROW(ParseParams("tile_rows=-1", "test"), Error);
  EXPECT_THROW(ParseParams("tile_rows=8x", "test"), Error);
  EXPECT_THROW(ParseParams("=8", "test"), Error);
}

}  // namespace
}  // namespace relax::schedule
