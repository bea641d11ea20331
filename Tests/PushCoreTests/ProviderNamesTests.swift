import Foundation
import XCTest

/// A provider module is a unit (docs/architecture.md, "Providers"): nothing outside its folder
/// `Sources/Providers/<Name>` names it, except the worker's one list of modules (`Sources/worker/Providers.swift`)
/// and the emulator's side of it, in files named after it (`Sources/PushEmulator/<Name>*.swift`). A third provider
/// is then a folder and a line, and removing one is removing them.
final class ProviderNamesTests: XCTestCase {
    private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The folders of `Sources/Providers`: every provider.
    private func providers() throws -> [String] {
        let folder = root.appendingPathComponent("Sources/Providers")
        guard FileManager.default.fileExists(atPath: folder.path) else { return [] }
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }.sorted()
    }

    /// The providers held to the whole rule. APNs, the default provider, is not yet: its message rules, its settings
    /// type, its records and its known outcomes are still the core's (docs/architecture.md, "Providers"); the
    /// scheduler and the `Pusher` name it no more than any other (`testThePusherNamesNoProvider`).
    private func modules() throws -> [String] {
        try providers().filter { $0 != "APNs" }
    }

    /// Every file under `Sources`, by its path from the repository's root.
    private func sourceFiles() -> [String] {
        let sources = root.appendingPathComponent("Sources")
        var files: [String] = []
        let enumerator = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = enumerator?.nextObject() as? URL {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
            files.append(String(url.path.dropFirst(root.path.count + 1)))
        }
        return files.sorted()
    }

    /// Where `module` may be named.
    private func allowed(_ path: String, module: String) -> Bool {
        path.hasPrefix("Sources/Providers/\(module)/") || path == "Sources/worker/Providers.swift"
            || path.hasPrefix("Sources/PushEmulator/") || path.hasPrefix("Sources/push-emulator/")
    }

    func testNoFileOutsideAProviderModuleNamesIt() throws {
        let modules = try modules()
        XCTAssertFalse(modules.isEmpty, "Sources/Providers holds the provider modules")
        var offenders: [String] = []
        for path in sourceFiles() {
            guard let text = try? String(contentsOf: root.appendingPathComponent(path), encoding: .utf8) else { continue }
            let lowered = text.lowercased()
            for module in modules where !allowed(path, module: module) && lowered.contains(module.lowercased()) {
                let line = text.split(separator: "\n", omittingEmptySubsequences: false)
                    .firstIndex { $0.lowercased().contains(module.lowercased()) }.map { $0 + 1 } ?? 0
                offenders.append("\(path):\(line) names \(module)")
            }
        }
        XCTAssertEqual(offenders, [], "a provider is named only in its own folder, the worker's list and the emulator")
    }

    /// The stage that sends, its scheduler, its drivers and the interface to a service (`Sources/Pusher`,
    /// `Sources/ProviderKit`) name no provider at all, APNs included, not even in a comment: each provider's apps
    /// make their own lanes (`ProviderApps`), and a service says what its requests and answers are (`PushService`).
    func testThePusherNamesNoProvider() throws {
        let providers = try providers()
        XCTAssertTrue(providers.contains("APNs"), "APNs's service and lanes are in Sources/Providers/APNs")
        var offenders: [String] = []
        for path in sourceFiles() where path.hasPrefix("Sources/Pusher/") || path.hasPrefix("Sources/ProviderKit/") {
            guard let text = try? String(contentsOf: root.appendingPathComponent(path), encoding: .utf8) else { continue }
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                for provider in providers where line.lowercased().contains(provider.lowercased()) {
                    offenders.append("\(path):\(number + 1) names \(provider)")
                }
            }
        }
        XCTAssertEqual(offenders, [], "the Pusher and the scheduler know no provider by name")
    }

    /// Where APNs, the default provider, is still named outside its folder (docs/architecture.md, "Providers"): its
    /// name in the registry and its messages' shape, which the parser reads inline (the hot path). The list is exact:
    /// a file that starts naming APNs fails this test, and so does a listed file that no longer does (take it off,
    /// the list only shrinks). FCM's message names its own `apns` object, and both Android shapes' rules tell a
    /// producer that `push_type` is APNs-only.
    static let stillNamingAPNs: Set<String> = [
        "Sources/Providers/FCM/FCMMessageParser.swift",
        "Sources/PushCore/AndroidVendorMessageParser.swift",
        "Sources/PushCore/MessageParser.swift", "Sources/PushCore/PushProvider.swift",
    ]

    func testAPNsIsNamedOnlyWhereItIsStillTheCores() throws {
        var naming: Set<String> = []
        for path in sourceFiles() where !allowed(path, module: "APNs") {
            guard let text = try? String(contentsOf: root.appendingPathComponent(path), encoding: .utf8) else { continue }
            if text.lowercased().contains("apns") { naming.insert(path) }
        }
        XCTAssertEqual(naming.subtracting(Self.stillNamingAPNs).sorted(), [], "these files started naming APNs")
        XCTAssertEqual(Self.stillNamingAPNs.subtracting(naming).sorted(), [], "these files no longer name APNs: take them off the list")
    }

    /// The rule bites: a core file that named a module would be found (so the test above can fail).
    func testTheRuleFindsANameOutsideTheModule() throws {
        for module in try modules() {
            XCTAssertFalse(allowed("Sources/PushCore/MessageParser.swift", module: module))
            XCTAssertFalse(allowed("Sources/Pusher/Pusher.swift", module: module))
            XCTAssertTrue(allowed("Sources/Providers/\(module)/Anything.swift", module: module))
        }
    }
}
