// A peer sender for the benchmark: how the Go APNs senders (apns2, gorush) send, reduced to the transport.
// golang.org/x/net/http2's Transport over TLS (one connection per host, more when the server's stream limit
// is reached), one ES256 provider token reused for the run as apns2 does for up to an hour, and a pool of
// goroutines each doing a blocking POST, as gorush's workers do. Notifications are generated in memory: this
// measures the sender alone, without a queue.
//
// Usage: go-sender -endpoint https://127.0.0.1:PORT -ca ca.pem -key key.p8 -team T -key-id K
//                  -topic com.example.chat -n 200000 -concurrency 1000
// Prints one JSON line: {"sender":"go","notifications":N,"ok":N,"failed":N,"seconds":S}.
package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
)

func providerToken(keyFile, teamID, keyID string) string {
	raw, err := os.ReadFile(keyFile)
	if err != nil {
		log.Fatalf("key file: %v", err)
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		log.Fatalf("key file %s: no PEM block", keyFile)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		log.Fatalf("key file %s: %v", keyFile, err)
	}
	key, ok := parsed.(*ecdsa.PrivateKey)
	if !ok {
		log.Fatalf("key file %s: not an EC key", keyFile)
	}
	enc := base64.RawURLEncoding
	header, _ := json.Marshal(map[string]string{"alg": "ES256", "kid": keyID})
	claims, _ := json.Marshal(map[string]interface{}{"iss": teamID, "iat": time.Now().Unix()})
	signing := enc.EncodeToString(header) + "." + enc.EncodeToString(claims)
	digest := sha256.Sum256([]byte(signing))
	r, s, err := ecdsa.Sign(rand.Reader, key, digest[:])
	if err != nil {
		log.Fatalf("sign: %v", err)
	}
	signature := make([]byte, 64)
	r.FillBytes(signature[:32])
	s.FillBytes(signature[32:])
	return signing + "." + enc.EncodeToString(signature)
}

func main() {
	endpoint := flag.String("endpoint", "", "https://host:port")
	caFile := flag.String("ca", "", "PEM file of the CA that signed the endpoint's certificate")
	keyFile := flag.String("key", "", "the provider's .p8 key")
	teamID := flag.String("team", "", "team id")
	keyID := flag.String("key-id", "", "key id")
	topic := flag.String("topic", "com.example.chat", "apns-topic")
	count := flag.Int("n", 200000, "notifications")
	concurrency := flag.Int("concurrency", 1000, "goroutines sending at once")
	flag.Parse()

	pool := x509.NewCertPool()
	if pemBytes, err := os.ReadFile(*caFile); err != nil || !pool.AppendCertsFromPEM(pemBytes) {
		log.Fatalf("CA file %s unreadable", *caFile)
	}
	client := &http.Client{
		Transport: &http2.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
		Timeout:   30 * time.Second,
	}
	bearer := "bearer " + providerToken(*keyFile, *teamID, *keyID)

	var next, ok, failed int64
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < *concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := atomic.AddInt64(&next, 1)
				if i > int64(*count) {
					return
				}
				body := []byte(fmt.Sprintf(`{"aps":{"alert":"hello %d"}}`, i))
				url := fmt.Sprintf("%s/3/device/%064x", *endpoint, i)
				req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
				req.Header.Set("authorization", bearer)
				req.Header.Set("apns-topic", *topic)
				req.Header.Set("apns-push-type", "alert")
				resp, err := client.Do(req)
				if err != nil {
					atomic.AddInt64(&failed, 1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 {
					atomic.AddInt64(&ok, 1)
				} else {
					atomic.AddInt64(&failed, 1)
				}
			}
		}()
	}
	wg.Wait()
	out, _ := json.Marshal(map[string]interface{}{
		"sender": "go", "notifications": *count, "ok": ok, "failed": failed,
		"seconds": time.Since(start).Seconds(),
	})
	fmt.Println(string(out))
}
