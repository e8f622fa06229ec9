#!/bin/sh
# curl reads https_proxy/HTTPS_PROXY (and only the lowercase http_proxy for http:// URLs) and CURL_CA_BUNDLE.
set -eu
exec curl -sS --fail --max-time 30 "$1"
