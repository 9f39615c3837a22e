// HTTP/1.1 request-head parsing and response serialisation for the HTTPS
// server. Internal to https/ (its tests and fuzzer aside); no I/O, no allocation except into the
// caller's objects, so it is easy to test and to fuzz.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "https/server.h"

namespace gpuguard::webhook::http1 {

constexpr std::size_t kNotFound = static_cast<std::size_t>(-1);

// Finds the end of a request head (the empty line that ends the headers,
// CRLF or bare LF) in `buf`, scanning from `from`. Returns the offset just
// past it, or kNotFound with `resume` set to where the next scan should
// start, so a head trickled in byte by byte is scanned once in total.
std::size_t findHeadEnd(std::string_view buf, std::size_t from, std::size_t& resume);

// What the server needs to know about one request head.
struct Head {
  int status = 0;                // 0: valid; else the status to answer with
  std::string_view error;        // why (for the JSON error body)
  bool http10 = false;
  bool keepAlive = true;         // after this request
  bool expectContinue = false;   // "Expect: 100-continue"
  bool headMethod = false;       // HEAD: no body in the response
  std::uint64_t contentLength = 0;
};

// Parses a request head (request line and headers, with or without the
// final empty line). With `out`, also fills its method, target, path and
// headers (names lower-cased; its body and peer are left alone).
Head parseHead(std::string_view head, std::size_t maxHeaders, HttpRequest* out);

// What one request's head may be.
struct FramingLimits {
  std::size_t maxHeaderBytes = 16 * 1024;     // request line and headers: 431 beyond
  std::size_t maxHeaders = 128;               // header fields: 431 beyond
  std::size_t maxBodyBytes = 3 * 1024 * 1024; // a declared Content-Length: 413 beyond
};

// The next request head at the start of a connection's unread bytes.
struct HeadScan {
  enum class Outcome { NeedMore, Complete, Rejected };
  Outcome outcome = Outcome::NeedMore;
  std::size_t skipped = 0;  // empty lines before the request line, to be consumed in any outcome
  std::size_t headLen = 0;  // Complete: the head after them, with its final empty line
  Head head;                // Complete: what it says (the body is head.contentLength bytes after it)
  int status = 0;           // Rejected: the status to answer with, and why
  std::string error;
};

// Scans `unread` for a complete head and parses it. `resume` (relative to
// `unread`) is where the last scan of the same bytes stopped, 0 at first; it
// is updated so that a head trickled in byte by byte is scanned once in
// total. The body is not looked at: it is head.contentLength bytes, never
// chunked (Transfer-Encoding is rejected), so framing is the head's alone.
HeadScan scanHead(std::string_view unread, std::size_t& resume, const FramingLimits& limits);

// The reason phrase of a status code ("OK", "Not Found", ...).
std::string_view reasonPhrase(int status);

// Appends a whole response (status line, headers, body) to `out`.
// `close`: add "Connection: close"; `keepAlive10`: add "Connection:
// keep-alive" (an HTTP/1.0 client that asked for it); `headMethod`: leave the
// body out.
void appendResponse(std::string& out, const HttpResponse& response, bool close, bool keepAlive10,
                    bool headMethod);

// The body of a server-made error: {"error": "<message>"} and a newline.
std::string errorBody(std::string_view message);

// Appends a server-made error: {"error": "<message>"}, Connection: close.
void appendError(std::string& out, int status, std::string_view message);

// Appends `text` as the inside of a JSON string.
void appendJsonEscaped(std::string& out, std::string_view text);

}  // namespace gpuguard::webhook::http1
