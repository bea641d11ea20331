import Foundation
import PushCore

/// The filter in use, replaced whole when its files change: a reload builds the new lists aside and swaps
/// them in atomically, so a batch sees the old lists or the new, never a mix. A file that fails to load
/// leaves the previous lists in place.
public final class LiveFilter: Sendable {
    public enum ReloadOutcome: Sendable, Equatable {
        case unchanged
        case reloaded(words: Int, allowed: Int)
        /// The previous lists stay; the text says which file and why.
        case failed(String)
    }

    private struct FileStamp: Equatable {
        var modified: Date?
        var size: Int?
        var inode: Int?
    }

    private let settings: FilterSettings
    private let filter: Locked<SensitiveWordFilter>
    private let stamps: Locked<[FileStamp?]>

    /// Loads the lists; a file that cannot be read is a startup error.
    public init(settings: FilterSettings) throws {
        self.settings = settings
        let stamps = Self.stamps(settings)
        filter = Locked(try SensitiveWordFilter(settings: settings))
        self.stamps = Locked(stamps)
    }

    public var current: SensitiveWordFilter { filter.withLock { $0 } }

    public var isEnabled: Bool { !settings.wordsFile.isEmpty }

    /// Loads the files again if they changed since the last load (or always, when forced: SIGHUP).
    /// Reads files: call it off Swift's cooperative pool.
    public func reloadIfChanged(force: Bool = false) -> ReloadOutcome {
        guard isEnabled else { return .unchanged }
        let fresh = Self.stamps(settings)
        let known = stamps.withLock { $0 }
        guard force || fresh != known else { return .unchanged }
        do {
            let loaded = try SensitiveWordFilter(settings: settings)
            filter.withLock { $0 = loaded }
            stamps.withLock { $0 = fresh }
            return .reloaded(words: loaded.matcher.entries.count, allowed: loaded.allowed.entries.count)
        } catch {
            // Remember the broken version so it is reported once, not every interval.
            stamps.withLock { $0 = fresh }
            return .failed("\(error)")
        }
    }

    private static func stamps(_ settings: FilterSettings) -> [FileStamp?] {
        [settings.wordsFile, settings.allowFile].map { path in
            guard !path.isEmpty, let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }
            return FileStamp(modified: attributes[.modificationDate] as? Date, size: (attributes[.size] as? NSNumber)?.intValue,
                             inode: (attributes[.systemFileNumber] as? NSNumber)?.intValue)
        }
    }
}
