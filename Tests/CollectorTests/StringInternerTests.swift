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

    func testOnlyTheSameBytesAreShared() {
        var interner = StringInterner()
        let composed = "com.example.caf\u{E9}.app"
        let decomposed = "com.example.cafe\u{301}.app"
        XCTAssertEqual(composed, decomposed, "equal as Swift compares strings")
        _ = interner.intern(composed)
        XCTAssertEqual(Array(interner.intern(decomposed).utf8), Array(decomposed.utf8), "the producer's spelling is kept")
        _ = interner.intern("com.example.chat.app1")
        XCTAssertEqual(Array(interner.intern("com.example.chat.app2").utf8), Array("com.example.chat.app2".utf8))
        XCTAssertEqual(Array(interner.intern("com.example.chat.app1").utf8), Array("com.example.chat.app1".utf8))
    }
}
