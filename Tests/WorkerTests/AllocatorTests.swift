import Foundation
import TestSupport
import XCTest

/// The worker allocates with jemalloc, with settings of its own (`Sources/CJemalloc/malloc_conf.c`): the CPU and
/// memory figures in docs/performance.md depend on both, and a linker that dropped the library would lose them
/// silently. Asked through `MALLOC_CONF`, jemalloc prints its options when the process exits.
final class AllocatorTests: XCTestCase {
    func testTheWorkerAllocatesWithJemallocAndItsOwnSettings() async throws {
        let directory = makeTemporaryDirectory("allocator")
        let process = try WorkerProcess(environment: ["MALLOC_CONF": "stats_print:true"], arguments: ["--help"],
                                        logFile: "\(directory)/help.log")
        let status = await process.waitForExit(timeout: 30)
        XCTAssertEqual(status, 0, process.log)
        let log = process.log
        XCTAssertTrue(log.contains("Begin jemalloc statistics"), "the worker does not allocate with jemalloc:\n\(log.prefix(1500))")
        for option in ["opt.narenas: 1", "opt.dirty_decay_ms: 250 ", "opt.muzzy_decay_ms: 0 "] {
            XCTAssertTrue(log.contains(option), "jemalloc runs without `\(option)`")
        }
    }
}
