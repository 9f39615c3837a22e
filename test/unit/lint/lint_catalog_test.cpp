// The catalog (lint/catalog.h): every id a finding or an input error can
// carry is registered once, documented with what to do and a wrong and a
// right example, and known to --list-rules, --explain, docs/rules.md and
// SARIF; and no output carries an id the catalog lacks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "lint/catalog.h"
#include "lint/lint_file.h"
#include "lint/report/report.h"
#include "rules/registry.h"
#include "test/unit/lint/lint_test_support.h"

namespace gpuguard::lint {
namespace {

using lint_test::readFile;
using lint_test::runLint;
using lint_test::sourceDir;
using nlohmann::json;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<std::string> catalogIds() {
  std::vector<std::string> ids;
  for (const CatalogEntry& e : catalog()) ids.emplace_back(e.id());
  return ids;
}

// --- registration -----------------------------------------------------------

TEST(Catalog, HoldsEveryRuleOfTheRegistryInItsOrderThenTheBuiltInChecks) {
  const std::vector<const Rule*>& rules = allRules();
  ASSERT_GT(catalog().size(), rules.size());
  for (std::size_t i = 0; i < rules.size(); ++i) {
    EXPECT_EQ(catalog()[i].rule, rules[i]);
    EXPECT_EQ(catalog()[i].doc, &rules[i]->doc()) << "a rule's documentation is its own RuleDoc";
    EXPECT_EQ(catalog()[i].source, Source::Rule);
  }
  for (std::size_t i = rules.size(); i < catalog().size(); ++i) {
    EXPECT_NE(catalog()[i].source, Source::Rule) << catalog()[i].id();
    EXPECT_EQ(findRule(catalog()[i].id()), nullptr) << "a built-in check is no rule: " << catalog()[i].id();
  }
}

TEST(Catalog, RegistersEachIdOnceInLowerCaseWordsJoinedByHyphens) {
  const std::vector<std::string> ids = catalogIds();
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), ids.size()) << "an id registered twice";
  const std::regex kebab("[a-z0-9]+(-[a-z0-9]+)*");
  for (const std::string& id : ids) {
    EXPECT_TRUE(std::regex_match(id, kebab)) << id;
    const CatalogEntry* found = findEntry(id);
    ASSERT_NE(found, nullptr) << id;
    EXPECT_EQ(found->id(), id);
  }
  EXPECT_EQ(findEntry("gpu-nonsense"), nullptr);
}

TEST(Catalog, KnowsTheBuiltInChecksAndTheInputError) {
  for (const RuleDoc* doc : {&kDuplicateKeyCheck, &kIgnoredContentCheck, &kIneffectiveSuppressionCheck}) {
    const CatalogEntry* e = findEntry(doc->id);
    ASSERT_NE(e, nullptr) << doc->id;
    EXPECT_EQ(e->doc, doc);
    EXPECT_EQ(e->source, Source::BuiltInCheck);
    EXPECT_FALSE(e->configurable());
    EXPECT_EQ(doc->defaultSeverity, Severity::Warning) << "a built-in check never fails the run by default";
  }
  const CatalogEntry* input = findEntry(kInputErrorCheck.id);
  ASSERT_NE(input, nullptr);
  EXPECT_EQ(input->source, Source::InputError);
  EXPECT_EQ(kInputErrorCheck.defaultSeverity, Severity::Error);
}

// --- documentation ----------------------------------------------------------

TEST(Catalog, DocumentsEveryEntryWithWhatToDoAndAWrongAndARightExample) {
  for (const CatalogEntry& e : catalog()) {
    const RuleDoc& d = *e.doc;
    SCOPED_TRACE(std::string(d.id));
    EXPECT_FALSE(d.summary.empty());
    EXPECT_TRUE(d.summary.ends_with(".")) << "a summary is one sentence";
    EXPECT_GT(d.description.size(), d.summary.size()) << "the description says why it matters";
    EXPECT_FALSE(d.remediation.empty());
    EXPECT_FALSE(d.wrongExample.empty());
    EXPECT_FALSE(d.rightExample.empty());
    EXPECT_NE(d.wrongExample, d.rightExample);
    EXPECT_TRUE(d.wrongExample.ends_with("\n") && d.rightExample.ends_with("\n")) << "examples are whole lines";
  }
}

