#!/usr/bin/env bash
# Builds the service: stubs from src/main/proto (protoc and protoc-gen-grpc-java from Maven Central), then
# target/the JAR and its libraries in target/lib/. Maven 3.9+, JDK 21+.
set -euo pipefail
cd "$(dirname "$0")"
mvn -q package
