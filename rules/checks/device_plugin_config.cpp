// device-plugin-config: an NVIDIA device plugin DaemonSet that cannot register
// or advertise GPUs: no kubelet device-plugin hostPath, invalid strategies,
// FAIL_ON_INIT_ERROR=false, or no toleration for the GPU taint.
#include <array>
#include <algorithm>
#include <optional>

#include "rules/checks/checks.h"
#include "rules/support/gpu_operator_config.h"
#include "rules/support/k8s_objects.h"
#include "rules/support/toleration_near_miss.h"
#include "rules/pod_constraints.h"
#include "rules/k8s/field_error.h"
#include "rules/k8s/taints.h"
#include "text/templated.h"

namespace gpuguard::checks {
namespace {

using nlohmann::json;

// The policy keys this rule reads (besides `rules`), for --explain and docs/rules.md.
constexpr std::array<std::string_view, 2> kPolicyKeys{"gpuTaints", "assumeExtendedResourceToleration"};

constexpr RuleDoc kDoc{
    .id = "device-plugin-config",
    .defaultSeverity = Severity::Error,
    .summary = "An NVIDIA device plugin DaemonSet that cannot register with the kubelet, has invalid settings, or "
               "does not run on tainted GPU nodes; a GPU node agent (GFD, MIG manager, DCGM exporter, DRA plugin) "
               "that does not either.",
    .description =
        "The NVIDIA k8s-device-plugin registers with the kubelet through "
        "/var/lib/kubelet/device-plugins/kubelet.sock and serves its own socket in the same directory, so the "
        "DaemonSet must mount that hostPath at the same path; without it the plugin never registers and the "
        "node shows no nvidia.com/gpu (a non-default kubelet root keeps the device-plugins directory name, so any "
        "hostPath ending in /device-plugins is accepted, as is a hostPath mount of a parent directory). Its "
        "settings come from flags, which win, or environment variables: --mig-strategy / MIG_STRATEGY is none, "
        "single or mixed; --device-list-strategy / DEVICE_LIST_STRATEGY a comma-separated list of envvar, "
        "volume-mounts, cdi-annotations, cdi-cri; --device-id-strategy / DEVICE_ID_STRATEGY uuid or index; "
        "anything else makes the plugin exit at start. --fail-on-init-error=false / FAIL_ON_INIT_ERROR=false "
        "keeps the plugin alive but idle when it cannot initialise (no driver, wrong container runtime): the "
        "node quietly advertises no GPUs instead of showing a crash-looping pod that names the cause. That is a "
        "choice, not a breakage, so it is reported as a warning (the rule's other findings are errors; a "
        "severity set for the rule in the policy applies to all). The plugin must also tolerate the policy's "
        "GPU taints (NoSchedule/NoExecute), or it never runs on the GPU nodes. The plugin is recognised in "
        "DaemonSets by an image containing both nvidia and k8s-device-plugin (nvcr.io/nvidia/k8s-device-plugin, "
        "nvidia/k8s-device-plugin, mirrors of them; AMD's rocm/k8s-device-plugin shares the name and is not "
        "checked); a container with any other image is not the plugin, whatever its name (AWS's "
        "aws-efa-k8s-device-plugin advertises EFA devices, not GPUs). Only when the image is left to be filled in "
        "(empty, a template, the GPU Operator's \"FILLED BY THE OPERATOR\") does a DaemonSet named "
        "*nvidia-device-plugin* or *k8s-device-plugin* with a container named *device-plugin* count. Containers of the same image that run another program (gpu-feature-discovery, "
        "config-manager, mps-control-daemon) are not the plugin, and GKE's own device plugin "
        "(gcr.io/gke-release/nvidia-gpu-device-plugin) is a different program and is not checked. Environment "
        "values from valueFrom and empty values are not judged. The other NVIDIA programs that must run on every "
        "GPU node are held to the same toleration, in DaemonSets without the plugin: GPU Feature Discovery (image "
        "gpu-feature-discovery, or the program gpu-feature-discovery in the plugin's image; without it the nodes "
        "carry no GFD labels and pods selecting on them stay Pending), the MIG manager (image *mig-manager*; MIG "
        "layouts are never applied), the DCGM exporter (image *dcgm-exporter*; no GPU metrics) and the NVIDIA DRA "
        "driver's kubelet plugin (image *k8s-dra-driver*; no ResourceSlices, so claims are never allocated). "
        "A GPU Operator ClusterPolicy whose spec.daemonsets.tolerations (when set, it replaces the tolerations of "
        "every operand DaemonSet; the chart default is {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}) "
        "does not tolerate the GPU taint keeps the driver, toolkit, device plugin and the rest off the GPU nodes. "
        "A ConfigMap holding a device plugin sharing config (timeSlicing or mps) with replicas below 2 makes the "
        "plugin fail its config load (\"number of replicas must be >= 2\"), so the nodes using it advertise no GPUs. A "
        "missing toleration names the closest one written, as gpu-missing-toleration does.",
    .remediation =
        "Mount hostPath /var/lib/kubelet/device-plugins at /var/lib/kubelet/device-plugins, use the documented "
        "values, leave FAIL_ON_INIT_ERROR at its default (true) and keep the DaemonSet off GPU-less nodes with "
        "a nodeSelector instead, and tolerate {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}.",
    .wrongExample =
        "kind: DaemonSet\nspec:\n  template:\n    spec:\n      containers:\n"
        "      - name: nvidia-device-plugin-ctr\n        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0\n"
        "        env:\n        - {name: MIG_STRATEGY, value: Mixed}\n",
    .rightExample =
        "kind: DaemonSet\nspec:\n  template:\n    spec:\n      tolerations:\n"
        "      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n      containers:\n"
        "      - name: nvidia-device-plugin-ctr\n        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0\n"
        "        env:\n        - {name: MIG_STRATEGY, value: mixed}\n        volumeMounts:\n"
        "        - {name: device-plugin, mountPath: /var/lib/kubelet/device-plugins}\n      volumes:\n"
        "      - name: device-plugin\n        hostPath: {path: /var/lib/kubelet/device-plugins, type: Directory}\n",
    .policyKeys = kPolicyKeys,
};

constexpr std::string_view kPluginDir = "/var/lib/kubelet/device-plugins";

std::string withoutTrailingSlash(std::string_view p) {
  while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
  return std::string(p);
}

std::string basename(std::string_view p) {
  const std::size_t slash = p.rfind('/');
  return std::string(slash == std::string_view::npos ? p : p.substr(slash + 1));
}

// One word of command/args (split on blanks, for `sh -c "..."`), and where it is.
struct Word {
  std::string text;
  FieldPath path;
};

std::vector<Word> commandWords(const json& container, const FieldPath& containerPath) {
  std::vector<Word> words;
  for (const char* key : {"command", "args"}) {
    const json* list = arrayAt(container, key);
    if (!list) continue;
    for (std::size_t i = 0; i < list->size(); ++i) {
      if (!(*list)[i].is_string()) continue;
      const std::string& s = (*list)[i].get_ref<const std::string&>();
      const FieldPath at = containerPath.field(key).index(i);
      std::size_t pos = 0;
      while (pos < s.size()) {
        while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n')) ++pos;
        std::size_t end = pos;
        while (end < s.size() && s[end] != ' ' && s[end] != '\t' && s[end] != '\n') ++end;
        if (end > pos) words.push_back({s.substr(pos, end - pos), at});
        pos = end;
      }
    }
  }
  return words;
}

// An image reference someone else fills in: empty, a placeholder with spaces, a template.
bool imageLeftOpen(const std::string& image) {
  return image.empty() || image.find_first_of(" \t") != std::string::npos || text::looksTemplated(image);
}

bool isPluginContainer(const json& container, std::string_view daemonSetName, const std::vector<Word>& words) {
  for (const Word& w : words) {
    const std::string program = basename(w.text);
    if (program == "gpu-feature-discovery" || program == "config-manager" || program == "mps-control-daemon") {
      return false;
    }
  }
  const std::string image = stringAt(container, "image") ? *stringAt(container, "image") : "";
  const std::string name = stringAt(container, "name") ? *stringAt(container, "name") : "";
  // nvcr.io/nvidia/k8s-device-plugin, nvidia/k8s-device-plugin and mirrors
  // of them; not rocm/k8s-device-plugin, AMD's plugin of the same name.
  const std::string lowerImage = lowercase(image);
  if (lowerImage.find("k8s-device-plugin") != std::string::npos && lowerImage.find("nvidia") != std::string::npos) {
    return true;
  }
  // A real image that is not NVIDIA's plugin settles it (AWS's EFA plugin,
  // aws-efa-k8s-device-plugin, is not a GPU plugin): names decide only when
  // the image is left to be filled in (the GPU Operator's "FILLED BY THE
  // OPERATOR", empty, a template).
  if (!imageLeftOpen(image)) return false;
  const bool namedDaemonSet = daemonSetName.find("nvidia-device-plugin") != std::string_view::npos ||
                              daemonSetName.find("k8s-device-plugin") != std::string_view::npos;
  return namedDaemonSet && name.find("device-plugin") != std::string::npos;
}

// A setting as the plugin reads it: the flag if given, else the env var.
struct Setting {
  std::string value;
  FieldPath path;
  std::string source;  // "--mig-strategy" or "MIG_STRATEGY"
};

std::string unquote(std::string s) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) return s.substr(1, s.size() - 2);
  return s;
}

