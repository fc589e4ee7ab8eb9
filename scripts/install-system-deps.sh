#!/usr/bin/env bash
# Installs the Debian packages BoAnon needs (db_bench from rocksdb-tools, graphviz for rendering
# graphs, chromium and its WebDriver for the dashboard's browser test). Idempotent: does nothing
# when they are already there.
set -euo pipefail
need=()
command -v db_bench >/dev/null 2>&1 || need+=(rocksdb-tools)
command -v dot >/dev/null 2>&1 || need+=(graphviz)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
echo "installing Debian packages: ${need[*]}"
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${need[@]}" >/dev/null
