import Dispatch
import Filter
import Foundation
import Logging
import PushCore

/// Keeps the sensitive-word lists current without a restart: checks the files every
/// `filter.reload_interval_ms` and at once on SIGHUP, loads a changed list off Swift's cooperative pool,
/// swaps it in, and says what happened (log and `push_filter_reloads_total`).
struct FilterReloader: Sendable {
    let filter: LiveFilter
    let intervalMillis: Int
    let logger: Logger

    func run() async {
        guard filter.isEnabled else { return }
        // true: SIGHUP (load even if the files look unchanged); false: the periodic check.
        let (checks, input) = AsyncStream.makeStream(of: Bool.self, bufferingPolicy: .bufferingNewest(8))
        let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
        source.setEventHandler { input.yield(true) }
        source.resume()
        defer { source.cancel() }
        PushMetrics.shared.filterWords.record(filter.current.matcher.entries.count)
        // The ticker is a child task: it ends with this call.
        await withDiscardingTaskGroup { group in
            group.addTask {
                while (try? await Task.sleep(for: .milliseconds(intervalMillis))) != nil {
                    input.yield(false)
                }
            }
            await withTaskCancellationHandler {
                for await forced in checks { await reload(force: forced) }
            } onCancel: {
                input.finish()
            }
            group.cancelAll()
        }
    }

    private func reload(force: Bool) async {
        let filter = self.filter
        let outcome = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: filter.reloadIfChanged(force: force)) }
        }
        switch outcome {
        case .unchanged:
            break
        case .reloaded(let words, let allowed):
            PushMetrics.shared.filterReload(result: "ok")
            PushMetrics.shared.filterWords.record(words)
            logger.notice("sensitive-word lists reloaded", metadata: ["words": "\(words)", "allowed": "\(allowed)"])
        case .failed(let reason):
            PushMetrics.shared.filterReload(result: "failed")
            logger.error("sensitive-word list not reloaded; the previous lists stay in use", metadata: ["reason": "\(reason)"])
        }
    }
}
