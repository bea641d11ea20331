import Foundation
import PushCore
import TestSupport
import XCTest

/// `worker --version` (docs/tools.md) prints the version and the commit `push_build_info` reports.
final class VersionTests: XCTestCase {
    /// `<version> (commit <sha>)`: the commit the binary was built from, `-dirty` when the sources of a checkout
    /// build differed from it, `unknown` when nothing said it.
    static func printedVersion() throws -> (version: String, commit: String) {
        let result = try runCommand(WorkerProcess.binaryPath, ["--version"])
        XCTAssertEqual(result.status, 0)
        let line = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let match = line.wholeMatch(of: /(\S+) \(commit ([0-9a-f]{40}(-dirty)?|unknown)\)/) else {
            XCTFail("worker --version: \(line)")
            return ("", "")
        }
        return (String(match.1), String(match.2))
    }

    func testVersionPrintsTheBuildVersionAndCommit() throws {
        XCTAssertEqual(try Self.printedVersion().version, BuildInfo.version)
    }

    /// A build from a git checkout knows its commit without the release script (Plugins/GitCommit): one git
    /// knows. Not necessarily HEAD: a commit made after the build leaves the built binary's commit as it was.
    func testACheckoutBuildKnowsItsCommit() throws {
        let root = repositoryRoot()
        guard FileManager.default.fileExists(atPath: root + "/.git"), let git = which("git") else {
            throw XCTSkip("not a git checkout: the release script writes the commit")
        }
        let printed = try Self.printedVersion().commit
        let commit = printed.hasSuffix("-dirty") ? String(printed.dropLast(6)) : printed
        XCTAssertNotEqual(commit, "unknown")
        let known = try runCommand(git, ["-C", root, "cat-file", "-e", commit + "^{commit}"])
        XCTAssertEqual(known.status, 0, "git does not know \(printed): \(known.output)")
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
