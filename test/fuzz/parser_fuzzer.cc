// libFuzzer target for the text IR parser: any input must either parse or
// raise relax::Error (never crash, hang or hit UB); whatever parses must print
// to text that parses back to the same printed text.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "relax/ir/module.h"
#include "relax/parser/parser.h"
#include "relax/support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return -1;  // keep single runs fast; the grammar needs no more
  std::string text(reinterpret_cast<const char*>(data), size);
  relax::IRModule m;
  try {
    m = relax::ParseModule(text, "fuzz");
  } catch (const relax::Error&) {
    return 0;  // a diagnosed error is a correct outcome
  }
  std::string printed = relax::ToString(m);
  try {
    // Constants of more than 8 elements print by digest: resolved against the parsed
    // module's constants, as every consumer of printed IR does.
    const relax::ConstantTable table = relax::CollectConstants(m);
    relax::IRModule again = relax::ParseModule(printed, "printed", &table);
    if (relax::ToString(again) != printed) {
      fprintf(stderr, "round trip changed the text:\n%s\n", printed.c_str());
      abort();
    }
  } catch (const relax::Error& e) {
    fprintf(stderr, "printed module does not parse: %s\n%s\n", e.what(), printed.c_str());
    abort();
  }
  return 0;
}
