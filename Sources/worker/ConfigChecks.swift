import Foundation
import PushCore

/// One thing `worker check-config` verified: what (a configuration key, with the app or shard it concerns),
/// whether it holds, and the detail (what was found, or exactly what is wrong).
struct ConfigCheck: Sendable {
    let name: String
    let ok: Bool
    let detail: String
}

/// The checks of one `check-config` run, in order. Adding a check is one call: `add` with a result known,
/// `attempt` with work that returns the detail or throws what is wrong.
struct ConfigChecks: Sendable {
    private(set) var checks: [ConfigCheck] = []
    /// Not failures (exit 0 stays): e.g. a key file readable by everyone.
    var warnings: [String] = []

    var ok: Bool { checks.allSatisfy(\.ok) }
    var failures: Int { checks.count { !$0.ok } }

    mutating func add(_ name: String, ok: Bool, _ detail: String) {
        checks.append(ConfigCheck(name: name, ok: ok, detail: detail))
    }

    mutating func attempt(_ name: String, _ work: () throws -> String) {
        do { add(name, ok: true, try work()) } catch { add(name, ok: false, "\(error)") }
    }

    mutating func attempt(_ name: String, _ work: () async throws -> String) async {
        do { add(name, ok: true, try await work()) } catch { add(name, ok: false, "\(error)") }
    }

    /// For people: the effective configuration, one line per check, the warnings, the verdict.
    func text(summary: [String]) -> String {
        var lines = summary
        if !summary.isEmpty { lines.append("") }
        lines += checks.map { "\($0.ok ? "ok  " : "FAIL") \($0.name): \($0.detail)" }
        lines += warnings.map { "warn \($0)" }
        lines.append("")
        lines.append(ok ? "configuration OK" : "\(failures) problem\(failures == 1 ? "" : "s") found")
        return lines.joined(separator: "\n")
    }

    /// For scripts: `{"ok": Bool, "checks": [{"name", "ok", "detail"}], "warnings": [String]}`, one line.
    var json: String {
        ToolOutput.json(ToolOutput.object([
            "ok": .bool(ok),
            "checks": .array(checks.map { ToolOutput.object(["name": .string($0.name), "ok": .bool($0.ok), "detail": .string($0.detail)]) }),
            "warnings": .array(warnings.map { .string($0) }),
        ]))
    }
}
