# urllib.request proxies from HTTPS_PROXY (getproxies()) and verifies with OpenSSL's default file, SSL_CERT_FILE.
import sys
import urllib.request

with urllib.request.urlopen(sys.argv[1], timeout=30) as r:
    sys.stdout.write(r.read().decode())
