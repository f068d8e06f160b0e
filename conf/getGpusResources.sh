#!/usr/bin/env bash
# GPU discovery script for Spark (spark.{executor,driver}.resource.gpu.discoveryScript).
# Prints the GPUs of this host as Spark's ResourceInformation JSON, for example
#   {"name": "gpu", "addresses": ["0","1"]}
# and an empty address list when nvidia-smi is missing or fails (a host without NVIDIA GPUs).
set -u

addresses=""
if command -v nvidia-smi >/dev/null 2>&1; then
  if indices="$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null)"; then
    while IFS= read -r idx; do
      idx="${idx//[[:space:]]/}"
      [ -n "$idx" ] || continue
      addresses="${addresses:+$addresses,}\"$idx\""
    done <<< "$indices"
  fi
fi
echo "{\"name\": \"gpu\", \"addresses\": [$addresses]}"
