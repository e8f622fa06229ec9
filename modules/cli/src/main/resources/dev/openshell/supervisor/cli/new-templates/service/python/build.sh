#!/usr/bin/env bash
# Generates the Python stubs of openshell.middleware.v1 (proto/) into gen/: with protoc and gRPC's Python plugin
# (Debian/Ubuntu: apt-get install protobuf-compiler protobuf-compiler-grpc python3-grpcio python3-protobuf), else
# with grpcio-tools (pip install grpcio grpcio-tools). PYTHON chooses the interpreter (default python3).
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3}
proto=openshell/middleware/v1/middleware.proto
rm -rf gen && mkdir -p gen
if command -v protoc >/dev/null 2>&1 && command -v grpc_python_plugin >/dev/null 2>&1; then
  protoc -I proto --python_out=gen --grpc_python_out=gen \
    --plugin=protoc-gen-grpc_python="$(command -v grpc_python_plugin)" "$proto"
elif "$PYTHON" -c 'import grpc_tools.protoc' 2>/dev/null; then
  "$PYTHON" -m grpc_tools.protoc -I proto --python_out=gen --grpc_python_out=gen "$proto"
else
  echo "build.sh: needs protoc and grpc_python_plugin, or grpcio-tools (see the comment at the top)" >&2
  exit 1
fi
"$PYTHON" -c 'import grpc, google.protobuf' \
  || { echo "build.sh: $PYTHON lacks grpcio or protobuf (pip install grpcio protobuf, or the Debian packages)" >&2; exit 1; }
echo "stubs generated in gen/"
