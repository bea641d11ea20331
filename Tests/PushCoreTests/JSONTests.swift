import Foundation
import PushCore
import XCTest

final class JSONTests: XCTestCase {
    private func parse(_ text: String) throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }
    private func canonical(_ text: String) throws -> String {
        String(decoding: JSONWriter.canonical(try parse(text)), as: UTF8.self)
    }

    func testCanonicalFormSortsKeysKeepsNumbersAndEscapesOnlyWhatJSONRequires() throws {
        XCTAssertEqual(try canonical(#" { "b" : [1, 2.50, -0e+3, true, null], "a" : "x/y" } "#),
                       #"{"a":"x/y","b":[1,2.50,-0e+3,true,null]}"#)
        XCTAssertEqual(try canonical(#"{"t":"tab\tquote\"back\\nl\nctl\u0001 é \u00e9 \ud83d\ude00"}"#),
                       "{\"t\":\"tab\\tquote\\\"back\\\\nl\\nctl\\u0001 é é 😀\"}")
    }

    func testRoundTripAgreesWithFoundation() throws {
        let text = #"{"aps":{"alert":{"title":"Ünïcode","body":"line\nbreak"},"badge":3,"sound":"default"},"data":[{"k":1.25},[],{}]}"#
        let ours = JSONWriter.canonical(try parse(text))
        let theirs = try JSONSerialization.jsonObject(with: Data(ours)) as? NSDictionary
        let original = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? NSDictionary
        XCTAssertEqual(theirs, original)
        XCTAssertEqual(JSONWriter.canonical(try JSONParser.parse(ours)), ours, "canonical form is a fixed point")
    }

    /// The writer sizes its buffer with `length(of:)`: it must count exactly what `write` produces, for every
    /// kind of value and escape, or payloads held in flight carry slack (or grow and copy).
    func testLengthCountsExactlyWhatIsWritten() throws {
        let texts = [
            "null", "true", "false", "0", "-12.5e+3", #""""#, #""plain""#, "[]", "[1]", "[1,[2,[]],{}]", "{}",
            #"{"a":1}"#, #"{"b":{"c":[true,false,null]},"a":"x"}"#,
            #"{"t":"tab\tquote\"back\\nl\nret\rctl\u0001\u001f é \u00e9 \ud83d\ude00"}"#,
            #"{"aps":{"alert":"hello 12345"}}"#,
        ]
        for text in texts {
            let value = try parse(text)
            XCTAssertEqual(JSONWriter.length(of: value), JSONWriter.canonical(value).count, text)
        }
    }

    func testRejectsWhatRFC8259Rejects() {
        let bad = [
            "", " ", "{", "}", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "-", "1e", "+1", "tru", "nul", "\"abc",
            "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00x\"", "\"a\u{01}b\"", "{\"a\" 1}", "{1:2}", "[1 2]", "1 2",
            "NaN", "Infinity", "'a'",
        ]
        for text in bad {
            XCTAssertThrowsError(try parse(text), "accepted \(text.debugDescription)")
        }
    }

    /// A bad number is reported where it goes wrong (the dead letter's reason names the byte).
    func testABadNumberIsReportedAtTheByteWhereItGoesWrong() {
        for (text, offset) in [(#"{"a":-x}"#, 6), (#"{"a":1.}"#, 7), (#"{"a":1e+}"#, 8), (#"{"a":2E}"#, 7)] {
            XCTAssertThrowsError(try parse(text)) { error in
                XCTAssertEqual((error as? JSONParseError)?.description, "invalid number at byte \(offset)", text)
            }
        }
    }

    func testDuplicateKeysAreRejectedInSmallAndLargeObjects() throws {
        // Small objects compare keys one by one, larger ones (over 16 members) use a set: both must catch them.
        for size in [2, 15, 16, 17, 40] {
            let members = (0..<size).map { "\"k\($0)\":\($0)" }
            XCTAssertNoThrow(try parse("{" + members.joined(separator: ",") + "}"), "\(size) distinct keys")
            for duplicateOf in [0, size - 1] {
                let text = "{" + (members + ["\"k\(duplicateOf)\":0"]).joined(separator: ",") + "}"
                XCTAssertThrowsError(try parse(text), "a duplicate of key \(duplicateOf) among \(size)") { error in
                    XCTAssertTrue("\(error)".contains("duplicate key \"k\(duplicateOf)\""), "\(error)")
                }
            }
        }
    }

    func testStringsOutsideASCIIAreValidatedAndASCIIOnesKeptAsWritten() throws {
        XCTAssertEqual(try parse(#""plain ascii""#), .string("plain ascii"))
        XCTAssertEqual(try parse("\"caf\u{E9}\""), .string("café"))
        for bad: [UInt8] in [[0x22, 0xC3, 0x22], [0x22, 0x61, 0xFF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22]] {
            XCTAssertThrowsError(try JSONParser.parse(bad), "accepted \(bad)") { error in
                XCTAssertTrue("\(error)".contains("invalid UTF-8"), "\(error)")
            }
        }
    }

    func testCanonicalFormSortsKeysWrittenInAnyOrder() throws {
        XCTAssertEqual(try canonical(#"{"a":1,"b":{"y":2,"x":1},"c":3}"#), #"{"a":1,"b":{"x":1,"y":2},"c":3}"#)
        XCTAssertEqual(try canonical(#"{"c":3,"a":1,"b":2}"#), #"{"a":1,"b":2,"c":3}"#)
        XCTAssertEqual(try canonical(#"{"é":1,"z":2,"Z":3}"#), #"{"Z":3,"z":2,"é":1}"#, "UTF-8 byte order")
    }

    func testExactIntegerNeverTraps() throws {
        XCTAssertEqual(try parse("9223372036854775807").exactInteger, Int64.max)
        XCTAssertNil(try parse("9223372036854775808").exactInteger)
        XCTAssertEqual(try parse("-9223372036854775808").exactInteger, Int64.min)
        XCTAssertNil(try parse("1e19").exactInteger)
        XCTAssertNil(try parse("1e999").exactInteger)
        XCTAssertEqual(try parse("1e3").exactInteger, 1000)
        XCTAssertNil(try parse("0.5").exactInteger)
    }

    func testPrintableEscapesControlCharactersAndClips() {
        XCTAssertEqual(Printable.clipped("a\nb\u{7}c", to: 10), "a\\u{a}b\\u{7}c")
        XCTAssertEqual(Printable.clipped(String(repeating: "x", count: 20), to: 5), "xxxxx…")
    }

    /// The tools' forms: nothing cut; C1 controls and the bidirectional overrides escaped too; a JSON document
    /// escaped the JSON way reads back as the same value.
    func testPrintableEscapedKeepsEverythingAndJSONStaysJSON() throws {
        XCTAssertEqual(Printable.escaped(String(repeating: "x", count: 300) + "\u{1B}"), String(repeating: "x", count: 300) + "\\u{1b}")
        XCTAssertEqual(Printable.escaped("a\u{9B}b\u{202E}c\u{7F}é"), "a\\u{9b}b\\u{202e}c\\u{7f}é")
        let document = "{\"id\":\"m\u{9B}1\u{2028}\u{7F}\",\"n\":1}"
        let escaped = Printable.escapedJSON(document)
        XCTAssertEqual(escaped, #"{"id":"m\u009b1\u2028\u007f","n":1}"#)
        XCTAssertEqual(try JSONParser.parse(Array(escaped.utf8)), try JSONParser.parse(Array(document.utf8)))
    }
}
