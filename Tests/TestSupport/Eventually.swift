import XCTest

/// Polls `condition` until it holds or `timeout` passes; a failure names the caller's line.
public func eventually(timeout: Duration = .seconds(10), _ condition: @escaping () async throws -> Bool,
                file: StaticString = #filePath, line: UInt = #line) async throws {
    let end = ContinuousClock.now + timeout
    while ContinuousClock.now < end {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    XCTFail("condition not met within \(timeout)", file: file, line: line)
}
