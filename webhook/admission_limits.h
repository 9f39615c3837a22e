// The limits of one admission review: how deep its JSON may nest, and how long
// the denial and the warnings may be (the API server's own budgets, and what
// stays readable in kubectl).
#pragma once

#include <cstddef>

namespace gpuguard::webhook {

struct AdmissionLimits {
  std::size_t maxNestingDepth = 200;        // deeper JSON is a 400, never a deep stack
  // JSON values kept of one review (json_reader.h maxValues): more is a 400,
  // never a tree the memory limit cannot hold. At ~210 bytes a value (empty
  // strings, the worst) that is 63 MiB; a 7 MB Deployment UPDATE of 30,000
  // env entries keeps ~180,000.
  std::size_t maxJsonValues = 300'000;
  std::size_t maxDenialErrors = 20;         // errors listed in a denial before "and N more"
  std::size_t maxDenialMessageRunes = 4000; // the message stays readable in kubectl
  std::size_t maxWarningRunes = 256;        // the API server truncates beyond this
  std::size_t preferredWarningRunes = 120;  // the API docs' advice
  std::size_t maxWarningTotalRunes = 4096;  // the API server's budget for one request
};

}  // namespace gpuguard::webhook
