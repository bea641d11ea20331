@testable import Collector
import XCTest

/// Messages of one topic share its bytes while in flight; a flood of distinct values stays bounded.
final class StringInternerTests: XCTestCase {
    func testEqualStringsShareOneStoredCopyAndDistinctOnesStayBounded() {
        var interner = StringInterner()
        let first = interner.intern(String("com.example.chat.app".utf8.map { Character(Unicode.Scalar($0)) }))
        let second = interner.intern(String(decoding: Array("com.example.chat.app".utf8), as: UTF8.self))
        XCTAssertEqual(first, second)
        first.utf8.withContiguousStorageIfAvailable { a in
            second.utf8.withContiguousStorageIfAvailable { b in
                XCTAssertEqual(a.baseAddress, b.baseAddress, "the second copy is the stored one")
            }
        }
        for n in 0..<1000 { XCTAssertEqual(interner.intern("com.example.topic.\(n)"), "com.example.topic.\(n)") }
        XCTAssertEqual(interner.intern("short"), "short")
    }
}
