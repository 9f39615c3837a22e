// noop-webhook is the smallest correct validating admission webhook: it decodes the
// AdmissionReview, echoes request.uid and allows. test/bench/admission_vs_peers.sh registers it
// exactly as it registers gpuguard-webhook, so that what it adds to a pod create is the floor
// every webhook pays (the API server encoding the review, the HTTPS round trip, decoding the
// answer), and gpuguard's margin over it is what is gpuguard's own.
//
//	noop-webhook -addr 127.0.0.1:PORT -cert tls.crt -key tls.key [-http1]
//
// By default it offers h2 and http/1.1 by ALPN, as any Go server does; -http1 offers HTTP/1.1
// only, as gpuguard-webhook does. GET /stats reports, as "name value" lines, the connections
// accepted, the requests by protocol and the time spent in the handler, so that the benchmark
// can say which protocol kube-apiserver spoke and how often it reconnected.
package main

import (
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

type admissionReview struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Request    *admissionRequest  `json:"request,omitempty"`
	Response   *admissionResponse `json:"response,omitempty"`
}

// Only the uid is read; the rest of the request is decoded and dropped, as a webhook that
// looked at nothing would still have to parse it.
type admissionRequest struct {
	UID    string          `json:"uid"`
	Object json.RawMessage `json:"object"`
}

type admissionResponse struct {
	UID     string `json:"uid"`
	Allowed bool   `json:"allowed"`
}

type counters struct {
	connections   atomic.Int64
	http1Requests atomic.Int64
	http2Requests atomic.Int64
	handlerNanos  atomic.Int64
}

func (c *counters) validate(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	defer func() { c.handlerNanos.Add(int64(time.Since(start))) }()
	if r.ProtoMajor == 2 {
		c.http2Requests.Add(1)
	} else {
		c.http1Requests.Add(1)
	}
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	var review admissionReview
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 3<<20)).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview with a request", http.StatusBadRequest)
		return
	}
	answer := admissionReview{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview",
		Response: &admissionResponse{UID: review.Request.UID, Allowed: true}}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(answer); err != nil {
		log.Printf("writing the answer: %v", err)
	}
}

func (c *counters) stats(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "connections_accepted %d\nhttp1_requests %d\nhttp2_requests %d\nhandler_seconds %.9f\n",
		c.connections.Load(), c.http1Requests.Load(), c.http2Requests.Load(), float64(c.handlerNanos.Load())/1e9)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8443", "listen address")
	cert := flag.String("cert", "", "serving certificate (PEM)")
	key := flag.String("key", "", "its private key (PEM)")
	http1Only := flag.Bool("http1", false, "offer HTTP/1.1 only (no h2 in ALPN), as gpuguard-webhook does")
	flag.Parse()
	if *cert == "" || *key == "" {
		fmt.Fprintln(os.Stderr, "noop-webhook: -cert and -key are required")
		os.Exit(2)
	}
	var c counters
	mux := http.NewServeMux()
	mux.HandleFunc("/validate", c.validate)
	mux.HandleFunc("/stats", c.stats)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	server := &http.Server{
		Addr:              *addr,
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12},
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				c.connections.Add(1)
			}
		},
	}
	if *http1Only {
		// A non-nil empty map turns off the server's HTTP/2 (and h2 in its ALPN list).
		server.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
	}
	log.Fatal(server.ListenAndServeTLS(*cert, *key))
}
