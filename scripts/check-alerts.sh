#!/usr/bin/env bash
# Checks the shipped alerting rules: `promtool check rules` on deploy/prometheus/alerts.yml, `promtool test
# rules` on its unit tests, that every alert has a test where it fires, and that the Kubernetes PrometheusRule
# is what scripts/gen-prometheusrule.py makes of the file. Counts alerts: one passes when it is valid, fires in
# a test, no test of it fails, its runbook_url names a section of docs/operations.md, and the generated copy
# is current. Ends with `alerts: N passed, M failed`; exits 1 if any failed, 2 when promtool is missing
# (scripts/install-deps.sh installs Debian's prometheus).
set -euo pipefail
cd "$(dirname "$0")/.."
rules=deploy/prometheus/alerts.yml
tests=deploy/prometheus/alerts.test.yml
command -v promtool >/dev/null || { echo "check-alerts: no promtool (Debian package prometheus)" >&2; exit 2; }

# Alert names, and those some test expects to fire (exp_alerts not empty).
mapfile -t alerts < <(python3 -c 'import sys, yaml
for g in yaml.safe_load(open(sys.argv[1]))["groups"]:
    for r in g["rules"]:
        if "alert" in r: print(r["alert"])' "$rules")
mapfile -t fired < <(python3 -c 'import sys, yaml
for t in yaml.safe_load(open(sys.argv[1]))["tests"]:
    for c in t.get("alert_rule_test", []):
        if c.get("exp_alerts"): print(c["alertname"])' "$tests" | sort -u)
# No alert read (the file does not parse) must not pass as "0 passed, 0 failed".
[ ${#alerts[@]} -gt 0 ] || { echo "FAIL no alert read from $rules" >&2; echo "alerts: 0 passed, 1 failed"; exit 1; }

failed=()
fail_all() { echo "FAIL $1" >&2; failed=("${alerts[@]}"); }

if ! promtool check rules "$rules"; then fail_all "promtool check rules $rules"; fi
tested=0; output=$(promtool test rules "$tests" 2>&1) || tested=$?
echo "$output"
if [ "$tested" -ne 0 ]; then
  # promtool names each failing expectation `alertname: X, time: T`; anything else (a syntax error, a test of
  # an alert that does not exist) fails all.
  mapfile -t named < <(grep -oE 'alertname: [A-Za-z0-9_]+' <<<"$output" | cut -d' ' -f2 | sort -u \
    | grep -xF -f <(printf '%s\n' "${alerts[@]}"))
  if [ ${#named[@]} -gt 0 ]; then failed+=("${named[@]}"); else fail_all "promtool test rules $tests"; fi
fi
for alert in "${alerts[@]}"; do
  printf '%s\n' "${fired[@]}" | grep -qx "$alert" || { echo "FAIL $alert: no test in $tests where it fires" >&2; failed+=("$alert"); }
done
# Each runbook_url must name a heading of docs/operations.md (as Markdown renderers make anchors of them).
mapfile -t unlinked < <(python3 -c 'import re, sys, yaml
doc = open("docs/operations.md").read()
anchors = {re.sub(r"[^a-z0-9 _-]", "", h.strip().lower()).replace(" ", "-") for h in re.findall(r"^#+ (.*)$", doc, re.M)}
for g in yaml.safe_load(open(sys.argv[1]))["groups"]:
    for r in g["rules"]:
        url = r.get("annotations", {}).get("runbook_url", "")
        if "alert" in r and not (url.startswith("docs/operations.md#") and url.split("#", 1)[1] in anchors):
            print(r["alert"])' "$rules")
for alert in "${unlinked[@]+"${unlinked[@]}"}"; do echo "FAIL $alert: runbook_url names no heading of docs/operations.md" >&2; failed+=("$alert"); done
# The Kubernetes copy must be the tested file; a stale copy leaves every alert unverified where it runs.
if ! python3 scripts/gen-prometheusrule.py --check; then fail_all "PrometheusRule out of date"; fi

mapfile -t failed < <(printf '%s\n' "${failed[@]+"${failed[@]}"}" | grep -v '^$' | sort -u)
echo "alerts: $(( ${#alerts[@]} - ${#failed[@]} )) passed, ${#failed[@]} failed"
[ ${#failed[@]} -eq 0 ]
