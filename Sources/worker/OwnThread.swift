import Foundation

/// Work that blocks (reading key files, a token endpoint asked through libcurl's easy interface) run on a thread of
/// its own and awaited, so that it never holds one of Swift's cooperative threads.
enum OwnThread {
    static func run<T: Sendable>(named name: String, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.name = name
            thread.start()
        }
    }
}
