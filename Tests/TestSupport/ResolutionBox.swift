import Foundation
import PushCore
import XCTest

/// Collects a transport's outcomes and waits for them.
public final class ResolutionBox: @unchecked Sendable {
    public init() {}
    private let lock = NSLock()
    private var items: [Resolution] = []
    public func append(_ batch: [Resolution]) { lock.lock(); items += batch; lock.unlock() }
    public var all: [Resolution] { lock.lock(); defer { lock.unlock() }; return items }

    public func wait(for count: Int, timeout: TimeInterval = 20) async throws -> [Resolution] {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            if all.count >= count { return all }
            try await Task.sleep(for: .milliseconds(20))
        }
        XCTFail("only \(all.count) of \(count) outcomes arrived")
        return all
    }
}

