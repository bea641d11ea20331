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

/// XCTAssertEqual for values that take `await` to get (XCTest's autoclosures cannot await).
public func assertEqual<T: Equatable>(_ value: @autoclosure () async throws -> T, _ expected: T, _ message: String = "",
                                      file: StaticString = #filePath, line: UInt = #line) async rethrows {
    let actual = try await value()
    XCTAssertEqual(actual, expected, message, file: file, line: line)
}
