// Go's default transport proxies from HTTPS_PROXY/HTTP_PROXY/NO_PROXY (http.ProxyFromEnvironment), but never for
// localhost or loopback destinations; on Linux it verifies with the system roots or SSL_CERT_FILE.
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

func main() {
	client := &http.Client{Timeout: 30 * time.Second}
	r, err := client.Get(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer r.Body.Close()
	body, _ := io.ReadAll(r.Body)
	if r.StatusCode != 200 {
		fmt.Fprintln(os.Stderr, "HTTP", r.StatusCode)
		os.Exit(1)
	}
	os.Stdout.Write(body)
}