TEST(Catalog, ListRulesNamesEveryEntryFirstOnItsLineAndMarksTheBuiltIns) {
  const lint_test::RunResult list = runLint({"--list-rules"});
  ASSERT_EQ(list.exitCode, 0) << list.err;
  std::istringstream lines(list.out);
  std::vector<std::string> listed;
  for (std::string line; std::getline(lines, line);) {
    listed.push_back(line.substr(0, line.find(' ')));
    const CatalogEntry* e = findEntry(listed.back());
    ASSERT_NE(e, nullptr) << "--list-rules lists an id the catalog lacks: " << line;
    EXPECT_THAT(line, HasSubstr(std::string(e->doc->summary)));
    EXPECT_EQ(line.find("(built-in)") != std::string::npos, !e->configurable()) << line;
  }
  EXPECT_EQ(listed, catalogIds());
}

TEST(Catalog, ListRulesAsJsonNamesEveryEntryWithItsKindAndDocumentation) {
  const lint_test::RunResult list = runLint({"--list-rules", "--format", "json"});
  ASSERT_EQ(list.exitCode, 0) << list.err;
  const json listed = json::parse(list.out);
  ASSERT_EQ(listed.size(), catalog().size());
  for (std::size_t i = 0; i < catalog().size(); ++i) {
    const CatalogEntry& e = catalog()[i];
    EXPECT_EQ(listed[i]["id"], e.id());
    EXPECT_EQ(listed[i]["kind"], e.configurable() ? "rule" : "built-in");
    EXPECT_EQ(listed[i]["defaultSeverity"], severityName(e.doc->defaultSeverity));
    EXPECT_EQ(listed[i]["helpUri"], std::string(kRulesDocUri) + "#" + std::string(e.id()));
  }
}

TEST(Catalog, ExplainPrintsEveryEntrysDocumentationAndHowItCanBeSilenced) {
  for (const CatalogEntry& e : catalog()) {
    const RuleDoc& d = *e.doc;
    const lint_test::RunResult explain = runLint({"--explain", std::string(d.id)});
    ASSERT_EQ(explain.exitCode, 0) << d.id << ": " << explain.err;
    EXPECT_THAT(explain.out,
                AllOf(HasSubstr(std::string(d.summary)), HasSubstr(std::string(d.description)),
                      HasSubstr("What to do: " + std::string(d.remediation)), HasSubstr("Wrong:"), HasSubstr("Right:")))
        << d.id;
    const bool silenceable = explain.out.find("ignore.gpuguard.io/" + std::string(d.id) + ":") != std::string::npos;
    EXPECT_EQ(silenceable, e.configurable()) << d.id << ": only a rule can be silenced by an annotation";
  }
  const lint_test::RunResult unknown = runLint({"--explain", "gpu-nonsense"});
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_THAT(unknown.err, HasSubstr("gpu-nonsense"));
}

TEST(Catalog, DocsRulesMdHasASectionForEveryEntryWhereItsHelpUriPoints) {
  const std::string docs = readFile(sourceDir() + "/docs/rules.md");
  for (const CatalogEntry& e : catalog()) {
    EXPECT_THAT(docs, HasSubstr("\n## " + std::string(e.id()) + "\n")) << e.id();
    EXPECT_THAT(docs, HasSubstr(std::string(e.doc->remediation))) << e.id();
  }
}

// --- the built-in checks' examples --------------------------------------------

// A policy with every rule off: what is left is the linter's own checks.
LintPolicy builtInChecksOnly() {
  LintPolicy policy;
  for (const Rule* r : allRules()) policy.engine.rules[std::string(r->id())] = RuleSetting::Off;
  return policy;
}

std::vector<std::string> idsFound(const FileReport& report) {
  std::vector<std::string> ids;
  for (const Located& l : report.findings) ids.push_back(l.finding.rule);
  if (!report.errors.empty()) ids.emplace_back(kInputErrorCheck.id);
  return ids;
}

// The ids of the built-in checks and the input error, from the catalog.
std::vector<std::string> builtInIds() {
  std::vector<std::string> ids;
  for (const CatalogEntry& e : catalog()) {
    if (!e.configurable()) ids.emplace_back(e.id());
  }
  return ids;
}

