import Foundation
import PushCore

/// The Filter stage's decision: drop a job whose alert text contains a listed word.
public struct SensitiveWordFilter: Sendable {
    public let matcher: SensitiveWordMatcher
    public let extraFields: [String]

    public init(words: [String], extraFields: [String] = []) {
        matcher = SensitiveWordMatcher(words: words)
        self.extraFields = extraFields
    }

    /// Loads a UTF-8 word list, one word per line; blank lines and lines starting with `#` are skipped.
    public init(settings: FilterSettings) throws {
        guard !settings.wordsFile.isEmpty else {
            self.init(words: [], extraFields: settings.fields)
            return
        }
        let text: String
        do { text = try String(contentsOfFile: settings.wordsFile, encoding: .utf8) } catch {
            throw ConfigurationError.invalid(key: "filter.words_file",
                                             reason: "'\(settings.wordsFile)' cannot be read as UTF-8 (\(error.localizedDescription))")
        }
        let words = text.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        self.init(words: words, extraFields: settings.fields)
    }

    /// The matched word, or nil when the job may be sent.
    public func match(_ job: PushJob) -> String? {
        guard !matcher.isEmpty else { return nil }
        for text in AlertText.texts(inPayload: job.payload, extraFields: extraFields) {
            if let word = matcher.firstMatch(in: text) { return word }
        }
        return nil
    }
}
