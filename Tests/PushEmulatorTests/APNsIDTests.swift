@testable import PushEmulator
import Foundation
import XCTest

/// The `apns-id` the emulator makes up when a request brings none: a lowercase version 4 UUID, a new one each time.
final class APNsIDTests: XCTestCase {
    func testARandomVersion4UUIDInLowercase() {
        var seen = Set<String>()
        for _ in 0..<10_000 {
            let id = APNsID.random()
            XCTAssertEqual(id.count, 36)
            XCTAssertNotNil(UUID(uuidString: id), id)
            XCTAssertEqual(id, id.lowercased())
            let characters = Array(id)
            XCTAssertEqual([characters[8], characters[13], characters[18], characters[23]], ["-", "-", "-", "-"], id)
            XCTAssertEqual(characters[14], "4", "version 4: \(id)")
            XCTAssertTrue("89ab".contains(characters[19]), "RFC 4122 variant: \(id)")
            seen.insert(id)
        }
        XCTAssertEqual(seen.count, 10_000)
    }
}
