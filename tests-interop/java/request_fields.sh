#!/usr/bin/env bash
# Decode protobuf bodies with the official Apache Fluss Java client's message classes, VERSION
# (default 1.0.0), as tests-interop/java/FlussRequestFieldsOracle.java does (one JSON object a
# line). No cluster needed.
#
#   tests-interop/java/request_fields.sh [VERSION]  < messages
#
# The download and the compilation: tests-interop/java/client_oracle.sh.
exec "$(dirname "${BASH_SOURCE[0]}")/client_oracle.sh" FlussRequestFieldsOracle "${1:-1.0.0}"