std::optional<Setting> setting(const json& container, const FieldPath& containerPath, const std::vector<Word>& words,
                               std::string_view flag, std::string_view env, bool boolean) {
  // urfave/cli: -flag or --flag, "=value" or (not for booleans) the next word.
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string_view w = words[i].text;
    if (w.starts_with("--")) w.remove_prefix(2);
    else if (w.starts_with("-")) w.remove_prefix(1);
    else continue;
    if (!w.starts_with(flag)) continue;
    w.remove_prefix(flag.size());
    const std::string shown = "--" + std::string(flag);
    if (w.starts_with("=")) return Setting{unquote(std::string(w.substr(1))), words[i].path, shown};
    if (!w.empty()) continue;  // a longer flag name
    if (boolean) return Setting{"true", words[i].path, shown};
    if (i + 1 < words.size()) return Setting{unquote(words[i + 1].text), words[i + 1].path, shown};
  }
  const json* envs = arrayAt(container, "env");
  if (!envs) return std::nullopt;
  for (std::size_t i = 0; i < envs->size(); ++i) {
    const std::string* name = stringAt((*envs)[i], "name");
    if (!name || *name != env) continue;
    auto value = (*envs)[i].find("value");
    if (value == (*envs)[i].end() || value->is_null()) continue;  // valueFrom: unknown here
    std::string text = value->is_string() ? value->get<std::string>() : value->dump();
    if (text.empty()) continue;
    return Setting{text, containerPath.field("env").index(i).field("value"), std::string(env)};
  }
  return std::nullopt;
}

