// Helm charts: a directory holding Chart.yaml is one unit. With helm on
// PATH it is rendered (helm template DIR, --helm-values FILE...) and each
// finding is placed in the template named by helm's "# Source:" comment,
// at the template line that reads like the rendered one when there is one;
// without helm its templates/ are not linted (they are not YAML until
// rendered).
#pragma once

#include <string>
#include <vector>

#include "lint/render/kustomize.h"
#include "lint/lint_file.h"

namespace gpuguard::lint {

// Renders the chart in `dir` with `helm` and lints the output; a chart that
// does not render is an InputError of the unit.
FileReport lintChart(const std::string& dir, const std::string& helm, const std::vector<std::string>& valuesFiles,
                     const LintPolicy& policy, const RenderSettings& settings = {});

}  // namespace gpuguard::lint
