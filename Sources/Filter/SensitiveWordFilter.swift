import Foundation
import PushCore

/// The Filter stage's decision: drop a job whose alert text contains a listed entry that no allow entry
/// covers.
public struct SensitiveWordFilter: Sendable {
    public let matcher: SensitiveWordMatcher
    public let allowed: SensitiveWordMatcher
    public let extraFields: [String]

    public init(words: [String], allow: [String] = [], extraFields: [String] = []) {
        matcher = SensitiveWordMatcher(words: words)
        allowed = SensitiveWordMatcher(words: allow)
        self.extraFields = extraFields
    }

    /// Loads the words file and the allow file; throws naming the file that cannot be read.
    public init(settings: FilterSettings) throws {
        guard !settings.wordsFile.isEmpty else {
            self.init(words: [], extraFields: settings.fields)
            return
        }
        let words = try Self.lines(of: settings.wordsFile, key: "filter.words_file")
        let allow = settings.allowFile.isEmpty ? [] : try Self.lines(of: settings.allowFile, key: "filter.allow_file")
        self.init(words: words, allow: allow, extraFields: settings.fields)
    }

    /// A UTF-8 list, one entry per line; blank lines and lines starting with `#` are skipped.
    static func lines(of path: String, key: String) throws -> [String] {
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw ConfigurationError.invalid(key: key, reason: "'\(path)' cannot be read as UTF-8 (\(error.localizedDescription))")
        }
        return text.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    /// The matched entry as listed, or nil when the job may be sent.
    public func match(_ job: PushJob) -> String? {
        guard !matcher.isEmpty else { return nil }
        for text in AlertText.texts(inPayload: job.payload, extraFields: extraFields, provider: job.headers.provider) {
            if let word = firstBlocked(in: text) { return word }
        }
        return nil
    }

    /// The first listed entry in `text` that no allow entry covers.
    public func firstBlocked(in text: String) -> String? {
        let stream = TextNormalizer.stream(text)
        if allowed.isEmpty { return matcher.firstMatch(in: stream)?.text }
        let blocked = matcher.allMatches(in: stream)
        guard !blocked.isEmpty else { return nil }
        // reach[i]: the furthest end of an allowed span that starts at or before i.
        var reach = [Int](repeating: -1, count: stream.count)
        for span in allowed.allMatches(in: stream) { reach[span.start] = max(reach[span.start], span.end) }
        for index in reach.indices.dropFirst() { reach[index] = max(reach[index], reach[index - 1]) }
        for hit in blocked where reach[hit.start] < hit.end { return matcher.entries[hit.entry].text }
        return nil
    }
}
