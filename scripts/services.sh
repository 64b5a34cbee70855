#!/usr/bin/env sh
# The services the cluster tests (tests/cluster/) start on loopback: redis-server and nginx, from
# their Debian packages. Installed when missing and when running as root with apt-get (CI runs
# .ci/run as root); anywhere else nothing is installed and those tests skip, naming the binary.
# The packages' own services are not started (RUNLEVEL=1): the tests run their own instances.
set -eu
missing=""
for binary_package in redis-server:redis-server nginx:nginx; do
    binary=${binary_package%%:*}
    package=${binary_package#*:}
    if ! PATH="$PATH:/usr/sbin:/sbin" command -v "$binary" >/dev/null 2>&1; then
        missing="$missing $package"
    fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "services: missing$missing and cannot install them here (needs root and apt-get);" \
         "the cluster tests will be skipped" >&2
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive RUNLEVEL=1
# shellcheck disable=SC2086  # one word per package
if ! apt-get install -y --no-install-recommends $missing; then
    if ! { apt-get update && apt-get install -y --no-install-recommends $missing; }; then
        echo "services: could not install$missing; the cluster tests will be skipped" >&2
    fi
fi
