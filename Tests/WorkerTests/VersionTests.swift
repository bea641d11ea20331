import Foundation
import PushCore
import TestSupport
import XCTest

/// `worker --version` (docs/tools.md) prints the version `push_build_info` reports.
final class VersionTests: XCTestCase {
    func testVersionPrintsTheBuildVersion() throws {
        let result = try runCommand(WorkerProcess.binaryPath, ["--version"])
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.output.trimmingCharacters(in: .whitespacesAndNewlines), BuildInfo.version)
    }
}
