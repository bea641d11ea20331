import ArgumentParser
import Foundation

/// A secret a vendor side's flag names by file (an app's client secret or AppSecret): the file's text, surrounding
/// whitespace trimmed, as the worker reads its secret files.
enum SecretFileFlag {
    static func read(_ path: String, flag: String) throws -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw ValidationError("\(flag): cannot read \(path)") }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
