import CHiredis
@testable import RedisClient
import XCTest

/// The encoder must write exactly what hiredis's own formatter writes for the same arguments.
final class RESPEncoderTests: XCTestCase {
    /// What `redisFormatCommandArgv` writes for `arguments` (the worker's encoding before `RESPEncoder`).
    private func hiredis(_ arguments: [[UInt8]]) -> [UInt8] {
        var flat: [UInt8] = []
        var offsets: [Int] = []
        for argument in arguments {
            offsets.append(flat.count)
            flat.append(contentsOf: argument)
        }
        flat.append(0)
        let lengths = arguments.map(\.count)
        return flat.withUnsafeBufferPointer { base in
            base.baseAddress!.withMemoryRebound(to: CChar.self, capacity: flat.count) { chars in
                var argv: [UnsafePointer<CChar>?] = offsets.map { UnsafePointer(chars + $0) }
                return argv.withUnsafeMutableBufferPointer { argvBuffer in
                    lengths.withUnsafeBufferPointer { lengthBuffer in
                        var target: UnsafeMutablePointer<CChar>?
                        let length = redisFormatCommandArgv(&target, Int32(arguments.count), argvBuffer.baseAddress!,
                                                            lengthBuffer.baseAddress!)
                        guard length > 0, let target else { return [] }
                        defer { redisFreeCommand(target) }
                        return target.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
                            Array(UnsafeBufferPointer(start: $0, count: Int(length)))
                        }
                    }
                }
            }
        }
    }

    func testWritesWhatHiredisWrites() {
        let cases: [[[UInt8]]] = [
            [Array("PING".utf8)],
            [Array("HDEL".utf8), Array("push:processing:w1".utf8), Array("1234567890".utf8), Array("0".utf8)],
            [Array("SET".utf8), [], Array("".utf8)],  // empty arguments
            [Array("SET".utf8), Array("k".utf8), [0, 13, 10, 255, 42]],  // binary, with CR LF inside
            [Array("SET".utf8), Array("big".utf8), [UInt8](repeating: 0x61, count: 123_457)],  // a six-digit length
            (0..<12).map { Array("a\($0)".utf8) },  // a two-digit argument count
        ]
        for arguments in cases {
            let wire = RESPEncoder.encode([arguments])
            let expected = hiredis(arguments)
            XCTAssertTrue(wire == expected, "differs from hiredis for \(arguments.prefix(2).map { String(decoding: $0.prefix(20), as: UTF8.self) }): \(wire.count) against \(expected.count) bytes")
        }
    }

    func testAppendsCommandsOneAfterAnother() {
        let wire = RESPEncoder.encode([[Array("GET".utf8), Array("a".utf8)], [Array("GET".utf8), Array("b".utf8)]])
        XCTAssertEqual(String(decoding: wire, as: UTF8.self), "*2\r\n$3\r\nGET\r\n$1\r\na\r\n*2\r\n$3\r\nGET\r\n$1\r\nb\r\n")
    }
}
