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

    /// One version source: the repository's VERSION file, which the binary, the image and the changelog follow.
    func testTheVersionIsTheVERSIONFilesAndASemanticVersion() throws {
        let file = try String(contentsOfFile: repositoryRoot() + "/VERSION", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(BuildInfo.version, file)
        XCTAssertNotNil(file.range(of: #"^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$"#, options: .regularExpression), "SemVer: \(file)")
        let changelog = try String(contentsOfFile: repositoryRoot() + "/CHANGELOG.md", encoding: .utf8)
        let released = file.split(separator: "-").first.map(String.init) ?? file
        XCTAssertTrue(changelog.contains("## [\(released)]") || (file.contains("-") && changelog.contains("## [Unreleased]")),
                      "CHANGELOG.md has a section for \(file)")
    }
}
