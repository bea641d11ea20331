#!/usr/bin/env python3
"""Validates schema/message.schema.json's examples: every file of schema/examples/valid must pass, every file of
schema/examples/invalid must fail (each breaks one rule, which its name says). The same files are meant for the
worker's own parser, so each is read as the worker reads JSON: duplicate keys, NaN and Infinity are errors here
too. Prints `schema: N passed, M failed`; exit 0 only when none failed. Needs the jsonschema module (Debian:
python3-jsonschema, installed by scripts/install-deps.sh).

`check-schema.py --must-accept LIST` instead checks the files LIST names (one path a line) against the schema,
each of which must pass: `SchemaExamplesTests` gives it every message of the fuzzing corpus that the worker's
parser accepted."""
import json
import pathlib
import sys

try:
    from jsonschema import Draft202012Validator
except ImportError:
    sys.exit("check-schema: the jsonschema module is missing (apt-get install python3-jsonschema)")

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schema" / "message.schema.json"
EXAMPLES = ROOT / "schema" / "examples"


def strict_pairs(pairs):
    keys = [key for key, _ in pairs]
    duplicates = {key for key in keys if keys.count(key) > 1}
    if duplicates:
        raise ValueError(f"duplicate key {sorted(duplicates)[0]!r}")
    return dict(pairs)


def no_constant(name):
    raise ValueError(f"{name} is not JSON")


def load(path):
    return json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=strict_pairs, parse_constant=no_constant)


def must_accept(validator, listing):
    passed, failed = 0, 0
    for line in pathlib.Path(listing).read_text(encoding="utf-8").splitlines():
        if not line:
            continue
        path = pathlib.Path(line)
        try:
            message = load(path)
        except ValueError as error:
            print(f"FAIL {path.name}: the parser accepted it, but it is not strict JSON here ({error})")
            failed += 1
            continue
        errors = list(validator.iter_errors(message))
        if errors:
            worst = errors[0]
            where = "/".join(str(part) for part in worst.absolute_path) or "(the message)"
            print(f"FAIL {path.name}: the parser accepted it, the schema rejects it at {where}: {worst.message[:200]}")
            failed += 1
        else:
            passed += 1
    print(f"schema on messages the parser accepted: {passed} passed, {failed} failed")
    return 1 if failed else 0


def main():
    schema = load(SCHEMA)
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    if len(sys.argv) == 3 and sys.argv[1] == "--must-accept":
        return must_accept(validator, sys.argv[2])
    passed, failed = 0, 0
    for expected in ("valid", "invalid"):
        files = sorted((EXAMPLES / expected).glob("*.json"))
        if not files:
            print(f"FAIL {expected}: no examples in {EXAMPLES / expected}")
            failed += 1
        for path in files:
            name = f"{expected}/{path.name}"
            try:
                message = load(path)
            except ValueError as error:
                print(f"FAIL {name}: not strict JSON ({error})")
                failed += 1
                continue
            errors = list(validator.iter_errors(message))
            if expected == "valid" and errors:
                worst = errors[0]
                where = "/".join(str(part) for part in worst.absolute_path) or "(the message)"
                print(f"FAIL {name}: rejected at {where}: {worst.message[:200]}")
                failed += 1
            elif expected == "invalid" and not errors:
                print(f"FAIL {name}: accepted, but it breaks a rule")
                failed += 1
            else:
                passed += 1
    print(f"schema: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
