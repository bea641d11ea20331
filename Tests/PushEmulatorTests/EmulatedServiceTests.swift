import Foundation
@testable import PushEmulator
import XCTest

/// A vendor side of the emulator is a unit: its folder `Sources/PushEmulator/<Vendor>/` holds everything it needs
/// (paths, auth endpoint, judge, errors, settings, flags, stats), and it is registered by one line in
/// `EmulatedServices.swift`. Nothing else in the emulator names it, not even in a comment, so a new side is a folder
/// and a line, and removing one is removing them.
final class EmulatedServiceTests: XCTestCase {
    private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    private let registration = "Sources/PushEmulator/EmulatedServices.swift"

    /// Every file under `Sources/PushEmulator`, by its path from the repository's root.
    private func emulatorFiles() -> [String] {
        let folder = root.appendingPathComponent("Sources/PushEmulator")
        var files: [String] = []
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = enumerator?.nextObject() as? URL {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
            files.append(String(url.path.dropFirst(root.path.count + 1)))
        }
        return files.sorted()
    }

    /// Where a side may be named: its own folder (named as the vendor, case aside: `vivo` may live in `Vivo/`) and
    /// the registration.
    private func allowed(_ path: String, vendor: String) -> Bool {
        path.lowercased().hasPrefix("sources/pushemulator/\(vendor.lowercased())/") || path == registration
    }

    /// The folders of `Sources/PushEmulator`.
    private func emulatorFolders() throws -> [String] {
        let folder = root.appendingPathComponent("Sources/PushEmulator")
        return try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: [.isDirectoryKey])
            .filter { (try? $0.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true }.map(\.lastPathComponent)
    }

    func testNoEmulatorFileOutsideAVendorsFolderNamesIt() {
        let vendors = EmulatedServices.names.map(\.vendor)
        XCTAssertGreaterThanOrEqual(vendors.count, 2, "EmulatedServices.swift registers the vendor sides")
        let files = emulatorFiles()
        XCTAssertTrue(files.contains(registration))
        var offenders: [String] = []
        for path in files {
            guard let text = try? String(contentsOf: root.appendingPathComponent(path), encoding: .utf8) else { continue }
            for vendor in vendors where !allowed(path, vendor: vendor) && text.lowercased().contains(vendor.lowercased()) {
                let line = text.split(separator: "\n", omittingEmptySubsequences: false)
                    .firstIndex { $0.lowercased().contains(vendor.lowercased()) }.map { $0 + 1 } ?? 0
                offenders.append("\(path):\(line) names \(vendor)")
            }
        }
        XCTAssertEqual(offenders, [], "a vendor is named only in its folder and in EmulatedServices.swift")
    }

    /// The rule bites: a shared file, or another vendor's folder, that named a side would be found.
    func testTheRuleFindsANameOutsideTheVendorsFolder() {
        for vendor in EmulatedServices.names.map(\.vendor) {
            XCTAssertFalse(allowed("Sources/PushEmulator/ServiceRouter.swift", vendor: vendor))
            XCTAssertFalse(allowed("Sources/PushEmulator/Other/OtherCore.swift", vendor: vendor))
            XCTAssertTrue(allowed("Sources/PushEmulator/\(vendor)/Anything.swift", vendor: vendor))
            XCTAssertFalse(allowed("Sources/PushEmulator/\(vendor)Extra/Anything.swift", vendor: vendor))
        }
    }

    /// Every registered side has its folder, named as the vendor, and a name of its own.
    func testEachRegisteredSideHasAFolderAndAName() throws {
        let names = EmulatedServices.names
        XCTAssertEqual(Set(names.map(\.name)).count, names.count, "\(names)")
        let folders = try emulatorFolders().map { $0.lowercased() }
        for side in names {
            XCTAssertEqual(side.name, side.vendor.lowercased())
            XCTAssertTrue(folders.contains(side.name), "Sources/PushEmulator has no folder for \(side.vendor)")
        }
    }

    /// The router built from the registration answers each side's stats page, and nothing on a path no side has.
    func testTheRouterServesEachRegisteredSide() throws {
        let router = try ServiceRouter(configuration: EmulatorConfiguration())
        XCTAssertEqual(router.services.map { type(of: $0).name }, EmulatedServices.names.map(\.name))
        for side in EmulatedServices.names {
            let stats = IncomingRequest(method: "GET", path: "/_emulator/\(side.name)/stats", headers: [], body: [])
            XCTAssertTrue(router.handles(path: stats.path))
            XCTAssertEqual(router.answer(stats)?.status, 200, side.name)
            XCTAssertEqual(router.answer(stats)?.delayMillis, 0)
        }
        let apns = IncomingRequest(method: "POST", path: "/3/device/abcd", headers: [], body: [])
        XCTAssertFalse(router.handles(path: apns.path))
        XCTAssertNil(router.answer(apns))
    }

    /// Each side's flags, parsed as part of `EmulatedServices` (the CLI's option group), reach that side's settings.
    func testEachSidesFlagsReachItsSettings() throws {
        let parsed = try EmulatedServices.parse(["--huawei-latency-ms", "7", "--huawei-answer", "gone=noRight",
                                                 "--xiaomi-requests-per-s", "3", "--xiaomi-flow-control"])
        var configuration = EmulatorConfiguration()
        try parsed.apply(to: &configuration)
        XCTAssertEqual(configuration.huawei.faults.latencyMillis, 7)
        XCTAssertEqual(configuration.huawei.tokenAnswers.first, .init(prefix: "gone", reason: "noRight"))
        XCTAssertNil(configuration.huawei.faults.requestsPerSecond)
        XCTAssertEqual(configuration.xiaomi.faults.requestsPerSecond, 3)
        XCTAssertTrue(configuration.xiaomi.faults.flowControl)
        XCTAssertFalse(configuration.huawei.faults.flowControl)
        XCTAssertEqual(configuration.xiaomi.tokenAnswers, EmulatorConfiguration.VendorTokenAnswer.xiaomiDefaults)
    }

    /// The settings store keeps each side's settings apart, and a side nobody configured has its defaults.
    func testTheSettingsStoreKeepsEachSidesSettings() {
        var configuration = EmulatorConfiguration()
        XCTAssertTrue(configuration.huawei.apps.isEmpty)
        XCTAssertEqual(configuration.xiaomi.quotaReset, "00:00+08:00")
        configuration.huawei.apps.append(.init(appID: "1", clientSecret: "s"))
        configuration.xiaomi.faults.latencyMillis = 5
        XCTAssertEqual(configuration.huawei.apps.map(\.appID), ["1"])
        XCTAssertEqual(configuration.huawei.faults.latencyMillis, 0)
        XCTAssertEqual(configuration.xiaomi.faults.latencyMillis, 5)
        XCTAssertTrue(configuration.xiaomi.apps.isEmpty)
    }
}
