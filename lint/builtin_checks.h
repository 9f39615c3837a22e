// The linter's own checks, besides the engine's rules: how a manifest is
// written and read (the YAML loader's warnings, suppression annotations that
// suppress nothing) and the input that could not be read at all. Each is
// documented here once, as a rule is in rules/checks/ (a RuleDoc with a wrong
// and a right example), and registered once in lint/catalog.cpp. They live
// in the front end because only it has YAML and files: the engine judges
// JSON objects and knows nothing of either.
//
// They are always on: a policy cannot configure them and an annotation
// cannot silence them (lint/catalog.h Source).
#pragma once

#include "rules/rule.h"

namespace gpuguard::lint {

// A key written twice in one YAML or JSON map (yaml::ParseWarning::Kind::DuplicateKey).
inline constexpr RuleDoc kDuplicateKeyCheck{
    .id = "duplicate-key",
    .defaultSeverity = Severity::Warning,
    .summary = "A map key is written twice in one object.",
    .description =
        "kubectl keeps the last value of a duplicated key and drops the first without a word (its YAML and JSON "
        "decoders are not strict, and it sends the API server JSON, so strict field validation never sees the "
        "duplicate).",
    .remediation = "Delete one of the two keys, or merge their values into one.",
    .wrongExample =
        "apiVersion: v1\n"
        "kind: Pod\n"
        "metadata:\n"
        "  name: trainer\n"
        "  labels:\n"
        "    team: ml\n"
        "  labels:            # kubectl keeps this map and drops team: ml\n"
        "    app: trainer\n"
        "spec:\n"
        "  containers:\n"
        "    - name: trainer\n"
        "      image: nvcr.io/nvidia/pytorch:24.05-py3\n",
    .rightExample =
        "apiVersion: v1\n"
        "kind: Pod\n"
        "metadata:\n"
        "  name: trainer\n"
        "  labels:\n"
        "    team: ml\n"
        "    app: trainer\n"
        "spec:\n"
        "  containers:\n"
        "    - name: trainer\n"
        "      image: nvcr.io/nvidia/pytorch:24.05-py3\n",
};

// Text after a document end marker (yaml::ParseWarning::Kind::IgnoredContent).
inline constexpr RuleDoc kIgnoredContentCheck{
    .id = "ignored-content",
    .defaultSeverity = Severity::Warning,
    .summary = "Text after the end of a document that kubectl never reads.",
    .description =
        "After a document end marker (...) kubectl reads nothing more until the next --- line: a document written "
        "there is never applied. The same holds in a file with CR-only line breaks (classic Mac OS): kubectl's "
        "reader ends lines at LF only, so it cuts no document at a --- line that only a CR precedes, and its YAML "
        "parser reads the first document of what it is given; gpuguard-lint judges only that first document too, "
        "and says where the rest begins. (A --- line that starts the file and goes on past a CR is kubectl's "
        "\"invalid Yaml document separator\": an input error.)",
    .remediation = "Start each document with a --- line of its own that an LF line break ends (convert CR-only line "
                   "breaks to LF: mac2unix, or the editor's line-ending setting), and delete a ... line that ends a "
                   "document early.",
    .wrongExample =
        "apiVersion: v1\n"
        "kind: ConfigMap\n"
        "metadata:\n"
        "  name: trainer-settings\n"
        "data:\n"
        "  epochs: \"10\"\n"
        "...\n"
        "apiVersion: v1       # never applied: no --- after the ... line\n"
        "kind: ConfigMap\n"
        "metadata:\n"
        "  name: eval-settings\n",
    .rightExample =
        "apiVersion: v1\n"
        "kind: ConfigMap\n"
        "metadata:\n"
        "  name: trainer-settings\n"
        "data:\n"
        "  epochs: \"10\"\n"
        "---\n"
        "apiVersion: v1\n"
        "kind: ConfigMap\n"
        "metadata:\n"
        "  name: eval-settings\n",
};

// An ignore.gpuguard.io/<id> annotation that names no rule, or has no reason.
inline constexpr RuleDoc kIneffectiveSuppressionCheck{
    .id = "ineffective-suppression",
    .defaultSeverity = Severity::Warning,
    .summary = "An ignore.gpuguard.io annotation that suppresses nothing.",
    .description =
        "A suppression annotation ignore.gpuguard.io/<rule-id> silences one rule on one object, and only with a "
        "reason: an annotation whose id names no rule (a typo, a rule that was renamed, a built-in check that "
        "cannot be silenced), or whose reason is empty, silences nothing, and the findings it was meant for are "
        "reported as if it were not there.",
    .remediation =
        "Spell the rule id as gpuguard-lint --list-rules prints it, and give the reason as the value: "
        "ignore.gpuguard.io/gpu-fractional: \"HAMi shares this GPU\".",
    .wrongExample =
        "apiVersion: v1\n"
        "kind: Pod\n"
        "metadata:\n"
        "  name: shared-gpu\n"
        "  annotations:\n"
        "    ignore.gpuguard.io/gpu-fractonal: \"HAMi shares this GPU\"   # no such rule\n"
        "spec:\n"
        "  containers:\n"
        "    - name: notebook\n"
        "      image: jupyter/base-notebook\n",
    .rightExample =
        "apiVersion: v1\n"
        "kind: Pod\n"
        "metadata:\n"
        "  name: shared-gpu\n"
        "  annotations:\n"
        "    ignore.gpuguard.io/gpu-fractional: \"HAMi shares this GPU\"\n"
        "spec:\n"
        "  containers:\n"
        "    - name: notebook\n"
        "      image: jupyter/base-notebook\n",
};

// An input that could not be read, parsed or rendered (lint_file.h
// InputError): not a finding, but an id all the same where a format needs
// one (SARIF's notification descriptor, JUnit's error type).
inline constexpr RuleDoc kInputErrorCheck{
    .id = "input-error",
    .defaultSeverity = Severity::Error,
    .summary = "An input that could not be read, parsed or rendered.",
    .description =
        "gpuguard-lint could not read a file, parse a YAML or JSON document, or render a kustomization or Helm "
        "chart; nothing in it was judged. The exit status is 2.",
    .remediation =
        "Fix what the message names (the YAML at its line and column, the kustomization or chart as kustomize or "
        "helm report it), or exclude the file with an exclude glob in .gpuguard.yaml.",
    .wrongExample =
        "apiVersion: v1\n"
        "kind: Pod\n"
        "metadata:\n"
        "  name: trainer\n"
        "  labels: {team: ml\n"
        "spec:                # the flow map above is never closed\n"
        "  containers:\n"
        "    - name: trainer\n"
        "      image: nvcr.io/nvidia/pytorch:24.05-py3\n",
    .rightExample =
        "apiVersion: v1\n"
        "kind: Pod\n"
        "metadata:\n"
        "  name: trainer\n"
        "  labels: {team: ml}\n"
        "spec:\n"
        "  containers:\n"
        "    - name: trainer\n"
        "      image: nvcr.io/nvidia/pytorch:24.05-py3\n",
};

}  // namespace gpuguard::lint
