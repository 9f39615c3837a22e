// The machine-readable output formats of gpuguard-lint: SARIF, JUnit XML and
// GitHub workflow commands, on reports built in memory. (The SARIF schema
// check against the official schema is test/lint/formats_test.sh.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "lint/catalog.h"
#include "lint/report/report.h"
#include "rules/registry.h"

namespace gpuguard::lint {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using nlohmann::json;

Located finding(const std::string& rule, Severity severity, int line, int column, const std::string& message,
                bool suppressed = false, const std::string& reason = "") {
  Located l;
  l.finding.rule = rule;
  l.finding.severity = severity;
  // spec.containers[0].resources.limits[nvidia.com/gpu]
  l.finding.path = FieldPath{}.field("spec").field("containers").index(0).field("resources").field("limits").key(
      "nvidia.com/gpu");
  l.finding.value = "\"0.5\"";
  l.finding.error = FieldError::note(message);  // the text as given: the reports print what the engine said
  l.finding.suppressed = suppressed;
  l.finding.suppressionReason = reason;
  l.line = line;
  l.column = column;
  l.object = ObjectRef{"v1", "Pod", "team-a", "half", "", "spec"};
  return l;
}

ObjectRef pod(const std::string& name) { return ObjectRef{"v1", "Pod", "team-a", name, "", ""}; }

std::vector<FileReport> sampleReports() {
  FileReport a;
  a.file = "deploy/a b.yaml";
  a.documents = 2;
  a.findings.push_back(finding("gpu-fractional", Severity::Error, 17, 25, "Invalid value: \"0.5\": <must> & 'be' whole"));
  a.findings.push_back(finding("gpu-missing-driver-pin", Severity::Warning, 9, 3, "pin, the: driver\nplease"));
  Located shared = finding("gpu-missing-toleration", Severity::Error, 30, 3, "no toleration", true, "ERT plugin");
  shared.document = 1;  // the second object's only finding, suppressed
  shared.object.name = "shared";
  a.findings.push_back(shared);
  a.objects = {{0, pod("half")}, {1, pod("shared")}};
  FileReport b;
  b.file = "<stdin>";
  b.errors.push_back({"<stdin>", 4, 1, "found a tab character used for indentation"});
  FileReport c;
  c.file = "ok.yaml";
  c.documents = 1;
  c.objects = {{0, ObjectRef{"v1", "Pod", "", "ok", "", ""}}};
  return {a, b, c};
}

TEST(LintReport, XmlEscapingCoversMarkupQuotesControlCharactersAndBadUtf8) {
  EXPECT_EQ(xmlEscape("a<b>&\"c\"'d'", false), "a&lt;b&gt;&amp;\"c\"'d'");
  EXPECT_EQ(xmlEscape("a<b>&\"c\"'d'", true), "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;");
  EXPECT_EQ(xmlEscape("x\ty\nz\r", true), "x&#9;y&#10;z&#13;");
  EXPECT_EQ(xmlEscape("x\ty\nz", false), "x\ty\nz");
  EXPECT_EQ(xmlEscape(std::string("a\0b\x01\x1b[31mc\x7f", 11), false), "ab[31mc\x7f");
  EXPECT_EQ(xmlEscape("caf\xC3\xA9 \xE2\x9C\x93", false), "caf\xC3\xA9 \xE2\x9C\x93");
  EXPECT_EQ(xmlEscape("bad \xC3 byte \xFF", false), "bad \xEF\xBF\xBD byte \xEF\xBF\xBD");
  EXPECT_EQ(xmlEscape("\xEF\xBF\xBE", false), "");  // U+FFFE is not an XML character
  EXPECT_EQ(xmlEscape("\xED\xA0\x80", false), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
}

TEST(LintReport, GithubEscapingFollowsTheRunnersRules) {
  EXPECT_EQ(githubEscapeData("50% done\r\nnext: a, b"), "50%25 done%0D%0Anext: a, b");
  EXPECT_EQ(githubEscapeProperty("dir,x/a:b%.yaml\n"), "dir%2Cx/a%3Ab%25.yaml%0A");
}

TEST(LintReport, SarifUrisAreRelativeWithForwardSlashes) {
  EXPECT_EQ(sarifUri("<stdin>"), "stdin");
  EXPECT_EQ(sarifUri("./deploy/pod.yaml"), "deploy/pod.yaml");
  EXPECT_EQ(sarifUri("deploy//x/../pod.yaml"), "deploy/pod.yaml");
  EXPECT_EQ(sarifUri("my dir/p#1.yaml"), "my%20dir/p%231.yaml");
  EXPECT_EQ(sarifUri("/nonexistent-root/x.yaml"), "file:///nonexistent-root/x.yaml");
}

TEST(LintReport, SarifCarriesRulesResultsSuppressionsAndInputErrors) {
  std::ostringstream out;
  ReportOptions options;
  options.toolVersion = "1.2.3";
  writeSarif(out, sampleReports(), options);
  const json log = json::parse(out.str());
  EXPECT_EQ(log["version"], "2.1.0");
  const json& run = log["runs"][0];
  const json& driver = run["tool"]["driver"];
  EXPECT_EQ(driver["name"], "gpuguard-lint");
  EXPECT_EQ(driver["version"], "1.2.3");
  EXPECT_EQ(driver["informationUri"], kInformationUri);
  // Every entry of the catalog in its order (the rules, then the linter's
  // own checks of how a manifest is written), each documented from its
  // RuleDoc; the input error is the one notification descriptor.
  std::vector<const CatalogEntry*> findings, notifications;
  for (const CatalogEntry& e : catalog()) (e.source == Source::InputError ? notifications : findings).push_back(&e);
  ASSERT_EQ(driver["rules"].size(), findings.size());
  ASSERT_EQ(driver["notifications"].size(), notifications.size());
  auto expectDocumented = [](const json& r, const RuleDoc& d) {
    EXPECT_EQ(r["id"], d.id);
    EXPECT_EQ(r["shortDescription"]["text"], d.summary);
    EXPECT_EQ(r["fullDescription"]["text"], d.description);
    EXPECT_THAT(r["help"]["text"].get<std::string>(), HasSubstr(std::string(d.remediation)));
    EXPECT_THAT(r["help"]["markdown"].get<std::string>(), HasSubstr(std::string(d.wrongExample)));
    EXPECT_THAT(r["help"]["markdown"].get<std::string>(), HasSubstr(std::string(d.rightExample)));
    EXPECT_EQ(r["defaultConfiguration"]["level"], d.defaultSeverity == Severity::Error ? "error" : "warning");
  };
  for (std::size_t i = 0; i < findings.size(); ++i) {
    expectDocumented(driver["rules"][i], *findings[i]->doc);
    const std::string help = driver["rules"][i]["help"]["text"];
    EXPECT_EQ(help.find("ignore.gpuguard.io/" + std::string(findings[i]->id())) != std::string::npos,
              findings[i]->configurable())
        << "only a rule can be silenced by an annotation: " << findings[i]->id();
  }
  expectDocumented(driver["notifications"][0], kInputErrorCheck);
  // Every descriptor links its section of docs/rules.md.
  for (const json& r : driver["rules"]) {
    EXPECT_EQ(r["helpUri"], std::string(kRulesDocUri) + "#" + r["id"].get<std::string>());
    EXPECT_TRUE(r["fullDescription"]["text"].is_string());
  }
  EXPECT_EQ(driver["notifications"][0]["id"], "input-error");
  EXPECT_EQ(driver["notifications"][0]["helpUri"], std::string(kRulesDocUri) + "#input-error");
  EXPECT_TRUE(driver["notifications"][0]["help"]["text"].is_string());
  ASSERT_EQ(run["results"].size(), 3u);
  const json& first = run["results"][0];
  EXPECT_EQ(first["ruleId"], "gpu-fractional");
  EXPECT_EQ(driver["rules"][first["ruleIndex"].get<std::size_t>()]["id"], "gpu-fractional");
  EXPECT_EQ(first["level"], "error");
  EXPECT_THAT(first["message"]["text"].get<std::string>(),
              HasSubstr("spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value"));
  const json& loc = first["locations"][0]["physicalLocation"];
  EXPECT_EQ(loc["artifactLocation"]["uri"], "deploy/a%20b.yaml");
  EXPECT_EQ(loc["region"]["startLine"], 17);
  EXPECT_EQ(loc["region"]["startColumn"], 25);
  // The object, and a fingerprint that does not move with the line.
  const json& logical = first["locations"][0]["logicalLocations"][0];
  EXPECT_EQ(logical["fullyQualifiedName"], "Pod/team-a/half");
  EXPECT_EQ(logical["name"], "half");
  EXPECT_EQ(first["properties"]["podTemplate"], "spec");
  std::vector<FileReport> moved = sampleReports();
  FindingStore shifted;  // the first finding ten lines down
  for (std::size_t i = 0; i < moved[0].findings.size(); ++i) {
    Located l = moved[0].findings[i];
    l.line += i == 0 ? 10 : 0;
    shifted.push_back(l);
  }
  moved[0].findings = std::move(shifted);
  std::ostringstream movedOut;
  writeSarif(movedOut, moved, options);
  EXPECT_EQ(json::parse(movedOut.str())["runs"][0]["results"][0]["partialFingerprints"], first["partialFingerprints"]);
  EXPECT_NE(run["results"][1]["partialFingerprints"], first["partialFingerprints"]);
  EXPECT_EQ(run["results"][1]["level"], "warning");
  EXPECT_FALSE(run["results"][1].contains("suppressions"));
  EXPECT_EQ(run["results"][2]["suppressions"][0]["kind"], "inSource");
  EXPECT_EQ(run["results"][2]["suppressions"][0]["justification"], "ERT plugin");
  EXPECT_EQ(run["columnKind"], "unicodeCodePoints");

  const json& invocation = run["invocations"][0];
  EXPECT_EQ(invocation["executionSuccessful"], false);
  const json& note = invocation["toolExecutionNotifications"][0];
  EXPECT_EQ(note["level"], "error");
  EXPECT_EQ(note["message"]["text"], "found a tab character used for indentation");
  EXPECT_EQ(note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "stdin");
  EXPECT_EQ(note["locations"][0]["physicalLocation"]["region"]["startLine"], 4);
  EXPECT_EQ(invocation["properties"]["suppressed"], 1);
}

TEST(LintReport, JunitHasOneSuitePerInputAndOneCasePerObject) {
  std::ostringstream out;
  Policy policy;
  policy.rules["gpu-count-exceeds-node"] = RuleSetting::Off;
  ReportOptions options;
  options.policy = &policy;
  writeJunit(out, sampleReports(), options);
  const std::string xml = out.str();
  // Objects half, shared and ok, and the unreadable input.
  EXPECT_TRUE(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"gpuguard-lint\" "
                              "tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"1\""))
      << xml.substr(0, 300);
  EXPECT_THAT(xml, HasSubstr("<testsuite name=\"deploy/a b.yaml\" tests=\"2\" failures=\"1\" errors=\"0\" "
                             "skipped=\"1\" time=\"0\">"));
  // The rules that ran are a property of the suite.
  EXPECT_THAT(xml, HasSubstr("<property name=\"gpuguard.rules\" value=\"gpu-invalid-quantity,gpu-fractional,"));
  EXPECT_THAT(xml, Not(HasSubstr("gpu-count-exceeds-node")));
  // The error fails its object's testcase, with the message escaped, the rule and the location.
  EXPECT_THAT(xml, HasSubstr("<testcase name=\"Pod/team-a/half\" classname=\"deploy/a b\" file=\"deploy/a b.yaml\" "
                             "time=\"0\">\n      <failure message=\"1 error: gpu-fractional: spec.containers[0].resources."
                             "limits[nvidia.com/gpu]: Invalid value: &quot;0.5&quot;: &lt;must&gt; &amp; &apos;be&apos; "
                             "whole\" type=\"gpu-fractional\">deploy/a b.yaml:17:25: error: "));
  // The warning does not fail, and shows in system-out.
  EXPECT_THAT(xml, HasSubstr("<system-out>deploy/a b.yaml:9:3: warning: spec.containers[0].resources.limits"
                             "[nvidia.com/gpu]: pin, the: driver\nplease [gpu-missing-driver-pin]\n</system-out>"));
  // An object whose findings were all suppressed is skipped, and counted.
  EXPECT_THAT(xml, HasSubstr("<testcase name=\"Pod/team-a/shared\" classname=\"deploy/a b\" file=\"deploy/a b.yaml\" "
                             "time=\"0\">\n      <skipped message=\"suppressed: gpu-missing-toleration: ERT plugin\"/>"));
  EXPECT_THAT(xml, HasSubstr("<property name=\"gpuguard.suppressed\" value=\"1\"/>"));
  // The unparsable input is an error testcase.
  EXPECT_THAT(xml, HasSubstr("<testcase name=\"input\" classname=\"stdin\" file=\"&lt;stdin&gt;\" time=\"0\">\n"
                             "      <error message=\"found a tab character used for indentation\" "
                             "type=\"input-error\">&lt;stdin&gt;:4:1: found a tab character used for indentation"
                             "</error>"));
  // An object with no finding is a passed test.
  EXPECT_THAT(xml, HasSubstr("<testsuite name=\"ok.yaml\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"0\""));
  EXPECT_THAT(xml, HasSubstr("<testcase name=\"Pod/ok\" classname=\"ok\" file=\"ok.yaml\" time=\"0\"/>"));
}

TEST(LintReport, GithubCommandsAnnotateFilesAndCountSuppressed) {
  std::ostringstream out;
  writeGithub(out, sampleReports(), {});
  EXPECT_EQ(out.str(),
            "::error file=deploy/a b.yaml,line=17,col=25,title=gpu-fractional Pod/team-a/half::spec.containers[0]."
            "resources.limits[nvidia.com/gpu]: Invalid value: \"0.5\": <must> & 'be' whole\n"
            "::warning file=deploy/a b.yaml,line=9,col=3,title=gpu-missing-driver-pin Pod/team-a/half::spec.containers[0].resources."
            "limits[nvidia.com/gpu]: pin, the: driver%0Aplease\n"
            "::error title=gpuguard-lint%3A cannot lint::stdin:4:1: found a tab character used for indentation\n"
            "gpuguard-lint: 1 error, 1 warning, 1 suppressed in 3 objects (3 files, 1 unreadable)\n");
}

}  // namespace
}  // namespace gpuguard::lint