class BuiltInCheckExamples : public ::testing::TestWithParam<std::string> {};

TEST_P(BuiltInCheckExamples, TheWrongExampleReportsTheCheckAndTheRightOneNothing) {
  const RuleDoc& d = *findEntry(GetParam())->doc;
  const FileReport wrong = lintText("wrong.yaml", d.wrongExample, builtInChecksOnly());
  EXPECT_THAT(idsFound(wrong), ::testing::ElementsAre(GetParam()));
  const FileReport right = lintText("right.yaml", d.rightExample, builtInChecksOnly());
  EXPECT_THAT(idsFound(right), IsEmpty());
  EXPECT_GE(right.documents, 1u) << "the right example is a Kubernetes object that was judged";
}

INSTANTIATE_TEST_SUITE_P(Lint, BuiltInCheckExamples, ::testing::ValuesIn(builtInIds()), [](const auto& info) {
  std::string name;
  for (char c : info.param) name += c == '-' ? '_' : c;
  return name;
});

// --- every id an output carries ---------------------------------------------

// The ids a report names in every format: the rule of each text line
// ("... [id]"), JSON finding, SARIF result and notification, JUnit failure
// and error, GitHub annotation title.
std::set<std::string> idsInEveryFormat(const std::vector<FileReport>& reports) {
  ReportOptions options;
  options.showSuppressed = true;
  std::set<std::string> ids;
  std::ostringstream text, jsonOut, sarif, junit, github;
  writeText(text, reports, options);
  writeJson(jsonOut, reports, options);
  writeSarif(sarif, reports, options);
  writeJunit(junit, reports, options);
  writeGithub(github, reports, options);
  const std::regex textId(R"(\[([a-z0-9-]+)\](?: \(.*\))?$)"), junitType(R"re(type="([^"]+)")re"),
      githubTitle(R"(title=([a-z0-9-]+) )");
  auto collect = [&](const std::string& out, const std::regex& re) {
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
      for (std::sregex_iterator m(line.begin(), line.end(), re), end; m != end; ++m) ids.insert((*m)[1]);
    }
  };
  collect(text.str(), textId);
  collect(junit.str(), junitType);
  collect(github.str(), githubTitle);
  // Parsed into variables: a range-for over a member of a temporary would
  // outlive it.
  const json report = json::parse(jsonOut.str());
  for (const json& f : report["findings"]) ids.insert(f["rule"]);
  const json run = json::parse(sarif.str())["runs"][0];
  for (const json& r : run["results"]) ids.insert(r["ruleId"]);
  const json notifications = run["invocations"][0].value("toolExecutionNotifications", json::array());
  for (const json& n : notifications) ids.insert(n["descriptor"]["id"]);
  return ids;
}

TEST(Catalog, EveryIdTheOutputsCarryIsInTheCatalog) {
  // What the linter says of the built-in checks' examples, of the example
  // workloads and of a suppressed finding, in every format.
  std::vector<FileReport> reports;
  for (const CatalogEntry& e : catalog()) {
    if (!e.configurable()) reports.push_back(lintText(std::string(e.id()) + ".yaml", e.doc->wrongExample, {}));
  }
  for (const auto& file : std::filesystem::directory_iterator(sourceDir() + "/manifests/examples")) {
    if (file.path().extension() == ".yaml") reports.push_back(lintPath(file.path().string(), {}));
  }
  const std::set<std::string> ids = idsInEveryFormat(reports);
  for (const std::string& id : ids) EXPECT_NE(findEntry(id), nullptr) << "an output carries an unknown id: " << id;
  // ...and the inputs reach every built-in check and the rules the examples are about.
  for (const CatalogEntry& e : catalog()) {
    if (!e.configurable()) {
      EXPECT_TRUE(ids.count(std::string(e.id()))) << e.id();
    }
  }
  for (const char* rule : {"gpu-fractional", "gpu-missing-toleration", "gpu-requests-without-limits"}) {
    EXPECT_TRUE(ids.count(rule)) << rule;
  }
}

}  // namespace
}  // namespace gpuguard::lint