std::string inQuotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

// Go's strconv.ParseBool.
std::optional<bool> parseGoBool(std::string_view s) {
  for (std::string_view t : {"1", "t", "T", "TRUE", "true", "True"}) {
    if (s == t) return true;
  }
  for (std::string_view f : {"0", "f", "F", "FALSE", "false", "False"}) {
    if (s == f) return false;
  }
  return std::nullopt;
}

// A program that must run on every GPU node, and what the node lacks
// without it.
struct NodeAgent {
  std::string_view name;
  std::string_view consequence;
};

constexpr NodeAgent kPluginAgent{"the device plugin", "they advertise no nvidia.com/gpu"};

// The other NVIDIA node agents, known by their images (or, for GPU Feature
// Discovery, its program in the device plugin's image).
const NodeAgent* nodeAgentOf(const json& container) {
  static constexpr NodeAgent kGfd{"GPU Feature Discovery",
                                  "they carry no nvidia.com/gpu.* or cuda.* labels, so pods selecting on them stay "
                                  "Pending"};
  static constexpr NodeAgent kMigManager{"the MIG manager",
                                         "the MIG layout asked for by nvidia.com/mig.config is never applied"};
  static constexpr NodeAgent kDcgmExporter{"the DCGM exporter", "their GPUs export no metrics"};
  static constexpr NodeAgent kDraPlugin{"the NVIDIA DRA driver's kubelet plugin",
                                        "they publish no ResourceSlices, so GPU claims are never allocated there"};
  const std::string image = stringAt(container, "image") ? lowercase(*stringAt(container, "image")) : "";
  const auto has = [&](std::string_view s) { return image.find(s) != std::string::npos; };
  const json* command = arrayAt(container, "command");
  const bool runsGfd = command && std::any_of(command->begin(), command->end(), [](const json& w) {
    return w.is_string() && basename(w.get<std::string>()) == "gpu-feature-discovery";
  });
  if (has("gpu-feature-discovery") || runsGfd) return &kGfd;
  if (has("mig-manager")) return &kMigManager;
  if (has("dcgm-exporter")) return &kDcgmExporter;
  if (has("nvidia") && (has("k8s-dra-driver") || has("dra-driver-nvidia"))) return &kDraPlugin;
  return nullptr;
}

