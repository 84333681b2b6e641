// The tuning database: per kernel and machine, the setting of a schedule rule's tunable
// parameters (ScheduleRule::space, relax/target/backend.h) that measured fastest. `relaxc tune`
// writes it; `relaxc compile --tuning-db` (pass option schedule.tuning-db) reads it. Records are
// keyed by the target kind, the backend's machine key (Backend::MachineKey: the LLVM CPU name
// on cpu) and the kernel's structure (KernelKey), so a database tuned on one CPU leaves
// another CPU's compile at the rules' defaults. The file is JSON, written in a canonical order:
// the same records give the same bytes, and the same database gives byte-identical artifacts.
#ifndef RELAX_SCHEDULE_TUNING_H_
#define RELAX_SCHEDULE_TUNING_H_

#include <map>
#include <string>
#include <vector>

#include "relax/ir/tir.h"
#include "relax/target/backend.h"

namespace relax::schedule {

/// One kernel's choice on one machine.
struct TuningRecord {
  std::string target;   // target kind ("cpu")
  std::string machine;  // Backend::MachineKey ("znver5")
  std::string key;      // KernelKey of the unscheduled PrimFunc
  std::string rule;     // the schedule rule whose parameters these are
  std::string kernel;   // a PrimFunc name it was measured as (for people; not matched)
  TuningParams params;  // the chosen setting
  /// What was measured: each candidate's setting (FormatParams) -> median ms per call.
  std::map<std::string, double> measured_ms;
};

class TuningDatabase {
 public:
  /// Reads and checks a database file (at most 64 MiB of JSON). Throws relax::Error naming
  /// the file and the problem (not JSON, wrong format or version, a malformed record).
  static TuningDatabase Load(const std::string& path);
  /// The same for JSON text; `origin` names it in errors.
  static TuningDatabase Parse(const std::string& text, const std::string& origin);
  /// Canonical JSON: records sorted by (target, machine, key), keys sorted, 2-space indent.
  std::string Serialize() const;

  /// The record for a kernel on a machine, or null.
  const TuningRecord* Find(const std::string& target, const std::string& machine,
                           const std::string& key) const;
  /// Adds `r`, replacing a record with the same (target, machine, key).
  void Put(TuningRecord r);
  size_t size() const { return records_.size(); }
  const std::map<std::string, TuningRecord>& records() const { return records_; }

 private:
  std::map<std::string, TuningRecord> records_;  // "target/machine/key" -> record
};

/// The tuning key of `f` as the schedule pass sees it: the structural hash of the unscheduled
/// PrimFunc (relax/ir/tir_structural_key.h) with its `constant_params` attribute, since the
/// rules schedule a kernel differently when an input is a constant.
std::string KernelKey(const tir::PrimFunc& f);

/// "tile_cols=16,tile_rows=8" (sorted by name; empty for an empty setting).
std::string FormatParams(const TuningParams& p);
/// Parses FormatParams' text (NAME=INT, comma-separated). Throws relax::Error naming `what`.
TuningParams ParseParams(const std::string& text, const std::string& what);

}  // namespace relax::schedule

#endif  // RELAX_SCHEDULE_TUNING_H_
