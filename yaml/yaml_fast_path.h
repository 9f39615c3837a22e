// Stage 4's fast path: a scanner of our own for the common block-YAML
// subset of Kubernetes manifests, which produces exactly the events
// yaml-cpp's parser would give the Builder for the same section (same
// order, values, styles and YAML::Mark pos/line/column), several times
// faster. yaml-cpp stays the reference and the error path: on anything
// outside the subset, or anything the fast path is not sure of, it bails
// out, and the caller parses the section with yaml-cpp from scratch.
//
// The subset (docs/linter.md, "YAML fast path"): block mappings and
// sequences (with "- key: v" compact maps and sequences at their parent
// key's column), single-line plain, single- and double-quoted scalars,
// literal and folded block scalars, single-line flow sequences and maps,
// comments, blank lines. It bails out on tabs, CR, control characters,
// anchors, aliases, tags, directives, "---"/"..." lines, complex keys,
// multi-line plain, quoted or flow nodes, keys longer than yaml-cpp's
// simple-key limit, nesting near yaml-cpp's depth limit, and anything
// yaml-cpp would reject.
//
// Files: yaml_fast_path.cpp (lines, block maps and sequences, replay),
// yaml_fast_path_scalars.cpp (plain, quoted and block scalars, flow
// collections); yaml_fast_path_scanner.h is their shared class.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/eventhandler.h>

namespace gpuguard::yaml::detail::fastpath {

// One yaml-cpp EventHandler call, recorded.
struct Event {
  enum class Kind : std::uint8_t { DocumentStart, DocumentEnd, MapStart, MapEnd, SeqStart, SeqEnd, Null, Scalar };
  Kind kind = Kind::Null;
  bool flow = false;     // MapStart/SeqStart: EmitterStyle::Flow, else Block
  bool plain = false;    // Scalar: tag "?" (plain), else "!" (quoted, block)
  bool inArena = false;  // Scalar: its value is in Events::arena, else in the section text
  int pos = 0, line = 0, column = 0;  // the YAML::Mark
  std::uint32_t offset = 0, length = 0;  // Scalar: the value's bytes
};

// A section's events, reused from section to section.
struct Events {
  std::vector<Event> list;
  std::string arena;  // scalar values that differ from their text (escapes, block scalars)
  void clear() {
    list.clear();
    arena.clear();
  }
};

// How stream() went.
struct Streamed {
  enum class Outcome : std::uint8_t {
    Document,    // the section's one document: every event went to the handler
    NoDocument,  // blank lines and comments only, no events (yaml-cpp's HandleNextDocument returns false)
    BailedOut,   // outside the subset: let yaml-cpp parse the section
  };
  Outcome outcome = Outcome::BailedOut;
  // BailedOut: whether the handler had events before the scan bailed out.
  // It must then undo them: yaml-cpp's events can differ from those.
  bool handlerCalled = false;
};

// Calls `handler` as yaml-cpp's Parser::HandleNextDocument would have for
// the first document of `section` (one '---' section, whose first byte is
// the stream position 0 of its marks), or bails out. The events go to the
// handler in chunks of about `chunkEvents` as the section is scanned, each
// once no later text can take it back, so that a large section (a whole
// cluster's List) never holds all its events: `scratch` holds one chunk.
// Because a bail-out can come after some chunks, what the handler throws is
// held until the scan ends (no event reaches it after that): thrown on when
// the section is in the subset, at the event where handing over the whole
// document would have thrown it; dropped on a bail-out, where yaml-cpp's
// events decide.
Streamed stream(std::string_view section, Events& scratch, YAML::EventHandler& handler, std::size_t chunkEvents = 1024);

}  // namespace gpuguard::yaml::detail::fastpath
