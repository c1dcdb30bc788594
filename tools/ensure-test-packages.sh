#!/usr/bin/env bash
# The Debian packages the test suite needs, installed when missing: run by `npm test` (its
# pretest step) and by .ci/run. As root it installs them with apt-get; otherwise it stops at once
# with the exact command to run. README.md lists the same packages.
set -euo pipefail

missing=()
# Real MariaDB and PostgreSQL server binaries (the tests start throwaway servers of their own).
[ -x /usr/sbin/mariadbd ] || command -v mariadbd >/dev/null || missing+=(mariadb-server)
compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || missing+=(postgresql)
# OpenSSH's sshd for the SSH tunnel tests.
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
# The walkthrough script (curl, jq) and the TLS test certificates (openssl).
for tool in curl jq openssl; do command -v "$tool" >/dev/null || missing+=("$tool"); done
# The dashboard's browser tests drive Debian's Chromium (never a downloaded browser).
[ -x /usr/bin/chromium ] || missing+=(chromium)

[ ${#missing[@]} -eq 0 ] && exit 0

install_line="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "The test suite needs these Debian packages: ${missing[*]}" >&2
  echo "Install them, then run npm test again:" >&2
  echo "  sudo apt-get update && sudo $install_line" >&2
  exit 1
fi
echo "installing Debian packages the tests need: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
