#!/usr/bin/env bash
# Print the error-code table of the official Apache Fluss Java client, VERSION (default 1.0.0),
# as tests-interop/java/FlussErrorCodesOracle.java does (one JSON object a line). No cluster needed.
#
#   tests-interop/java/error_codes.sh [VERSION]
#
# The download and the compilation: tests-interop/java/client_oracle.sh.
exec "$(dirname "${BASH_SOURCE[0]}")/client_oracle.sh" FlussErrorCodesOracle "${1:-1.0.0}"