class DevicePluginConfig final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    forEachObject(ctx.object, [&](const json& obj, const FieldPath& base) {
      checkDaemonSet(ctx, obj, base, out);
      checkClusterPolicy(ctx, obj, base, out);
      checkSharingConfigMap(obj, base, out);
    });
  }

 private:
  static void checkDaemonSet(const CheckContext& ctx, const json& obj, const FieldPath& base, Reporter& out) {
    const std::string* kind = stringAt(obj, "kind");
    if (!kind || *kind != "DaemonSet") return;
    const json* metadata = objectAt(obj, "metadata");
    const std::string* dsName = metadata ? stringAt(*metadata, "name") : nullptr;
    const json* spec = objectAt(obj, "spec");
    const json* tmpl = spec ? objectAt(*spec, "template") : nullptr;
    const json* podSpec = tmpl ? objectAt(*tmpl, "spec") : nullptr;
    const json* containers = podSpec ? arrayAt(*podSpec, "containers") : nullptr;
    if (!containers) return;
    const FieldPath podPath = base.field("spec").field("template").field("spec");
    bool sawPlugin = false;
    for (std::size_t i = 0; i < containers->size(); ++i) {
      const json& c = (*containers)[i];
      if (!c.is_object()) continue;
      const FieldPath cPath = podPath.field("containers").index(i);
      const std::vector<Word> words = commandWords(c, cPath);
      if (!isPluginContainer(c, dsName ? *dsName : "", words)) continue;
      sawPlugin = true;
      checkMount(*podSpec, c, cPath, words, out);
      checkSettings(c, cPath, words, out);
    }
    if (sawPlugin) {
      checkTolerations(ctx, podPath, kPluginAgent, out);
      return;
    }
    for (const json& c : *containers) {
      if (const NodeAgent* agent = nodeAgentOf(c)) {
        checkTolerations(ctx, podPath, *agent, out);
        return;
      }
    }
  }

  static void checkMount(const json& podSpec, const json& c, const FieldPath& cPath, const std::vector<Word>& words,
                         Reporter& out) {
    // --kubelet-socket / KUBELET_SOCKET moves the directory inside the container.
    std::string dir(kPluginDir);
    if (auto socket = setting(c, cPath, words, "kubelet-socket", "KUBELET_SOCKET", false)) {
      const std::size_t slash = socket->value.rfind('/');
      if (slash != std::string::npos && slash > 0) dir = socket->value.substr(0, slash);
    }
    const json* volumes = arrayAt(podSpec, "volumes");
    auto volumeNamed = [&](const std::string& name) -> const json* {
      if (!volumes) return nullptr;
      for (const json& v : *volumes) {
        if (const std::string* n = stringAt(v, "name"); n && *n == name) return &v;
      }
      return nullptr;
    };
    const json* mounts = arrayAt(c, "volumeMounts");
    if (mounts) {
      for (std::size_t j = 0; j < mounts->size(); ++j) {
        const std::string* mountPath = stringAt((*mounts)[j], "mountPath");
        const std::string* name = stringAt((*mounts)[j], "name");
        if (!mountPath || !name) continue;
        const std::string mp = withoutTrailingSlash(*mountPath);
        const bool exact = mp == dir;
        const bool parent = !exact && (mp == "/" || dir.starts_with(mp + "/"));
        if (!exact && !parent) continue;
        const json* volume = volumeNamed(*name);
        if (!volume) return;  // the API server reports the dangling mount
        const json* hostPath = objectAt(*volume, "hostPath");
        const std::string* hp = hostPath ? stringAt(*hostPath, "path") : nullptr;
        if (!hp) {
          out.report(cPath.field("volumeMounts").index(j),
                     FieldError::invalid(quotedValue(*name),
                                         mp + " must be the node's kubelet device-plugin directory, a hostPath "
                                             "volume; with any other "
                                             "volume the plugin cannot reach kubelet.sock and never registers; use "
                                             "hostPath " + std::string(kPluginDir)),
                     *name);
        } else if (exact && !withoutTrailingSlash(*hp).ends_with("/device-plugins")) {
          out.report(cPath.field("volumeMounts").index(j),
                     FieldError::invalid(quotedValue(*hp),
                                         "the volume mounted at " + mp +
                                             " is not the kubelet's device-plugin directory (<kubelet "
                                             "root>/device-plugins, " + std::string(kPluginDir) +
                                             " by default), so the plugin never registers and the node shows no "
                                             "nvidia.com/gpu; mount hostPath " + std::string(kPluginDir)),
                     *hp);
        }
        return;
      }
    }
    std::string hint;
    if (volumes) {
      for (const json& v : *volumes) {
        const json* hostPath = objectAt(v, "hostPath");
        const std::string* hp = hostPath ? stringAt(*hostPath, "path") : nullptr;
        const std::string* n = stringAt(v, "name");
        if (hp && n && withoutTrailingSlash(*hp).ends_with("/device-plugins")) {
          hint = " (the pod has the hostPath volume \"" + *n + "\" but this container does not mount it at " + dir + ")";
        }
      }
    }
    out.report(mounts ? cPath.field("volumeMounts") : cPath,
               FieldError::required("the device plugin does not mount the kubelet's device-plugin directory" + hint +
                                        ", so it cannot reach kubelet.sock, never registers, and the node shows no "
                                        "nvidia.com/gpu; mount hostPath " + std::string(kPluginDir) + " at " + dir));
  }

  static void checkSettings(const json& c, const FieldPath& cPath, const std::vector<Word>& words, Reporter& out) {
    if (auto s = setting(c, cPath, words, "mig-strategy", "MIG_STRATEGY", false)) {
      if (s->value != "none" && s->value != "single" && s->value != "mixed") {
        out.report(s->path,
                   FieldError::notSupported(inQuotes(s->value),
                                            "supported values: \"none\", \"single\", \"mixed\" (" + s->source +
                                                "); the plugin exits with \"unknown MIG strategy: " + s->value + "\""),
                   s->value);
      }
    }
    if (auto s = setting(c, cPath, words, "device-list-strategy", "DEVICE_LIST_STRATEGY", false)) {
      std::size_t start = 0;
      while (start <= s->value.size()) {
        std::size_t comma = s->value.find(',', start);
        if (comma == std::string::npos) comma = s->value.size();
        std::string item = s->value.substr(start, comma - start);
        while (!item.empty() && item.front() == ' ') item.erase(0, 1);
        while (!item.empty() && item.back() == ' ') item.pop_back();
        if (item != "envvar" && item != "volume-mounts" && item != "cdi-annotations" && item != "cdi-cri") {
          out.report(s->path,
                     FieldError::notSupported(inQuotes(item),
                                              "supported values: \"envvar\", \"volume-mounts\", "
                                                  "\"cdi-annotations\", \"cdi-cri\" (" + s->source +
                                                  ", a comma-separated list); the plugin exits with \"invalid "
                                                  "--device-list-strategy option: invalid strategy: " + item + "\""),
                     s->value);
          break;
        }
        start = comma + 1;
      }
    }
    if (auto s = setting(c, cPath, words, "device-id-strategy", "DEVICE_ID_STRATEGY", false)) {
      if (s->value != "uuid" && s->value != "index") {
        out.report(s->path,
                   FieldError::notSupported(inQuotes(s->value),
                                            "supported values: \"uuid\", \"index\" (" + s->source +
                                                "); the plugin exits with \"invalid --device-id-strategy option: " +
                                                s->value + "\""),
                   s->value);
      }
    }
    if (auto s = setting(c, cPath, words, "fail-on-init-error", "FAIL_ON_INIT_ERROR", true)) {
      const std::optional<bool> b = parseGoBool(s->value);
      if (!b) {
        out.report(s->path,
                   FieldError::invalid(inQuotes(s->value),
                                       s->source +
                                           " must be true or false; the plugin cannot parse it and does not start"),
                   s->value);
      } else if (!*b) {
        out.reportWithDefault(s->path,
                              FieldError::invalid(inQuotes(s->value),
                                                  "with " + s->source +
                                                      " false a plugin that cannot initialise (no driver, wrong "
                                                      "container runtime) stays up idle, and "
                                                      "the node silently advertises no nvidia.com/gpu instead of "
                                                      "showing a failing pod that names the "
                                                      "cause; leave it true (the default) and keep the DaemonSet "
                                                      "off GPU-less nodes with a nodeSelector"),
                              s->value,
                              Severity::Warning);
      }
    }
  }

  static void checkTolerations(const CheckContext& ctx, const FieldPath& podPath, const NodeAgent& agent,
                               Reporter& out) {
    const std::string at = podPath.apiPath();
    const auto site = std::find_if(ctx.sites.begin(), ctx.sites.end(),
                                   [&](const PodSite& s) { return s.specPath.apiPath() == at; });
    if (site == ctx.sites.end()) return;
    for (const Taint& taint : untoleratedGpuTaints(*site, ctx.policy)) {
      out.report(site->tolerations.path,
                 FieldError::required(std::string(agent.name) + " does not tolerate the GPU node taint " +
                                      describeTaint(taint) + ", so it never runs on the tainted GPU nodes and " +
                                      std::string(agent.consequence) + "; add {key: " + taint.key +
                                      ", operator: Exists, effect: " + taint.effect + "} to tolerations" +
                                      nearMissNote(*site, taint)));
    }
  }
};

}  // namespace

std::unique_ptr<Rule> makeDevicePluginConfig() { return std::make_unique<DevicePluginConfig>(); }

}  // namespace gpuguard::checks
