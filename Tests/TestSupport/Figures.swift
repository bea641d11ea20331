import Foundation

/// Prints a figure a test measured (a delay, a count of duplicates, a peak RSS) and, when `PUSH_TEST_FIGURES`
/// names a file, appends it there too: `swift test --parallel` shows only failing tests' output, so
/// `scripts/test.sh` collects the figures this way and prints them after the run.
public func printFigure(_ line: String) {
    print(line)
    guard let path = ProcessInfo.processInfo.environment["PUSH_TEST_FIGURES"], !path.isEmpty else { return }
    // One write per line with O_APPEND: lines from test processes running at once never interleave.
    let fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
    guard fd >= 0 else { return }
    defer { close(fd) }
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}
