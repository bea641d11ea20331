import Foundation
import XCTest

/// A provider module is a unit (docs/architecture.md, "Providers"): nothing outside its folder
/// `Sources/Providers/<Name>` names it (not the parser, the configuration, the tools, the `Pusher` or the scheduler,
/// not even in a comment), except the worker's one list of modules (`Sources/worker/Providers.swift`)
/// and the emulator's side of it, in a folder named after it (`Sources/PushEmulator/<Name>/`). A third provider
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

    /// Every provider is held to the whole rule, APNs (the default provider) included.
    private func modules() throws -> [String] {
        try providers()
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

    /// Where `module` may be named. One exception: FCM's message has an object of its own named `apns` (what FCM
    /// passes on to Apple for an iPhone), which FCM's rules check by that name.
    private func allowed(_ path: String, module: String) -> Bool {
        path.hasPrefix("Sources/Providers/\(module)/") || path == "Sources/worker/Providers.swift"
            || path.hasPrefix("Sources/PushEmulator/") || path.hasPrefix("Sources/push-emulator/")
            || (module == "APNs" && path == "Sources/Providers/FCM/FCMMessageParser.swift")
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

    /// The rule bites: a core file that named a module would be found (so the test above can fail).
    func testTheRuleFindsANameOutsideTheModule() throws {
        for module in try modules() {
            XCTAssertFalse(allowed("Sources/PushCore/MessageParser.swift", module: module))
            XCTAssertFalse(allowed("Sources/Pusher/Pusher.swift", module: module))
            XCTAssertTrue(allowed("Sources/Providers/\(module)/Anything.swift", module: module))
        }
        XCTAssertTrue(try modules().contains("APNs"), "the default provider is a module too")
        XCTAssertFalse(allowed("Sources/Providers/FCM/FCMService.swift", module: "APNs"), "FCM's exception is its parser's alone")
    }

    /// A provider module builds on the provider kit (`ProviderKit`, and `AndroidPushKit` for the Android vendors)
    /// and PushCore, never on the Pusher stage, which starts the lanes it describes: no file of a module imports it,
    /// and no provider target depends on it.
    func testNoProviderModuleImportsThePusherStage() throws {
        var offenders: [String] = []
        for path in sourceFiles() where path.hasPrefix("Sources/Providers/") {
            let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
            if text.split(separator: "\n").contains(where: { $0.hasPrefix("import Pusher") || $0.hasPrefix("@testable import Pusher") }) {
                offenders.append(path)
            }
        }
        XCTAssertEqual(offenders, [], "a provider module imports the provider kit, not the Pusher")
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        for target in manifest.components(separatedBy: ".target(name: ").dropFirst() {
            let declaration = target.components(separatedBy: ".target(name: ").first ?? target
            guard declaration.contains("path: \"Sources/Providers/") else { continue }
            XCTAssertFalse(declaration.contains("\"Pusher\""), "\(declaration.prefix(40)) depends on the Pusher stage")
        }
    }
}
