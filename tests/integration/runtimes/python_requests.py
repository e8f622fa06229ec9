# requests proxies from HTTPS_PROXY (trust_env) and verifies with REQUESTS_CA_BUNDLE, not the system store.
import sys
import requests

r = requests.get(sys.argv[1], timeout=30)
r.raise_for_status()
sys.stdout.write(r.text)
